"""CSL JSON: the citation data of Zotero's and citation.js's exports and of Pandoc
(``pandoc -t csljson``): a JSON array of items (or one item a line).

Fields read::

    title
    author                    {family, given, non-dropping-particle, suffix} or {literal}
    abstract
    issued                    date-parts (numbers or digit strings), else raw or literal
    keyword                   subjects, comma- or semicolon-separated
    DOI, URL                  an arXiv DOI or arxiv.org URL gives the arXiv id; so does
                              Zotero's "number": "arXiv:2405.18986"
    container-title, publisher            the record's source
    custom.cited_by_count     a citation count (pubsearch's own export writes it)

An item without a title or abstract is reported and skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pubsearch.ingest.identifiers import ids_of_note
from pubsearch.ingest.readers.fields import (
    arxiv_id_of,
    arxiv_id_of_doi,
    date_parts,
    keywords_from,
    person_name,
)
from pubsearch.ingest.readers.jsonstream import JsonObject, iter_objects, sniff_keys
from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.readers.tex import normalize_author
from pubsearch.ingest.records import Record

# Keys no other JSON format read here has, besides CSL's own.
_MARKERS = frozenset({"issued", "container-title", "citation-key", "non-dropping-particle"})
_ARXIV_NUMBER = re.compile(r"arxiv[:\s]+([\w.\-/]+\d)", re.IGNORECASE)


def looks_like_csljson(first_lines: list[str]) -> bool:
    """True when the opening objects have CSL's keys (``issued``, ``container-title``...),
    or a ``type`` with an ``author`` list or an upper-case ``DOI``."""
    keys = sniff_keys(first_lines)
    return bool(keys & _MARKERS) or ("type" in keys and bool(keys & {"author", "DOI", "URL"}))


def read_csljson(lines: Iterable[str], origin: str, report: ReadReport) -> Iterator[Record]:
    """Records of a CSL JSON file. ``origin`` is the file's display path."""
    for number, obj in iter_objects(lines, origin, report):
        where = f"{origin}:{number}"
        record = record_from_csl(obj, where)
        if record is None:
            report.skip(where, "CSL item has neither a title nor an abstract; skipped")
        else:
            yield record


def _string(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    if isinstance(value, list):  # some tools write container-title as a list
        value = value[0] if value else ""
    return value.strip() if isinstance(value, str) else ""


def csl_author(name: Mapping[str, Any]) -> str:
    """One CSL name: ``{"family": "Lee", "given": "Minji"}`` or ``{"literal": ...}``."""
    literal = _string(name, "literal")
    if literal:
        return normalize_author(literal)
    particle = " ".join(
        p for p in (_string(name, "dropping-particle"), _string(name, "non-dropping-particle")) if p
    )
    return person_name(
        _string(name, "given"), _string(name, "family"), particle, _string(name, "suffix")
    )


def _authors(obj: JsonObject) -> tuple[str, ...]:
    names = obj.get("author")
    if not isinstance(names, list):
        return ()
    found = (csl_author(n) for n in names if isinstance(n, Mapping))
    return tuple(n for n in found if n)


def _arxiv_id(obj: JsonObject, doi: str) -> str | None:
    found = arxiv_id_of_doi(doi) or arxiv_id_of(_string(obj, "URL"))
    if found:
        return found
    for key in ("number", "note", "archive_location"):
        match = _ARXIV_NUMBER.search(_string(obj, key))
        if match:
            return arxiv_id_of(match.group(1))
    return None


def _cited_by(obj: JsonObject) -> int | None:
    custom = obj.get("custom")
    count = custom.get("cited_by_count") if isinstance(custom, Mapping) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None


def record_from_csl(obj: JsonObject, where: str) -> Record | None:
    """The record of one CSL item, or ``None`` when it has neither a title nor an
    abstract."""
    title = _string(obj, "title")
    abstract = _string(obj, "abstract")
    if not title and not abstract:
        return None
    year, date = date_parts(obj.get("issued"))
    doi = _string(obj, "DOI")
    # A paper's further ids, in the note pubsearch's export writes them in.
    other_arxiv_ids, other_dois = ids_of_note(_string(obj, "note"))
    return Record(
        title=title,
        abstract=abstract,
        authors=_authors(obj),
        year=year,
        date=date,
        subjects=tuple(keywords_from(_string(obj, "keyword"))),
        source=_string(obj, "container-title") or _string(obj, "publisher"),
        origins=(where,),
        arxiv_id=_arxiv_id(obj, doi),
        other_arxiv_ids=other_arxiv_ids,
        doi=doi or None,
        other_dois=other_dois,
        cited_by=_cited_by(obj),
    )
