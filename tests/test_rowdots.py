"""pubsearch.index.rowdots: pairs' and runs' dot products of sparse rows, checked against
dense numpy products of random matrices."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.sparse import random as sparse_random

from pubsearch.index import rowdots


def _matrices(seed: int, rows: int = 60, columns: int = 300) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    a, b = (
        sparse_random(rows, columns, density=0.05, format="csr", dtype=np.float32, random_state=rng)
        for _ in range(2)
    )
    return a, b


def test_run_pairs_are_every_pair_of_each_run_in_order() -> None:
    starts, sizes = np.array([0, 3, 4]), np.array([3, 1, 2])
    left, right = rowdots.run_pairs(starts, sizes)
    assert list(zip(left.tolist(), right.tolist(), strict=True)) == [
        (0, 1),
        (0, 2),
        (1, 2),
        (4, 5),
    ]


def test_run_pairs_of_chosen_rows_are_those_of_run_pairs_with_one_of_them() -> None:
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 9, size=30)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    left, right = rowdots.run_pairs(starts, sizes)
    for share in (0.0, 0.1, 0.5, 1.0):
        chosen = rng.random(int(sizes.sum())) < share
        found = rowdots.run_pairs_of(starts, sizes, chosen)
        wanted = chosen[left] | chosen[right]
        assert np.array_equal(found[0], left[wanted]) and np.array_equal(found[1], right[wanted])


def test_row_dots_of_two_matrices_are_their_rows_products() -> None:
    a, b = _matrices(1)
    left, right = np.array([0, 5, 7, 59]), np.array([3, 5, 0, 1])
    expected = (a.toarray()[left] * b.toarray()[right]).sum(axis=1)
    np.testing.assert_allclose(rowdots.row_dots(a, left, right, b), expected, rtol=1e-5)
    same = (a.toarray()[left] * a.toarray()[right]).sum(axis=1)
    np.testing.assert_allclose(rowdots.row_dots(a, left, right), same, rtol=1e-5)


@pytest.mark.parametrize("dense", [1 << 22, 0])
@pytest.mark.parametrize("two", [False, True])
def test_runs_dots_equal_the_pairs_one_by_one(
    monkeypatch: pytest.MonkeyPatch, dense: int, two: bool
) -> None:
    # Dense products of a run's columns or scipy's sparse ones; one matrix or two (the
    # first's entries outside the second's columns count for nothing).
    monkeypatch.setattr(rowdots, "DENSE_GRAM", dense)
    a, b = _matrices(2)
    other = b if two else None
    long = rowdots.RUN_PRODUCT + 4
    starts, sizes = np.array([0, 3, 3 + long, 40]), np.array([3, long, 1, long + 2])
    left, right = rowdots.run_pairs(starts, sizes)
    found = rowdots.run_dots(a, left, right, starts, sizes, other)
    second = (b if two else a).toarray()
    expected = (a.toarray()[left] * second[right]).sum(axis=1)
    assert len(found) == 3 + long * (long - 1) // 2 + (long + 2) * (long + 1) // 2
    np.testing.assert_allclose(found, expected, rtol=1e-5, atol=1e-7)
    assert np.count_nonzero(expected) > len(expected) // 4


def test_a_row_product_is_worked_out_by_rows() -> None:
    a, b = _matrices(3, rows=20, columns=20)
    product = rowdots.RowProduct(a, b)
    assert product.shape == (20, 20)
    np.testing.assert_allclose(
        product[np.array([4, 2])].toarray(), (a @ b).toarray()[[4, 2]], rtol=1e-5
    )


def test_a_runs_entries_written_twice_are_summed() -> None:
    # A product's rows may hold a column twice, unsorted: each counts.
    from scipy.sparse import csr_matrix

    size = rowdots.RUN_PRODUCT + 1
    indices = np.array([[2, 0, 2], [1, 2, 1]] * size)[:size].ravel()
    data = np.tile(np.array([1.0, 2.0, 3.0], dtype=np.float32), size)
    matrix = csr_matrix((data, indices, np.arange(0, 3 * size + 1, 3)), shape=(size, 4))
    starts, sizes = np.array([0]), np.array([size])
    left, right = rowdots.run_pairs(starts, sizes)
    dense = matrix.toarray()  # scipy sums the two entries of a place
    expected = (dense[left] * dense[right]).sum(axis=1)
    np.testing.assert_allclose(rowdots.run_dots(matrix, left, right, starts, sizes), expected)
    other = csr_matrix(dense)
    found = rowdots.run_dots(matrix, left, right, starts, sizes, other)
    np.testing.assert_allclose(found, expected)
