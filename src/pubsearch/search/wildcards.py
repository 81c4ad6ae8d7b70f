"""Wildcards and prefixes (``optim*``, ``ba?ch``, ``ne?ral*``): the words a pattern stands
for. In titles and abstracts a pattern is asked of their words as written, not of their
stems (:data:`pubsearch.index.schema.WRITTEN_FIELDS`, :mod:`pubsearch.search.compiler`); the index's
words are read with :func:`pattern_parts` (:mod:`pubsearch.search.masks`), and a hit's words are
marked with :func:`word_pattern` (:mod:`pubsearch.search.highlighting`): both say the same.
"""

from __future__ import annotations

import re

from whoosh import query as wq

# The queries a pattern is made into.
PATTERN_QUERIES = (wq.Prefix, wq.Wildcard)


def pattern_parts(q: wq.PatternQuery) -> tuple[str, re.Pattern[str] | None]:
    """The literal start of a pattern, and a regular expression a whole word must match
    (None for a prefix: every word that starts so)."""
    if type(q) is wq.Prefix:
        return q.text, None
    literal = re.split(r"[*?]", q.text, maxsplit=1)[0]
    return literal, _wildcard_regex(q.text)


def word_pattern(q: wq.PatternQuery) -> re.Pattern[str]:
    """A regular expression whose full matches are the words ``q`` stands for."""
    if type(q) is wq.Prefix:
        return re.compile(re.escape(q.text) + ".*", re.DOTALL)
    return _wildcard_regex(q.text)


def _wildcard_regex(text: str) -> re.Pattern[str]:
    """``*``: any characters; ``?``: one; the rest as it is."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in text)
    return re.compile(regex, re.DOTALL)
