from __future__ import annotations

import pytest
from whoosh import query as wq

from pubsearch.errors import ParameterError, QuerySyntaxError
from pubsearch.querying import (
    MAX_QUERY_CHARS,
    MIN_STRICT_MATCHES,
    YearRange,
    check_query,
    parse_query,
    parse_text_query,
    parse_year,
)
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


def test_plain_words_search_title_and_abstract_as_one_field() -> None:
    assert fields_of("batch size") == {"content"}


def test_quoted_phrases_are_matched_in_title_or_abstract() -> None:
    assert fields_of('"batch size"') == {"title", "abstract"}


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
    assert fields_of("Note: training") == {"content"}


def test_one_or_two_words_have_only_the_strict_reading() -> None:
    parsed = parse_text_query("batch size", SCHEMA)
    assert parsed is not None and parsed.relaxed is None
    assert parsed.choose(0) is parsed.strict


def test_longer_text_falls_back_to_any_word_when_all_words_find_too_little() -> None:
    parsed = parse_text_query("large batch training of neural networks", SCHEMA)
    assert parsed is not None and parsed.relaxed is not None
    assert "And(" in repr(parsed.strict) and "Or(" in repr(parsed.relaxed)
    assert parsed.choose(MIN_STRICT_MATCHES) is parsed.strict
    assert parsed.choose(MIN_STRICT_MATCHES - 1) is parsed.relaxed


def test_operators_keep_their_meaning_in_the_relaxed_reading() -> None:
    parsed = parse_text_query("large batch training -lstm", SCHEMA)
    assert parsed is not None and parsed.relaxed is not None
    assert "AndNot" in repr(parsed.relaxed)
    assert "Term('content', 'lstm')" in repr(parsed.relaxed)
    fielded = parse_text_query("title:transformer attention heads", SCHEMA)
    assert fielded is not None and fielded.relaxed is not None
    assert "Term('title', 'transform')" in repr(fielded.relaxed)


def test_explicit_or_has_one_reading() -> None:
    parsed = parse_text_query("lstm OR whale OR batch", SCHEMA)
    assert parsed is not None and parsed.relaxed is None


@pytest.mark.parametrize(
    "text",
    [
        "A high microerythrocyte count protects in homozygous alpha (+)- thalassemia.",
        "Replacement of histone H2A accelerates gene activation by destabilizing +1 nucleosomes.",
        "Differentiated E2f-1, -2, -3 TKO cells do not exhibit apoptosis.",
        "Does APOE4 increase risk of Alzheimer's?",
        'Mouse models can be generated using "artificial spermatids."',
        "The gene cluster encodes urease maturation proteins : UreD/UreH, UreE.",
        "What makes proteins fold (and why)?",
    ],
)
def test_pasted_sentences_parse(text: str) -> None:
    parsed = parse_text_query(text, SCHEMA)
    assert parsed is not None and parsed.relaxed is not None
    assert "Not" not in repr(parsed.relaxed)


def test_sign_before_a_number_is_part_of_the_text() -> None:
    assert "Require" not in repr(parse_query("+1 nucleosomes", SCHEMA))
    assert "Not" not in repr(parse_query("cells -2 -3", SCHEMA))


def test_question_mark_ending_a_word_is_not_a_wildcard() -> None:
    assert "Wildcard" not in repr(parse_query("risk of Alzheimer's?", SCHEMA))
    assert "Wildcard" in repr(parse_query("ba?ch", SCHEMA))


@pytest.mark.parametrize("text", ["", "   ", "-", "' .", "()"])
def test_nothing_to_search_for_is_none(text: str) -> None:
    assert parse_query(text, SCHEMA) is None


def test_stop_words_are_searched_like_any_word() -> None:
    # Kept since SciFact's train queries ranked better with them (see schema.text_analyzer).
    assert parse_query("the", SCHEMA) == wq.Term("content", "the")
    assert "'of'" in repr(parse_query('"theory of mind"', SCHEMA))


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


@pytest.mark.parametrize(
    "text", ["0A:*year:0000..2020", "0A:x batch", "x.A:foo bar", "Phase 2A:trial results"]
)
def test_a_name_glued_to_a_word_is_no_field(text: str) -> None:
    # The parser sees field prefixes where the text check does: "A:" after "0" is text
    # (it used to become a query on a field "A", which Whoosh failed on: a 500).
    parsed = parse_text_query(text, SCHEMA)
    assert parsed is not None
    for query in (parsed.strict, parsed.relaxed):
        if query is not None:
            fields = {getattr(leaf, "fieldname", None) for leaf in query.leaves()}
            assert fields <= {"content", "year"}, fields


def test_a_parsed_query_on_a_field_the_index_lacks_is_refused() -> None:
    with pytest.raises(QuerySyntaxError, match="unknown field 'A'"):
        check_query(wq.And([wq.Term("content", "x"), wq.Every("A")]))
    check_query(wq.And([wq.Term("content", "x"), wq.Term("title", "y"), wq.Term("id", "z")]))


def test_a_sentence_must_match_one_of_its_uncommon_words() -> None:
    parsed = parse_text_query("the risk of the batch size in training", SCHEMA)
    assert parsed is not None and parsed.relaxed is not None
    matching = parsed.matching(parsed.relaxed)
    assert {t.text for t in matching.leaves()} == {"risk", "batch", "size", "train"}
    assert parsed.matching(parsed.strict) is parsed.strict  # every word required anyway
    only_common = parse_text_query("the of and in", SCHEMA)
    assert only_common is not None and only_common.relaxed is not None
    assert only_common.matching(only_common.relaxed) is only_common.relaxed
