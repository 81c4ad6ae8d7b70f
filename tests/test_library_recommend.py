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


class Vectors:
    """recommend.Meaning over a small float matrix (rows without a vector: all zeros)."""

    def __init__(self, rows: list[list[float]]) -> None:
        self.matrix = np.asarray(rows, dtype=np.float32)
        self._present = np.abs(self.matrix).sum(axis=1) > 0

    @property
    def present(self) -> np.ndarray:
        return self._present

    def vector(self, docnum: int) -> np.ndarray | None:
        return self.matrix[docnum] if self._present[docnum] else None

    def similarities(self, vector: np.ndarray) -> np.ndarray:
        sims = self.matrix @ vector
        sims[~self._present] = -1.0
        return sims


def test_meaning_weighs_the_tags_centre_and_its_nearest_paper() -> None:
    # Tagged: 0 and 1, two themes (x and y). Record 2 is the first theme itself, record 3
    # lies between both, record 4 is neither, record 5 has no vector.
    meaning = Vectors([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0.7, 0.7, 0], [0, 0, 1], [0, 0, 0]])
    tagged = np.asarray([0, 1])
    candidates = np.asarray([False, False, True, True, True, True])
    alike = recommend.meaning_scores(meaning, tagged, candidates)
    assert np.isnan(alike[5]) and not np.isnan(alike[:5]).any()
    # By the centre alone 3 leads (0.99 against 0.71); by the nearest alone 2 (1 against
    # 0.7); their standardised mean puts both far above the record of neither theme.
    centre = np.asarray([0.5, 0.5, 0.5, 0.7, 0.0])
    nearest = np.asarray([1.0, 1.0, 1.0, 0.7, 0.0])
    among = candidates[:5]

    def z(values: np.ndarray) -> np.ndarray:
        return (values - values[among].mean()) / values[among].std()

    assert alike[:5] == pytest.approx((z(centre) + z(nearest)) / 2, abs=1e-5)
    assert alike[2] > alike[4] and alike[3] > alike[4]
    # No tagged record with a vector: no meaning at all, and words alone rank.
    none = recommend.meaning_scores(meaning, np.asarray([5]), candidates)
    assert np.isnan(none).all()


def test_meaning_joins_words_only_where_a_record_has_a_vector() -> None:
    texts = ["graph neural message passing"] * 3 + ["galaxy cluster lensing halo"] * 3
    features = recommend.text_features(texts)
    tagged = np.asarray([0])
    common = recommend.column_means(features, np.ones(6, dtype=np.bool_))
    candidates = np.asarray([False, True, True, True, True, True])
    # Record 4 (galaxy words) carries the tag's meaning; record 5 has no vector.
    meaning = Vectors([[1, 0], [1, 0], [1, 0], [0, 1], [1, 0], [0, 0]])
    words = recommend.scores(features, tagged, common, candidates, recommend.WORDS_ONLY)
    both = recommend.scores(features, tagged, common, candidates, recommend.PUBSEARCH, meaning)
    assert both[5] == words[5]
    assert both[4] > words[4] and both[3] < words[3]
    assert min(both[1], both[2]) > max(both[3:])


def test_words_typical_of_the_tag_count_words_of_every_record_less() -> None:
    # Every record says "model"; the tagged ones also "spectral sparsifier". A record with
    # the tag's rare pair ranks above one that repeats only the common word.
    texts = ["spectral sparsifier model", "spectral sparsifier model bound"]
    texts += ["model model model data", "spectral sparsifier", "model results"] * 1
    texts += [f"model topic{i} words{i}" for i in range(10)]
    features = recommend.text_features(texts)
    size = len(texts)
    common = recommend.column_means(features, np.ones(size, dtype=np.bool_))
    tagged = np.asarray([0, 1])
    values = recommend.word_scores(features, tagged, common)
    assert values[3] > values[2] and values[3] > values[4]
    # Rocchio's weight 0 keeps the centre alone: the common word then counts fully.
    plain = recommend.word_scores(features, tagged, common, weight=0.0)
    assert plain[2] > 0 and values[2] < plain[2]


def test_the_nearest_tagged_record_lifts_one_line_of_work_the_centre_blurs() -> None:
    # A tag of two lines of work (0: solar wind, 1-3: graph coloring). Record 4 continues
    # the solar-wind paper closely; record 5 shares a word with every graph paper.
    texts = [
        "solar wind turbulence spacecraft magnetic reconnection",
        "graph coloring chromatic bounds",
        "graph coloring planar chromatic",
        "graph coloring list chromatic",
        "solar wind turbulence spacecraft magnetic reconnection events",
        "graph drawing layouts",
        "protein folding energy landscape",
    ] + [f"unrelated topic{i} words{i}" for i in range(8)]
    features = recommend.text_features(texts)
    tagged = np.asarray([0, 1, 2, 3])
    near = recommend.nearest_scores(features, tagged)
    assert near[4] == pytest.approx(max(float(features[4].multiply(features[0]).sum()), 0.0))
    assert near[4] > near[5] > near[6] == 0.0
    for doc in tagged:  # a tagged record is its own nearest
        assert near[doc] == pytest.approx(1.0, abs=1e-5)
    size = len(texts)
    common = recommend.column_means(features, np.ones(size, dtype=np.bool_))
    candidates = np.ones(size, dtype=np.bool_)
    candidates[tagged] = False
    centre_only = recommend.Method(meaning_weight=0.0, nearest_weight=0.0)
    plain = recommend.scores(features, tagged, common, candidates, centre_only)
    joined = recommend.scores(features, tagged, common, candidates, recommend.WORDS_ONLY)
    assert recommend.WORDS_ONLY.nearest_weight > 0
    # The nearest's weight moves record 4 up against record 5 (and never down).
    assert joined[4] - joined[5] > plain[4] - plain[5]
    assert recommend.nearest_scores(features, np.asarray([], dtype=np.int64)).max() == 0
    # Parts made once mix as scores would for any weights (bench/recommend.py's grid).
    meaning = Vectors([[1.0, float(i % 3)] for i in range(size - 1)] + [[0.0, 0.0]])
    every = recommend.Method(meaning_weight=1.0, nearest_weight=1.0)
    parts = recommend.score_parts(features, tagged, common, candidates, every, meaning)
    for method in (centre_only, recommend.WORDS_ONLY, recommend.PUBSEARCH):
        direct = recommend.scores(features, tagged, common, candidates, method, meaning)
        assert recommend.combined(parts, method) == pytest.approx(direct, abs=1e-6)


def test_a_large_tag_looks_for_the_nearest_among_a_spread_of_max_nearest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [f"record {i} about topic{i % 7} and theme{i % 5}" for i in range(60)]
    features = recommend.text_features(texts)
    tagged = np.arange(0, 40, dtype=np.int64)
    whole = recommend.nearest_scores(features, tagged)
    monkeypatch.setattr(recommend, "MAX_NEAREST", 10)
    spread = recommend.nearest_scores(features, tagged)
    kept = np.linspace(0, 39, 10).round().astype(np.int64)
    assert spread == pytest.approx(recommend.nearest_scores(features, kept), abs=1e-6)
    assert (spread <= whole + 1e-6).all() and not np.allclose(spread, whole)


def test_the_contrast_sample_is_drawn_from_the_pool_without_the_tag(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = np.ones(50, dtype=np.bool_)
    pool[40:] = False  # not live
    tagged = np.asarray([3, 4], dtype=np.int64)
    small = recommend.contrast_sample(pool, tagged)
    assert small.tolist() == [d for d in range(40) if d not in (3, 4)]
    monkeypatch.setattr(recommend, "NEGATIVES", 10)
    drawn = recommend.contrast_sample(pool, tagged, count=10)
    assert len(drawn) == 10 and len(set(drawn.tolist())) == 10
    assert all(d < 40 and d not in (3, 4) for d in drawn.tolist())
    assert drawn.tolist() == sorted(drawn.tolist())
    # Seeded: the same records give the same draw (a list is the same each time).
    assert recommend.contrast_sample(pool, tagged, count=10).tolist() == drawn.tolist()
    assert recommend.svm_direction(np.eye(3, dtype=np.float32), 0, 0.1) is None
    assert recommend.svm_direction(np.eye(3, dtype=np.float32), 3, 0.1) is None


def test_the_tag_against_the_rest_weighs_what_tells_it_from_its_neighbours() -> None:
    # The tag: "lattice" with its own "anyon braiding"; its neighbours (many records) say
    # "lattice" with "phonon". A candidate with the tag's own words ranks above one with
    # the neighbours' shared word, and the SVM gives "phonon" a weight below zero.
    texts = [f"lattice anyon braiding topological {i}" for i in range(6)]
    texts += [f"lattice phonon dispersion crystal {i}" for i in range(30)]
    texts += [f"protein folding energy {i}" for i in range(30)]
    texts += ["anyon braiding", "lattice phonon", "protein energy"]
    features = recommend.text_features(texts)
    size = len(texts)
    tagged = np.arange(6, dtype=np.int64)
    pool = np.ones(size, dtype=np.bool_)
    margins = recommend.contrast_scores(features, tagged, pool)
    anyon, phonon, protein = size - 3, size - 2, size - 1
    assert margins[anyon] > margins[phonon] and margins[anyon] > margins[protein]
    assert margins[:6].min() > np.median(margins[6:66])
    # No other record in the pool: nothing to tell the tag from, no margins.
    only = np.zeros(size, dtype=np.bool_)
    only[tagged] = True
    assert not recommend.contrast_scores(features, tagged, only).any()


def test_the_tag_against_the_rest_in_meaning_only_where_a_record_has_a_vector() -> None:
    # Tagged 0-2 near (1, 0); the rest near (0, 1); record 7 has no vector.
    meaning = Vectors(
        [[1, 0.1], [1, 0.2], [1, 0.0], [0.1, 1], [0.2, 1], [0.0, 1], [0.9, 0.3], [0, 0]]
    )
    tagged = np.asarray([0, 1, 2], dtype=np.int64)
    candidates = np.asarray([False] * 3 + [True] * 5)
    pool = np.ones(8, dtype=np.bool_)
    margins = recommend.meaning_contrast_scores(meaning, tagged, pool, candidates)
    assert np.isnan(margins[7]) and not np.isnan(margins[:7]).any()
    assert margins[6] > margins[3:6].max()
    among = candidates & meaning.present
    assert margins[among].mean() == pytest.approx(0.0, abs=1e-5)
    # No tagged record with a vector: nothing learnt, nan everywhere.
    none = recommend.meaning_contrast_scores(meaning, np.asarray([7]), pool, candidates)
    assert np.isnan(none).all()
    # In the score, a record without a vector keeps its words' score.
    texts = [f"alpha beta {i}" for i in range(3)] + [f"gamma delta {i}" for i in range(5)]
    features = recommend.text_features(texts)
    common = recommend.column_means(features, pool)
    no_meaning = recommend.Method(meaning_weight=0.0, meaning_contrast_weight=0.0)
    contrast_only = recommend.Method(meaning_weight=0.0)
    plain = recommend.scores(features, tagged, common, candidates, no_meaning, meaning)
    both = recommend.scores(features, tagged, common, candidates, contrast_only, meaning)
    assert both[7] == pytest.approx(plain[7])
    assert both[6] - plain[6] == pytest.approx(0.5 * margins[6], abs=1e-5)


def test_every_word_pair_of_two_records_is_kept_in_a_large_index() -> None:
    texts = [f"record {i} about topic{i % 400} and theme{i % 300}" for i in range(1_200)]
    texts[7] += " hodge laplacian"
    texts[8] += " hodge laplacian"
    texts[9] += " unique once"
    kept = recommend.text_features(texts)
    capped = recommend.text_features(texts, vocabulary=50)
    assert capped.shape[1] == 50 < kept.shape[1]
    row7 = set(kept[7].indices.tolist())
    row8 = set(kept[8].indices.tolist())
    assert len(row7 & row8) >= 3  # hodge, laplacian, "hodge laplacian"
    # A word in one record only (min_df 2) is not a feature: it cannot make two alike.
    assert kept[9].nnz == kept[10].nnz


def test_ranked_takes_the_best_candidates_ties_by_number() -> None:
    values = np.asarray([0.5, 0.9, 0.9, 0.1, 2.0], dtype=np.float32)
    candidates = np.asarray([True, True, True, True, False])
    assert [d for _, d in recommend.ranked(values, candidates, 3)] == [1, 2, 0]
    assert recommend.ranked(values, np.zeros(5, dtype=np.bool_), 3) == []


def test_words_rank_records_of_the_tags_words_first() -> None:
    texts = [f"graph neural message passing {i}" for i in range(10)]
    texts += [f"galaxy cluster lensing halo {i}" for i in range(10)]
    features = recommend.text_features(texts)
    live = np.ones(20, dtype=np.bool_)
    common = recommend.column_means(features, live)
    tagged = np.asarray([0, 1, 2])
    candidates = live.copy()
    candidates[tagged] = False
    values = recommend.scores(features, tagged, common, candidates)
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
    [kept] = (tmp_path / recommend.CACHE_DIR).glob("*.tfidf*.npz")
    assert kept.name.endswith(f".tfidf-{recommend.FEATURES_VERSION}.npz")
    again = Library(SearchService(tmp_path)).recommend("gnn", page_size=7)
    assert [hit.id for hit in again.hits] == ids
    second = Library(SearchService(tmp_path)).recommend("gnn", page=2, page_size=7)
    assert second.hits[0].rank == 8 and not set(ids) & {hit.id for hit in second.hits}


def test_a_word_table_of_other_settings_is_made_again(tmp_path: Path) -> None:
    build(tmp_path)
    library = Library(SearchService(tmp_path))
    library.tag("gnn", ["2503.00001", "2503.00004", "2503.00007"])
    first = [hit.id for hit in library.recommend("gnn", page_size=7).hits]
    [kept] = (tmp_path / recommend.CACHE_DIR).glob("*.tfidf*.npz")
    # The table under the name an earlier pubsearch (other settings) gave it: not read,
    # made again under this version's name, and the old file removed.
    stale = kept.with_name(kept.name.replace(f"-{recommend.FEATURES_VERSION}.npz", ".npz"))
    kept.rename(stale)
    assert [h.id for h in Library(SearchService(tmp_path)).recommend("gnn", page_size=7).hits] == (
        first
    )
    assert not stale.exists() and kept.exists()


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
