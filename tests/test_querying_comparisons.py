"""A comparison (< or >) needs a field before it; without one the query is refused."""

from __future__ import annotations

import pytest

from pubsearch.errors import QuerySyntaxError
from pubsearch.searching import SearchRequest, SearchService


@pytest.mark.parametrize("q", ["<script>", "<x", ">= 5", "(<x)", "<script>alert(1)</script>"])
def test_comparison_without_a_field_is_a_syntax_error(service: SearchService, q: str) -> None:
    with pytest.raises(QuerySyntaxError, match=r"a comparison \(< or >\) needs a field"):
        service.search(SearchRequest(q=q))


@pytest.mark.parametrize("q", ["year:>2020", "year:<2020", "a < b", "x >"])
def test_comparisons_that_parse_still_search(service: SearchService, q: str) -> None:
    service.search(SearchRequest(q=q))
