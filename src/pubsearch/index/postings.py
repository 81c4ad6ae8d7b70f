"""Posting lists of a whole index (every segment) read through the format's read half
(:mod:`pubsearch.codec.w3format`): the terms' rows of each segment, document
frequencies, the document numbers and weights of a list in one read, and the lists kept
for the next use (per thread, and the long ones for every thread of the generation).

A build asks it which documents have a key term; a search asks it for the lists its
masks and scores are made of.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from pubsearch.codec import w3format, w3positions, w3terms

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def term_rows(
    reader: Any, fieldname: str, text: str | bytes
) -> tuple[tuple[int, bytes], ...] | None:
    """``(leaf number, row)`` of each of ``reader``'s segments that has ``fieldname:text``
    (see :func:`w3terms.term_rows_many`), or None when a segment is not whoosh3's. Kept
    for the generation: at 1,000,000 records an index has some 34 segments, and Whoosh
    looks a term up in each of them three times (is it there, its frequency, its
    postings), some 20 ms of every query."""
    many = term_rows_many(reader, fieldname, [text])
    return None if many is None else many[0]


def term_rows_many(
    reader: Any, fieldname: str, texts: Sequence[str | bytes]
) -> list[tuple[tuple[int, bytes], ...]] | None:
    """:func:`term_rows` of each of ``texts``: those not kept for the generation yet
    looked up together, a segment at a time."""
    segments = segments_key(reader)
    found: list[tuple[tuple[int, bytes], ...] | None] = [
        _TERM_ROWS.get((segments, fieldname, text)) for text in texts
    ]
    missing = list(dict.fromkeys(t for t, rows in zip(texts, found, strict=True) if rows is None))
    if missing:
        having: dict[str | bytes, list[tuple[int, bytes]]] = {text: [] for text in missing}
        leaves = [segment for segment, _ in reader.leaf_readers()]
        try:
            by_segment = w3terms.term_rows_many(leaves, fieldname, missing)
        except w3terms.NotWhoosh3:
            return None
        for number, segment_rows in enumerate(by_segment):
            for text, row in zip(missing, segment_rows, strict=True):
                if row is not None:
                    having[text].append((number, row))
        for text, rows in having.items():
            _TERM_ROWS.put((segments, fieldname, text), tuple(rows))
        found = [
            rows if rows is not None else tuple(having[text])
            for text, rows in zip(texts, found, strict=True)
        ]
    return cast(list[tuple[tuple[int, bytes], ...]], found)


def look_up_terms(reader: Any, terms: Iterable[tuple[str, str | bytes]]) -> None:
    """Look up the rows of many ``(fieldname, text)`` terms together (see
    :func:`term_rows_many`), ahead of the searches that will ask for each: a query of
    many words asks some 40 segments for each of them."""
    by_field: dict[str, list[str | bytes]] = {}
    for fieldname, text in terms:
        by_field.setdefault(fieldname, []).append(text)
    for fieldname, texts in by_field.items():
        if len(texts) > 1:
            term_rows_many(reader, fieldname, texts)


def doc_frequencies(reader: Any, fieldname: str, texts: Sequence[str | bytes]) -> list[int]:
    """:func:`doc_frequency` of each of ``texts``, their rows looked up all at once."""
    many = term_rows_many(reader, fieldname, texts)
    if many is None:
        return [int(reader.doc_frequency(fieldname, text)) for text in texts]
    return [sum(w3terms.row_doc_frequency(row) for _, row in rows) for rows in many]


def doc_frequency(reader: Any, fieldname: str, text: str | bytes) -> int:
    """How many documents (deleted ones included) have ``fieldname:text``: Whoosh's
    ``reader.doc_frequency``, from the terms' rows kept for the generation."""
    rows = term_rows(reader, fieldname, text)
    if rows is None:
        return int(reader.doc_frequency(fieldname, text))
    return sum(w3terms.row_doc_frequency(row) for _, row in rows)


# A word whose segments keep its list as arrays but for this many postings or fewer is
# read a segment at a time, those postings read again for each use. A word with more
# postings outside the kept lists is read whole, once, and kept for the next use.
_UNKEPT_POSTINGS = 4_096


def kept_pieces(
    reader: Any, fieldname: str, text: str | bytes
) -> list[tuple[Any, int, bytes]] | None:
    """``(segment, offset, row)`` of each segment having ``fieldname:text``, when some of
    its segments keep the word's list as arrays (:mod:`pubsearch.codec.hotlists`), all
    but :data:`_UNKEPT_POSTINGS` of its postings are kept, and it is not held whole
    already; else None: the list is better read whole (:func:`postings`)."""
    held = _recent().get((id(reader), fieldname, text))
    if held is not None and held[0] is reader:
        return None
    if _LONG_LISTS.get((segments_key(reader), fieldname, text)) is not None:
        return None
    rows = term_rows(reader, fieldname, text)
    if rows is None:
        return None
    leaves = reader.leaf_readers()
    pieces = []
    unkept = 0
    kept_somewhere = False
    for number, row in rows:
        segment, offset = leaves[number]
        if w3format.keeps_list(segment, fieldname, text):
            kept_somewhere = True
        else:
            unkept += w3terms.row_doc_frequency(row)
            if unkept > _UNKEPT_POSTINGS:
                return None
        pieces.append((segment, offset, row))
    # A word kept nowhere is a rare one: read once, and kept for the next use.
    return pieces if kept_somewhere else None


def term_docs(reader: Any, fieldname: str, text: str | bytes) -> IntArray:
    """Document numbers in the posting list of ``fieldname:text``, deleted ones included."""
    return postings(reader, fieldname, text)[0]


# The posting lists read last, per thread: a search reads each word's list for its mask
# and again to score it; each block read costs an unpickling of its positions too. Bounded
# in bytes as well as in lists: a common word's list grows with the index (16 MB at
# 1,000,000 records), and every thread of every server process keeps its own.
_RECENT = threading.local()


_RECENT_SIZE = 16


_RECENT_MAX_BYTES = 24 * 1024 * 1024


def postings(reader: Any, fieldname: str, text: str | bytes) -> tuple[IntArray, FloatArray]:
    """Document numbers (deleted ones included) and weights of the posting list of
    ``fieldname:text``, read a block at a time: a Whoosh matcher yields one document per
    Python call, and filters out deleted documents one by one. Long lists are kept for
    every thread (:data:`_LONG_LISTS`), the last few of any length for this one."""
    recent = _recent()
    key = (id(reader), fieldname, text)
    held = recent.get(key)
    if held is not None and held[0] is reader:
        recent.move_to_end(key)
        return held[1], held[2]
    shared_key = (segments_key(reader), fieldname, text)
    shared = _LONG_LISTS.get(shared_key)
    if shared is not None:
        ids, weights = shared
    else:
        ids, weights = read_postings(reader, fieldname, text)
        _share_if_long(shared_key, ids, weights)
    _remember(recent, key, (reader, ids, weights))
    return ids, weights


def postings_by_segment(
    reader: Any, fieldname: str, text: str | bytes
) -> Iterator[tuple[int, IntArray, FloatArray]]:
    """The posting list of ``fieldname:text`` (see :func:`postings`) in pieces: ``(offset,
    ids, weights)``, the documents being ``offset + ids``. A common word's a segment at a
    time, from the lists the segments keep as arrays (see :func:`kept_pieces`): its list
    is then never made whole (8 bytes a document for its numbers and as many for its
    weights), and what is done with each piece stays in the processor's cache. Any other
    word's whole, read or kept as :func:`postings` does, in one piece."""
    pieces = kept_pieces(reader, fieldname, text)
    if pieces is None:
        yield (0, *postings(reader, fieldname, text))
        return
    for segment, offset, row in pieces:
        ids, weights, _ = w3format.segment_postings(segment, fieldname, text, False, row)
        yield offset, ids, weights


def _share_if_long(key: Any, ids: IntArray, weights: FloatArray) -> None:
    if len(ids) >= _LONG_LIST_POSTINGS:
        _LONG_LISTS.put(key, (ids, weights))


def postings_with_values(
    reader: Any, fieldname: str, text: str
) -> list[tuple[int, IntArray, w3positions.PackedValues]]:
    """A posting list's pieces, one per segment having the word: the segment's offset,
    and the document numbers (in the segment) and values (encoded positions) of its
    postings, each block read once. Only the numbers and weights are kept, whole, for the
    next :func:`postings` call: the values take many times their memory, and phrase
    matches are kept instead."""
    pieces = _read_pieces(reader, fieldname, text, True)
    ids, weights = _joined(pieces)
    _remember(_recent(), (id(reader), fieldname, text), (reader, ids, weights))
    _share_if_long((segments_key(reader), fieldname, text), ids, weights)
    return [(offset, seg_ids, values) for offset, seg_ids, _, values in pieces]


def _recent() -> OrderedDict[Any, tuple[Any, ...]]:
    recent: OrderedDict[Any, tuple[Any, ...]] | None = getattr(_RECENT, "lists", None)
    if recent is None:
        recent = _RECENT.lists = OrderedDict()
    return recent


def _remember(recent: OrderedDict[Any, tuple[Any, ...]], key: Any, value: tuple[Any, ...]) -> None:
    """Keep ``value`` (reader, document numbers, weights) as the newest of this thread's
    lists, dropping the oldest past :data:`_RECENT_SIZE` lists or :data:`_RECENT_MAX_BYTES`
    (the newest is always kept)."""
    recent[key] = value
    recent.move_to_end(key)
    while len(recent) > 1 and (
        len(recent) > _RECENT_SIZE or _held_bytes(recent) > _RECENT_MAX_BYTES
    ):
        recent.popitem(last=False)


def _held_bytes(recent: OrderedDict[Any, tuple[Any, ...]]) -> int:
    return sum(ids.nbytes + weights.nbytes for _, ids, weights in recent.values())


def read_postings(reader: Any, fieldname: str, text: str | bytes) -> tuple[IntArray, FloatArray]:
    """The posting list's document numbers and weights, each block read once."""
    return _joined(_read_pieces(reader, fieldname, text, False))


def _read_pieces(
    reader: Any, fieldname: str, text: str | bytes, with_values: bool
) -> list[tuple[int, IntArray, FloatArray, w3positions.PackedValues]]:
    """The posting list a segment at a time: for each segment having the term, its offset
    and the document numbers (in the segment), weights and, with ``with_values``, values
    of its postings."""
    leaves = reader.leaf_readers()
    rows = term_rows(reader, fieldname, text)
    having = (
        [(leaves[number], row) for number, row in rows]
        if rows is not None
        else [(leaf, None) for leaf in leaves if (fieldname, text) in leaf[0]]
    )
    return [
        (offset, *w3format.segment_postings(segment, fieldname, text, with_values, row))
        for (segment, offset), row in having
    ]


def _joined(
    pieces: list[tuple[int, IntArray, FloatArray, w3positions.PackedValues]],
) -> tuple[IntArray, FloatArray]:
    """The document numbers (in the index) and weights of a list's pieces, one after
    another."""
    size = sum(len(seg_ids) for _, seg_ids, _, _ in pieces)
    ids = np.empty(size, dtype=np.int64)
    at = 0
    for offset, seg_ids, _, _ in pieces:  # each piece's numbers moved in place
        np.add(seg_ids, offset, out=ids[at : at + len(seg_ids)])
        at += len(seg_ids)
    if not pieces:
        return ids, np.zeros(0, dtype=np.float64)
    return ids, np.concatenate([weights for _, _, weights, _ in pieces])


def segments_key(reader: Any) -> tuple[tuple[str, int], ...]:
    """What a reader's document numbers depend on: its segments and where each starts.
    Every thread's reader of one index generation gives the same."""
    return tuple((segment.segment().segid, offset) for segment, offset in reader.leaf_readers())


def _array_bytes(arrays: tuple[Any, ...]) -> int:
    return sum(array.nbytes for array in arrays)


class SharedResults:
    """What was worked out from an index generation's segments (a tuple: arrays, or terms'
    rows), shared by every thread, the least recently used dropped once the kept values'
    sizes (``size``: by default their arrays' bytes) add up to more than ``limit``."""

    def __init__(self, limit: int, size: Callable[[tuple[Any, ...]], int] = _array_bytes) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[Any, tuple[Any, ...]] = OrderedDict()
        self._held = 0
        self._limit = limit
        self._size = size

    def get(self, key: Any) -> tuple[Any, ...] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: Any, value: tuple[Any, ...]) -> None:
        for item in value:
            if isinstance(item, np.ndarray):
                item.flags.writeable = False  # shared: no caller may change it
        with self._lock:
            if key in self._items:
                return
            self._items[key] = value
            self._held += self._size(value)
            while self._held > self._limit and len(self._items) > 1:
                _, dropped = self._items.popitem(last=False)
                self._held -= self._size(dropped)


# Terms' rows (see term_rows), counted by term. A row is some 30 bytes and a term is in a
# few dozen segments at most: 16,384 terms hold a few MB, more than the words of the
# searches of many minutes.
_TERM_ROWS = SharedResults(limit=16_384, size=lambda rows: 1)


# Posting lists (numbers and weights) of at least _LONG_LIST_POSTINGS documents. With stop
# words indexed, a pasted sentence scores its common words, each in nearly every record,
# and with the words of its feedback it reads more lists than a thread keeps (_RECENT_SIZE):
# warm, such a sentence read 50 lists a search at 102,289 records.
_LONG_LIST_POSTINGS = 2_000


_LONG_LISTS = SharedResults(limit=96 * 1024 * 1024)
