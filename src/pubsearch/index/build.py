"""Building and updating an index from records.

``build_index`` writes every record into a new generation and swaps it in;
``update_index`` copies the live generation, adds or replaces records in the copy (merging
with records already there that are the same paper) and swaps that in. Either way the live
index is never written to, so nothing already indexed is lost when something fails.
"""

from __future__ import annotations

import functools
import gc
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pubsearch.core import forked, memory
from pubsearch.core.config import LOCK_TIMEOUT_SECONDS
from pubsearch.core.errors import IndexCorruptError, IndexMissingError
from pubsearch.index import peoplewords, postings, storage, vectors
from pubsearch.index.documents import key_term, record_fields, record_from_stored
from pubsearch.index.facets import FacetTable, SegmentFacets, segment_facets
from pubsearch.index.peopletable import PEOPLE_FILE, PeopleTable
from pubsearch.index.schema import OPTIONAL_FIELDS, analysed_as_now
from pubsearch.index.segments.workers import write_documents
from pubsearch.index.segments.writer import merge_small_segments, segment_writer
from pubsearch.index.tables import save_tables
from pubsearch.ingest.eprints import EprintCheck, merged_papers
from pubsearch.ingest.records import Record, RecordMerger, StreamingMerger, Written, merge

if TYPE_CHECKING:
    from pubsearch.index.embedding import Embedder

# How long a second writer waits for the first before giving up.
# More indexing processes than this gain little (the reading process is the limit).
MAX_WORKERS = 4

Progress = Callable[[int], None]
# From this many documents a build's people table is made in a fresh interpreter, not a
# forked child (see _save_facets). At 102,289 records the fresh one made the build's peak
# no lower (1.4 GB of RSS summed either way) and the build no faster; at a million it
# is 4.6 GB against 7.0 (docs/growth.md, 7 December).
SPAWN_PEOPLE_FROM = 200_000


@dataclass(frozen=True)
class IndexSummary:
    """What a build or update did."""

    indexed: int
    duplicates_merged: int
    replaced: int
    total: int
    generation: str
    # Citation counts an update could not keep: the index was built before they were.
    counts_dropped: int = 0
    # Of the ``replaced``, those whose record came back as it was indexed (left as they
    # were); and the documents an update removed (``remove``: a harvest's deleted records).
    unchanged: int = 0
    removed: int = 0
    # What the reader should know of the merging, each naming a file and line (a BibTeX
    # eprint that names another paper: pubsearch.ingest.eprints).
    warnings: tuple[str, ...] = ()


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


def build_index(
    index_dir: Path,
    records: Iterable[Record],
    progress: Progress | None = None,
    lock_timeout: float = LOCK_TIMEOUT_SECONDS,
    workers: int | None = None,
) -> IndexSummary:
    """Index ``records`` (duplicates merged) as a new generation and make it live.

    Records are written as they stream in (by ``workers`` processes; default: one per CPU,
    at most :data:`MAX_WORKERS`), so memory does not grow with the input: only each
    paper's identity is kept to spot duplicates, and those are merged into their first
    record once the stream ends.
    """
    with storage.writer_lock(index_dir, lock_timeout):
        storage.remove_stale(index_dir)
        # The records that keep their text keep their vectors (pubsearch.index.vectors).
        vectors.keep_for_rebuild(index_dir)
        merger = StreamingMerger()

        def documents() -> Iterator[Record]:
            for n, record in enumerate(records, start=1):
                if merger.add(record):
                    yield record
                if progress:
                    progress(n)

        build_dir = storage.new_build_dir(index_dir)
        try:
            storage.create_index(build_dir).close()
            # Records go to the workers, which make their documents: half the bytes to
            # pickle and pass (the documents repeat the title, abstract and names).
            # Each worker works out the facet values of its segments too (see
            # segment_facets), so that the table is joined, not read, once both are done.
            parts: list[tuple[SegmentFacets, peoplewords.DocWords]] = []
            write_documents(
                build_dir,
                documents(),
                workers=default_workers(workers),
                to_doc=record_fields,
                summarize=segment_summary,
                summaries=parts,
            )
            check = EprintCheck()
            added = _merge_duplicates(build_dir, list(merger.groups()), check)
            indexed, duplicates = len(merger) + check.splits, merger.duplicates - check.splits
            # Every paper's identity keys go before the facet table is joined, the build's
            # largest step in memory (a third of the parent's peak at 300,000 records).
            merger = StreamingMerger()
            facets = FacetTable.from_segments([facet for facet, _ in parts])
            # The words are handed over, not kept here: _save_facets saves them and lets
            # go of them before it makes the name and spelling tables.
            people = _save_facets(build_dir, facets, added, words=_joined_words(parts))
            # From SPAWN_PEOPLE_FROM documents the people table is made from the files
            # just saved, in a process of its own: this one lets go of its tables before
            # waiting for it, so that the two do not hold them at once (docs/growth.md,
            # 7 December).
            try:
                del facets
                gc.collect()
                memory.trim()
                if people is not None:
                    people.wait()
            except BaseException:
                if people is not None:
                    people.cancel()
                raise
            gen = storage.publish(index_dir, build_dir)
        except BaseException:
            shutil.rmtree(build_dir, ignore_errors=True)
            raise
        return IndexSummary(
            indexed=indexed,
            duplicates_merged=duplicates,
            replaced=0,
            total=indexed,
            generation=gen.name,
            warnings=tuple(check.warnings),
        )


def segment_summary(reader: Any, kept: Any) -> tuple[SegmentFacets, peoplewords.DocWords]:
    """What a build's worker works out of each segment it wrote: its facet values and its
    documents' words (for the people table, pubsearch.index.people; from the terms its
    writer ``kept``, where it kept them)."""
    return segment_facets(reader), peoplewords.segment_words(reader, kept)


def _save_facets(
    build_dir: Path,
    previous: FacetTable | None = None,
    added: int = 0,
    tables: bool = True,
    words: peoplewords.DocWords | None = None,
    previous_people: PeopleTable | None = None,
) -> forked.Step | forked.Spawned | None:
    """Save the build's facet table, and with ``tables`` those made from it and the index
    (see tables.save_tables): ``previous`` extended when the build appended ``added``
    documents to it (deleting some, renumbering none), else read from the whole index.
    And the people table (pubsearch.index.peopletable): from ``words`` (the documents'
    words, as far as they go; the rest read from the index), or with ``previous_people``
    (an update that renumbered nothing) only for the names whose records changed.

    With ``tables`` (a build), the people table is made in a child process while this one
    makes the other tables: the step is returned running, to be waited for once the
    caller has let go of the tables it passed. From :data:`SPAWN_PEOPLE_FROM` documents
    the child is a fresh interpreter that reads the files saved here (and holds nothing
    of this process's); below, a forked one (which costs no start and reads nothing)."""
    ix = storage.open_index(build_dir)
    try:
        with ix.reader() as reader:
            extended = previous is not None and reader.doc_count_all() == previous.size + added
            if previous is not None and extended:
                table = previous.extended(reader)
            else:
                table = FacetTable.build(reader)
                words, previous_people = None, None
            generation = ix.latest_generation()
            table.save(build_dir, generation)
            found = _people_words(reader, table, words)
            peoplewords.save(found, build_dir, generation)
            if previous_people is not None and len(previous_people.person) > len(
                table.authors.value_ids
            ):
                previous_people = None
            if not tables or previous_people is not None:
                PeopleTable.build(table, found, previous_people).save(build_dir, generation)
                return None
            # On two CPUs the build's serial tail does not grow by it (docs/people.md).
            beside: forked.Step | forked.Spawned
            if table.size >= SPAWN_PEOPLE_FROM:
                beside = forked.Spawned(
                    people_from_files, (str(build_dir), generation), "the people table"
                )
            else:
                step = functools.partial(_people_in_memory, table, found, build_dir, generation)
                beside = forked.Step(step, "the people table")
                del step
            # The words are saved (and the step holds what it needs): the name and
            # spelling tables are made without them.
            del words, found
            memory.trim()
            try:
                save_tables(build_dir, reader, table, generation)
            except BaseException:
                beside.cancel()
                raise
            return beside
    finally:
        ix.close()


def _people_words(
    reader: Any, table: FacetTable, words: peoplewords.DocWords | None
) -> peoplewords.DocWords:
    """The words of every document of ``table`` for the people table: ``words`` as far as
    they go, the rest read from ``reader``."""
    if words is None or len(words) > table.size:
        # A generation saved without its words (an older version's): read once, then
        # saved for the next update.
        return peoplewords.DocWords.of_reader(reader)
    if len(words) < table.size:
        # The previous generation's words (its documents keep their numbers) or the
        # build's, and those of the documents added since.
        rest = peoplewords.DocWords.of_reader(reader, len(words))
        return peoplewords.DocWords.joined([words, rest])
    return words


def _joined_words(parts: list[tuple[SegmentFacets, peoplewords.DocWords]]) -> peoplewords.DocWords:
    """The words of a build's segments' ``parts`` as one, the parts' own let go of."""
    words = peoplewords.DocWords.joined([doc_words for _, doc_words in parts])
    parts.clear()
    return words


def _people_in_memory(
    table: FacetTable, words: peoplewords.DocWords, build_dir: Path, generation: int
) -> None:
    """Save the people table of ``table`` and ``words``: a small build's, in a forked
    child that holds them already."""
    PeopleTable.build(table, words).save(build_dir, generation)


def people_from_files(build_dir: str, generation: int) -> None:
    """Save the people table of generation ``generation`` in ``build_dir``, made from the
    facet table (mapped) and the words saved there: a build's, in a process of its own
    (:class:`pubsearch.core.forked.Spawned`)."""
    directory = Path(build_dir)
    ix = storage.open_index(directory)
    try:
        with ix.reader() as reader:
            table = FacetTable.load(directory, reader, generation)
    finally:
        ix.close()
    words = peoplewords.load(directory, generation)
    if table is None or words is None or len(words) != table.size:
        raise IndexCorruptError(
            f"{directory}: the facet table or the words of generation {generation} were not saved"
        )
    PeopleTable.build(table, words).save(directory, generation)


def default_workers(workers: int | None) -> int:
    """Worker processes for a build: as asked, else one per CPU up to MAX_WORKERS."""
    if workers is not None:
        return max(1, workers)
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS))


def _merge_duplicates(
    build_dir: Path, groups: list[list[Written | Record]], check: EprintCheck
) -> int:
    """Replace the first record of each paper that had duplicates by all of them merged
    (or by the papers ``check`` takes them apart into); return how many documents that
    added (after those the index had)."""
    if not groups:
        return 0
    added = 0
    ix = storage.open_index(build_dir)
    writer = segment_writer(ix)
    try:
        with ix.searcher() as searcher:
            for members in groups:
                records: list[Record] = []
                for member in members:
                    if isinstance(member, Written):
                        keys = [("keys", key_term(k)) for k in member.keys]
                        for docnum in _docs_with_terms(searcher.reader(), keys):
                            found = record_from_stored(searcher.stored_fields(docnum))
                            claimed = member.claimed  # which its stored fields do not keep
                            records.append(replace(found, arxiv_id_claimed=claimed))
                            writer.delete_document(docnum)
                    else:
                        records.append(member)
                for merged in merged_papers(records, check) if records else ():
                    writer.add_document(**record_fields(merged))
                    added += 1
    except BaseException:
        writer.cancel()
        raise
    writer.commit(merge=False)
    ix.close()
    return added


def update_index(
    index_dir: Path,
    records: Iterable[Record],
    progress: Progress | None = None,
    lock_timeout: float = LOCK_TIMEOUT_SECONDS,
    embedder: Embedder | None = None,
    remove: Iterable[str] = (),
) -> IndexSummary:
    """Add or replace ``records`` in a copy of the live index, then make the copy live.

    A record that is the same paper as one already indexed (by any identity key) replaces
    it, merged with it: the authors of both are kept (one that comes back as it was is left
    as it was). When the live index has vectors and an ``embedder`` is given, the new
    records get theirs before the copy goes live. The documents having any of the identity
    keys ``remove`` (``arxiv:2401.00001``) are removed first.
    """
    remove = list(remove)
    with storage.writer_lock(index_dir, lock_timeout):
        storage.remove_stale(index_dir)
        live = storage.current_generation(index_dir)
        if live is None:
            raise IndexMissingError(f"no index at {index_dir} to update (build one first)")
        merger = RecordMerger()
        incoming, against_index = EprintCheck(), EprintCheck()  # in the records; with the index
        for n, record in enumerate(records, start=1):
            merger.add(record)
            if progress:
                progress(n)
        build_dir = storage.new_build_dir(index_dir)
        try:
            storage.copy_generation(live, build_dir)
            ix = storage.open_index(build_dir)
            if not analysed_as_now(ix.schema):
                raise IndexCorruptError(
                    f"the index at {index_dir} was built by another version of pubsearch "
                    f"(its words are cut otherwise); rebuild it: pubsearch index --index "
                    f"{index_dir} PATH"
                )
            with ix.reader() as reader:
                previous = FacetTable.load(build_dir, reader, ix.latest_generation())
                before = _segment_ids(reader)
            previous_people = (
                None
                if previous is None
                else PeopleTable.load(
                    build_dir, ix.latest_generation(), len(previous.authors.value_ids)
                )
            )
            previous_words = (
                None
                if previous_people is None
                else peoplewords.load(build_dir, ix.latest_generation())
            )
            (build_dir / PEOPLE_FILE).unlink(missing_ok=True)
            (build_dir / peoplewords.WORDS_FILE).unlink(missing_ok=True)
            replaced = unchanged = removed = added = 0
            to_doc, dropped = _documents_for(ix.schema)
            writer = segment_writer(ix)
            try:
                with ix.searcher() as searcher:
                    gone = [("keys", key_term(key)) for key in remove]
                    for docnum in _docs_with_terms(searcher.reader(), gone) if gone else ():
                        writer.delete_document(docnum)
                        removed += 1
                    for record in _papers(merger, incoming):
                        existing = _same_paper(searcher, record)
                        if record.arxiv_id_claimed and existing:
                            record, existing = _checked(record, existing, against_index)
                        replaced += bool(existing)
                        merged = record
                        before_records = [record_from_stored(stored) for _, stored in existing]
                        for found in before_records:
                            merged = combine(found, merged)
                        if before_records == [merged]:
                            unchanged += 1
                            continue
                        for docnum, _ in existing:
                            writer.delete_document(docnum)
                        writer.add_document(**to_doc(merged))
                        added += 1
            except BaseException:
                writer.cancel()
                raise
            # The new records go into a segment of their own, so that an update writes
            # only them (and the facet table only grows). Every few updates their small
            # segments are merged, which renumbers documents: the facet table is then
            # read anew.
            writer.commit(mergetype=merge_small_segments)
            total = ix.doc_count()
            with ix.reader() as reader:
                renumbered = _segment_ids(reader)[: len(before)] != before
            ix.close()
            # The name and spelling tables are left to the first search that needs them,
            # which saves them: an update of 1,000 records took 9.6 s building them anew.
            _save_facets(
                build_dir,
                None if renumbered else previous,
                added,
                tables=False,
                words=None if renumbered else previous_words,
                previous_people=None if renumbered else previous_people,
            )
            _update_vectors(index_dir, live, build_dir, embedder)
            gen = storage.publish(index_dir, build_dir)
        except BaseException:
            shutil.rmtree(build_dir, ignore_errors=True)
            raise
        return IndexSummary(
            indexed=len(merger) + incoming.splits,
            duplicates_merged=merger.duplicates - incoming.splits,
            replaced=replaced,
            total=total,
            generation=gen.name,
            counts_dropped=dropped[0],
            warnings=tuple(incoming.warnings + against_index.warnings),
            unchanged=unchanged,
            removed=removed,
        )


def _update_vectors(
    index_dir: Path, live: Path, build_dir: Path, embedder: Embedder | None
) -> None:
    """Give an update's copy the vectors of the live generation, and its new records theirs."""
    (build_dir / vectors.VECTORS_FILE).unlink(missing_ok=True)
    before = vectors.generation_table(live)
    if before is None or embedder is None or before.model != embedder.model_id:
        return
    known = vectors.known_vectors(index_dir, embedder.model_id, embedder.dimensions)
    ix = storage.open_index(build_dir)
    try:
        with ix.reader() as reader:
            folder = index_dir / vectors.CHUNKS_DIR / embedder.model_id
            table, _, _ = vectors.table_for(reader, embedder, folder, known)
        table.save(build_dir, ix.latest_generation())
    finally:
        ix.close()


def _documents_for(schema: Any) -> tuple[Callable[[Record], dict[str, Any]], list[int]]:
    """How records become documents of an index with ``schema``, and a one-item list that
    counts the citation counts left out: an index built before they were kept has no
    ``cited`` field (see schema.OPTIONAL_FIELDS), and its documents are made without it."""
    missing = OPTIONAL_FIELDS - set(schema.names())
    dropped = [0]

    def to_doc(record: Record) -> dict[str, Any]:
        doc = record_fields(record)
        for name in missing:
            if doc.pop(name, None) is not None:
                dropped[0] += 1
        return doc

    return to_doc, dropped


def _papers(merger: RecordMerger, check: EprintCheck) -> Iterator[Record]:
    """The papers of an update's records, each folded into one record."""
    for members in merger.groups():
        yield from merged_papers(members, check)


def _checked(
    record: Record, existing: list[tuple[int, dict[str, Any]]], check: EprintCheck
) -> tuple[Record, list[tuple[int, dict[str, Any]]]]:
    """``record``, whose arXiv id is a claim, and the indexed documents of its paper: those
    ``existing`` ones that ``check`` leaves with it (a claim of another paper's id joins
    nothing), and the record without the ids it dropped."""
    stored = [record_from_stored(fields) for _, fields in existing]
    for paper in check([*stored, record]):
        kept = [i for i, found in enumerate(stored) if any(m is found for m in paper)]
        if len(kept) < len(paper):  # the paper the record is in
            checked = next(m for m in paper if not any(m is found for found in stored))
            return checked, [existing[i] for i in kept]
    raise AssertionError("the record is in none of its papers")  # pragma: no cover


def _segment_ids(reader: Any) -> list[str]:
    """The ids of the index's segments, in document order."""
    return [leaf.segment().segment_id() for leaf, _ in reader.leaf_readers()]


def _same_paper(searcher: Any, record: Record) -> list[tuple[int, dict[str, Any]]]:
    terms = [("keys", key_term(k)) for k in record.identity_keys] + [("id", record.id)]
    docnums = _docs_with_terms(searcher.reader(), terms)
    return [(d, searcher.stored_fields(d)) for d in docnums]


def _docs_with_terms(reader: Any, terms: list[tuple[str, str]]) -> list[int]:
    """Live documents having any of ``terms``, read from their posting lists (an ``Or``
    query would first fill a score array of a few thousand slots), each term looked up
    once in each segment (Whoosh looks it up three times: at 1,000,000 records, 34
    segments, that was most of an update's time)."""
    found: set[int] = set()
    for fieldname, text in terms:
        found.update(int(d) for d in postings.term_docs(reader, fieldname, text))
    return sorted(d for d in found if not reader.is_deleted(d))
