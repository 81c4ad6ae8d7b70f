"""The nearest broader search offered when a search finds nothing."""

from __future__ import annotations

from pubsearch.search.broadening import nearest_broader
from pubsearch.search.compiler import bare_words
from pubsearch.search.request import SearchRequest, YearRange
from pubsearch.search.service import SearchService


def test_plain_words_only_for_queries_without_syntax() -> None:
    assert bare_words("batch size") == ["batch", "size"]
    assert bare_words("2D-3D cycle") == ["2D-3D", "cycle"]
    assert bare_words('"batch size"') is None
    assert bare_words("title:batch size") is None
    assert bare_words("batch OR size") is None
    assert bare_words("") is None


def test_drops_the_word_that_finds_nothing(service: SearchService) -> None:
    broader = nearest_broader(service.count, SearchRequest(q="batch size zzzqqq"))
    assert broader is not None
    assert broader.request.q == "batch size"
    assert broader.change == "without \u201czzzqqq\u201d"
    assert broader.total == service.search(SearchRequest(q="batch size")).total == 6


def test_drops_a_filter(service: SearchService) -> None:
    request = SearchRequest(q="batch size", subjects=("eess.SY",))
    broader = nearest_broader(service.count, request)
    assert broader is not None
    assert broader.request == SearchRequest(q="batch size")
    assert broader.change == "without the subject filter"


def test_gives_up_a_word_and_a_filter_together_when_one_is_not_enough(
    service: SearchService,
) -> None:
    request = SearchRequest(q="zzzqqq batch", year=YearRange(2018, 2018))
    broader = nearest_broader(service.count, request)
    assert broader is not None
    assert broader.request == SearchRequest(q="batch")
    assert broader.change == "without \u201czzzqqq\u201d and the year filter"


def test_keeps_the_page_size_and_sort_but_starts_at_page_one(service: SearchService) -> None:
    request = SearchRequest(q="batch zzzqqq", sort="newest", page=3, page_size=5)
    broader = nearest_broader(service.count, request)
    assert broader is not None
    assert (broader.request.sort, broader.request.page, broader.request.page_size) == (
        "newest",
        1,
        5,
    )


def test_nothing_to_offer(service: SearchService) -> None:
    assert nearest_broader(service.count, SearchRequest(q="zzzqqq")) is None
    assert nearest_broader(service.count, SearchRequest(q="zzzqqq yyyxxx")) is None
