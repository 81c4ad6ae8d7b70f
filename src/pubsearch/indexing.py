"""Building and updating an index from records.

``build_index`` writes every record into a new generation and swaps it in;
``update_index`` copies the live generation, adds or replaces records in the copy (merging
with records already there that are the same paper) and swaps that in. Either way the live
index is never written to, so nothing already indexed is lost when something fails.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whoosh import query as wq
from whoosh.index import Index
from whoosh.writing import IndexWriter

from pubsearch import storage
from pubsearch.errors import IndexMissingError
from pubsearch.records import Record, RecordMerger, fold, merge
from pubsearch.schema import VALUE_SEP, content_text

# How long a second writer waits for the first before giving up.
LOCK_TIMEOUT_SECONDS = 10.0

Progress = Callable[[int], None]


@dataclass(frozen=True)
class IndexSummary:
    """What a build or update did."""

    indexed: int
    duplicates_merged: int
    replaced: int
    total: int
    generation: str


def record_fields(record: Record) -> dict[str, Any]:
    """The document fields for ``record``."""
    doc: dict[str, Any] = {
        "id": record.id,
        "keys": ",".join(record.identity_keys),
        "title": record.title,
        "abstract": record.abstract,
        "content": content_text(record.title, record.abstract),
        "author": "\n".join(record.authors),
        "_stored_author": list(record.authors),
        "author_key": ",".join(author_key(a) for a in record.authors),
        "subject": ",".join(record.subjects),
        "_stored_subject": list(record.subjects),
        "author_facet": VALUE_SEP.join(record.authors).encode("utf-8"),
        "subject_facet": VALUE_SEP.join(record.subjects).encode("utf-8"),
        "source": record.source,
        "origins": list(record.origins),
        "arxiv_id": record.arxiv_id,
        "doi": record.doi,
    }
    if record.year is not None:
        doc["year"] = record.year
    return doc


def author_key(name: str) -> str:
    """The exact-match form of an author name used by the author filter."""
    return fold(name).replace(",", " ")


def record_from_stored(stored: dict[str, Any]) -> Record:
    """Rebuild a :class:`Record` from a document's stored fields."""
    return Record(
        id=stored["id"],
        title=stored.get("title", ""),
        abstract=stored.get("abstract", ""),
        authors=tuple(stored.get("author") or ()),
        year=stored.get("year"),
        subjects=tuple(stored.get("subject") or ()),
        source=stored.get("source") or "",
        origins=tuple(stored.get("origins") or ()),
        arxiv_id=stored.get("arxiv_id"),
        doi=stored.get("doi"),
    )


def combine(stored: Record, new: Record) -> Record:
    """What an update makes of a stored record and a new one for the same paper.

    When the new record comes from the same source files as the stored one (a re-read),
    it replaces it; when another source lists the same paper, the two are merged.
    """
    stored_files = {origin.rsplit(":", 1)[0] for origin in stored.origins}
    new_files = {origin.rsplit(":", 1)[0] for origin in new.origins}
    if not stored_files or stored_files <= new_files:
        return new
    return merge(stored, new)


def _writer(ix: Index) -> IndexWriter:
    return ix.writer(limitmb=256)


def build_index(
    index_dir: Path,
    records: Iterable[Record],
    progress: Progress | None = None,
    lock_timeout: float = LOCK_TIMEOUT_SECONDS,
) -> IndexSummary:
    """Index ``records`` (duplicates merged) as a new generation and make it live."""
    with storage.writer_lock(index_dir, lock_timeout):
        storage.remove_stale(index_dir)
        merger = RecordMerger()
        for n, record in enumerate(records, start=1):
            merger.add(record)
            if progress:
                progress(n)
        build_dir = storage.new_build_dir(index_dir)
        try:
            ix = storage.create_index(build_dir)
            writer = _writer(ix)
            try:
                for record in merger:
                    writer.add_document(**record_fields(record))
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
            ix.close()
            gen = storage.publish(index_dir, build_dir)
        except BaseException:
            shutil.rmtree(build_dir, ignore_errors=True)
            raise
        return IndexSummary(
            indexed=len(merger),
            duplicates_merged=merger.duplicates,
            replaced=0,
            total=len(merger),
            generation=gen.name,
        )


def update_index(
    index_dir: Path,
    records: Iterable[Record],
    progress: Progress | None = None,
    lock_timeout: float = LOCK_TIMEOUT_SECONDS,
) -> IndexSummary:
    """Add or replace ``records`` in a copy of the live index, then make the copy live.

    A record that is the same paper as one already indexed (by any identity key) replaces
    it, merged with it: the authors of both are kept.
    """
    with storage.writer_lock(index_dir, lock_timeout):
        storage.remove_stale(index_dir)
        live = storage.current_generation(index_dir)
        if live is None:
            raise IndexMissingError(f"no index at {index_dir} to update (build one first)")
        merger = RecordMerger()
        for n, record in enumerate(records, start=1):
            merger.add(record)
            if progress:
                progress(n)
        build_dir = storage.new_build_dir(index_dir)
        try:
            storage.copy_generation(live, build_dir)
            from whoosh import index as whoosh_index

            ix = whoosh_index.open_dir(str(build_dir))
            replaced = 0
            writer = _writer(ix)
            try:
                with ix.searcher() as searcher:
                    for record in merger:
                        existing = _same_paper(searcher, record)
                        merged = record
                        for docnum, stored in existing:
                            merged = combine(record_from_stored(stored), merged)
                            writer.delete_document(docnum)
                        replaced += bool(existing)
                        writer.add_document(**record_fields(merged))
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
            total = ix.doc_count()
            ix.close()
            gen = storage.publish(index_dir, build_dir)
        except BaseException:
            shutil.rmtree(build_dir, ignore_errors=True)
            raise
        return IndexSummary(
            indexed=len(merger),
            duplicates_merged=merger.duplicates,
            replaced=replaced,
            total=total,
            generation=gen.name,
        )


def _same_paper(searcher: Any, record: Record) -> list[tuple[int, dict[str, Any]]]:
    terms = [wq.Term("keys", k) for k in record.identity_keys] + [wq.Term("id", record.id)]
    docnums = sorted(set(searcher.docs_for_query(wq.Or(terms))))
    return [(d, searcher.stored_fields(d)) for d in docnums]
