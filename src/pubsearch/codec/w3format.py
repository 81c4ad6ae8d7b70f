"""The Whoosh 3 segment format, read: posting lists. With the other ``w3`` modules of this
package (the terms table, :mod:`.w3terms`; positions, :mod:`.w3positions`; columns,
:mod:`.w3columns`; the version gate, :mod:`.w3version`) and :mod:`.w3write` (which writes
it), the only code that knows Whoosh's byte layout and private attributes, here those of
its readers, matchers, queries and weighting models.

The search side (:mod:`pubsearch.search.masks`, :mod:`pubsearch.search.topdocs`) and the
index's tables (:mod:`pubsearch.index.postings`, :mod:`pubsearch.index.facets`) read
through it, a posting list in one read where Whoosh's reader would take one Python call
per item:

* :func:`segment_postings`: a term's posting list in a segment (from the arrays the
  segment's longest lists are kept in, :func:`kept_lists`; else :func:`raw_list`: one read
  of its bytes, the blocks taken apart by :func:`w3_blocks` and :class:`BlockArrays`);
* :func:`prefix_postings`: the lists of every word from a prefix on, in one read;
* :data:`LENGTH_OF_BYTE`: a length byte's length;
* :func:`pattern_words`, :func:`compile_query`, :func:`term_range_texts`,
  :func:`bm25_b`: what Whoosh's queries and BM25F keep in private attributes.

Where the installed Whoosh is not a version whose format this knows,
:func:`~pubsearch.codec.w3version.fast_paths` says so (with one warning) and every
function here, and :mod:`pubsearch.index.segments.workers`, takes Whoosh's public API
instead: slower, the same results.

It imports nothing of the writing side (no writer, no worker processes).
"""

from __future__ import annotations

import io
import pickle
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import numpy as np
import numpy.typing as npt
from isal import isal_zlib
from whoosh.codec.whoosh3 import (
    WHOOSH3_HEADER_MAGIC,
    W3LeafMatcher,
    W3TermInfo,
    W3TermsReader,
)
from whoosh.matching.wrappers import FilterMatcher
from whoosh.util.numeric import byte_to_length

from pubsearch.codec import hotlists
from pubsearch.codec.w3positions import NO_VALUES, PackedValues
from pubsearch.codec.w3terms import (
    FIELD_NUMBER_SIZE,
    Scanned,
    SegmentFiles,
    items_from,
    opened_files,
    row_doc_frequency,
)
from pubsearch.codec.w3version import fast_paths
from pubsearch.core import speedups

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


# byte_to_length for every possible length byte (0: no length, as Whoosh's None).
LENGTH_OF_BYTE = np.array([byte_to_length(b) if b else 0 for b in range(256)], dtype=np.float64)


# -- posting lists ---------------------------------------------------------------------------


def segment_postings(
    segment: Any,
    fieldname: str,
    text: str | bytes,
    with_values: bool,
    row: bytes | None = None,
) -> tuple[IntArray, FloatArray, PackedValues]:
    """The posting list of ``fieldname:text`` in ``segment`` (which has the term), deleted
    documents included: its document numbers in the segment, its weights, and with
    ``with_values`` its values (encoded positions), each block read once. ``row``: the
    term's row in the segment (:func:`term_rows_many`), when the caller has it.

    From the list's bytes in one read where it is a run of W3 blocks (:func:`raw_list`),
    else a block at a time from Whoosh's W3 matcher (decoded with numpy: Whoosh's
    ``_read_ids`` undoes the delta coding one number at a time), else posting by posting
    (the only way, for a Whoosh whose format this does not know)."""
    fast = fast_paths()
    if fast and not with_values:
        lists = kept_lists(segment)
        if lists is not None:
            found = lists.get(fieldname, segment._text_to_bytes(fieldname, text))
            if found is not None:
                return found[0], found[1], NO_VALUES
    whole = raw_list(segment, fieldname, text, with_values, row) if fast else None
    if whole is not None:
        return whole
    ids: list[IntArray] = []
    weights: list[FloatArray] = []
    values: list[bytes] = []
    matcher = segment.postings(fieldname, text)
    if isinstance(matcher, FilterMatcher):  # the segment's deletions: masked by callers
        matcher = matcher.child
        matcher.reset()  # the filter has moved it past the first deleted documents
    if fast and isinstance(matcher, W3LeafMatcher):
        while matcher.is_active():
            block_id_array, block_weight_array = _block_arrays(matcher)
            ids.append(block_id_array)
            weights.append(block_weight_array)
            if with_values:
                matcher._read_values()
                values.extend(matcher._values)
            matcher._next_block()
    else:
        block_ids: list[int] = []
        block_weights: list[float] = []
        while matcher.is_active():
            block_ids.append(matcher.id())
            block_weights.append(matcher.weight())
            if with_values:
                values.append(matcher.value())
            matcher.next()
        ids.append(np.asarray(block_ids, dtype=np.int64))
        weights.append(np.asarray(block_weights, dtype=np.float64))
    packed = PackedValues.of(values) if with_values else NO_VALUES
    if not ids:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), packed
    return np.concatenate(ids), np.concatenate(weights), packed


def mark_postings(
    segment: Any, fieldname: str, text: str | bytes, out: npt.NDArray[np.bool_]
) -> bool:
    """Set ``out[d]`` (one flag per document of ``segment``) for each document ``d`` in
    the posting list of ``fieldname:text`` (deleted documents included) where the list
    is kept as arrays (:func:`kept_lists`), and say so; False (``out`` untouched) where
    it is not: the caller reads it with :func:`segment_postings`."""
    lists = kept_lists(segment) if fast_paths() else None
    return lists is not None and lists.mark(fieldname, segment._text_to_bytes(fieldname, text), out)


def keeps_list(segment: Any, fieldname: str, text: str | bytes) -> bool:
    """Whether ``segment`` keeps the posting list of ``fieldname:text`` as arrays (see
    :func:`kept_lists`)."""
    lists = kept_lists(segment) if fast_paths() else None
    if lists is None:
        return False
    return lists.row(fieldname, segment._text_to_bytes(fieldname, text)) is not None


def kept_lists(segment: Any) -> hotlists.HotLists | None:
    """The longest posting lists of ``segment`` (a ``SegmentReader``), kept beside it as
    arrays (see :mod:`pubsearch.codec.hotlists`), or None."""
    return opened_files(segment).kept


def raw_list(
    segment: Any,
    fieldname: str,
    text: str | bytes,
    with_values: bool,
    row: bytes | None = None,
) -> tuple[IntArray, FloatArray, PackedValues] | None:
    """A posting list in a whoosh3 segment, deleted documents included: its document
    numbers, weights and (with ``with_values``) values, from one read of the list's bytes.
    None when the list is not a run of W3 blocks (postings kept in the terms file, another
    codec): then Whoosh's matcher reads it.

    Whoosh's matcher reads a block's header pickle from the file opcode by opcode (some 20
    file reads a block); this reads the list once and takes the blocks apart in memory."""
    terms = getattr(segment, "_terms", None)
    if not isinstance(terms, W3TermsReader):
        return None
    if row is None:  # not given (see term_rows_many): looked up
        tbytes = segment._text_to_bytes(fieldname, text)
        row = terms._tindex.get(terms._keycoder(fieldname, tbytes))
    stats = W3TermInfo._struct.size
    if row is None or len(row) != stats + _EXTENT_SIZE or row[0] != 0:  # inlined postings
        return None
    offset = int.from_bytes(row[stats : stats + 8], "big")
    length = int.from_bytes(row[stats + 8 : stats + _EXTENT_SIZE], "big")
    raw = terms._postfile.get(offset, length)
    if raw[:_MAGIC_SIZE] != WHOOSH3_HEADER_MAGIC:
        return None
    compiled = speedups.active()
    if compiled is not None:
        try:
            values = NO_VALUES
            if with_values:
                ids_bytes, weights_bytes, joined, ends_bytes = compiled.decode_list(
                    raw, WHOOSH3_HEADER_MAGIC, isal_zlib.decompress, 2
                )
                ends = np.frombuffer(ends_bytes, dtype=np.int64)
                starts = np.concatenate(([0], ends[:-1])) if len(ends) else ends
                values = PackedValues(joined, starts, ends)
            else:
                ids_bytes, weights_bytes = compiled.decode_list(
                    raw, WHOOSH3_HEADER_MAGIC, isal_zlib.decompress
                )
        except ValueError:
            pass  # pickles the C code does not read: Python's pickle reads them
        else:
            return (
                np.frombuffer(ids_bytes, dtype=np.int64),
                np.frombuffer(weights_bytes, dtype=np.float64),
                values,
            )
    decoded = BlockArrays(with_values)
    decoded.add_list(raw)
    ids, weights = decoded.arrays()
    return ids, weights, PackedValues.of(decoded.values) if with_values else NO_VALUES


class BlockArrays:
    """Posting lists' blocks joined into arrays: each block's id deltas and weights are
    gathered in Python lists and turned into arrays once, not a block at a time."""

    def __init__(self, with_values: bool = False) -> None:
        self.deltas: list[int] = []
        self.weights: list[float] = []
        self.block_starts: list[int] = []
        self.values: list[Any] = []
        self.with_values = with_values

    def add_list(self, raw: bytes) -> None:
        """The blocks of one list's bytes (see w3_blocks)."""
        deltas, weights = self.deltas, self.weights
        for info, (block_deltas, block_weights, block_values) in w3_blocks(raw):
            self.block_starts.append(len(deltas))
            deltas.extend(block_deltas)
            if block_weights is None:
                weights.extend([1.0] * info[0])
            elif isinstance(block_weights, float):
                weights.extend([block_weights] * info[0])
            else:
                weights.extend(block_weights)
            if self.with_values:
                self.values.extend(block_values)

    def add_postings(self, ids: Any, weights: Any) -> None:
        """A list given as its document numbers and weights (kept in the terms file)."""
        self.block_starts.append(len(self.deltas))
        self.deltas.append(ids[0])
        self.deltas.extend(b - a for a, b in zip(ids, ids[1:], strict=False))
        self.weights.extend(weights)

    def __len__(self) -> int:
        return len(self.deltas)

    def arrays(self) -> tuple[IntArray, FloatArray]:
        """Every posting's document number (each block's deltas summed from 0) and weight."""
        steps = np.asarray(self.deltas, dtype=np.int64)
        if not len(steps):
            return steps, np.zeros(0, dtype=np.float64)
        running = np.cumsum(steps)
        starts = np.asarray(self.block_starts, dtype=np.int64)
        counts = np.diff(np.append(starts, len(steps)))
        ids = running - np.repeat(running[starts] - steps[starts], counts)
        return ids, np.asarray(self.weights, dtype=np.float64)


def w3_blocks(raw: bytes) -> Iterator[tuple[tuple[Any, ...], tuple[Any, Any, Any]]]:
    """The blocks of one posting list's bytes in a whoosh3 postings file, in order: each
    block's info (postings, last id, highest weight, compression, shortest and longest
    length byte) and its data unpickled (id deltas, weights, values, minified as
    ``W3PostingsWriter`` keeps them)."""
    if raw[:_MAGIC_SIZE] != WHOOSH3_HEADER_MAGIC:
        raise ValueError("not a whoosh3 posting list")
    pos = _MAGIC_SIZE
    last = False
    while not last:
        size = int.from_bytes(raw[pos : pos + 4], "big", signed=True)
        last = size < 0
        block = io.BytesIO(raw[pos + 4 : pos + 4 + abs(size)])
        info = pickle.load(block)
        data = block.read()
        yield info, pickle.loads(zlib.decompress(data) if info[3] else data)
        pos += 4 + abs(size)
    if pos != len(raw):
        raise ValueError("a posting list does not end with its last block")


_MAGIC_SIZE = len(WHOOSH3_HEADER_MAGIC)
_EXTENT_SIZE = 12  # a posting list's offset (8 bytes) and length (4) in the postings file


def _block_arrays(matcher: Any) -> tuple[IntArray, FloatArray]:
    """The document numbers (in the segment) and weights of ``matcher``'s current block,
    decoded with numpy: Whoosh's ``_read_ids`` undoes the delta coding one number at a
    time in a Python generator."""
    if matcher._data is None:
        matcher._read_data()
    deltas, weights = matcher._data[0], matcher._data[1]
    count = matcher._blocklength
    ids = np.cumsum(np.asarray(deltas, dtype=np.int64))
    if weights is None:
        return ids, np.ones(count, dtype=np.float64)
    if isinstance(weights, float):
        return ids, np.full(count, weights, dtype=np.float64)
    return ids, np.asarray(weights, dtype=np.float64)


@dataclass(frozen=True)
class SegmentWords:
    """Words of a segment and their posting lists one after another: word ``i``'s
    postings are ``counts[i]`` long, deleted documents included, numbered in the segment.
    The lists the segment keeps as arrays are in ``kept`` instead (word ``i``'s numbers
    and weights; ``counts[i]`` is then 0): a short prefix's common words hold most of its
    postings, which are then not copied."""

    words: list[str]
    ids: IntArray
    weights: FloatArray
    counts: IntArray
    kept: dict[int, tuple[IntArray, FloatArray]] = dataclass_field(default_factory=dict)


def prefix_postings(
    segment: Any, fieldname: str, prefix: str, pattern: re.Pattern[str] | None
) -> SegmentWords | None:
    """Each word of ``segment``'s ``fieldname`` that starts with ``prefix`` (and matches
    ``pattern``), with its posting list; None when the segment is not whoosh3's.

    The words are read in order from the prefix on (many at a time, see
    :class:`TermsTable`). Their lists lie one after another in the postings
    file (written in word order): those the segment does not keep as arrays (see
    :func:`kept_lists`) are read in one piece, and decoded in C where it is built."""
    terms = getattr(segment, "_terms", None) if fast_paths() else None
    if not isinstance(terms, W3TermsReader) or fieldname not in terms._fieldmap:
        return None
    start = prefix.encode("utf-8")
    opened = opened_files(segment)
    compiled = speedups.active()
    if compiled is not None and opened.table is not None:
        try:
            return _prefix_postings_in_c(segment, opened, fieldname, start, pattern, compiled)
        except ValueError:
            pass  # postings in the terms table, or encoded otherwise: read word by word
    stats = W3TermInfo._struct.size
    words: list[str] = []
    inline: dict[int, tuple[Any, Any]] = {}
    extents: dict[int, tuple[int, int]] = {}
    frequencies: dict[int, int] = {}
    for key, row in items_from(opened, terms._tindex, terms._keycoder(fieldname, start)):
        name, tbytes = terms._keydecoder(key)
        if name != fieldname or not tbytes.startswith(start):
            break
        word = tbytes.decode("utf-8")
        if pattern is not None and not pattern.fullmatch(word):
            continue
        if row[0]:  # postings kept in the terms file: (ids, weights, values), pickled
            inline_ids, inline_weights, _ = pickle.loads(row[stats:])
            inline[len(words)] = (inline_ids, inline_weights)
        else:
            offset = int.from_bytes(row[stats : stats + 8], "big")
            length = int.from_bytes(row[stats + 8 : stats + _EXTENT_SIZE], "big")
            extents[len(words)] = (offset, length)
            frequencies[len(words)] = row_doc_frequency(row)
        words.append(word)
    lists: dict[int, tuple[IntArray, FloatArray]] = {}
    for number, (inline_ids, inline_weights) in inline.items():
        lists[number] = (
            np.asarray(inline_ids, dtype=np.int64),
            np.asarray(list(inline_weights), dtype=np.float64),
        )
    numbers = np.fromiter(frequencies, dtype=np.int64, count=len(frequencies))
    counts = np.fromiter(frequencies.values(), dtype=np.int64, count=len(frequencies))
    for number, found in _kept_words(segment, opened, fieldname, words, numbers, counts).items():
        lists[number] = found
        del extents[number]
    first = min((o for o, _ in extents.values()), default=0)
    end = max((o + n for o, n in extents.values()), default=0)
    joined = terms._postfile.get(first, end - first) if extents else b""
    compiled = speedups.active()
    rest = BlockArrays()
    rest_ends: dict[int, int] = {}
    in_c: dict[int, tuple[bytes, bytes]] = {}
    for number, (offset, length) in sorted(extents.items()):
        raw = joined[offset - first : offset - first + length]
        if compiled is not None:
            try:
                in_c[number] = compiled.decode_list(raw, WHOOSH3_HEADER_MAGIC, isal_zlib.decompress)
                continue
            except ValueError:
                pass  # pickles the C code does not read: Python's pickle reads them
        rest.add_list(raw)
        rest_ends[number] = len(rest)
    if in_c:  # (turned into arrays at once: most of a prefix's lists are short)
        c_ids = np.frombuffer(b"".join(i for i, _ in in_c.values()), dtype=np.int64)
        c_weights = np.frombuffer(b"".join(w for _, w in in_c.values()), dtype=np.float64)
        begin = 0
        for number, (ids_bytes, _) in in_c.items():
            stop = begin + len(ids_bytes) // 8
            lists[number] = (c_ids[begin:stop], c_weights[begin:stop])
            begin = stop
    if rest_ends:
        ids, weight_array = rest.arrays()
        begin = 0
        for number, stop in rest_ends.items():
            lists[number] = (ids[begin:stop], weight_array[begin:stop])
            begin = stop
    ordered = [lists[number] for number in range(len(words))]
    return SegmentWords(
        words,
        np.concatenate([i for i, _ in ordered]) if ordered else np.zeros(0, dtype=np.int64),
        np.concatenate([w for _, w in ordered]) if ordered else np.zeros(0, dtype=np.float64),
        np.array([len(i) for i, _ in ordered], dtype=np.int64),
    )


def _kept_words(
    segment: Any,
    opened: SegmentFiles,
    fieldname: str,
    words: list[str],
    numbers: IntArray,
    frequencies: IntArray,
) -> dict[int, tuple[IntArray, FloatArray]]:
    """The lists the segment keeps as arrays (see :func:`kept_lists`) of the words
    ``words[numbers[i]]`` whose document frequency (``frequencies[i]``) is long enough
    to be kept, by their number."""
    if opened.kept is None:
        return {}
    long = hotlists.threshold(segment.doc_count_all())
    kept: dict[int, tuple[IntArray, FloatArray]] = {}
    for number in numbers[frequencies >= long].tolist():
        found = opened.kept.get(fieldname, words[number].encode("utf-8"))
        if found is not None:
            kept[number] = found
    return kept


def _prefix_postings_in_c(
    segment: Any,
    opened: SegmentFiles,
    fieldname: str,
    start: bytes,
    pattern: re.Pattern[str] | None,
    compiled: Any,
) -> SegmentWords:
    """:func:`prefix_postings`, each step for all the words at once, in C: the words and
    their rows scanned from the terms table, the lists decoded in one call for each run
    of them between those the segment keeps as arrays. ValueError where a step meets
    what it does not read."""
    terms = segment._terms
    key = terms._keycoder(fieldname, start)
    if len(key) != FIELD_NUMBER_SIZE + len(start):
        raise ValueError("not whoosh3's keys")
    pos = terms._tindex.closest_key_pos(key)
    assert opened.table is not None
    scanned = (
        opened.table.scan(pos, key, compiled)
        if pos is not None
        else Scanned([], *(np.zeros(0, dtype=np.int64) for _ in range(3)))
    )
    if pattern is not None:
        fits = [i for i, word in enumerate(scanned.words) if pattern.fullmatch(word)]
        scanned = scanned.only(np.array(fits, dtype=np.int64))
    every = np.arange(len(scanned.words))
    kept = _kept_words(segment, opened, fieldname, scanned.words, every, scanned.frequencies)
    ids: list[IntArray] = []
    weights: list[FloatArray] = []
    counts: list[IntArray] = []
    begin = 0
    for stop in [*sorted(kept), len(scanned.words)]:
        if stop > begin:  # the lists of words begin..stop, one after another in the file
            offsets = scanned.offsets[begin:stop]
            first = int(offsets[0])
            end = int(offsets[-1] + scanned.lengths[stop - 1])
            if np.any(offsets[1:] < offsets[:-1] + scanned.lengths[begin : stop - 1]):
                raise ValueError("posting lists not in the order of their words")
            found_ids, found_weights, found_counts = compiled.decode_lists(
                terms._postfile.get(first, end - first),
                offsets - first,
                scanned.lengths[begin:stop],
                WHOOSH3_HEADER_MAGIC,
                isal_zlib.decompress,
            )
            ids.append(np.frombuffer(found_ids, dtype=np.int64))
            weights.append(np.frombuffer(found_weights, dtype=np.float64))
            counts.append(np.frombuffer(found_counts, dtype=np.int64))
        if stop in kept:
            counts.append(np.zeros(1, dtype=np.int64))  # (its postings in kept)
        begin = stop + 1
    return SegmentWords(
        scanned.words,
        np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64),
        np.concatenate(weights) if weights else np.zeros(0, dtype=np.float64),
        np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64),
        kept,
    )


# -- columns ---------------------------------------------------------------------------------


# -- queries and weighting ----------------------------------------------------------------


def pattern_words(segment: Any, q: Any) -> list[str]:
    """The words of ``segment`` that the pattern query ``q`` (Prefix, Wildcard) stands
    for, as Whoosh expands it."""
    field = segment.schema[q.fieldname]
    texts = q._btexts(segment) if fast_paths() else (t for _, t in q.expanded_terms(segment))
    return [field.from_bytes(b) for b in sorted(set(texts)) if b]


def compile_query(q: Any, reader: Any) -> Any:
    """The query Whoosh runs for ``q`` (a ``NumericRange``: ranges of its terms; through
    its public ``simplify`` for a Whoosh whose internals this does not know)."""
    return q._compile_query(reader) if fast_paths() else q.simplify(reader)


def term_range_texts(q: Any, reader: Any) -> list[bytes]:
    """The indexed terms (bytes) of ``reader`` a ``TermRange`` stands for."""
    if not fast_paths():
        return [t for _, t in q.expanded_terms(reader)]
    return list(q._btexts(reader))


def bm25_b(weighting: Any, searcher: Any, fieldname: str, text: str) -> float | None:
    """``B`` of a ``BM25F`` weighting model for ``fieldname`` (its per-field value): as
    the model keeps it, else as its scorer of ``fieldname:text`` has it (None: unknown)."""
    if fast_paths():
        return float(weighting._field_B.get(fieldname, weighting.B))
    b = getattr(weighting.scorer(searcher, fieldname, text), "B", None)
    return float(b) if isinstance(b, int | float) else None
