from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from pubsearch.core.errors import IndexMissingError, ParameterError, RecordNotFoundError
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record, merge_records
from pubsearch.search import ranking
from pubsearch.search.request import MAX_PAGE_SIZE, SearchRequest, YearRange
from pubsearch.search.service import SearchService


@pytest.fixture(scope="module")
def seed_records(seeds_dir: Path) -> list[Record]:
    return merge_records(read_paths([seeds_dir], ReadReport()))[0]


def test_batch_size_ranks_large_batch_papers_first(service: SearchService) -> None:
    results = service.search(SearchRequest(q="batch size"))
    titles = [h.title for h in results.hits]
    assert results.total == 6
    assert "Batch Size" in titles[0]
    assert all("batch" in (h.title + h.abstract).lower() for h in results.hits)
    large_batch = {t for t in titles if "Batch" in t}
    assert set(titles[: len(large_batch)]) == large_batch


def test_snippet_highlights_matched_words_and_is_escaped(service: SearchService) -> None:
    hit = service.search(SearchRequest(q="batch")).hits[0]
    assert "<mark>" in hit.snippet
    assert "<mark>Batch</mark>" in hit.title_html


def test_common_words_are_searched_but_marked_only_when_alone(service: SearchService) -> None:
    hit = service.search(SearchRequest(q='"the batch size"')).hits[0]
    marked = {m.lower() for m in re.findall(r"<mark>(.*?)</mark>", hit.snippet + hit.title_html)}
    assert "batch" in marked
    assert "the" not in marked  # searched (the phrase needs it), not marked
    alone = service.search(SearchRequest(q="the")).hits[0]
    assert "<mark>the</mark>" in (alone.snippet + alone.title_html).lower()


def test_total_counts_every_match_not_just_the_page(service: SearchService) -> None:
    results = service.search(SearchRequest(q="training", page_size=2))
    assert len(results.hits) == 2
    assert results.total > 2
    every = service.search(SearchRequest(q="training", page_size=100))
    assert len(every.hits) == results.total


def test_paging_is_consistent(service: SearchService) -> None:
    whole = [h.id for h in service.search(SearchRequest(q="learning", page_size=100)).hits]
    paged = []
    for page in range(1, 10):
        paged += [
            h.id for h in service.search(SearchRequest(q="learning", page=page, page_size=3)).hits
        ]
    assert paged == whole


def test_facets_count_all_matches(service: SearchService, seed_records: list[Record]) -> None:
    results = service.search(SearchRequest(q="", facets=True, facet_size=100))
    assert results.total == 36
    assert results.facets is not None
    subjects = {v.value: v.count for v in results.facets["subject"]}
    expected = Counter(s for r in seed_records for s in r.subjects)
    assert subjects == dict(expected)
    years = {int(v.value): v.count for v in results.facets["year"]}
    assert years == dict(Counter(r.year for r in seed_records))
    authors = {v.value: v.count for v in results.facets["author"]}
    assert authors == {"Yang You": 18, "Wei Lin": 18}


def test_facet_counts_are_disjunctive(service: SearchService, seed_records: list[Record]) -> None:
    results = service.search(
        SearchRequest(q="", subjects=("cs.DC",), year=YearRange(2021, 2021), facets=True)
    )
    assert results.facets is not None
    expected_total = sum(1 for r in seed_records if "cs.DC" in r.subjects and r.year == 2021)
    assert results.total == expected_total
    # Subject counts ignore the subject selection but keep the year filter.
    subjects = {v.value: (v.count, v.selected) for v in results.facets["subject"]}
    by_hand = Counter(s for r in seed_records if r.year == 2021 for s in r.subjects)
    assert {k: c for k, (c, _) in subjects.items()} == dict(by_hand)
    assert subjects["cs.DC"][1] is True
    assert subjects["cs.LG"][1] is False
    # Year counts ignore the year selection but keep the subject filter.
    years = {int(v.value): v.count for v in results.facets["year"]}
    assert years == dict(Counter(r.year for r in seed_records if "cs.DC" in r.subjects))


def test_several_values_of_one_facet_mean_or(
    service: SearchService, seed_records: list[Record]
) -> None:
    results = service.search(SearchRequest(subjects=("cs.DC", "cs.CV")))
    expected = sum(1 for r in seed_records if {"cs.DC", "cs.CV"} & set(r.subjects))
    assert results.total == expected == 15


def test_author_filter_is_case_and_accent_insensitive(service: SearchService) -> None:
    assert service.search(SearchRequest(authors=("yang you",))).total == 18
    assert service.search(SearchRequest(authors=("YANG YOU", "Wei Lin"))).total == 36
    assert service.search(SearchRequest(authors=("Nobody",))).total == 0


def test_fielded_and_boolean_queries(service: SearchService) -> None:
    assert service.search(SearchRequest(q='author:"wei lin"')).total == 18
    assert service.search(SearchRequest(q="author:you")).total == 18
    assert service.search(SearchRequest(q="subject:cs.dc")).total == 9
    assert service.search(SearchRequest(q="subject:cs.*")).total == 27
    assert service.search(SearchRequest(q="year:2020..2021")).total == 23
    assert service.search(SearchRequest(q="year:[2019 TO 2020]")).total == 11
    with_or = service.search(SearchRequest(q="lstm OR whale")).total
    assert with_or == 2
    assert service.search(SearchRequest(q="batch NOT lstm")).total == (
        service.search(SearchRequest(q="batch")).total - 1
    )
    assert service.search(SearchRequest(q='"batch size"')).total >= 5


def test_year_query_total_is_exact(service: SearchService, seed_records: list[Record]) -> None:
    # Whoosh's len(results) under-counts text + NumericRange; our total must not.
    results = service.search(SearchRequest(q="training year:2020..2022", page_size=1))
    expected = sum(
        1
        for r in seed_records
        if 2020 <= (r.year or 0) <= 2022
        and re.search(r"\btrain(s|ed|ing)?\b", (r.title + " " + r.abstract).lower())
    )
    assert results.total == expected


def test_stemming_and_accent_folding(service: SearchService) -> None:
    assert (
        service.search(SearchRequest(q="optimizers")).total
        == service.search(SearchRequest(q="optimizer")).total
    )
    assert (
        service.search(SearchRequest(q="Bátch")).total
        == service.search(SearchRequest(q="batch")).total
    )


def test_sort_newest_and_oldest(service: SearchService) -> None:
    newest = [
        h.year
        for h in service.search(SearchRequest(q="training", sort="newest", page_size=50)).hits
    ]
    oldest = [
        h.year
        for h in service.search(SearchRequest(q="training", sort="oldest", page_size=50)).hits
    ]
    assert newest == sorted(newest, reverse=True)
    assert oldest == sorted(oldest)


def test_did_you_mean(service: SearchService) -> None:
    results = service.search(SearchRequest(q="batch sise", correct=False))
    assert results.total == 0
    assert results.suggestion == "batch size"
    assert service.search(SearchRequest(q="qwertyuiop")).suggestion is None


def test_nothing_found_searches_the_correction_instead(service: SearchService) -> None:
    results = service.search(SearchRequest(q="batch sise"))
    assert results.corrected_from == "batch sise"
    assert results.request.q == "batch size"
    assert results.total == service.search(SearchRequest(q="batch size")).total == 6
    assert results.suggestion is None


def test_few_results_offer_the_correction(service: SearchService) -> None:
    # "trainng" is in no record: with "batch" alone in the others, few match both words.
    results = service.search(SearchRequest(q="large batch trainng"))
    assert results.total > 0 and results.corrected_from is None
    assert results.suggestion == "large batch training"


def test_page_beyond_last_is_empty(service: SearchService) -> None:
    results = service.search(SearchRequest(q="batch", page=50))
    assert results.hits == ()
    assert results.total == 6


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"page": 0}, "page"),
        ({"page_size": 0}, "page_size"),
        ({"page_size": MAX_PAGE_SIZE + 1}, "page_size"),
        ({"sort": "random"}, "sort"),
        ({"page": 10_000}, "page"),
    ],
)
def test_bad_request_parameters(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ParameterError) as info:
        SearchRequest(**kwargs)  # type: ignore[arg-type]
    assert info.value.name == name


def test_record_lookup(service: SearchService, seed_records: list[Record]) -> None:
    record = service.record(seed_records[0].id)
    assert record == seed_records[0]
    with pytest.raises(RecordNotFoundError):
        service.record("nope")


def test_stats(service: SearchService) -> None:
    stats = service.stats()
    assert stats.records == 36
    assert stats.authors == 2
    assert stats.years == {2018: 1, 2019: 3, 2020: 8, 2021: 15, 2022: 9}
    assert stats.top_subjects[0].value == "cs.LG"


def test_missing_index(tmp_path: Path) -> None:
    with pytest.raises(IndexMissingError, match="no index"):
        SearchService(tmp_path / "none").search(SearchRequest(q="x"))


@pytest.mark.parametrize(
    "request_",
    [
        SearchRequest(q="batch"),
        SearchRequest(q="training", subjects=("cs.LG",), year=YearRange(2020, 2021)),
        SearchRequest(authors=("Wei Lin",)),
        SearchRequest(q="nothingmatchesthis"),
    ],
)
def test_count_equals_search_total(service: SearchService, request_: SearchRequest) -> None:
    assert service.count(request_) == service.search(request_).total


def _ids_and_facets(service: SearchService, q: str) -> tuple[list[str], int, object]:
    results = service.search(SearchRequest(q=q, page_size=50, facets=True))
    return [h.id for h in results.hits], results.total, results.facets


def test_sentences_are_ranked_with_feedback_from_their_best_match(
    service: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    sentence = "scaling the batch size to speed up training of deep networks on many machines"
    ranked, total, facets = _ids_and_facets(service, sentence)
    monkeypatch.setattr(ranking, "FEEDBACK_WEIGHT", 0.0)
    plain, plain_total, plain_facets = _ids_and_facets(service, sentence)
    assert (total, facets) == (plain_total, plain_facets)  # the same matches
    assert ranked[0] == plain[0] and sorted(ranked) == sorted(plain)
    assert ranked != plain


@pytest.mark.parametrize("q", ["batch size", "training", "neural networks", "deep -learning"])
def test_keyword_queries_get_no_feedback(
    service: SearchService, monkeypatch: pytest.MonkeyPatch, q: str
) -> None:
    ranked = _ids_and_facets(service, q)
    monkeypatch.setattr(ranking, "FEEDBACK_WEIGHT", 0.0)
    assert _ids_and_facets(service, q) == ranked


def test_a_sentence_counts_records_with_an_uncommon_word(service: SearchService) -> None:
    sentence = service.search(SearchRequest(q="the effect of the batch size on the zzqx"))
    assert (
        sentence.total == service.search(SearchRequest(q="batch OR size OR effect OR zzqx")).total
    )
    assert 0 < sentence.total < service.search(SearchRequest(q="the")).total


def test_field_lengths_are_read_once_for_every_thread_of_a_generation(
    seed_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each thread searches with a searcher of its own; the documents' field lengths (8 MB
    a field at 1,000,000 records) are the generation's, read once for all of them."""
    import threading

    from pubsearch.index import lengths

    reads: list[str] = []
    read = lengths.field_lengths

    def counted(reader, fieldname):  # type: ignore[no-untyped-def]
        reads.append(fieldname)
        return read(reader, fieldname)

    monkeypatch.setattr(lengths, "field_lengths", counted)
    service = SearchService(seed_index)
    try:
        totals: list[int] = []

        def search() -> None:
            totals.append(service.search(SearchRequest(q="batch size", mode="lexical")).total)

        for _ in range(3):
            thread = threading.Thread(target=search)
            thread.start()
            thread.join()
        assert len(set(totals)) == 1 and totals[0] > 0
        assert reads and len(reads) == len(set(reads))  # each field once, not per thread
    finally:
        service.close()
