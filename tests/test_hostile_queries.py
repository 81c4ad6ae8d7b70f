"""Whatever people type, the search service answers or says clearly what is wrong."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pubsearch.core.errors import UsageError
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService

SYNTAX = [
    '"',
    "'",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    "*",
    "?",
    "-",
    "+",
    "^",
    "~",
    "\\",
    "/",
    " AND ",
    " OR ",
    " NOT ",
    " TO ",
    "title:",
    "abstract:",
    "author:",
    "subject:",
    "year:",
    "au:",
    "foo:",
    "year:[2020 TO",
    "year:2019..2021",
    "year:>",
    "<",
    ">",
    "=",
    "..",
    "batch",
    "size",
    "training",
    "2020",
    "cs.LG",
    "\x00",
    "\u2197",
    "\ue000",
    "\ufeff",
    " ",
]

query_text = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(SYNTAX), max_size=30).map("".join),
    st.lists(st.one_of(st.sampled_from(SYNTAX), st.text(max_size=5)), max_size=20).map(" ".join),
)

hostile_settings = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def answers_or_refuses(service: SearchService, request_kwargs: dict[str, object]) -> None:
    try:
        request = SearchRequest(**request_kwargs)  # type: ignore[arg-type]
        results = service.search(request)
    except UsageError as exc:
        message = str(exc)
        assert message and "\n" not in message
        return
    assert results.total >= 0
    assert len(results.hits) <= request.page_size


@hostile_settings
@given(text=query_text)
def test_any_query_text(service: SearchService, text: str) -> None:
    answers_or_refuses(service, {"q": text, "facets": True})


@hostile_settings
@given(
    text=st.sampled_from(["", "batch", "training"]),
    authors=st.lists(st.text(max_size=30), max_size=3),
    subjects=st.lists(st.text(max_size=12), max_size=3),
    page=st.integers(min_value=-5, max_value=20_000),
    page_size=st.integers(min_value=-5, max_value=500),
    sort=st.sampled_from(["relevance", "newest", "oldest", "random", ""]),
)
def test_any_parameters(
    service: SearchService,
    text: str,
    authors: list[str],
    subjects: list[str],
    page: int,
    page_size: int,
    sort: str,
) -> None:
    answers_or_refuses(
        service,
        {
            "q": text,
            "authors": tuple(authors),
            "subjects": tuple(subjects),
            "page": page,
            "page_size": page_size,
            "sort": sort,
            "facets": True,
        },
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        '"unbalanced',
        "(((",
        ")))",
        "title:",
        "year:[2020 TO",
        "year:[ TO ]",
        "-",
        "*",
        "?",
        "*ing",
        "?atch",
        "AND",
        "OR OR OR",
        "NOT",
        "x" * 10_000,
        " ".join(["batch"] * 3000),
        "\x00\x01\x02",
        "year:99999",
        "year:0",
        "title:*",
        'author:"',
        "http://arxiv.org/abs/2101.00001",
        "0:<0",
        "title:<0",
        "ratio 3:1",
        "*:x",
    ],
)
def test_known_hostile_queries(service: SearchService, text: str) -> None:
    answers_or_refuses(service, {"q": text, "facets": True})
