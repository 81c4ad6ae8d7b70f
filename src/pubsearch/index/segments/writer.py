"""The segment writer of the bulk path: :class:`BulkWriter` turns documents into postings
(:mod:`pubsearch.index.segments.docpostings`) in its pool (:mod:`pubsearch.codec.pool`), and
:func:`write_segments` writes a stream of documents into segments of a given size, left
for a table of contents to name (:func:`pubsearch.codec.w3write.commit_segments`).

What reaches the disk, and every use of Whoosh's private methods and attributes, is
:mod:`pubsearch.codec.w3write`'s: the writer is a subclass of its
:class:`~pubsearch.codec.w3write.PoolSegmentWriter`.
"""

from __future__ import annotations

import ctypes
import gc
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy

from pubsearch.codec import w3version, w3write
from pubsearch.codec.pool import FieldPostings
from pubsearch.core import gcpause, memory, speedups
from pubsearch.index.analysis import IndexWords
from pubsearch.index.schema import KEPT_LIST_FIELDS
from pubsearch.index.segments.docpostings import (
    BulkField,
    DirectTerms,
    Memo,
    bulk_fields,
    bulk_postings,
    derivation,
    direct_terms,
    numbering,
    numeric_terms,
    stem_lists,
    words_of,
)

Doc = dict[str, Any]

# Documents whose derived postings are made together (see BulkWriter.add_pending_postings).
DERIVED_DOCS_AT_ONCE = 4096


# Freed memory glibc keeps at the top of the heap instead of handing it back.
_TRIM_THRESHOLD = 64 << 20
_M_TRIM_THRESHOLD = -1  # mallopt's parameter numbers
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 4 << 20


def _keep_freed_memory() -> None:
    """Have glibc keep up to :data:`_TRIM_THRESHOLD` of freed memory rather than return it
    to the system at once, and map only allocations of :data:`_MMAP_THRESHOLD` or more.
    Each compression of a postings block or a document's stored fields allocates buffers
    and frees them: memory handed back after each call is faulted in page by page on the
    next, which made each call several times slower (docs/performance.md). Elsewhere than
    glibc, nothing changes."""
    global _memory_kept
    if _memory_kept:
        return
    _memory_kept = True
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    # Setting one threshold fixes the other at its default: an allocation of 128 kB or more
    # would be mapped and unmapped at each call.
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)


_memory_kept = False


@dataclass(frozen=True)
class _FieldPlan:
    """What :meth:`BulkWriter.add_document` asks a field, asked once."""

    field: Any
    indexed: bool
    bulk: BulkField | None
    scorable: bool
    spelling: str | None  # the spelling field's name, when the field has one
    vector: Any
    stored: bool
    column: Any
    boost_key: str
    stored_key: str
    # ``list(field.index(value))`` without Whoosh's analysis chain, for a field of a shape
    # that allows it (see direct_terms, numeric_terms).
    direct: DirectTerms | None = None


class BulkWriter(w3write.PoolSegmentWriter):
    """A segment writer (:class:`~pubsearch.codec.w3write.PoolSegmentWriter`: postings
    in a pool, written a term at a time) whose text fields are analysed in bulk (see
    :meth:`add_document`)."""

    kept_list_fields = KEPT_LIST_FIELDS

    def __init__(self, ix: Any, keep_terms: bool = False, **kwargs: Any) -> None:
        super().__init__(ix, **kwargs)
        # With ``keep_terms``, each document's id and derived field's terms are kept for
        # the segment's summary (see kept_for_summary).
        self._keep_terms = keep_terms
        self._kept_ids: list[str] = []
        self._kept_pairs: list[numpy.ndarray[Any, Any]] = []
        self._kept_terms: list[bytes | str] = []
        self._derived_count = 0
        _keep_freed_memory()
        self._bulk = bulk_fields(self.schema)
        for spec in self._bulk.values():  # numbered anew past its limit, between segments
            vocabulary = spec.analyzer.vocabulary()
            if vocabulary is not None:
                vocabulary.trim()
        self._derivation = derivation(self._bulk)
        self._derived_docs = array("I")  # documents whose derived field is made at flush
        self._plans: dict[str, _FieldPlan] = {}

    def add_document(self, **fields: Any) -> None:
        """``SegmentWriter.add_document``, step by step, except that a text field of
        :func:`bulk_fields` given a string gets its postings from
        :func:`bulk_postings` (lists, no Token per word; the title and abstract words
        reused for the content field), and that the postings reach the pool a field at a
        time, once the whole document went through (Whoosh's leaves a failed document's
        postings in the pool)."""
        docboost, fieldnames, stored = self.start_document(fields)
        docnum = self.docnum
        perdoc = self.perdocwriter
        plans = self._plans
        postings: list[tuple[str, int, list[bytes] | list[str], list[float], list[bytes], bool]]
        postings = []
        packed: list[tuple[str, tuple[Any, ...]]] = []  # from _speedups.doc_postings
        memo: Memo = {}
        vbytes: bytes | None = None  # the last posting's value, as Whoosh's loop leaves it
        compiled = speedups.active()
        lengths: list[tuple[str, int]] = []
        derived = self._derivation if compiled is not None else None
        if derived is not None and not derived.applies(fields):
            derived = None
        try:
            for fieldname in fieldnames:
                value = fields[fieldname]
                if value is None:
                    continue
                plan = plans.get(fieldname) or self._plan(fieldname)
                field = plan.field
                spec = plan.bulk if isinstance(value, str) else None
                length = 0
                words: IndexWords | None = None
                if derived is not None and spec is not None and fieldname == derived.field:
                    # Its postings come from its parts' when the segment is written.
                    if spec.scorable:
                        for name, times in derived.parts:
                            length += len(words_of(spec, fields[name], memo)) * times
                elif plan.indexed:
                    boost_key = plan.boost_key
                    fieldboost = float(fields[boost_key]) if boost_key in fields else docboost
                    found = stem_lists(spec, value, memo) if compiled and spec else None
                    if found is not None:
                        assert spec is not None and compiled is not None
                        lists, first = found
                        numbered = numbering(spec) if isinstance(lists, bytes) else None
                        if isinstance(lists, bytes) and numbered is not None:
                            vocabulary, terms = numbered
                            encoded = compiled.doc_postings_ids(
                                self.pool.numbers(fieldname),
                                self.pool.fieldmap(fieldname, vocabulary),
                                terms,
                                lists,
                                first,
                                spec.positions,
                                spec.field_boost,
                                fieldboost,
                            )
                        else:
                            assert not isinstance(lists, bytes)
                            encoded = compiled.doc_postings(
                                self.pool.numbers(fieldname),
                                lists,
                                first,
                                spec.positions,
                                spec.field_boost,
                                fieldboost,
                            )
                        *_, count, words_count, last_value = encoded
                        if spec.scorable:
                            length = words_count
                        packed.append((fieldname, encoded))
                        values = [last_value] if count else []
                    elif spec is not None:
                        terms, freqs, values, words = bulk_postings(spec, value, fieldboost, memo)
                        boost = spec.field_boost
                        if boost == 1.0 and fieldboost == 1.0:
                            weights = list(map(float, freqs))
                        else:
                            weights = [float(f) * boost * fieldboost for f in freqs]
                        if spec.scorable:
                            length = sum(freqs)
                        postings.append((fieldname, docnum, terms, weights, values, False))
                    else:
                        texts: list[bytes] = []
                        weights, values = [], []
                        scorable = plan.scorable
                        direct = plan.direct
                        found_terms = direct(value) if direct else field.index(value)
                        for tbytes, freq, weight, vb in found_terms:
                            texts.append(tbytes)
                            weights.append(weight * fieldboost)
                            values.append(vb)
                            if scorable:
                                length += freq
                        postings.append((fieldname, docnum, texts, weights, values, False))
                    if values:
                        vbytes = values[-1]

                spellfield = plan.spelling
                if spellfield is not None:
                    if spec is not None:
                        if words is None:
                            words = words_of(spec, value, memo)
                        spell = sorted(set(words.unstemmed()))
                    else:
                        spell = list(field.spellablewords_of(value))
                    if spell:
                        if vbytes is None:
                            raise UnboundLocalError("no posting value for spelling words")
                        # Whoosh posts spelling words to document 0, once per document
                        # having them (their count is all it reads).
                        postings.append(
                            (
                                spellfield,
                                0,
                                list(map(str.encode, spell)),
                                [1] * len(spell),
                                [vbytes] * len(spell),
                                True,
                            )
                        )

                vformat = plan.vector
                if vformat:
                    vitems = vformat.word_values(value, field.analyzer, mode="index")
                    vitems = sorted((text, weight, vb) for text, _, weight, vb in vitems)
                    perdoc.add_vector_items(fieldname, field, vitems)

                customval = fields.get(plan.stored_key, value)
                if length:
                    lengths.append((fieldname, length))
                if plan.stored and customval is not None:
                    stored[fieldname] = customval  # as Whoosh's add_field
                column = plan.column
                if column and customval is not None:
                    perdoc.add_column_value(fieldname, column, field.to_column_value(customval))
        except ValueError:
            self.cancel_document()
            raise

        self.finish_document()
        add_length = self.lengths.add  # the length columns and totals: written with the segment
        for fieldname, length in lengths:
            add_length(fieldname, docnum, length)
        add_many = self.pool.add_many
        for fieldname, postdoc, texts_or_terms, weights, values, int_weights in postings:
            add_many(fieldname, postdoc, texts_or_terms, weights, values, int_weights)
        add_encoded = self.pool.add_encoded
        for fieldname, encoded in packed:
            add_encoded(fieldname, docnum, encoded)
        if derived is not None:
            self._derived_docs.append(docnum)
            self._derived_count += 1
        if self._keep_terms:
            self._kept_ids.append(str(fields.get("id") or ""))
        self.document_added()

    def _plan(self, fieldname: str) -> _FieldPlan:
        field = self.schema[fieldname]
        plan = self._plans[fieldname] = _FieldPlan(
            field=field,
            indexed=bool(field.indexed),
            bulk=self._bulk.get(fieldname),
            scorable=bool(field.scorable),
            spelling=field.spelling_fieldname(fieldname) if field.separate_spelling() else None,
            vector=field.vector,
            stored=bool(field.stored),
            column=field.column_type,
            boost_key=f"_{fieldname}_boost",
            stored_key=f"_stored_{fieldname}",
            direct=direct_terms(field) or numeric_terms(field) if field.indexed else None,
        )
        return plan

    def add_pending_postings(self) -> None:
        """The derived field's postings (see :class:`Derivation`) of the documents that
        :meth:`add_document` left them to, made from its parts' postings: the same ones
        ``_speedups.doc_postings`` gives, a term's weight its frequency, its value the
        frequency packed. A few thousand documents at a time, which bounds the memory."""
        derivation = self._derivation
        if derivation is None or not self._derived_docs:
            return
        wanted = numpy.zeros(self.docnum, dtype=numpy.bool_)
        wanted[numpy.frombuffer(self._derived_docs, dtype=numpy.uint32)] = True
        target = self.pool.field(derivation.field)
        numbers = target.numbers
        parts = []
        for name, times in derivation.parts:
            held = self.pool.held(name)
            if held is None or not len(held):
                continue
            # The part's term numbers as the derived field's (numbering any new to it).
            renumber = numpy.fromiter(
                map(numbers.__getitem__, held.numbers), dtype=numpy.uint32, count=len(held.numbers)
            )
            parts.append((held, renumber, held.docnums(), times))
        # Postings added document by document are in document order, and can be taken a
        # range of documents at a time; a merge adds a segment's term by term.
        in_order = all(bool((docs[1:] >= docs[:-1]).all()) for _, _, docs, _ in parts)
        step = DERIVED_DOCS_AT_ONCE if in_order else max(self.docnum, 1)
        for start in range(0, self.docnum, step):
            key = self._add_derived_range(target, parts, wanted, start, start + step, in_order)
            if self._keep_terms and key is not None:
                self._kept_pairs.append(key)
        if self._keep_terms:
            self._kept_terms = list(numbers)  # by number (numbered in order)
        self._derived_docs = array("I")

    def kept_for_summary(self) -> DocumentTerms | None:
        """With ``keep_terms``, each document's id and its derived field's terms (when
        every document of the segment had that field derived; else None)."""
        if not self._keep_terms or self._derived_count != self.docnum or self._derivation is None:
            return None
        pairs = numpy.concatenate(self._kept_pairs) if self._kept_pairs else numpy.zeros(0, "u8")
        return DocumentTerms(
            field=self._derivation.field,
            ids=tuple(self._kept_ids),
            docs=(pairs >> 32).astype(numpy.uint32),
            termnums=(pairs & 0xFFFFFFFF).astype(numpy.uint32),
            terms=self._kept_terms,
        )

    @staticmethod
    def _add_derived_range(
        target: FieldPostings,
        parts: list[Any],
        wanted: Any,
        start: int,
        stop: int,
        in_order: bool,
    ) -> Any:
        """:meth:`add_pending_postings` for the documents ``start`` to ``stop`` (all of
        them, when the postings are not ``in_order``). Returns the postings' keys
        (document << 32 | term number, sorted), or None when there were none."""
        keys, freqs = [], []
        for held, renumber, docs, times in parts:
            lo, hi = numpy.searchsorted(docs, [start, stop]) if in_order else (0, len(docs))
            chunk_docs = docs[lo:hi]
            keep = wanted[chunk_docs]
            terms = renumber[numpy.frombuffer(held.termnums, dtype=numpy.uint32)[lo:hi][keep]]
            keys.append((chunk_docs[keep].astype(numpy.uint64) << 32) | terms)
            # Unboosted, a positions field's weight is the term's frequency.
            weights = numpy.frombuffer(held.weights, dtype=numpy.float64)[lo:hi][keep]
            freqs.append(weights.astype(numpy.uint32) * numpy.uint32(times))
        key = numpy.concatenate(keys)
        if not len(key):
            return None
        order = numpy.argsort(key, kind="stable")  # by document, then term number
        key, freq = key[order], numpy.concatenate(freqs)[order]
        first = numpy.ones(len(key), dtype=numpy.bool_)
        first[1:] = key[1:] != key[:-1]
        starts = numpy.flatnonzero(first)
        freq = numpy.add.reduceat(freq, starts)
        key = key[starts]
        run_docs, run_counts = numpy.unique(key >> 32, return_counts=True)
        target.termnums.frombytes((key & 0xFFFFFFFF).astype(numpy.uint32).tobytes())
        target.run_docs.frombytes(run_docs.astype(numpy.uint32).tobytes())
        target.run_counts.frombytes(run_counts.astype(numpy.uint32).tobytes())
        target.weights.frombytes(freq.astype(numpy.float64).tobytes())
        target.sizes.frombytes(numpy.full(len(key), 4, dtype=numpy.uint32).tobytes())
        target.values += w3write.frequency_values(freq)
        target.int_weights = False
        return key


@dataclass(frozen=True)
class DocumentTerms:
    """What a :class:`BulkWriter` with ``keep_terms`` kept of a segment's documents: each
    one's id (by document number) and the terms of its derived field (``content``: its
    title's and abstract's), as (document, term number) pairs sorted by document, and the
    terms by number."""

    field: str
    ids: tuple[str, ...]
    docs: numpy.ndarray[Any, Any]  # uint32
    termnums: numpy.ndarray[Any, Any]  # uint32
    terms: list[bytes | str]


def write_segments(
    ix: Any,
    docs: Iterable[Doc],
    docs_per_segment: int,
    summarize: Callable[[Any, Any], Any] | None = None,
    summaries: list[Any] | None = None,
) -> list[Any]:
    """Write ``docs`` into new segments of ``docs_per_segment`` documents (the last one
    fewer), left for a committing writer to name in a table of contents. With
    ``summarize``, what it makes of a reader of each segment is appended to
    ``summaries``, segment by segment.

    The garbage collector is paused (see :mod:`pubsearch.core.gcpause`) but for the young
    objects after each segment, so that cycles, were there any, would not outlive it (a
    segment of 30,000 records left 30 objects for it). After each segment, the memory
    its writer freed is handed back to the system (:func:`pubsearch.core.memory.trim`), which
    glibc would otherwise keep in its arenas for the rest of the build.
    """
    segments: list[Any] = []
    writer: BulkWriter | None = None
    count = 0
    try:
        with gcpause.paused():
            for doc in docs:
                if writer is None:
                    writer = BulkWriter(ix, lock=False, keep_terms=summarize is not None)
                writer.add_document(**doc)
                count += 1
                if count >= docs_per_segment:
                    segments.append(writer.finish_segment(summarize, summaries))
                    writer, count = None, 0
                    gc.collect(0)
                    memory.trim()
            if writer is not None:
                segments.append(writer.finish_segment(summarize, summaries))
                writer = None
    finally:
        if writer is not None:
            writer.cancel()
    return segments


# An update's segment holds its records; a build's, up to DOCS_PER_SEGMENT (30,000).
# Segments under this many documents are an update's, merged once there are this many.
SMALL_SEGMENT_DOCS = 5_000
MAX_SMALL_SEGMENTS = 8


def merge_small_segments(writer: Any, segments: list[Any]) -> list[Any]:
    """A Whoosh merge policy (``writer.commit(mergetype=...)``) for an update: once there
    are :data:`MAX_SMALL_SEGMENTS` small segments (updates'), their documents join the
    new segment; a build's segments are never merged. Whoosh's own policy merged every
    segment below a Fibonacci bound of their running total: at a million records, 26 of
    a build's 34 segments on each update, which then took minutes, not seconds."""
    from whoosh.reading import SegmentReader

    small = [seg for seg in segments if seg.doc_count_all() < SMALL_SEGMENT_DOCS]
    if len(small) < MAX_SMALL_SEGMENTS:
        return segments
    for seg in small:
        reader = SegmentReader(writer.storage, writer.schema, seg)
        writer.add_reader(reader)
        reader.close()
    return [seg for seg in segments if seg.doc_count_all() >= SMALL_SEGMENT_DOCS]


def segment_writer(ix: Any) -> Any:
    """A writer of a new segment of ``ix``, which takes the index's write lock: a
    :class:`BulkWriter`, or Whoosh's own where the installed Whoosh is not a version
    whose format the fast paths know (:func:`~pubsearch.codec.w3version.fast_paths`)."""
    return BulkWriter(ix) if w3version.fast_paths() else ix.writer()
