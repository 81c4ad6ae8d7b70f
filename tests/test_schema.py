"""The schema's parts that other modules rely on."""

from __future__ import annotations

from pubsearch.index.schema import CONTENT_PARTS, content_text


def test_content_parts_say_what_content_text_makes() -> None:
    """The bulk writer derives ``content``'s postings from CONTENT_PARTS: they must say
    what content_text writes, line by line."""
    fields = {"title": "A title", "abstract": "Its abstract.\nTwo lines."}
    lines = [fields[name] for name, times in CONTENT_PARTS for _ in range(times)]
    assert content_text(fields["title"], fields["abstract"]) == "\n".join(lines)
