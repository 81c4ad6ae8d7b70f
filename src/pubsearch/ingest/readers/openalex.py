"""OpenAlex works: JSON lines from its snapshot or ``/works`` API (one work a line), or a
saved API response (``{"meta": ..., "results": [...]}``).

Fields read::

    title, else display_name
    abstract_inverted_index   turned back into the abstract's text
    authorships[].author.display_name   (else raw_author_name)
    publication_year, publication_date
    topics[].display_name     subjects; without topics, concepts scored at least 0.3
    doi, ids.doi              (https://doi.org/...); an arXiv DOI gives the arXiv id
    ids.arxiv                 the arXiv id
    primary_location.source.display_name    the record's source
    cited_by_count            the citation count ("Most cited" sorts by it)

A work without a title or abstract is reported and skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pubsearch.ingest.readers.fields import (
    arxiv_id_of,
    arxiv_id_of_doi,
    date_from,
    display_name_author,
    year_from,
)
from pubsearch.ingest.readers.jsonstream import read_works, sniff_keys, sniff_objects
from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.records import Record

_MARKERS = frozenset(
    {"abstract_inverted_index", "authorships", "cited_by_count", "publication_year"}
)
MIN_CONCEPT_SCORE = 0.3


def looks_like_openalex(first_lines: list[str]) -> bool:
    """True when the opening objects are OpenAlex works, or an API response of them."""
    if sniff_keys(first_lines) & _MARKERS:
        return True
    for obj in sniff_objects(first_lines):
        results = obj.get("results")
        if isinstance(results, list) and results and isinstance(results[0], Mapping):
            return bool(set(results[0]) & _MARKERS)
    return False


def read_openalex(lines: Iterable[str], origin: str, report: ReadReport) -> Iterator[Record]:
    """Records of OpenAlex works. ``origin`` is the file's display path."""

    def works_of(obj: Mapping[str, Any]) -> list[Any]:
        return obj["results"] if isinstance(obj.get("results"), list) else [obj]

    yield from read_works(lines, origin, report, "OpenAlex", works_of, record_from_work)


def abstract_text(index: object) -> str:
    """The abstract an ``abstract_inverted_index`` ({word: [positions]}) stands for."""
    if not isinstance(index, Mapping):
        return ""
    placed: dict[int, str] = {}
    for word, positions in index.items():
        if isinstance(positions, list):
            for position in positions:
                if isinstance(position, int):
                    placed[position] = str(word)
    return " ".join(placed[p] for p in sorted(placed))


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _string(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _authors(work: Mapping[str, Any]) -> tuple[str, ...]:
    names: list[str] = []
    for authorship in work.get("authorships") or ():
        if not isinstance(authorship, Mapping):
            continue
        name = _string(_mapping(authorship.get("author")).get("display_name")) or _string(
            authorship.get("raw_author_name")
        )
        if name:
            names.append(display_name_author(name))
    return tuple(names)


def _subjects(work: Mapping[str, Any]) -> tuple[str, ...]:
    topics = [_string(_mapping(t).get("display_name")) for t in work.get("topics") or ()]
    if any(topics):
        return tuple(t for t in topics if t)
    concepts = []
    for concept in work.get("concepts") or ():
        score = _mapping(concept).get("score")
        if isinstance(score, int | float) and score >= MIN_CONCEPT_SCORE:
            concepts.append(_string(_mapping(concept).get("display_name")))
    return tuple(c for c in concepts if c)


def _cited_by(work: Mapping[str, Any]) -> int | None:
    count = work.get("cited_by_count")
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None


def record_from_work(work: Mapping[str, Any], where: str) -> Record | None:
    """The record of one OpenAlex work, or ``None`` when it has neither a title nor an
    abstract."""
    title = _string(work.get("title")) or _string(work.get("display_name"))
    abstract = abstract_text(work.get("abstract_inverted_index"))
    if not title and not abstract:
        return None
    ids = _mapping(work.get("ids"))
    doi = _string(work.get("doi")) or _string(ids.get("doi"))
    source = _mapping(_mapping(work.get("primary_location")).get("source"))
    return Record(
        title=title,
        abstract=abstract,
        authors=_authors(work),
        year=year_from(work.get("publication_year")),
        date=date_from(work.get("publication_date")),
        subjects=_subjects(work),
        source=_string(source.get("display_name")),
        origins=(where,),
        arxiv_id=arxiv_id_of(_string(ids.get("arxiv")) or None) or arxiv_id_of_doi(doi),
        doi=doi or None,
        cited_by=_cited_by(work),
    )
