"""Documents x words for the people table (:mod:`pubsearch.index.peopleevidence`): each
document's words (:class:`~pubsearch.index.peoplewords.DocWords`' hashes) weighed by their
idf, rows of length 1. A word is its hash's bucket (of 4M: words that share one are few,
and rare), counted with bincount rather than sorted; words on one live document, on more
than a twentieth of them and more than :data:`COMMON_FLOOR`, or among
:mod:`pubsearch.index.commonwords`' weigh nothing, and only the others have columns.

A build makes the rows of every live document at once (:func:`word_matrix`); an update
makes those of the documents it compares when it compares them (:func:`word_rows`): the
same numbers, row for row."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pubsearch.core.ranges import gathered
from pubsearch.index.peoplewords import DocWords, term_hashes

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]
Counts = npt.NDArray[np.int32]
KnownCounts = tuple[npt.NDArray[np.uint32], Counts, BoolArray]

# A word is too common to tell people apart on more than a twentieth of the records, and
# more than this many (a small index's words are not all common).
COMMON_FLOOR = 10
BUCKETS = 1 << 22
# Words read at a time (documents whole): at a million records, 122 million words, whose
# arrays whole (and bincount's 64-bit copy of them) took gigabytes.
_SLICE_WORDS = 1 << 23


def word_counts(words: DocWords, live: BoolArray, known: KnownCounts | None = None) -> Counts:
    """How many ``live`` documents hold a word of each bucket, a slice of documents at a
    time. With ``known`` (an earlier generation's buckets counted, their counts and the
    documents it counted, numbered as now), only the documents counted or not since are
    read (an update's: 0.07 s rather than 2.07 at 1M records); counted again when they do
    not fit."""
    offsets = words.offsets.astype(np.int64)
    if known is not None and len(known[2]) <= len(live) and (known[0] < BUCKETS).all():
        counted = np.zeros(len(live), dtype=np.bool_)
        counted[: len(known[2])] = known[2]
        df = np.zeros(BUCKETS, dtype=np.int64)
        df[known[0]] = known[1]
        for docs, sign in ((counted & ~live, -1), (live & ~counted, 1)):
            found = _gathered_buckets(words, offsets, np.flatnonzero(docs))
            df += sign * np.bincount(found, minlength=BUCKETS)
        if not (df < 0).any():  # else not this generation's: counted again
            return df.astype(np.int32)
    lengths = np.diff(offsets)
    df = np.zeros(BUCKETS, dtype=np.int64)
    for first, last in _word_slices(offsets):
        buckets = _buckets(words, offsets, first, last)
        df += np.bincount(
            buckets[np.repeat(live[first:last], lengths[first:last])], minlength=BUCKETS
        )
    return df.astype(np.int32)


@dataclass(frozen=True)
class Columns:
    """Each bucket's idf and column (-1: it weighs nothing), and the count of columns."""

    idf: FloatArray
    column: npt.NDArray[np.int32]
    width: int

    @classmethod
    def of(cls, df: Counts, live: BoolArray) -> Columns:
        total = max(int(live.sum()), 1)
        idf = np.log(total / np.maximum(df, 1)).astype(np.float32)
        idf[(df < 2) | (df > max(total / 20, COMMON_FLOOR))] = 0
        idf[_common_buckets()] = 0
        # Columns only for the words that weigh something (a few hundred thousand of 4M).
        weighing = np.flatnonzero(idf)
        column = np.full(BUCKETS, -1, dtype=np.int32)
        column[weighing] = np.arange(len(weighing), dtype=np.int32)
        return cls(idf, column, max(len(weighing), 1))


def word_matrix(words: DocWords, live: BoolArray, columns: Columns, rows: BoolArray) -> Any:
    """Documents x words, rows only for the ``live`` documents of ``rows`` (a slice of
    documents read at a time, or only the chosen ones' words when few of the slice's)."""
    from scipy.sparse import csr_matrix

    offsets = words.offsets.astype(np.int64)
    lengths = np.diff(offsets)
    filled = rows & live
    datas: list[FloatArray] = []
    indices: list[npt.NDArray[np.int32]] = []
    counts = np.zeros(len(lengths), dtype=np.int64)
    for first, last in _word_slices(offsets):
        chosen = np.flatnonzero(filled[first:last]) + first
        if not len(chosen):
            continue
        if 2 * len(chosen) < last - first:
            buckets = _gathered_buckets(words, offsets, chosen)
        else:
            buckets = _buckets(words, offsets, first, last)
            buckets = buckets[np.repeat(filled[first:last], lengths[first:last])]
        part = _rows(buckets, lengths[chosen], columns)
        datas.append(part.data)
        indices.append(part.indices.astype(np.int32, copy=False))
        counts[chosen] = np.diff(part.indptr)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    empty = np.zeros(0, dtype=np.float32)
    return csr_matrix(
        (
            np.concatenate(datas) if datas else empty,
            np.concatenate(indices) if indices else empty.astype(np.int32),
            indptr,
        ),
        shape=(len(lengths), columns.width),
        copy=False,
    )


def word_rows(words: DocWords, live: BoolArray, columns: Columns, docs: IntArray) -> Any:
    """The rows of ``docs`` (ascending, distinct) of :func:`word_matrix`, as a matrix of
    their own (a document not ``live``: an empty row)."""
    from scipy.sparse import csr_matrix, vstack

    # (Only the asked documents' offsets are read: an update asks batch by batch.)
    offsets = words.offsets
    lengths = (offsets[docs + 1] - offsets[docs]).astype(np.int64) * live[docs]
    parts = []
    # Documents of about _SLICE_WORDS words at a time.
    cuts = np.searchsorted(np.cumsum(lengths), np.arange(1, 1 + lengths.sum() // _SLICE_WORDS))
    for chosen in np.split(docs, cuts):
        mine = chosen[live[chosen]]
        buckets = _gathered_buckets(words, offsets, mine)
        part = _rows(buckets, (offsets[mine + 1] - offsets[mine]).astype(np.int64), columns)
        at = np.searchsorted(chosen, mine)
        counts = np.zeros(len(chosen), dtype=np.int64)
        counts[at] = np.diff(part.indptr)
        indptr = np.concatenate([[0], np.cumsum(counts)])
        parts.append(csr_matrix((part.data, part.indices, indptr), (len(chosen), columns.width)))
    if not parts:
        return csr_matrix((0, columns.width), dtype=np.float32)
    return vstack(parts, format="csr") if len(parts) > 1 else parts[0]


def _rows(buckets: IntArray, lengths: IntArray, columns: Columns) -> Any:
    """The rows of documents of ``lengths`` words whose buckets are ``buckets`` (document
    by document), weighed and of length 1."""
    from scipy.sparse import csr_matrix

    cols = columns.column[buckets]
    weighs = cols >= 0
    kept = np.bincount(np.repeat(np.arange(len(lengths)), lengths)[weighs], minlength=len(lengths))
    return unit_rows(
        csr_matrix(
            (columns.idf[buckets[weighs]], cols[weighs], np.concatenate([[0], np.cumsum(kept)])),
            shape=(len(lengths), columns.width),
        )
    )


def unit_rows(matrix: Any) -> Any:
    """``matrix`` (sparse) with each row scaled to length 1 (empty rows left empty)."""
    from scipy.sparse import csr_matrix

    matrix = csr_matrix(matrix, dtype=np.float32)
    matrix.sum_duplicates()
    lengths = np.diff(matrix.indptr)
    rows = np.repeat(np.arange(matrix.shape[0]), lengths)
    norms = np.sqrt(np.bincount(rows, weights=matrix.data**2, minlength=matrix.shape[0]))
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    matrix.data *= scale[rows].astype(np.float32)
    return matrix


def _word_slices(offsets: IntArray) -> list[tuple[int, int]]:
    """Runs of documents (first, last) of about :data:`_SLICE_WORDS` words each."""
    ndocs = len(offsets) - 1
    cuts = np.searchsorted(offsets, np.arange(0, int(offsets[-1]), _SLICE_WORDS), "right") - 1
    bounds = np.unique(np.concatenate([cuts[cuts > 0], [0, ndocs]]))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))


def _buckets(words: DocWords, offsets: IntArray, first: int, last: int) -> IntArray:
    """The buckets of the words of documents ``first`` to ``last`` (not included)."""
    hashes = words.hashes[int(offsets[first]) : int(offsets[last])]
    result: IntArray = (hashes & (BUCKETS - 1)).astype(np.intp)
    return result


def _gathered_buckets(words: DocWords, offsets: IntArray, docs: IntArray) -> IntArray:
    """The buckets of the words of documents ``docs`` (ascending), document by document."""
    starts = offsets[docs].astype(np.int64)
    at = gathered(starts, offsets[docs + 1] - starts)
    result: IntArray = (words.hashes[at] & (BUCKETS - 1)).astype(np.intp)
    return result


@functools.cache
def _common_buckets() -> IntArray:
    """The buckets of :data:`pubsearch.index.commonwords.WORDS`' hashes."""
    from pubsearch.index.commonwords import WORDS

    hashes = term_hashes(WORDS)
    result: IntArray = (hashes[hashes > 0] & (BUCKETS - 1)).astype(np.int64)
    return result
