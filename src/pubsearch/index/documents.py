"""Records as index documents and back: the one mapping both sides use (the writer makes
documents of records; the search service makes records of stored fields).

The fields are the schema's (:mod:`pubsearch.index.schema`): ``content`` is the title counted
``TITLE_WEIGHT`` times and the abstract; ``title_words`` and ``abstract_words`` are the
title and the abstract again (their words as written, for wildcards); ``author_facet`` and
``subject_facet`` hold the values the facet table counts; ``keys`` the identity keys an
update finds a paper by.
"""

from __future__ import annotations

from typing import Any

from pubsearch.index.schema import VALUE_SEP, WRITTEN_FIELDS, content_text
from pubsearch.ingest.records import Record, date_number, date_of_number, fold


def record_fields(record: Record) -> dict[str, Any]:
    """The document fields for ``record``."""
    doc: dict[str, Any] = {
        "id": record.id,
        "keys": ",".join(key_term(k) for k in record.identity_keys),
        "title": record.title,
        "abstract": record.abstract,
        "content": content_text(record.title, record.abstract),
        "author": "\n".join(record.authors),
        "_stored_author": list(record.authors),
        "subject": ",".join(record.subjects),
        "_stored_subject": list(record.subjects),
        "author_facet": VALUE_SEP.join(record.authors).encode("utf-8"),
        "subject_facet": VALUE_SEP.join(record.subjects).encode("utf-8"),
        "source": record.source,
        "origins": list(record.origins),
        "arxiv_id": record.arxiv_id,
        "doi": record.doi,
    }
    if record.other_arxiv_ids or record.other_dois:
        # The paper's further ids, as identity keys (``arxiv:...``, ``doi:...``).
        others = [f"arxiv:{i}" for i in record.other_arxiv_ids]
        doc["other_ids"] = others + [f"doi:{d}" for d in record.other_dois]
    for source, written in WRITTEN_FIELDS.items():  # the same texts, their words as written
        doc[written] = doc[source]
    if record.year is not None:
        doc["year"] = record.year
    if record.date is not None:
        doc["date"] = date_number(record.date)
    if record.cited_by is not None:
        doc["cited"] = record.cited_by
    if record.listed is not None:
        doc["listed"] = record.listed
    return doc


def key_term(key: str) -> str:
    """How an identity key is indexed in ``keys``, a comma-separated field: with its own
    commas (a DOI may have some) and percent signs escaped."""
    return key.replace("%", "%25").replace(",", "%2C")


def author_key(name: str) -> str:
    """The exact-match form of an author name used by the author filter."""
    return fold(name).replace(",", " ")


def record_from_stored(stored: dict[str, Any]) -> Record:
    """Rebuild a :class:`Record` from a document's stored fields."""
    others = stored.get("other_ids") or ()
    return Record(
        id=stored["id"],
        title=stored.get("title", ""),
        abstract=stored.get("abstract", ""),
        authors=tuple(stored.get("author") or ()),
        year=stored.get("year"),
        date=date_of_number(stored.get("date") or 0),
        subjects=tuple(stored.get("subject") or ()),
        source=stored.get("source") or "",
        origins=tuple(stored.get("origins") or ()),
        arxiv_id=stored.get("arxiv_id"),
        doi=stored.get("doi"),
        cited_by=stored.get("cited"),
        other_arxiv_ids=tuple(k[6:] for k in others if k.startswith("arxiv:")),
        other_dois=tuple(k[4:] for k in others if k.startswith("doi:")),
        listed=stored.get("listed"),
    )
