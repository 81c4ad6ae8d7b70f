"""Runs of consecutive numbers laid end to end, made with numpy rather than a Python loop:
how a few documents' words, a facet's people's entries or some packed strings' bytes are
gathered from one long array."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


def ranges(counts: npt.NDArray[np.integer]) -> IntArray:
    """0..n-1 for each n of ``counts``, one after another."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    starts = np.cumsum(counts) - counts
    result: IntArray = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)
    return result


def gathered(starts: npt.NDArray[np.integer], counts: npt.NDArray[np.integer]) -> IntArray:
    """``starts[i]``, ``starts[i] + 1``, ... (``counts[i]`` of them) for each i, one after
    another: the positions of slices ``starts[i]:starts[i] + counts[i]`` of one array."""
    result: IntArray = np.repeat(np.asarray(starts, dtype=np.int64), counts) + ranges(counts)
    return result
