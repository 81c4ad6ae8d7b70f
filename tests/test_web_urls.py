"""Links of the page as plain data: toggles, chips, pages, the year histogram, sources."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import parse_qs, urlsplit

from pubsearch.search.request import SearchRequest, YearRange
from pubsearch.search.results import FacetValue, SearchResults
from pubsearch.web import pages, urls


def _params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def test_search_url_leaves_out_defaults() -> None:
    assert urls.search_url("/", SearchRequest()) == "/"
    assert urls.search_url("/", SearchRequest(q="a&b", page=2)) == "/?q=a%26b&page=2"


def test_toggled_is_case_and_accent_insensitive() -> None:
    assert urls.toggled(("cs.LG",), "cs.DC") == ("cs.LG", "cs.DC")
    assert urls.toggled(("cs.LG", "cs.DC"), "CS.lg") == ("cs.DC",)
    assert urls.toggled(("Balázs",), "balazs") == ()
    assert urls.with_value(("A",), "a") == ("A",)


def test_toggles_go_back_to_page_one() -> None:
    request = SearchRequest(q="x", page=3)
    assert urls.toggle_author(request, "A").page == 1
    assert urls.add_subject(request, "cs.LG").subjects == ("cs.LG",)
    # A hit's author link: that person only, in place of the author filters.
    only = urls.only_author(replace(request, authors=("Y. You", "B")), "Yang You")
    assert (only.authors, only.page, only.q) == (('"Yang You"',), 1, "x")
    assert urls.toggle_year(request, 2020).year == YearRange(2020, 2020)
    assert urls.toggle_year(SearchRequest(year=YearRange(2020, 2020)), 2020).year is None
    assert urls.toggle_year(SearchRequest(year=YearRange(2019, 2021)), 2020).year == YearRange(
        2020, 2020
    )
    cleared = urls.without_filters(
        SearchRequest(q="x", authors=("A",), subjects=("s",), year=YearRange(1, 2), sort="oldest")
    )
    assert cleared == SearchRequest(q="x", sort="oldest")


def test_source_link() -> None:
    assert urls.source_link("https://arxiv.org/abs/2101.00001", "T", "arXiv") == (
        "https://arxiv.org/abs/2101.00001",
        "arXiv",
    )
    assert urls.source_link("https://doi.org/10.1/x", "T", "JMLR") == (
        "https://doi.org/10.1/x",
        "DOI",
    )
    assert urls.source_link(None, "A & B", "arXiv") == (
        "https://arxiv.org/search/?query=A+%26+B&searchtype=title",
        "Find on arXiv",
    )
    assert urls.source_link(None, "A & B", "")[1] == "Find on Google Scholar"


def _results(request: SearchRequest, total: int = 95) -> SearchResults:
    facets = {
        "author": (FacetValue("A", 5, True), FacetValue("B", 3, False)),
        "subject": (FacetValue("cs.DC", 4, False),),
        "year": (
            FacetValue("2022", 10, False),
            FacetValue("2020", 5, True),
            FacetValue("2017", 1, False),
        ),
    }
    return SearchResults(request, total, (), facets, 1.0)


def _page(request: SearchRequest, total: int = 95) -> pages.ResultsPage:
    return pages.build_results_page(
        _results(request, total),
        "/",
        export_paths={"CSV": "/export.csv"},
        export_cap=50,
        related_url=lambda i: f"/related/{i}",
    )


def test_facet_options_and_chips() -> None:
    request = SearchRequest(q="x", authors=("A",), year=YearRange(2020, 2020), page=4)
    page = _page(request)
    author, subject = page.facets
    assert [(o.value, o.count, o.selected) for o in author.options] == [
        ("A", 5, True),
        ("B", 3, False),
    ]
    assert _params(author.options[0].url) == {"q": ["x"], "year": ["2020"]}
    assert _params(author.options[1].url) == {"q": ["x"], "author": ["A", "B"], "year": ["2020"]}
    assert subject.options[0].title == "Distributed, Parallel, and Cluster Computing"
    assert [(c.facet, c.label) for c in page.chips] == [("Author", "A"), ("Year", "2020")]
    assert page.clear_url == "/?q=x"


def test_year_histogram_fills_gaps_and_scales_bars() -> None:
    page = _page(SearchRequest(year=YearRange(2020, 2020)))
    bars = page.years.bars
    assert [b.year for b in bars] == list(range(2017, 2023))
    assert [b.count for b in bars] == [1, 0, 0, 5, 0, 10]
    assert [b.height for b in bars] == [2, 0, 0, 10, 0, 20]
    assert [b.url is None for b in bars] == [False, True, True, False, True, False]
    assert bars[3].selected and _params(bars[3].url or "") == {}
    assert page.years.selected == "2020"


def test_pages_window_with_gaps() -> None:
    page = _page(SearchRequest(page=5), total=95)
    assert [p.number for p in page.pages] == [1, None, 3, 4, 5, 6, 7, None, 10]
    assert [p.number for p in page.pages if p.current] == [5]
    assert _params(page.prev_url or "") == {"page": ["4"]}
    assert _params(page.next_url or "") == {"page": ["6"]}
    assert _page(SearchRequest(), total=5).pages == ()


def test_export_links_cover_every_page_and_say_when_capped() -> None:
    page = _page(SearchRequest(q="x", page=3, page_size=20, facet_size=5))
    assert [link.url for link in page.export.links] == ["/export.csv?q=x"]
    assert page.export.note == "Exports hold the first 50 of 95 results."
    assert "all 5 results" in _page(SearchRequest(), total=5).export.note
