from __future__ import annotations

import pytest

from pubsearch.errors import ParameterError, QuerySyntaxError
from pubsearch.querying import MAX_QUERY_CHARS, YearRange, parse_query, parse_year
from pubsearch.schema import build_schema

SCHEMA = build_schema()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2021", YearRange(2021, 2021)),
        ("2019..2021", YearRange(2019, 2021)),
        ("2019..", YearRange(2019, None)),
        ("..2021", YearRange(None, 2021)),
        (" 2020 ", YearRange(2020, 2020)),
    ],
)
def test_parse_year(text: str, expected: YearRange) -> None:
    assert parse_year(text) == expected


@pytest.mark.parametrize("text", ["abc", "", "..", "2021..2019", "20", "2019-2021", "2019...2021"])
def test_parse_year_rejects(text: str) -> None:
    with pytest.raises(ParameterError, match="year"):
        parse_year(text)


def fields_of(text: str) -> set[str]:
    query = parse_query(text, SCHEMA)
    assert query is not None
    return {leaf.field() for leaf in query.leaves()}


def test_plain_words_search_title_and_abstract() -> None:
    assert fields_of("batch size") == {"title", "abstract"}


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("title:batch", "title"),
        ("ti:batch", "title"),
        ("abstract:batch", "abstract"),
        ("abs:batch", "abstract"),
        ("author:you", "author"),
        ("au:you", "author"),
        ("subject:cs.LG", "subject"),
        ("cat:cs.LG", "subject"),
        ("year:2020", "year"),
        ("year:[2019 TO 2021]", "year"),
        ("year:2019..2021", "year"),
        ("year:>2019", "year"),
    ],
)
def test_fields_and_aliases(text: str, field: str) -> None:
    assert fields_of(text) == {field}


def test_hyphenated_word_is_not_negation() -> None:
    query = parse_query("2D-3D-2D", SCHEMA)
    assert "Not" not in repr(query)


def test_leading_minus_negates() -> None:
    assert "AndNot" in repr(parse_query("batch -size", SCHEMA))


def test_colon_followed_by_space_is_plain_text() -> None:
    assert fields_of("Note: training") == {"title", "abstract"}


@pytest.mark.parametrize("text", ["", "   ", "-", "the", "of the"])
def test_nothing_to_search_for_is_none(text: str) -> None:
    assert parse_query(text, SCHEMA) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("foo:bar", "unknown field 'foo'"),
        ("year:[2020 TO", "unbalanced"),
        ("year:abc", "not a year"),
        ("x" * (MAX_QUERY_CHARS + 1), "characters long"),
        ("title:<0", "ranges work on year only"),
        ("title:[a TO c]", "ranges work on year only"),
        ("*ing", "at least 2 characters"),
        ("?atch", "at least 2 characters"),
        ("b*", "at least 2 characters"),
    ],
)
def test_syntax_errors_say_what(text: str, message: str) -> None:
    with pytest.raises(QuerySyntaxError, match=message):
        parse_query(text, SCHEMA)


def test_too_many_terms() -> None:
    with pytest.raises(QuerySyntaxError, match="terms"):
        parse_query(" ".join(f"w{i}" for i in range(100)), SCHEMA)


@pytest.mark.parametrize("text", ["optim*", "ba?ch", "subject:cs.*", "*", "ratio 3:1"])
def test_bounded_wildcards_and_plain_colons_are_fine(text: str) -> None:
    assert parse_query(text, SCHEMA) is not None
