"""arXiv's bulk metadata snapshot (``arxiv-metadata-oai-snapshot.json``): JSON lines.

One object per paper::

    {"id": "0704.0001", "authors": "C. Bal\\'azs, E. L. Berger, ...", "title": "...",
     "abstract": "...", "categories": "hep-ph math.CO", "doi": "10.1103/...",
     "journal-ref": "...", "update_date": "2008-11-26",
     "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}, ...],
     "authors_parsed": [["Balázs", "C.", ""], ...]}

Authors come from ``authors_parsed`` (``[last, first, suffix]``, already free of TeX)
when it is there, else from the ``authors`` string; every name goes through
:func:`~pubsearch.ingest.readers.tex.normalize_author`. The year is that of the first version,
else of ``update_date`` (a listing's day: a record more than a year younger than its id
is dated by the id's month, see :mod:`pubsearch.ingest.dating`). Titles and abstracts have
their TeX accents decoded.
``journal-ref`` has no place in a :class:`~pubsearch.ingest.records.Record` and is not kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pubsearch.ingest.dating import dated_by_submission
from pubsearch.ingest.readers.fields import (
    arxiv_id_of,
    date_from,
    first_doi,
    id_string,
    split_authors,
    subjects_from,
    year_from,
)
from pubsearch.ingest.readers.jsonstream import JsonObject, iter_objects, sniff_keys
from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.readers.tex import normalize_author, tex_to_unicode
from pubsearch.ingest.records import Record

SOURCE = "arXiv"
_MARKER_KEYS = frozenset({"authors_parsed", "versions"})


def looks_like_arxiv_snapshot(first_lines: list[str]) -> bool:
    """True when the opening JSON objects have snapshot-only keys (``authors_parsed``,
    ``versions``)."""
    return bool(sniff_keys(first_lines) & _MARKER_KEYS)


def read_arxiv_snapshot(lines: Iterable[str], origin: str, report: ReadReport) -> Iterator[Record]:
    """Records of an arXiv metadata snapshot. ``origin`` is the file's display path."""
    for number, obj in iter_objects(lines, origin, report):
        where = f"{origin}:{number}"
        problem, record = _record(obj, where)
        if record is None:
            report.skip(where, problem)
        else:
            yield record


def _record(obj: JsonObject, where: str) -> tuple[str, Record | None]:
    """The record of one snapshot object, or why there is none."""
    raw_id = id_string(obj.get("id"))
    arxiv_id = arxiv_id_of(raw_id)
    if arxiv_id is None:
        return f"no arXiv id (id is {raw_id!r}); skipped", None
    title = obj.get("title")
    title = title if isinstance(title, str) else ""
    abstract = obj.get("abstract")
    abstract = abstract if isinstance(abstract, str) else ""
    if not title.strip() and not abstract.strip():
        return "record has neither a title nor an abstract; skipped", None
    record = Record(
        title=tex_to_unicode(title),
        abstract=tex_to_unicode(abstract),
        authors=tuple(snapshot_authors(obj)),
        year=first_version_year(obj),
        date=first_version_date(obj),
        subjects=tuple(subjects_from(obj.get("categories")) or ()),
        source=SOURCE,
        origins=(where,),
        arxiv_id=arxiv_id,
        doi=first_doi(obj.get("doi")),
    )
    # Without a dated version a record has only update_date, a listing's day (dating.py).
    dated = any(year_from(v.get("created")) is not None for v in _versions(obj))
    return "", record if dated else dated_by_submission(record)


def parsed_name(parts: object) -> str:
    """``["Evans", "Neal J.", "II"]`` -> ``Neal J. Evans II``; ``""`` if not such a list.
    Items after the suffix (affiliations) are left out."""
    if not isinstance(parts, list) or not parts or not all(isinstance(p, str) for p in parts):
        return ""
    last = parts[0]
    first = parts[1] if len(parts) > 1 else ""
    suffix = parts[2] if len(parts) > 2 else ""
    return normalize_author(" ".join(p for p in (first, last, suffix) if p.strip()))


def snapshot_authors(obj: JsonObject) -> list[str]:
    """Author names from ``authors_parsed``, or from the ``authors`` string without it."""
    parsed = obj.get("authors_parsed")
    if isinstance(parsed, list):
        names = [parsed_name(parts) for parts in parsed]
        if names and all(names):
            return names
    authors = obj.get("authors")
    return split_authors(authors) if isinstance(authors, str) else []


def first_version_year(obj: JsonObject) -> int | None:
    """Year of version 1 (the first submission), else of ``update_date``."""
    for version in _versions(obj):
        year = year_from(version.get("created"))
        if year is not None:
            return year
    return year_from(obj.get("update_date"))


def first_version_date(obj: JsonObject) -> str | None:
    """Day of version 1 (``Mon, 2 Apr 2007 19:18:42 GMT`` -> ``2007-04-02``), else of
    ``update_date``."""
    for version in _versions(obj):
        if year_from(version.get("created")) is not None:
            return date_from(version.get("created"))
    return date_from(obj.get("update_date"))


def _versions(obj: JsonObject) -> list[dict[str, object]]:
    versions = obj.get("versions")
    if not isinstance(versions, list):
        return []
    dated = [v for v in versions if isinstance(v, dict)]
    dated.sort(key=_version_number)
    return dated


def _version_number(version: dict[str, object]) -> int:
    """``{"version": "v3"}`` -> 3; unnumbered versions sort last."""
    label = version.get("version")
    number = label[1:] if isinstance(label, str) else ""
    if number.isascii() and number.isdigit():  # not "v²": isdigit takes it, int() does not
        return int(number)
    return 1 << 30
