"""What arXiv's OAI-PMH metadata formats make of a paper: one :class:`Record` each.

- ``arXiv``: the id, ``created`` (the first version's day) and ``updated``, authors as
  ``keyname``/``forenames``/``suffix``, categories, DOI, licence, abstract.
- ``arXivRaw``: close to arXiv's own store: every version with its date, the authors as
  one string (TeX and all), categories, DOI, abstract.
- ``oai_dc``: plain Dublin Core, what every OAI-PMH repository serves: creators written
  ``Family, Given``, subjects as names (``Computer Science - Learning``), descriptions,
  dates, identifiers (an arXiv abstract page, a DOI).

Titles, abstracts and names are read as the arXiv snapshot reader reads them
(:mod:`pubsearch.ingest.readers.arxiv_snapshot`): TeX accents decoded, names normalised,
categories as subjects, the year and day of the first version. Elements are found by
their local names, whichever namespace a repository writes them in.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence

from pubsearch.harvest.oaipmh import OaiRecord
from pubsearch.ingest.dating import dated_by_submission
from pubsearch.ingest.identifiers import normalize_doi
from pubsearch.ingest.readers.arxiv_snapshot import parsed_name
from pubsearch.ingest.readers.fields import (
    arxiv_id_of,
    date_from,
    first_doi,
    split_authors,
    subjects_from,
    year_from,
)
from pubsearch.ingest.readers.tex import normalize_author, tex_to_unicode
from pubsearch.ingest.records import Record

SOURCE = "arXiv"
# Records of another repository's oai_dc (no arXiv id) say where they came from so.
OAI_SOURCE = "OAI-PMH"


def record_of(oai: OaiRecord, metadata_prefix: str, origin: str) -> Record | None:
    """The record of one harvested item, or None when it has neither title nor abstract
    (or, in arXiv's own formats, no arXiv id)."""
    if oai.metadata is None:
        return None
    reader = _READERS.get(metadata_prefix, _from_oai_dc)
    record = reader(oai, oai.metadata, origin)
    if record is None or not (record.title or record.abstract):
        return None
    return record


def arxiv_id_of_header(identifier: str) -> str | None:
    """``oai:arXiv.org:2401.00001`` -> ``2401.00001`` (also old-style ids); None if none."""
    return arxiv_id_of(identifier.rsplit(":", 1)[-1]) if identifier else None


def _from_arxiv(oai: OaiRecord, meta: ET.Element, origin: str) -> Record | None:
    fields = _fields(meta)
    arxiv_id = arxiv_id_of(fields.get("id")) or arxiv_id_of_header(oai.identifier)
    if arxiv_id is None:
        return None
    authors: list[str] = []
    for group in _children(meta, "authors"):
        for author in _children(group, "author"):
            parts = _fields(author)
            name = parsed_name(
                [parts.get("keyname", ""), parts.get("forenames", ""), parts.get("suffix", "")]
            )
            if name:
                authors.append(name)
    return _arxiv_record(fields, authors, fields.get("created"), oai, origin, arxiv_id)


def _from_arxiv_raw(oai: OaiRecord, meta: ET.Element, origin: str) -> Record | None:
    fields = _fields(meta)
    arxiv_id = arxiv_id_of(fields.get("id")) or arxiv_id_of_header(oai.identifier)
    if arxiv_id is None:
        return None
    versions = sorted(_children(meta, "version"), key=_version_number)
    first = _fields(versions[0]).get("date") if versions else None
    authors = split_authors(fields.get("authors", ""))
    return _arxiv_record(fields, authors, first, oai, origin, arxiv_id)


def _arxiv_record(
    fields: dict[str, str],
    authors: Sequence[str],
    first: str | None,
    oai: OaiRecord,
    origin: str,
    arxiv_id: str,
) -> Record:
    """The record of an arXiv metadata format's ``fields``, dated by its first version
    (``first``), else by the header's datestamp."""
    return _dated(
        Record(
            title=tex_to_unicode(fields.get("title", "")),
            abstract=tex_to_unicode(fields.get("abstract", "")),
            authors=tuple(authors),
            year=year_from(first or oai.datestamp),
            date=date_from(first or oai.datestamp),
            subjects=tuple(subjects_from(fields.get("categories", "")) or ()),
            source=SOURCE,
            origins=(origin,),
            arxiv_id=arxiv_id,
            doi=first_doi(fields.get("doi")),
        ),
        dated=first is not None,
    )


def _from_oai_dc(oai: OaiRecord, meta: ET.Element, origin: str) -> Record | None:
    values = _all_fields(meta)
    identifiers = values.get("identifier", [])
    arxiv_id = next(filter(None, map(arxiv_id_of, identifiers)), None)
    arxiv_id = arxiv_id or arxiv_id_of_header(oai.identifier)
    doi = next(filter(None, (normalize_doi(i) for i in identifiers if _is_doi(i))), None)
    descriptions = [d for d in values.get("description", []) if not d.startswith("Comment:")]
    dates = values.get("date", [])
    day = dates[0] if dates else oai.datestamp
    titles = values.get("title", [])
    return _dated(
        Record(
            title=tex_to_unicode(titles[0] if titles else ""),
            abstract=tex_to_unicode(descriptions[0] if descriptions else ""),
            authors=tuple(filter(None, map(_creator, values.get("creator", [])))),
            year=year_from(day),
            date=date_from(day),
            subjects=tuple(values.get("subject", [])),
            source=SOURCE if arxiv_id else OAI_SOURCE,
            origins=(origin,),
            arxiv_id=arxiv_id,
            doi=doi,
        ),
        dated=bool(dates),
    )


_READERS: dict[str, Callable[[OaiRecord, ET.Element, str], Record | None]] = {
    "arXiv": _from_arxiv,
    "arXivRaw": _from_arxiv_raw,
    "oai_dc": _from_oai_dc,
}


def _dated(record: Record, dated: bool) -> Record:
    """A record dated only by its header's datestamp (a listing's day) is dated by its
    id's month where that is much older (as the snapshot reader does)."""
    return record if dated else dated_by_submission(record)


def _creator(name: str) -> str:
    """``Balázs, C.`` -> ``C. Balázs``."""
    family, comma, given = name.partition(",")
    return normalize_author(f"{given} {family}" if comma else name)


def _is_doi(identifier: str) -> bool:
    lowered = identifier.strip().lower()
    return lowered.startswith(("doi:", "10.", "https://doi.org/", "http://dx.doi.org/"))


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(element: ET.Element, name: str) -> list[ET.Element]:
    return [child for child in element if _local(child.tag) == name]


def _fields(element: ET.Element) -> dict[str, str]:
    """The text of each child element by local name (the first of each name)."""
    out: dict[str, str] = {}
    for child in element:
        out.setdefault(_local(child.tag), "".join(child.itertext()).strip())
    return out


def _all_fields(element: ET.Element) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for child in element:
        text = "".join(child.itertext()).strip()
        if text:
            out.setdefault(_local(child.tag), []).append(text)
    return out


def _version_number(version: ET.Element) -> int:
    label = version.get("version", "")[1:]
    return int(label) if label.isascii() and label.isdigit() else 1 << 30
