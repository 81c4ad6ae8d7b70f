"""Generic JSON records: one object per line (or one JSON array of objects).

Fields read, the first present of each group winning::

    id, _id, arxiv_id          an arXiv id (2101.00001, hep-th/9901001, vN allowed) sets
                               arxiv_id; any other id (BEIR's "_id": "4983") is kept as
                               the record's id, exactly
    title                      (a record without one is shown by its first words)
    abstract, text, summary    (a record needs a title or one of these)
    authors                    ["A. One", ...], [{"name": ...} or {"keyname", "forenames"}],
                               or "A. One, B. Two and C. Three"
    categories, subjects       a list, or one space-separated string; plus primary_category
    year, or date, published, update_date    (the year is taken from a date; the first
                               of the three that gives a day is the record's date)
    date_source                "listing_file_date" (or no date but update_date): the date
                               is a listing's, and a record listed more than a year after
                               its arXiv id's month is dated by that month (dating.py)
    doi, source

Author names and the title and abstract go through TeX accent decoding (see
:mod:`pubsearch.ingest.readers.tex`). A line that is not a JSON object, or has neither a title nor
an abstract, is reported and skipped; a field of the wrong type is reported and ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pubsearch.ingest.dating import dated_by_submission
from pubsearch.ingest.readers.fields import (
    arxiv_id_of,
    authors_from,
    date_from,
    first_doi,
    id_string,
    subjects_from,
    year_from,
)
from pubsearch.ingest.readers.jsonstream import JsonObject, iter_objects
from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.readers.tex import tex_to_unicode
from pubsearch.ingest.records import Record

_ID_KEYS = ("id", "_id", "arxiv_id")
_ABSTRACT_KEYS = ("abstract", "text", "summary")
_SUBJECT_KEYS = ("categories", "subjects")
_DATE_KEYS = ("year", "date", "published", "update_date")


def read_jsonl(lines: Iterable[str], origin: str, report: ReadReport) -> Iterator[Record]:
    """Records of a JSON lines file (or JSON array). ``origin`` is the file's display path."""
    for number, obj in iter_objects(lines, origin, report):
        where = f"{origin}:{number}"
        notes: list[str] = []
        record = record_from_object(obj, where, notes)
        for note in notes:
            report.skip(where, note)
        if record is not None:
            yield record


def _first(obj: JsonObject, keys: Iterable[str]) -> tuple[str, Any] | None:
    """The first of ``keys`` present in ``obj`` with a value that is not null, and its value."""
    for key in keys:
        value = obj.get(key)
        if value is not None:
            return key, value
    return None


def _text(obj: JsonObject, keys: Iterable[str], notes: list[str]) -> str:
    found = _first(obj, keys)
    if found is None:
        return ""
    key, value = found
    if not isinstance(value, str):
        notes.append(f"'{key}' is not a string; ignored")
        return ""
    return tex_to_unicode(value)


def _ids(obj: JsonObject) -> tuple[str | None, str]:
    """``(arxiv_id, own_id)``: the arXiv id if any id field holds one, and the record's own
    id when the file gives one that is not an arXiv id (``""`` otherwise)."""
    arxiv_id: str | None = None
    own_id = ""
    for key in _ID_KEYS:
        value = id_string(obj.get(key))
        if value is None:
            continue
        found = arxiv_id_of(value)
        if found is not None:
            arxiv_id = arxiv_id or found
        elif key != "arxiv_id" and not own_id:
            own_id = value
    return arxiv_id, own_id


def _authors(obj: JsonObject, notes: list[str]) -> list[str]:
    value = obj.get("authors")
    if value is None:
        return []
    names = authors_from(value)
    if names is None:
        notes.append("'authors' is not a list of names or a string; ignored")
        return []
    return names


def _subjects(obj: JsonObject, notes: list[str]) -> list[str]:
    subjects: list[str] = []
    found = _first(obj, _SUBJECT_KEYS)
    if found is not None:
        key, value = found
        listed = subjects_from(value)
        if listed is None:
            notes.append(f"'{key}' is not a list of strings or a string; ignored")
        subjects.extend(listed or [])
    primary = obj.get("primary_category")
    if isinstance(primary, str) and primary.strip():
        subjects.append(primary.strip())
    return subjects


def _year(obj: JsonObject) -> int | None:
    for key in _DATE_KEYS:
        year = year_from(obj.get(key))
        if year is not None:
            return year
    return None


def _date(obj: JsonObject) -> str | None:
    """The first full date (a day) of ``date``, ``published``, ``update_date``."""
    for key in _DATE_KEYS[1:]:
        date = date_from(obj.get(key))
        if date is not None:
            return date
    return None


def record_from_object(obj: JsonObject, where: str, notes: list[str]) -> Record | None:
    """The record of one JSON object, or ``None`` (with a note why) when it has neither a
    title nor an abstract.

    ``where`` (``path:line``) becomes the record's origin; problems with single fields
    are appended to ``notes``.
    """
    title = _text(obj, ("title",), notes)
    abstract = _text(obj, _ABSTRACT_KEYS, notes)
    if not title.strip() and not abstract.strip():
        notes.append("record has neither a title nor an abstract or text; skipped")
        return None
    arxiv_id, own_id = _ids(obj)
    source = obj.get("source")
    record = Record(
        title=title,
        abstract=abstract,
        authors=tuple(_authors(obj, notes)),
        year=_year(obj),
        date=_date(obj),
        subjects=tuple(_subjects(obj, notes)),
        source=source if isinstance(source, str) else "",
        origins=(where,),
        arxiv_id=arxiv_id,
        doi=first_doi(obj.get("doi")),
        id=own_id,
    )
    return dated_by_submission(record) if _dated_by_listing(obj) else record


def _dated_by_listing(obj: JsonObject) -> bool:
    """Whether the record's date is the day a listing gave it, not its publication's: its
    ``date_source`` says so (``listing_file_date``, as ../shared/data's records), or,
    without one, the day comes from arXiv's ``update_date`` alone."""
    source = obj.get("date_source")
    if isinstance(source, str):
        return "listing" in source.casefold()
    return date_from(obj.get("date")) is None and date_from(obj.get("published")) is None
