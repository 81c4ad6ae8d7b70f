"""Hybrid and semantic search: what matches, what the totals and facets count, how the
two rankings are fused, and what a record found by meaning shows."""

from __future__ import annotations

import numpy as np
import pytest

from pubsearch.core import speedups
from pubsearch.core.errors import ParameterError
from pubsearch.index.vectors import VectorTable, quantise
from pubsearch.search import semantic
from pubsearch.search.request import SearchRequest, parse_year
from pubsearch.search.service import SearchService

# -- fusion (no model needed) ---------------------------------------------------------------


def test_top_orders_by_score_then_document_number() -> None:
    scores = np.array([0.1, 0.9, 0.5, 0.9, 0.3], dtype=np.float32)
    allowed = np.array([True, True, True, True, False])
    assert [d for _, d in semantic.top(scores, allowed, 3)] == [1, 3, 2]
    assert semantic.top(scores, np.zeros(5, dtype=bool), 3) == []
    assert [d for _, d in semantic.top(scores, allowed, 10)] == [1, 3, 2, 0]


def test_fuse_at_the_extremes_keeps_each_ranking() -> None:
    sims = np.array([0.9, 0.1, 0.5, 0.7], dtype=np.float32)
    lexical = [(10.0, 1), (5.0, 2), (1.0, 3)]
    nearest = semantic.top(sims, np.ones(4, dtype=bool), 4)
    keyword_docs = [d for _, d in semantic.fuse(lexical, nearest, sims, weight=0.0) if d != 0]
    assert keyword_docs == [1, 2, 3]
    assert [d for _, d in semantic.fuse(lexical, nearest, sims, weight=1.0)] == [0, 3, 2, 1]


def test_fuse_mixes_min_max_scaled_scores() -> None:
    sims = np.array([0.9, 0.1, 0.5, 0.7], dtype=np.float32)
    lexical = [(10.0, 1), (6.0, 2), (2.0, 3)]
    nearest = semantic.top(sims, np.ones(4, dtype=bool), 4)
    fused = dict((d, s) for s, d in semantic.fuse(lexical, nearest, sims, weight=0.5))
    # doc 2: keyword (6-2)/(10-2) = 0.5, similarity (0.5-0.1)/(0.9-0.1) = 0.5
    assert fused[2] == pytest.approx(0.5 * 0.5 + 0.5 * 0.5)
    # doc 0: no keyword match, the nearest: 0.5 * 1
    assert fused[0] == pytest.approx(0.5)
    # doc 1: the best keyword match, the farthest: 0.5 * 1 + 0.5 * 0
    assert fused[1] == pytest.approx(0.5)


def test_fuse_without_semantic_candidates_is_the_keyword_ranking() -> None:
    lexical = [(3.0, 4), (2.0, 1)]
    assert semantic.fuse(lexical, [], np.zeros(5, dtype=np.float32)) == lexical


# -- similarities from the stored int8 codes -------------------------------------------------


def _index_of(vectors: np.ndarray) -> tuple[semantic.SemanticIndex, np.ndarray]:
    """A SemanticIndex of ``vectors`` (rows of zeros have none), and the float32 rows it
    stands for."""
    codes, scales = quantise(vectors.astype(np.float32))
    table = VectorTable("m", np.arange(len(vectors), dtype=np.uint64), codes, scales)
    return semantic.SemanticIndex.from_table(table), codes * scales[:, None]


def _unit_rows(rng: np.random.Generator, rows: int, dims: int) -> np.ndarray:
    out = rng.normal(size=(rows, dims)).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


@pytest.mark.parametrize("in_c", [pytest.param(True, marks=pytest.mark.speedups), False])
@pytest.mark.parametrize("dims", [384, 7, 40])
def test_similarities_are_the_product_of_the_stored_vectors(
    in_c: bool, dims: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if in_c:
        assert speedups.compiled is not None, "pubsearch.core._speedups was not built"
    else:
        monkeypatch.setattr(speedups, "enabled", False)
    rng = np.random.default_rng(dims)
    vectors = _unit_rows(rng, 5000, dims)  # more rows than a numpy block
    vectors[[3, 4100]] = 0.0  # two records without a vector
    meaning, matrix = _index_of(vectors)
    for query in _unit_rows(rng, 5, dims):
        sims = meaning.similarities(query)
        expected = matrix @ query
        assert sims.dtype == np.float32 and sims.shape == (5000,)
        assert sims[3] == sims[4100] == -1.0
        have = np.ones(5000, dtype=bool)
        have[[3, 4100]] = False
        assert np.abs(sims[have] - expected[have]).max() < 1e-4
    assert meaning.similarities(np.zeros(dims, dtype=np.float32))[have].tolist() == [0.0] * 4998


@pytest.mark.speedups
@pytest.mark.parametrize("dims", [384, 4096])
def test_similarities_in_c_and_in_numpy_agree(dims: int, monkeypatch: pytest.MonkeyPatch) -> None:
    assert speedups.compiled is not None, "pubsearch.core._speedups was not built"
    rng = np.random.default_rng(dims)
    meaning, _ = _index_of(_unit_rows(rng, 9000, dims))
    # The extremes: every code at +-127 against every query number at +-QUERY_MAX, in the
    # widest rows the C code takes: its int32 sums must not overflow.
    extreme = np.where(rng.random((2, dims)) < 0.5, -1.0, 1.0).astype(np.float32)
    meaning_x, _ = _index_of(np.vstack([extreme, -extreme]))
    for index, query in [(meaning, _unit_rows(rng, 1, dims)[0]), (meaning_x, extreme[0])]:
        in_c = index.similarities(query)
        monkeypatch.setattr(speedups, "enabled", False)
        in_numpy = index.similarities(query)
        monkeypatch.setattr(speedups, "enabled", True)
        np.testing.assert_allclose(in_c, in_numpy, rtol=2e-6, atol=1e-6)
    assert in_c[0] == pytest.approx(dims) and in_c[2] == pytest.approx(-dims)


def test_query_codes_keep_the_query_to_one_part_in_32000() -> None:
    query = _unit_rows(np.random.default_rng(3), 1, 384)[0]
    numbers, unit = semantic.query_codes(query)
    assert numbers.dtype == np.int16 and int(np.abs(numbers).max()) == semantic.QUERY_MAX
    assert np.abs(numbers * unit - query).max() <= unit / 2 + 1e-12
    assert semantic.query_codes(np.zeros(4, dtype=np.float32))[1] == 0.0


@pytest.mark.speedups
def test_the_c_similarities_refuse_mismatched_arrays() -> None:
    compiled = speedups.compiled
    assert compiled is not None, "pubsearch.core._speedups was not built"
    codes = np.zeros((4, 8), dtype=np.int8)
    scales = np.ones(4, dtype=np.float32)
    query = np.zeros(8, dtype=np.int16)
    with pytest.raises(ValueError, match="mismatched"):
        compiled.int8_similarities(codes, scales, query[:7], 1.0, np.empty(4, np.float32))
    with pytest.raises(ValueError, match="mismatched"):
        compiled.int8_similarities(codes, scales, query, 1.0, np.empty(3, np.float32))
    wide = np.zeros((1, 4097), dtype=np.int8)
    with pytest.raises(ValueError, match="4,096"):
        compiled.int8_similarities(
            wide, scales[:1], np.zeros(4097, np.int16), 1.0, np.empty(1, np.float32)
        )


def test_sentences_split_at_sentence_ends() -> None:
    text = "We train BERT in 76 minutes. The method is LAMB! Does it scale? 3 runs agree."
    assert semantic.sentences(text) == [
        "We train BERT in 76 minutes.",
        "The method is LAMB!",
        "Does it scale?",
        "3 runs agree.",
    ]
    assert semantic.sentences("e.g. this stays whole") == ["e.g. this stays whole"]


# -- searching an index with vectors (the real model) ---------------------------------------


# Words that none of the seeds' records has, meaning what some of them are about.
PARAPHRASE = "speeding up the education of enormous language networks on supercomputers"


def search(service: SearchService, q: str, **kwargs: object) -> object:
    return service.search(SearchRequest(q=q, facets=True, **kwargs))  # type: ignore[arg-type]


@pytest.mark.semantic
def test_hybrid_is_the_default_where_the_index_has_vectors(
    vector_service: SearchService, service: SearchService
) -> None:
    results = vector_service.search(SearchRequest(q="batch size"))
    assert results.mode == "hybrid" and results.meaning_available
    plain = service.search(SearchRequest(q="batch size"))
    assert plain.mode == "lexical" and not plain.meaning_available


@pytest.mark.semantic
def test_explicit_syntax_is_searched_by_its_words(vector_service: SearchService) -> None:
    for q in ('"batch size"', "title:batch", "batch AND size", "batch*"):
        results = vector_service.search(SearchRequest(q=q))
        assert results.mode == "lexical", q
        assert results.word_total is None


@pytest.mark.semantic
def test_lexical_mode_on_a_vector_index_is_the_lexical_search(
    vector_service: SearchService, service: SearchService
) -> None:
    ours = vector_service.search(SearchRequest(q="large batch training", mode="lexical"))
    plain = service.search(SearchRequest(q="large batch training"))
    assert ours.total == plain.total
    assert [h.id for h in ours.hits] == [h.id for h in plain.hits]


@pytest.mark.semantic
def test_hybrid_total_is_word_matches_plus_meaning_matches(vector_service: SearchService) -> None:
    lexical = vector_service.search(SearchRequest(q=PARAPHRASE, mode="lexical", facets=True))
    sem = vector_service.search(SearchRequest(q=PARAPHRASE, mode="semantic", facets=True))
    hybrid = vector_service.search(SearchRequest(q=PARAPHRASE, mode="hybrid", facets=True))
    assert sem.total > 0 and sem.word_total == 0
    assert hybrid.word_total == lexical.total
    assert max(lexical.total, sem.total) <= hybrid.total <= lexical.total + sem.total
    for results in (sem, hybrid):
        assert results.facets is not None
        assert sum(v.count for v in results.facets["year"]) == results.total
        assert {h.id for h in results.hits} <= {h.id for h in results.hits}
        assert len(results.hits) == min(10, results.total)


@pytest.mark.semantic
def test_semantic_matches_are_the_records_over_the_floor(
    vector_service: SearchService, vector_index: object, embedder: object
) -> None:
    results = vector_service.search(SearchRequest(q=PARAPHRASE, mode="semantic", page_size=100))
    scores = [h.score for h in results.hits]
    assert scores == sorted(scores, reverse=True)
    assert all(s is not None and s >= semantic.FLOOR for s in scores)
    assert len(results.hits) == results.total


@pytest.mark.semantic
def test_meaning_finds_what_words_do_not(vector_service: SearchService) -> None:
    """No seed has "enormous" or "education": the words find little, the meaning finds
    the papers on training huge networks at scale, first."""
    results = vector_service.search(SearchRequest(q=PARAPHRASE, mode="semantic"))
    titles = [h.title for h in results.hits[:3]]
    assert any("Parallelism in Distributed Training" in t for t in titles), titles


@pytest.mark.semantic
def test_filters_apply_in_every_mode(vector_service: SearchService) -> None:
    year = parse_year("2021")
    for mode in ("hybrid", "semantic", "lexical"):
        results = vector_service.search(
            SearchRequest(q=PARAPHRASE, mode=mode, year=year, facets=True, page_size=100)  # type: ignore[arg-type]
        )
        assert all(h.year == 2021 for h in results.hits), mode
        assert results.facets is not None
        # Disjunctive: the year facet still counts the other years.
        counted = {v.value: v.count for v in results.facets["year"]}
        unfiltered = vector_service.search(
            SearchRequest(q=PARAPHRASE, mode=mode, facets=True)  # type: ignore[arg-type]
        )
        assert unfiltered.facets is not None
        assert counted == {v.value: v.count for v in unfiltered.facets["year"]}, mode


@pytest.mark.semantic
def test_a_record_found_by_meaning_shows_its_closest_sentence(
    vector_service: SearchService,
) -> None:
    results = vector_service.search(SearchRequest(q=PARAPHRASE, mode="hybrid", page_size=50))
    by_meaning = [h for h in results.hits if h.by_meaning]
    assert by_meaning, "some hybrid hits have none of the words"
    for hit in by_meaning:
        assert hit.why and hit.snippet == hit.why
        assert hit.why.split(" ")[0] in hit.abstract or hit.why[:20] in hit.abstract
    assert all(not h.why for h in results.hits if not h.by_meaning)


@pytest.mark.semantic
def test_sorting_by_date_keeps_the_same_matches(vector_service: SearchService) -> None:
    relevance = vector_service.search(SearchRequest(q=PARAPHRASE, page_size=100))
    newest = vector_service.search(SearchRequest(q=PARAPHRASE, sort="newest", page_size=100))
    assert newest.total == relevance.total
    assert {h.id for h in newest.hits} == {h.id for h in relevance.hits}
    years = [h.year or 0 for h in newest.hits]
    assert years == sorted(years, reverse=True)


@pytest.mark.semantic
def test_pages_of_hybrid_results_do_not_overlap(vector_service: SearchService) -> None:
    whole = vector_service.search(SearchRequest(q="training", page_size=20))
    first = vector_service.search(SearchRequest(q="training", page_size=10))
    second = vector_service.search(SearchRequest(q="training", page_size=10, page=2))
    assert [h.id for h in first.hits + second.hits] == [h.id for h in whole.hits]
    assert [h.rank for h in second.hits] == list(range(11, 11 + len(second.hits)))


@pytest.mark.semantic
def test_asking_for_meaning_where_there_are_no_vectors_names_the_fix(
    service: SearchService,
) -> None:
    for mode in ("hybrid", "semantic"):
        with pytest.raises(ParameterError, match="no vectors: add them with 'pubsearch embed'"):
            service.search(SearchRequest(q="batch", mode=mode))  # type: ignore[arg-type]


def test_an_unknown_mode_is_a_parameter_error() -> None:
    with pytest.raises(ParameterError, match="mode"):
        SearchRequest(q="batch", mode="fuzzy")  # type: ignore[arg-type]


@pytest.mark.semantic
def test_related_papers_are_the_nearest_by_meaning(vector_service: SearchService) -> None:
    first = vector_service.search(SearchRequest(q="large batch optimization BERT")).hits[0]
    related = vector_service.related(first.id, SearchRequest())
    assert related.mode == "semantic"
    assert first.id not in {h.id for h in related.hits}
    scores = [h.score for h in related.hits]
    assert scores == sorted(scores, reverse=True)
    lexical = vector_service.related(first.id, SearchRequest(mode="lexical"))
    assert lexical.mode == "lexical"
    filtered = vector_service.related(first.id, SearchRequest(year=parse_year("2020")))
    assert all(h.year == 2020 for h in filtered.hits)


@pytest.mark.semantic
def test_meaning_only_says_nothing_of_words(vector_service: SearchService) -> None:
    """In semantic mode the words' reading (relaxed, spelling) is not reported."""
    results = vector_service.search(SearchRequest(q=PARAPHRASE, mode="semantic"))
    assert not results.relaxed and results.all_words_total is None
    assert results.suggestion is None and results.corrected_from is None
    typo = vector_service.search(SearchRequest(q="trainnig hgue netwroks", mode="semantic"))
    assert typo.corrected_from is None and typo.request.q == "trainnig hgue netwroks"


@pytest.mark.semantic
def test_the_closest_sentence_is_the_one_about_the_query() -> None:
    vectors = semantic.QueryVectors()
    abstract = (
        "Coral reefs bleach in marine heatwaves. Our compiler lowers programs whose tensor "
        "shapes change at run time. Results on three benchmarks are reported."
    )
    (closest,) = vectors.closest_sentences([abstract], "compiling models with dynamic shapes")
    assert closest is not None and closest.startswith("Our compiler")
    assert vectors.closest_sentences(["One sentence only.", ""], "x") == [
        "One sentence only.",
        None,
    ]
