"""pubsearch.core.ranges: runs of consecutive numbers laid end to end, against lists."""

from __future__ import annotations

import numpy as np

from pubsearch.core.ranges import gathered, ranges


def test_ranges_are_each_counts_numbers_from_zero() -> None:
    assert ranges(np.array([3, 0, 1, 2])).tolist() == [0, 1, 2, 0, 0, 1]
    assert ranges(np.zeros(0, dtype=np.int64)).tolist() == []


def test_gathered_are_the_positions_of_the_slices() -> None:
    rng = np.random.default_rng(11)
    data = np.arange(100) * 7
    starts = rng.integers(0, 90, size=20)
    counts = rng.integers(0, 10, size=20)
    expected = [int(x) for s, c in zip(starts, counts, strict=True) for x in data[s : s + c]]
    assert data[gathered(starts, counts)].tolist() == expected
    assert gathered(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).tolist() == []
