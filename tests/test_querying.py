from __future__ import annotations

import pytest
from whoosh import query as wq

from pubsearch.core.errors import ParameterError, QuerySyntaxError
from pubsearch.index.schema import build_schema
from pubsearch.search.compiler import (
    FUNCTION_WORDS_FROM,
    MAX_BARE_TERMS,
    MAX_QUERY_CHARS,
    MIN_STRICT_MATCHES,
    parse_query,
    parse_text_query,
)
from pubsearch.search.request import YearRange, parse_year

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


def test_explicit_clauses_stay_required_when_bare_words_relax() -> None:
    parsed = parse_text_query("author:patel graph neural network", SCHEMA)
    assert parsed is not None and parsed.relaxed is not None
    assert parsed.relaxed == wq.And(
        [
            wq.Or([wq.Term("content", w) for w in ("graph", "neural", "network")]),
            wq.Term("author", "patel"),
        ]
    )
    mixed = parse_text_query('"batch size" title:train* year:2021 large neural networks', SCHEMA)
    assert mixed is not None and mixed.relaxed is not None
    required = mixed.relaxed.subqueries[1:]
    assert [type(q).__name__ for q in required] == ["Or", "Prefix", "Term"]  # phrase: an Or


def test_fields_alone_have_one_reading() -> None:
    parsed = parse_text_query("author:you subject:cs.CV year:2021", SCHEMA)
    assert parsed is not None and parsed.relaxed is None


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
        ("year:[2020 TO", "not closed"),
        ("year:abc", "not a year"),
        ("x" * (MAX_QUERY_CHARS + 1), "characters long"),
        ("title:[a TO c]", "ranges work on year only"),
    ],
)
def test_syntax_errors_say_what(text: str, message: str) -> None:
    with pytest.raises(QuerySyntaxError, match=message):
        parse_query(text, SCHEMA)


@pytest.mark.parametrize(
    ("text", "searched"),
    [
        ("foo:bar", {"foo", "bar"}),
        ("*ing", {"ing"}),
        ("?atch", {"atch"}),
        ("b*", {"b"}),
        ("title:<0", {"0"}),
    ],
)
def test_text_that_only_looks_like_syntax_is_searched_as_words(
    text: str, searched: set[str]
) -> None:
    parsed = parse_text_query(text, SCHEMA)
    assert parsed is not None
    assert {leaf.text for leaf in parsed.strict.leaves()} == searched


def test_too_many_explicit_terms() -> None:
    with pytest.raises(QuerySyntaxError, match="65 terms in fields"):
        parse_query(" OR ".join(f"title:w{i}" for i in range(65)), SCHEMA)
    assert parse_query(" OR ".join(f"w{i}" for i in range(64)), SCHEMA) is not None


def test_a_long_text_keeps_its_most_informative_words() -> None:
    text = " ".join(f"w{i}" for i in range(MAX_BARE_TERMS + 36)) + " w7 w7"
    everything = parse_text_query(text, SCHEMA)  # without a searcher: every word
    assert everything is not None and len(everything.strict.subqueries) == MAX_BARE_TERMS + 36

    def informativeness(stems: list[str]) -> list[float]:
        # w99: no record has it
        return [0.0 if stem == "w99" else 1.0 + int(stem[1:]) / 1000 for stem in stems]

    parsed = parse_text_query(text, SCHEMA, informativeness)
    assert parsed is not None and parsed.relaxed is not None
    kept = {t.text: t.boost for t in parsed.strict.subqueries}
    assert len(kept) == MAX_BARE_TERMS
    assert "w99" not in kept and "w98" in kept and "w7" in kept  # w7: three times
    assert set(kept.values()) == {1.0}
    assert "searched by the 64 that say most" in parsed.notices[0]


def test_a_text_of_10000_characters_is_a_query() -> None:
    paragraph = (
        "We study the transverse curvature effect (TCE) on boundary layers: a flow "
        "over slender cylinders [1]; its influence is large? Results * show it. "
    )
    text = (paragraph * (10_000 // len(paragraph) + 1))[:10_000]
    parsed = parse_text_query(text, SCHEMA)
    assert parsed is not None and parsed.relaxed is not None


def test_repeated_words_are_searched_once() -> None:
    assert parse_query("the effect of the (the) effect effect^2", SCHEMA) == wq.And(
        [
            wq.Term("content", "the"),
            wq.Term("content", "effect", boost=2.0),
            wq.Term("content", "of"),
        ]
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("*", wq.Every()),
        ("learning AND *", wq.Term("content", "learn")),
        ("learning *", wq.Term("content", "learn")),
        ("learning -*", wq.AndNot(wq.Term("content", "learn"), wq.Every())),
        ("-learning", wq.AndNot(wq.Every(), wq.Term("content", "learn"))),
        ("NOT learning", wq.AndNot(wq.Every(), wq.Term("content", "learn"))),
        ("abstract:*", wq.Every("abstract")),
        ("learning OR *", wq.Or([wq.Term("content", "learn"), wq.Every()])),
    ],
)
def test_match_all(text: str, expected: wq.Query) -> None:
    assert parse_query(text, SCHEMA) == expected


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


def test_a_sentence_must_match_one_of_its_uncommon_words() -> None:
    parsed = parse_text_query("the risk of the batch size in training", SCHEMA)
    assert parsed is not None and parsed.relaxed is not None
    matching = parsed.matching(parsed.relaxed)
    assert {t.text for t in matching.leaves()} == {"risk", "batch", "size", "train"}
    assert parsed.matching(parsed.strict) is parsed.strict  # every word required anyway
    only_common = parse_text_query("the of and in", SCHEMA)
    assert only_common is not None and only_common.relaxed is not None
    assert only_common.matching(only_common.relaxed) is only_common.relaxed


def test_function_words_weigh_half_in_long_queries() -> None:
    long = parse_text_query("what is the effect of the speed of sound on flutter of wings", SCHEMA)
    assert long is not None
    boosts = {t.text: t.boost for t in long.strict.subqueries}
    assert len(boosts) >= FUNCTION_WORDS_FROM
    assert boosts["what"] == boosts["the"] == boosts["of"] == boosts["on"] == 0.5
    assert boosts["speed"] == boosts["flutter"] == boosts["wing"] == 1.0
    short = parse_text_query("the effect of speed on flutter", SCHEMA)
    assert short is not None
    assert {t.boost for t in short.strict.subqueries} == {1.0}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Titles and abstracts: their words as written, both for a bare pattern.
        (
            "optim*",
            wq.Or([wq.Prefix("title_words", "optim"), wq.Prefix("abstract_words", "optim")]),
        ),
        ("title:transformer*", wq.Prefix("title_words", "transformer")),
        ("ti:Transformér*", wq.Prefix("title_words", "transformer")),
        ("abs:transform?r", wq.Wildcard("abstract_words", "transform?r")),
        (
            "ba?ch^2",
            wq.Or(
                [wq.Wildcard("title_words", "ba?ch"), wq.Wildcard("abstract_words", "ba?ch")],
                boost=2.0,
            ),
        ),
        # Names and codes have no stems: their own fields, as before.
        ("author:pat*", wq.Prefix("author", "pat")),
        ("subject:cs.*", wq.Prefix("subject", "cs.")),
    ],
)
def test_patterns_search_words_as_written(text: str, expected: wq.Query) -> None:
    assert parse_query(text, SCHEMA) == expected
