"""Crossref works: a saved ``/works/{doi}`` response (``{"message": {...}}``), a
``/works`` search response (``{"message": {"items": [...]}}``), or JSON lines of works.

Fields read::

    title[0]
    author                    {given, family, suffix} or {name} (an organisation)
    abstract                  JATS XML: its tags dropped, its "Abstract" heading too
    issued                    date-parts; else published, published-print, -online, created
    subject                   subjects, as written
    DOI, URL                  an arXiv DOI gives the arXiv id
    container-title[0], publisher          the record's source
    is-referenced-by-count    the citation count ("Most cited" sorts by it)

A work without a title or abstract is reported and skipped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pubsearch.ingest.readers.fields import arxiv_id_of_doi, date_parts, person_name
from pubsearch.ingest.readers.jsonstream import read_works, sniff_keys
from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.readers.tex import normalize_author
from pubsearch.ingest.records import Record

_MARKERS = frozenset(
    {"message-type", "is-referenced-by-count", "reference-count", "deposited", "member"}
)
_DATE_KEYS = ("issued", "published", "published-print", "published-online", "created")
_JATS_TITLE = re.compile(r"<(jats:)?title\b[^>]*>.*?</(jats:)?title>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
# Tags that end a block of text (a paragraph, a section): a space where they were.
_BLOCK_TAG = re.compile(r"</?(?:jats:)?(?:p|sec|list-item|list|break)\b[^>]*>")


def looks_like_crossref(first_lines: list[str]) -> bool:
    """True when the opening objects are Crossref works or a Crossref API response."""
    return bool(sniff_keys(first_lines) & _MARKERS)


def _works(obj: Mapping[str, Any]) -> list[Any]:
    """The works of one JSON object: a response's ``message`` (or its ``items``), or the
    object itself."""
    message = obj.get("message")
    if isinstance(message, Mapping):
        items = message.get("items")
        return items if isinstance(items, list) else [message]
    return [obj]


def read_crossref(lines: Iterable[str], origin: str, report: ReadReport) -> Iterator[Record]:
    """Records of Crossref works. ``origin`` is the file's display path."""
    yield from read_works(lines, origin, report, "Crossref", _works, record_from_work)


def jats_text(value: str) -> str:
    """A JATS abstract as text: ``<jats:title>`` headings dropped, other tags removed,
    entities decoded."""
    return html.unescape(_TAG.sub("", _BLOCK_TAG.sub(" ", _JATS_TITLE.sub(" ", value))))


def _first(value: object) -> str:
    """A Crossref string list's first string (``title``, ``container-title``)."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), "")
    return value.strip() if isinstance(value, str) else ""


def _authors(work: Mapping[str, Any]) -> tuple[str, ...]:
    names: list[str] = []
    for author in work.get("author") or ():
        if not isinstance(author, Mapping):
            continue
        if isinstance(author.get("name"), str):
            name = normalize_author(author["name"])
        else:
            name = person_name(
                _first(author.get("given")),
                _first(author.get("family")),
                "",
                _first(author.get("suffix")),
            )
        if name:
            names.append(name)
    return tuple(names)


def _year_and_date(work: Mapping[str, Any]) -> tuple[int | None, str | None]:
    for key in _DATE_KEYS:
        year, date = date_parts(work.get(key))
        if year is not None:
            return year, date
    return None, None


def _subjects(work: Mapping[str, Any]) -> tuple[str, ...]:
    subjects = work.get("subject")
    if not isinstance(subjects, list):
        return ()
    return tuple(s.strip() for s in subjects if isinstance(s, str) and s.strip())


def record_from_work(work: Mapping[str, Any], where: str) -> Record | None:
    """The record of one Crossref work, or ``None`` when it has neither a title nor an
    abstract."""
    title = html.unescape(_TAG.sub("", _first(work.get("title"))))
    abstract = jats_text(_first(work.get("abstract")))
    if not title.strip() and not abstract.strip():
        return None
    year, date = _year_and_date(work)
    doi = _first(work.get("DOI"))
    count = work.get("is-referenced-by-count")
    return Record(
        title=title,
        abstract=abstract,
        authors=_authors(work),
        year=year,
        date=date,
        subjects=_subjects(work),
        source=_first(work.get("container-title")) or _first(work.get("publisher")),
        origins=(where,),
        arxiv_id=arxiv_id_of_doi(doi),
        doi=doi or None,
        cited_by=count
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0
        else None,
    )
