"""What the commands print of hits: the terminal's text, and the reference formats."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from pubsearch.ingest.records import Record
    from pubsearch.search.results import Hit

FORMATS = ("text", "json", "jsonl", "csv", "bibtex", "ris", "csljson")


def citation_export(fmt: str, hits: tuple[Hit, ...], record: Callable[[str], Record]) -> str | None:
    """The hits as BibTeX, RIS or CSL JSON (None for the other formats)."""
    if fmt not in ("bibtex", "ris", "csljson"):
        return None  # (the export formats' readers load only for these)
    from pubsearch.search import export

    writers = {
        "bibtex": export.hits_to_bibtex,
        "ris": export.hits_to_ris,
        "csljson": export.hits_to_csljson,
    }
    return writers[fmt](hits, record) if fmt in writers else None


def _highlighted(fragment: str) -> str:
    """Terminal form of an HTML snippet: matches in bold (plain when piped)."""
    from pubsearch.search.highlighting import html_to_plain

    out = []
    for i, part in enumerate(fragment.split("<mark>")):
        if i == 0:
            out.append(html_to_plain(part))
            continue
        matched, _, rest = part.partition("</mark>")
        out.append(click.style(html_to_plain(matched), bold=True) + html_to_plain(rest))
    return "".join(out)


def print_hit(hit: Hit) -> None:
    title = _highlighted(hit.title_html)
    if hit.untitled:
        title = click.style("[untitled] ", dim=True) + title
    click.echo(f"{hit.rank:>3}. " + title)
    meta = [hit.date or str(hit.year or "n.d."), ", ".join(hit.authors) or "unknown authors"]
    meta.append(("; " if any(" " in x for x in hit.subjects) else " ").join(hit.subjects))
    if hit.cited_by is not None:
        meta.append(f"cited by {hit.cited_by:,}")
    meta.append(hit.id)
    click.echo("     " + click.style(" \u00b7 ".join(m for m in meta if m), dim=True))
    if hit.by_meaning and hit.why:
        click.echo("     " + click.style("close in meaning: ", dim=True) + _highlighted(hit.why))
    elif hit.snippet:
        click.echo("     " + _highlighted(hit.snippet))
    click.echo()
