"""RIS files (``.ris``), as EndNote, Zotero, Mendeley and publishers' sites export them.

Each record runs from its ``TY  - `` line to its ``ER  - `` line; the lines of one record
are parsed by rispy (tags, lines that continue the one before), a record at a time, so the
file is streamed and each record is known by its first line.

Tags read (the first present of each group winning)::

    TI, T1                    title
    AU, A1                    authors, "Family, Given" or "Given Family"
    AB, N2                    abstract (continuation lines joined)
    PY, Y1, DA                the year; a whole date (2024/05/29/) gives the day
    KW                        subjects, as written
    DO                        DOI
    UR                        links: an arxiv.org link gives the arXiv id (an arXiv DOI too)
    JO, JF, T2, PB            the record's source
    N1 "Cited By :12"         a citation count, as Scopus (and pubsearch's export) writes it
    N1 "Also arXiv:...; doi:..."          further ids (pubsearch's export)

A record without a title or abstract is reported and skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from rispy import RisParser

from pubsearch.ingest.identifiers import ids_of_note
from pubsearch.ingest.readers.fields import (
    arxiv_id_of,
    arxiv_id_of_doi,
    display_name_author,
    person_name,
    year_from,
)
from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.records import Record, checked_date

_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: |$)")
_RIS_DATE = re.compile(r"^\s*(\d{4})(?:[/-](\d{1,2})?(?:[/-](\d{1,2})?)?)?")
_ARXIV_NOTE = re.compile(r"arxiv[:\s]+([\w.\-/]+\d)", re.IGNORECASE)
# A citation count in a note, as Scopus (and pubsearch's export) writes it: "Cited By :12".
_CITED_BY = re.compile(r"^cited by\s*:?\s*(\d+)$", re.IGNORECASE)
_MAX_RECORD_LINES = 20_000


def looks_like_ris(first_lines: list[str]) -> bool:
    """True when a line among the opening ones starts a RIS record (``TY  - JOUR``)."""
    return any(line.lstrip("\ufeff").startswith("TY  -") for line in first_lines)


def _records(lines: Iterable[str]) -> Iterator[tuple[int, list[str]]]:
    """``(first line number, lines)`` of each record, ``TY`` to ``ER`` (an ``ER`` missing
    before the next ``TY``, or at the end, is supplied)."""
    start = 0
    held: list[str] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\n").lstrip("\ufeff")
        if line.startswith("TY  -") or len(held) >= _MAX_RECORD_LINES:
            if held:
                yield start, [*held, "ER  - "]
            start, held = number, []
        if not start:
            continue
        if line.startswith("ER  -"):
            yield start, [*held, line]
            start, held = 0, []
        elif held or line.startswith("TY  -"):
            held.append(line)
    if held:
        yield start, [*held, "ER  - "]


def read_ris(lines: Iterable[str], origin: str, report: ReadReport) -> Iterator[Record]:
    """Records of a RIS file. ``origin`` is the file's display path."""
    parser = RisParser(enforce_list_tags=False)
    for first_line, record_lines in _records(lines):
        where = f"{origin}:{first_line}"
        entries = parser.parse_lines(iter(record_lines))
        if not entries:
            report.skip(where, "RIS record not parsed; skipped")
            continue
        record = record_from_ris(entries[0], where)
        if record is None:
            report.skip(where, "RIS record has neither a title (TI, T1) nor an abstract; skipped")
        else:
            yield record


def _text(entry: dict[str, Any], *keys: str) -> str:
    """The first of ``keys`` present, as one text (a repeated tag's values joined)."""
    for key in keys:
        value = entry.get(key)
        if isinstance(value, list):
            value = " ".join(str(v) for v in value if v)
        if value and str(value).strip():
            return str(value).strip()
    return ""


def _list(entry: dict[str, Any], *keys: str) -> list[str]:
    """Every value of the first of ``keys`` present."""
    for key in keys:
        value = entry.get(key)
        if isinstance(value, str):
            value = [value]
        if value:
            return [str(v).strip() for v in value if str(v).strip()]
    return []


def ris_author(name: str) -> str:
    """``Lee, Minji`` (or ``Minji Lee``) -> ``Minji Lee``."""
    if "," in name:
        family, _, given = name.partition(",")
        given, _, suffix = given.partition(",")
        return person_name(given, family, suffix=suffix)
    return display_name_author(name)


def ris_date(value: str) -> tuple[int | None, str | None]:
    """``2024/05/29/`` -> ``(2024, "2024-05-29")``; ``2007/05//`` -> ``(2007, "2007-05")``;
    ``2024///`` -> ``(2024, None)``."""
    match = _RIS_DATE.match(value)
    if not match:
        return year_from(value), None
    year = int(match.group(1))
    month, day = match.group(2), match.group(3)
    if month and day:
        return year, checked_date(f"{year:04d}-{int(month):02d}-{int(day):02d}", year)
    if month:
        return year, checked_date(f"{year:04d}-{int(month):02d}", year)
    return year, None


def _year_and_date(entry: dict[str, Any]) -> tuple[int | None, str | None]:
    year: int | None = None
    date: str | None = None
    for key in ("year", "publication_year", "date"):
        found_year, found_date = ris_date(_text(entry, key))
        year = year or found_year
        if date is None and found_date is not None and found_year == year:
            date = found_date
    return year, date


def _arxiv_id(entry: dict[str, Any], doi: str) -> str | None:
    found = arxiv_id_of_doi(doi)
    for url in _list(entry, "urls"):
        found = found or arxiv_id_of(url)
    notes = " ".join([*_list(entry, "notes"), _text(entry, "note", "accession_number")])
    match = _ARXIV_NOTE.search(notes)
    if found is None and match:
        found = arxiv_id_of(match.group(1))
    return found


def _further_ids(entry: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A paper's further arXiv ids and DOIs, from the note pubsearch's export lists them in."""
    for note in _list(entry, "notes"):
        arxiv_ids, dois = ids_of_note(note)
        if arxiv_ids or dois:
            return arxiv_ids, dois
    return (), ()


def _cited_by(entry: dict[str, Any]) -> int | None:
    for note in _list(entry, "notes"):
        match = _CITED_BY.match(note)
        if match:
            return int(match.group(1))
    return None


def record_from_ris(entry: dict[str, Any], where: str) -> Record | None:
    """The record of one parsed RIS entry (rispy's names for the tags), or ``None`` when it
    has neither a title nor an abstract."""
    title = _text(entry, "title", "primary_title")
    abstract = _text(entry, "abstract", "notes_abstract")
    if not title and not abstract:
        return None
    year, date = _year_and_date(entry)
    doi = _text(entry, "doi")
    other_arxiv_ids, other_dois = _further_ids(entry)
    authors = [ris_author(a) for a in _list(entry, "authors", "first_authors")]
    return Record(
        title=title,
        abstract=abstract,
        authors=tuple(a for a in authors if a),
        year=year,
        date=date,
        subjects=tuple(_list(entry, "keywords")),
        source=_text(entry, "journal_name", "alternate_title3", "secondary_title", "publisher"),
        origins=(where,),
        arxiv_id=_arxiv_id(entry, doi),
        other_arxiv_ids=other_arxiv_ids,
        doi=doi or None,
        other_dois=other_dois,
        cited_by=_cited_by(entry),
    )
