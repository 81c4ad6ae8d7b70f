"""Recommendations per tag: the ranking's parts on arrays, then the Library's list over
real indexes (words only, and with the real sentence model's vectors)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from library_support import build, record, update

from pubsearch.cli.main import main
from pubsearch.core.errors import ParameterError
from pubsearch.library import recommend
from pubsearch.library.follow import Library
from pubsearch.search.service import SearchService


def test_meaning_is_the_mean_of_the_closest_similarities() -> None:
    table = {
        0: np.asarray([1.0, 0.9, 0.1, -1.0], dtype=np.float32),
        1: np.asarray([0.2, 1.0, 0.3, -1.0], dtype=np.float32),
        2: np.asarray([0.0, 0.1, 1.0, -1.0], dtype=np.float32),
    }
    tagged = np.asarray([0, 1, 2])
    closest = recommend.meaning_scores(table.__getitem__, tagged, 4, 1)
    assert closest.tolist() == pytest.approx([1.0, 1.0, 1.0, -1.0])
    two = recommend.meaning_scores(table.__getitem__, tagged, 4, 2)
    assert two.tolist() == pytest.approx([0.6, 0.95, 0.65, -1.0])
    assert recommend.meaning_scores(lambda d: None, tagged, 4, 2).tolist() == [0, 0, 0, 0]


def test_ranked_takes_the_best_candidates_ties_by_number() -> None:
    values = np.asarray([0.5, 0.9, 0.9, 0.1, 2.0], dtype=np.float32)
    candidates = np.asarray([True, True, True, True, False])
    assert [d for _, d in recommend.ranked(values, candidates, 3)] == [1, 2, 0]
    assert recommend.ranked(values, np.zeros(5, dtype=np.bool_), 3) == []


def test_the_svm_ranks_records_of_the_tags_words_first() -> None:
    texts = [f"graph neural message passing {i}" for i in range(10)]
    texts += [f"galaxy cluster lensing halo {i}" for i in range(10)]
    features = recommend.text_features(texts)
    live = np.ones(20, dtype=np.bool_)
    tagged = np.asarray([0, 1, 2])
    candidates = live.copy()
    candidates[tagged] = False
    for method in (recommend.BASELINE, recommend.PUBSEARCH):
        values = recommend.scores(features, tagged, live, candidates, method)
        top = [d for _, d in recommend.ranked(values, candidates, 7)]
        assert sorted(top) == list(range(3, 10))


def test_a_corpus_without_one_word_kept_ranks_without_failing() -> None:
    features = recommend.text_features(["", "", "a"])
    assert features.shape[0] == 3


def test_a_tags_list_excludes_its_records_and_finds_their_like(tmp_path: Path) -> None:
    build(tmp_path)
    library = Library(SearchService(tmp_path))
    library.tag("gnn", ["2503.00001", "2503.00004", "2503.00007"])  # galaxy papers
    found = library.recommend("gnn", page_size=7)
    assert found.tagged == 3 and found.total == 27 and not found.meaning
    ids = [hit.id for hit in found.hits]
    assert not {"2503.00001", "2503.00004", "2503.00007"} & set(ids)
    galaxy = {f"2503.{i:05d}" for i in range(1, 31) if i % 3 == 1}
    assert set(ids) == galaxy - {"2503.00001", "2503.00004", "2503.00007"}
    # The word table is kept beside the index, and read back by the next process.
    assert list((tmp_path / recommend.CACHE_DIR).glob("*.tfidf.npz"))
    again = Library(SearchService(tmp_path)).recommend("gnn", page_size=7)
    assert [hit.id for hit in again.hits] == ids
    second = Library(SearchService(tmp_path)).recommend("gnn", page=2, page_size=7)
    assert second.hits[0].rank == 8 and not set(ids) & {hit.id for hit in second.hits}


def test_since_limits_the_list_to_new_records(tmp_path: Path) -> None:
    build(tmp_path)
    Library(SearchService(tmp_path)).tag("gnn", ["2503.00001", "2503.00004", "2503.00007"])
    update(tmp_path, [record(801, "graph"), record(802, "galaxy")])
    library = Library(SearchService(tmp_path))
    upto = library.views().upto
    found = library.recommend("gnn", since=upto)
    assert found.total == 2
    assert [hit.id for hit in found.hits] == ["2503.00802", "2503.00801"]  # galaxy first


def test_an_empty_tag_is_a_clear_error(tmp_path: Path) -> None:
    build(tmp_path)
    with pytest.raises(ParameterError, match="no record in the index is tagged 'none'"):
        Library(SearchService(tmp_path)).recommend("none")


def test_recommend_from_the_command_line(tmp_path: Path) -> None:
    build(tmp_path)
    ix = ("--index", str(tmp_path))
    runner = CliRunner()
    runner.invoke(main, ["tag", "add", "gnn", "2503.00001", "2503.00004", *ix])
    out = runner.invoke(main, ["recommend", "gnn", "--limit", "2", *ix]).output
    assert out.startswith("Recommended for 'gnn' (2 tagged), by words")
    assert out.count("Galaxy study") == 2
    ris = runner.invoke(main, ["recommend", "gnn", "--format", "ris", "--limit", "3", *ix])
    assert ris.output.count("ER  -") == 3
    bad = runner.invoke(main, ["recommend", "gnn", "--since", "soon", *ix])
    assert bad.exit_code == 2 and "--since" in bad.stderr


@pytest.mark.semantic
def test_meaning_joins_in_where_the_index_has_vectors(tmp_path: Path, embedder: object) -> None:
    from pubsearch.index.vectors import embed_index

    build(tmp_path)
    embed_index(tmp_path, embedder)  # type: ignore[arg-type]
    library = Library(SearchService(tmp_path))
    library.tag("gnn", ["2503.00001", "2503.00004"])
    found = library.recommend("gnn", page_size=8)
    assert found.meaning
    galaxy = {f"2503.{i:05d}" for i in range(7, 31) if i % 3 == 1}
    assert {hit.id for hit in found.hits} == galaxy
