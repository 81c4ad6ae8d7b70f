"""Dot products of sparse matrices' rows, pair by pair or a run of rows at once: how the
people splitter (:mod:`pubsearch.index.peopleevidence`) compares groups of one name's
records.

A pair's product is of row ``left`` of one matrix and row ``right`` of another (or the
same); a *run* is consecutive rows, all of whose pairs are compared, and a long run's
products are worked out as one matrix product.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import numpy.typing as npt

from pubsearch.core.ranges import gathered

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]

# A run of at least this many rows has its pairs' products worked out as one product of
# its rows with themselves (400 rows: 50 times faster than row by row); shorter runs'
# pairs row by row (a product a run costs more than a few pairs).
RUN_PRODUCT = 12
RUN_ROWS = 10_000  # rows of long runs read at a time
# A run's rows are multiplied as a dense matrix of their columns when it holds at most
# this many numbers (a product of scipy's costs far more for the few dozen rows of most).
DENSE_GRAM = 1 << 22
# Products of float64 matrices are kept in float64, others' in float32.
_DOTS: dict[bool, type[np.floating[Any]]] = {False: np.float32, True: np.float64}


class RowProduct:
    """The rows of ``left @ right`` (sparse matrices), each read worked out then: the
    product whole can be far larger than the rows a comparison needs at once."""

    rows_at_once = 10_000  # pairs compared at a time (row_dots): rows of a few hundred

    def __init__(self, left: Any, right: Any) -> None:
        self.left = left
        self.right = right
        self.shape = (left.shape[0], right.shape[1])
        self.dtype = np.result_type(left.dtype, right.dtype)

    def __getitem__(self, rows: Any) -> Any:
        from scipy.sparse import csr_matrix

        return csr_matrix(self.left[rows] @ self.right)


def run_pairs(starts: IntArray, sizes: IntArray) -> tuple[IntArray, IntArray]:
    """Every pair (i < j) of the rows of each run (``sizes[r]`` rows from ``starts[r]``),
    run by run, each run's in :func:`numpy.triu_indices` order."""
    lefts: list[IntArray] = []
    rights: list[IntArray] = []
    at: list[IntArray] = []
    for size in np.unique(sizes).tolist():
        if size < 2:
            continue
        chosen = np.flatnonzero(sizes == size)
        i, j = upper(size)
        lefts.append((starts[chosen][:, None] + i[None, :]).ravel())
        rights.append((starts[chosen][:, None] + j[None, :]).ravel())
        at.append(np.repeat(chosen, len(i)))
    if not lefts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    left, right = np.concatenate(lefts), np.concatenate(rights)
    sort = np.lexsort((right, left, np.concatenate(at)))
    return left[sort], right[sort]


def run_pairs_of(
    starts: IntArray, sizes: IntArray, chosen: npt.NDArray[np.bool_]
) -> tuple[IntArray, IntArray]:
    """The pairs of :func:`run_pairs` of which at least one row is ``chosen`` (by row), in
    its order, made without the others (an update's: a few new rows among thousands)."""
    rows = np.flatnonzero(chosen)
    run = np.searchsorted(starts, rows, "right") - 1
    size = sizes[run]
    a = np.repeat(rows, size)
    b = gathered(starts[run], size)
    # Each pair once: from its chosen row, or from the first of two chosen rows.
    keep = (b != a) & (~chosen[b] | (b > a))
    left, right = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    order = np.lexsort((right, left))
    return left[order], right[order]


@functools.cache
def upper(size: int) -> tuple[IntArray, IntArray]:
    """The indices of a ``size`` x ``size`` matrix's upper triangle."""
    i, j = np.triu_indices(size, k=1)
    return i.astype(np.int64), j.astype(np.int64)


def row_dots(
    matrix: Any, left: IntArray, right: IntArray, other: Any = None, chunk: int = 50_000
) -> FloatArray:
    """The dot product of row ``left[i]`` of ``matrix`` and row ``right[i]`` of ``other``
    (``matrix`` if not given), for each i."""
    other = matrix if other is None else other
    out = np.zeros(len(left), dtype=_dtype(matrix, other))
    chunk = min(
        chunk, getattr(matrix, "rows_at_once", chunk), getattr(other, "rows_at_once", chunk)
    )
    for start in range(0, len(left), chunk):
        a = matrix[left[start : start + chunk]]
        b = other[right[start : start + chunk]]
        out[start : start + chunk] = np.asarray(a.multiply(b).sum(axis=1)).ravel()
    return out


def run_dots(
    matrix: Any,
    left: IntArray,
    right: IntArray,
    starts: IntArray,
    sizes: IntArray,
    other: Any = None,
) -> FloatArray:
    """:func:`row_dots` of the pairs :func:`run_pairs` gives for ``starts`` and ``sizes``
    (``left`` and ``right``), a long run's at once."""
    from scipy.sparse import csr_matrix

    counts = sizes * (sizes - 1) // 2
    offsets = np.r_[0, np.cumsum(counts)]
    out = np.zeros(int(offsets[-1]), dtype=_dtype(matrix, other))
    long = sizes >= RUN_PRODUCT
    runs = np.flatnonzero(long)
    at = 0
    while at < len(runs):
        # Long runs' rows read together, at most RUN_ROWS (one run at least): a
        # :class:`RowProduct`'s rows are worked out in one product.
        end = at + max(1, int(np.searchsorted(np.cumsum(sizes[runs[at:]]), RUN_ROWS, "right")))
        chosen = runs[at:end]
        rows = np.concatenate([np.arange(starts[r], starts[r] + sizes[r]) for r in chosen])
        block = csr_matrix(matrix[rows])
        other_block = block if other is None else csr_matrix(other[rows])
        first = 0
        for run in chosen.tolist():
            size = int(sizes[run])
            i, j = upper(size)
            out[offsets[run] : offsets[run + 1]] = gram(block, first, size, other_block)[i, j]
            first += size
        at = end
    short = np.repeat(~long, counts)
    if short.any():
        out[short] = row_dots(matrix, left[short], right[short], other)
    return out


def gram(block: Any, first: int, size: int, other: Any = None) -> npt.NDArray[np.floating[Any]]:
    """The products of rows ``first`` to ``first + size`` of ``block`` with those of
    ``other`` (``block`` if not given; CSR matrices): size x size."""
    other = block if other is None else other
    start, stop = int(other.indptr[first]), int(other.indptr[first + size])
    columns, at = np.unique(other.indices[start:stop], return_inverse=True)
    if not len(columns):
        return np.zeros((size, size), dtype=_dtype(block, other))
    if size * len(columns) > DENSE_GRAM:
        result: npt.NDArray[np.floating[Any]] = (
            block[first : first + size] @ other[first : first + size].T
        ).toarray()
        return result
    right = _dense(other, first, size, len(columns), at.ravel(), other.data[start:stop])
    if other is block:
        return right @ right.T
    # Only the columns of ``other``'s rows count: ``block``'s others weigh 0.
    start, stop = int(block.indptr[first]), int(block.indptr[first + size])
    indices = block.indices[start:stop]
    place = np.minimum(np.searchsorted(columns, indices), len(columns) - 1)
    data = np.where(columns[place] == indices, block.data[start:stop], 0)
    left = _dense(block, first, size, len(columns), place, data)
    product: npt.NDArray[np.floating[Any]] = left @ right.T
    return product


def _dense(
    block: Any, first: int, size: int, columns: int, at: IntArray, data: Any
) -> npt.NDArray[np.floating[Any]]:
    """Rows ``first`` to ``first + size`` of ``block`` as a dense matrix of ``columns``
    columns, their entries ``data`` in columns ``at`` (those of one place summed)."""
    from scipy.sparse import csr_matrix

    indptr = block.indptr[first : first + size + 1] - block.indptr[first]
    result: npt.NDArray[np.floating[Any]] = csr_matrix(
        (data.astype(block.dtype, copy=False), at, indptr), shape=(size, columns)
    ).toarray()
    return result


def _dtype(matrix: Any, other: Any) -> type[np.floating[Any]]:
    both = matrix.dtype == np.float64 and (other is None or other.dtype == np.float64)
    return _DOTS[bool(both)]
