"""pubsearch.index.wordmatrix: the people table's documents x words, made whole (a build)
or row by row for the documents asked (an update). Made-up records."""

from __future__ import annotations

import numpy as np
import pytest

from pubsearch.index import peoplewords, wordmatrix

TOPICS = ["galaxy survey redshift", "protein folding dynamics", "graph coloring bounds"]


def _words(count: int) -> peoplewords.DocWords:
    return peoplewords.DocWords.of(
        (f"r{i}", f"{TOPICS[i % 3]} study {i % 7} lattice{i % 11}", f"abstract{i % 5} of {i}")
        for i in range(count)
    )


@pytest.mark.parametrize("slice_words", [1 << 23, 16])
def test_rows_made_for_some_documents_are_those_of_the_whole_matrix(
    monkeypatch: pytest.MonkeyPatch, slice_words: int
) -> None:
    monkeypatch.setattr(wordmatrix, "_SLICE_WORDS", slice_words)  # 16: a few at a time
    words = _words(80)
    live = np.ones(80, dtype=np.bool_)
    live[[4, 9, 33]] = False
    columns = wordmatrix.Columns.of(wordmatrix.word_counts(words, live), live)
    assert columns.width > 10
    whole = wordmatrix.word_matrix(words, live, columns, np.ones(80, dtype=np.bool_))
    docs = np.asarray([0, 4, 5, 6, 9, 20, 21, 22, 23, 50, 79], dtype=np.int64)
    rows = wordmatrix.word_rows(words, live, columns, docs)
    assert rows.shape == (len(docs), columns.width)
    assert np.array_equal(rows.toarray(), whole[docs].toarray())  # the same numbers
    assert rows[1].nnz == rows[4].nnz == 0  # not live: empty
    lengths = np.sqrt(np.asarray(rows.multiply(rows).sum(axis=1))).ravel()
    assert np.allclose(lengths[[0, 2, 3, 5]], 1.0)
    # Only the rows asked for: a build's matrix of some rows holds none of the others.
    some = np.zeros(80, dtype=np.bool_)
    some[docs] = True
    part = wordmatrix.word_matrix(words, live, columns, some)
    assert np.array_equal(part[docs].toarray(), rows.toarray())
    assert part[np.flatnonzero(~some)].nnz == 0
    assert wordmatrix.word_rows(words, live, columns, docs[:0]).shape == (0, columns.width)
