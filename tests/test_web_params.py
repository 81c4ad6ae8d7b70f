"""Query-string parameters to SearchRequest and back, with errors that name the parameter."""

from __future__ import annotations

import pytest

from pubsearch.core.errors import ParameterError, QuerySyntaxError
from pubsearch.search.request import SearchRequest, YearRange
from pubsearch.search.service import SearchService
from pubsearch.web.params import params_from_request, parse_int, request_from_params


def test_no_parameters_is_the_default_request() -> None:
    assert request_from_params({}) == SearchRequest(facets=True)
    assert request_from_params({}, facets=False) == SearchRequest()


def test_every_parameter_is_read() -> None:
    request = request_from_params(
        {
            "q": ["batch size"],
            "author": ["Yang You", "Wei Lin"],
            "subject": ["cs.LG"],
            "year": ["2019..2021"],
            "sort": ["newest"],
            "page": ["2"],
            "page_size": ["5"],
            "facet_size": ["50"],
        }
    )
    assert request == SearchRequest(
        q="batch size",
        authors=("Yang You", "Wei Lin"),
        subjects=("cs.LG",),
        year=YearRange(2019, 2021),
        sort="newest",
        page=2,
        page_size=5,
        facets=True,
        facet_size=50,
    )


def test_empty_values_are_absent_and_repeats_are_dropped() -> None:
    request = request_from_params(
        {"q": [""], "year": [""], "sort": [""], "page": [" "], "author": ["A", "", "A"]}
    )
    assert request == SearchRequest(authors=("A",), facets=True)


def test_unknown_parameters_are_ignored() -> None:
    assert request_from_params({"utm_source": ["x"]}) == SearchRequest(facets=True)


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"page": ["0"]}, "page"),
        ({"page": ["-1"]}, "page"),
        ({"page": ["two"]}, "page"),
        ({"page": ["1.5"]}, "page"),
        ({"page": ["9" * 30]}, "page"),
        ({"page": ["1", "2"]}, "page"),
        ({"page_size": ["10000"]}, "page_size"),
        ({"page_size": ["0"]}, "page_size"),
        ({"facet_size": ["0"]}, "facet_size"),
        ({"year": ["abc"]}, "year"),
        ({"year": ["2021..2019"]}, "year"),
        ({"sort": ["best"]}, "sort"),
        ({"q": ["a", "b"]}, "q"),
        ({"page": ["1000"], "page_size": ["100"]}, "page"),
    ],
)
def test_bad_values_raise_an_error_naming_the_parameter(
    params: dict[str, list[str]], name: str
) -> None:
    with pytest.raises(ParameterError) as info:
        request_from_params(params)
    assert info.value.name == name
    assert str(info.value).startswith(f"{name}: ")


def test_query_text_is_kept_for_the_search_to_parse(service: SearchService) -> None:
    request = request_from_params({"q": ["year:abc"]})
    assert request.q == "year:abc"
    with pytest.raises(QuerySyntaxError, match="year:abc is not a year"):
        service.search(request)


def test_parse_int() -> None:
    assert parse_int("page", " 007 ") == 7
    with pytest.raises(ParameterError, match="page: must be a whole number"):
        parse_int("page", "7x")
    for odd in ("²", "٣", "--3", "3-"):  # digits to str.isdigit, not whole numbers here
        with pytest.raises(ParameterError, match="page: must be a whole number"):
            parse_int("page", odd)
    assert parse_int("page", "-3") == -3


def test_params_round_trip_and_leave_out_defaults() -> None:
    request = SearchRequest(
        q="x y",
        authors=("A",),
        subjects=("cs.LG", "cs.DC"),
        year=YearRange(2019, None),
        sort="oldest",
        page=3,
        facets=True,
    )
    pairs = params_from_request(request)
    assert pairs == [
        ("q", "x y"),
        ("author", "A"),
        ("subject", "cs.LG"),
        ("subject", "cs.DC"),
        ("year", "2019.."),
        ("sort", "oldest"),
        ("page", "3"),
    ]
    as_lists: dict[str, list[str]] = {}
    for name, value in pairs:
        as_lists.setdefault(name, []).append(value)
    assert request_from_params(as_lists) == request
    assert params_from_request(SearchRequest()) == []
