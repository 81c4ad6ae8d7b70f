"""Reading query text: syntax where it is meant, words everywhere else."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pubsearch.core.errors import QuerySyntaxError
from pubsearch.search.compiler import FIELDS
from pubsearch.search.syntax import (
    MAX_DEPTH,
    PROSE_MIN_WORDS,
    AllOf,
    AnyOf,
    Everything,
    Identifier,
    Must,
    Not,
    Pattern,
    Phrase,
    Sequence,
    Word,
    Years,
    read_query,
)


def read(text: str) -> Sequence:
    return read_query(text, FIELDS)


def words(text: str) -> list[tuple[str, str | None]]:
    tree = read(text)
    assert all(isinstance(item, Word) for item in tree.items), tree
    return [(item.text, item.field) for item in tree.items]  # type: ignore[union-attr]


def test_plain_words_are_bare_with_where_they_stand() -> None:
    tree = read("batch  size")
    assert tree.items == (Word("batch", None, 0, 5), Word("size", None, 7, 11))
    assert tree.bare == tree.items and tree.explicit == () and tree.notices == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("title:batch", [("batch", "title")]),
        ("ti:batch", [("batch", "title")]),
        ("Title:batch", [("batch", "title")]),
        ("abs:gpu", [("gpu", "abstract")]),
        ("au:you", [("you", "author")]),
        ("cat:cs.LG", [("cs.LG", "subject")]),
        ("id:2101.00001", [("2101.00001", "id")]),
    ],
)
def test_fields_and_their_short_names(text: str, expected: list[tuple[str, str]]) -> None:
    assert words(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Note: this matters",  # a colon and a space: prose
        "Title: Deep learning",
        "ratio 3:1",
        "Phase 2A:trial results",  # a name glued to a word is no field
        "x.A:foo bar",
        "http://example.org/abs/2101.00001",
        "title:",
    ],
)
def test_colons_that_are_no_fields_are_words(text: str) -> None:
    tree = read(text)
    assert all(isinstance(i, Word) and i.field is None for i in tree.items), tree
    assert not tree.notices


def test_an_unknown_field_is_searched_as_words_with_a_notice() -> None:
    tree = read("a permutation:invariant network")
    assert [(w.text, w.field) for w in tree.bare] == [
        ("a", None),
        ("permutation:invariant", None),
        ("network", None),
    ]
    assert tree.notices == (
        "\u201cpermutation:\u201d is not a field (title, abstract, author, subject, year); "
        "it was searched as words.",
    )


def test_field_groups_phrases_and_values() -> None:
    (group,) = read("title:(deep -learning)").items
    assert group == AllOf(
        (Word("deep", "title", 7, 11), Not(Word("learning", "title", 13, 21))), bracketed=True
    )
    (phrase,) = read('au:"yang you"').items
    assert phrase == Phrase("yang you", "author", 3, 13)
    assert read("title:(").items == ()
    assert read("title:(").notices[-1] == "\u201ctitle:\u201d had nothing to search for; left out."


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("year:2021", 2021, 2021),
        ("year:2019..2021", 2019, 2021),
        ("year:2019..", 2019, None),
        ("year:..2021", None, 2021),
        ("year:>2019", 2020, None),
        ("year:>=2019", 2019, None),
        ("year:<2019", None, 2018),
        ("year:<=2019", None, 2019),
        ("year:[2019 TO 2021]", 2019, 2021),
        ("year:{2019 TO 2021}", 2020, 2020),
        ("year:[2019 to *]", 2019, None),
        ('year:"2021"', 2021, 2021),
    ],
)
def test_years(text: str, first: int | None, last: int | None) -> None:
    assert read(text).items == (Years("year", first, last),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("year:abc", "year:abc is not a year"),
        ("year:99999", "year:99999 is not a year"),
        ("year:[2020 TO", "the range after year: is not closed"),
        ("year:[abc TO 2021]", "year:abc is not a year"),
        ("year:[2020]", "is not a range"),
        ("year:2021..2019", "ends before it starts"),
        ("title:[a TO c]", "ranges work on year only (year:[2019 TO 2021]), not on title"),
        ("batch year:(2019 OR abc)", "year:abc is not a year"),
    ],
)
def test_syntax_meant_and_wrong_is_refused(text: str, message: str) -> None:
    with pytest.raises(QuerySyntaxError, match=re.escape(message)):
        read(text)


def test_operators() -> None:
    a, b, c = (Word(w, None, i, i + 1) for w, i in (("a", 0), ("b", 5), ("c", 11)))
    assert read("a OR b AND c").items == (AnyOf((a, AllOf((b, c)))),)
    assert read("a AND b OR c").items == (
        AnyOf((AllOf((Word("a", None, 0, 1), Word("b", None, 6, 7))), Word("c", None, 11, 12))),
    )
    # OR binds tighter than words side by side, as on Google and arXiv.
    assert read("a OR b c").items == (
        AnyOf((Word("a", None, 0, 1), Word("b", None, 5, 6))),
        Word("c", None, 7, 8),
    )
    assert read("NOT a b").items == (Not(Word("a", None, 4, 5)), Word("b", None, 6, 7))
    assert read("a ANDNOT b").items == (
        AllOf((Word("a", None, 0, 1), Not(Word("b", None, 9, 10)))),
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("lstm OR", [("lstm", None), ("OR", None)]),
        ("AND x", [("AND", None), ("x", None)]),
        ("x NOT", [("x", None), ("NOT", None)]),
        ("and or not", [("and", None), ("or", None), ("not", None)]),  # lower case: words
    ],
)
def test_operators_with_nothing_to_join_are_words(
    text: str, expected: list[tuple[str, None]]
) -> None:
    assert words(text) == expected


def test_in_text_written_in_capitals_operators_are_words() -> None:
    text = "USE OF DIGITAL COMPUTERS IN THE DESIGN OF BAND PASS FILTERS AND PHASE"
    tree = read(text)
    assert [w.text for w in tree.bare] == text.split()
    assert "capitals" in tree.notices[0]
    assert isinstance(read("LSTM OR GRU").items[0], AnyOf)  # short: still an operator


def test_signs() -> None:
    assert read("-lstm x").items[0] == Not(Word("lstm", None, 1, 5))
    assert read("+lstm").items == (Must(Word("lstm", None, 1, 5)),)
    assert read('-"a b"').items == (Not(Phrase("a b", None, 1, 6)),)
    assert read("x -*").items[1] == Not(Everything(None))
    assert words("2D-3D-2D -2 +1 nucleosomes") == [
        ("2D-3D-2D", None),
        ("-2", None),
        ("+1", None),
        ("nucleosomes", None),
    ]
    assert words("alpha (+)-") == [("alpha", None), ("+", None), ("-", None)]


@pytest.mark.parametrize(
    ("text", "node"),
    [
        ("optim*", Pattern("optim*", None, 0, 6)),
        ("ba?ch", Pattern("ba?ch", None, 0, 5)),
        ("cat:cs.*", Pattern("cs.*", "subject", 4, 8)),
        ("*", Everything(None)),
        ("abstract:*", Everything("abstract")),
        ("year:*", Everything("year")),
    ],
)
def test_wildcards(text: str, node: object) -> None:
    assert read(text).items == (node,)


@pytest.mark.parametrize(
    ("text", "searched", "notice"),
    [
        ("?transverse", "transverse", "cannot start a word"),
        ("*ing", "ing", "cannot start a word"),
        ("b*", "b", "cannot follow fewer than 2 letters"),
        ("state-of*", "state-of", "works within one word"),
    ],
)
def test_wildcards_that_cannot_work_are_words(text: str, searched: str, notice: str) -> None:
    tree = read(text)
    assert [w.text for w in tree.bare] == [searched]
    assert notice in tree.notices[0]


def test_a_question_mark_ending_a_word_is_punctuation() -> None:
    assert words("risk of Alzheimer's?") == [("risk", None), ("of", None), ("Alzheimer's", None)]
    assert read("(or why)?").items == (Word("or", None, 1, 3), Word("why", None, 4, 7))


def test_brackets_of_plain_words_are_plain_words() -> None:
    tree = read("the (transverse curvature) effect")
    assert [w.text for w in tree.bare] == ["the", "transverse", "curvature", "effect"]
    assert not tree.notices


@pytest.mark.parametrize(
    ("text", "notice"),
    [
        ("batch (size", "not closed"),
        ("batch) size", "without an opening"),
        ('"batch size', "quote that was not closed"),
    ],
)
def test_stray_brackets_and_quotes_are_punctuation(text: str, notice: str) -> None:
    tree = read(text)
    assert [w.text for w in tree.bare] == ["batch", "size"]
    assert notice in tree.notices[0]


def test_boosts_and_slop() -> None:
    assert read("x^2").items == (Word("x", None, 0, 3, boost=2.0),)
    assert read('"a b"~3^1.5').items == (Phrase("a b", None, 0, 5, slop=3, boost=1.5),)
    (group,) = read("(a OR b)^3").items
    assert isinstance(group, AllOf) and group.boost == 3.0
    tree = read("word~2")
    assert tree.items == (Word("word", None, 0, 6),) and "phrases only" in tree.notices[0]
    assert words("~5 nm") == [("~5", None), ("nm", None)]


def test_a_quotation_in_prose_relaxes_with_the_words() -> None:
    tree = read('Mouse models can be generated using "artificial spermatids."')
    assert tree.bare[-1] == Phrase("artificial spermatids.", None, 36, 60, prose=True)
    assert tree.explicit == ()
    assert read('"graph networks" now').items[0] == Phrase("graph networks", None, 0, 16)
    assert read('title:"done."').explicit == (Phrase("done.", "title", 6, 13),)


def test_in_pasted_prose_quotes_and_stars_are_punctuation() -> None:
    prose = (
        "We propose a method for spatiotemporal alignment of video and text that learns "
        'the "semantic alignment" of the two from weak labels, and show results* on '
        "three benchmarks, where it improves on earlier methods by a wide margin"
    )
    assert len(prose.split()) > PROSE_MIN_WORDS
    tree = read(prose)
    assert tree.explicit == ()
    quoted, marked = prose.index('"semantic'), prose.index("results*")
    assert Phrase("semantic alignment", None, quoted, quoted + 20, prose=True) in tree.bare
    assert Word("results", None, marked, marked + 8) in tree.bare
    fielded = read(prose + " author:lee -cnn NOT rnn")
    end = len(prose)
    assert fielded.explicit == (
        Word("lee", "author", end + 8, end + 11),
        Not(Word("rnn", None, end + 21, end + 24)),
    )
    assert Word("-cnn", None, end + 12, end + 16) in fielded.bare  # a dash in prose
    short = read('the "semantic alignment" of results*')
    assert short.explicit == (
        Phrase("semantic alignment", None, 4, 24),
        Pattern("results*", None, 28, 36),
    )


def test_smart_quotes_make_phrases() -> None:
    assert read("\u201cneural network\u201d").items == (Phrase("neural network", None, 0, 16),)


def test_nesting_is_bounded() -> None:
    deep = "(" * 5000 + "x" + ")" * 5000
    tree = read(deep)
    assert [w.text for w in tree.bare] == ["x"]
    nested = read("NOT " * 5000 + "x").items[0]
    depth = 0
    while isinstance(nested, Not):
        nested, depth = nested.node, depth + 1
    assert depth == MAX_DEPTH  # deeper, NOT is read as a word


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters=":[]{}"), max_size=300))
def test_text_without_field_syntax_never_fails(text: str) -> None:
    read(text)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300))
def test_any_text_reads_or_is_refused_with_one_line(text: str) -> None:
    try:
        read(text)
    except QuerySyntaxError as exc:
        assert str(exc) and "\n" not in str(exc)


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("arXiv:2505.17997", ["arxiv:2505.17997"]),
        ("https://arxiv.org/abs/2101.00001v2", ["arxiv:2101.00001"]),
        ("DOI: 10.1103/PhysRevLett.123.456 spin", ["doi:10.1103/physrevlett.123.456"]),
        ("see (2505.17997) and 2503.18889.", ["arxiv:2505.17997", "arxiv:2503.18889"]),
        ("10.1016/S0140-6736(20)30183-5", ["doi:10.1016/s0140-6736(20)30183-5"]),
    ],
)
def test_identifiers_are_read_in_any_form_with_what_surrounds_them(
    text: str, keys: list[str]
) -> None:
    tree = read(text)
    found = [i for i in tree.items if isinstance(i, Identifier)]
    assert [i.key for i in found] == keys
    assert not tree.notices  # arXiv: is no unknown field
    assert text[found[0].start : found[0].end].rstrip(".")


def test_an_identifier_under_an_operator_is_a_node_of_it() -> None:
    (item,) = read("(2505.17997 OR transformer)").items
    assert isinstance(item, AnyOf) and isinstance(item.items[0], Identifier)
    (item,) = read("NOT arXiv:2505.17997").items
    assert isinstance(item, Not) and isinstance(item.node, Identifier)
    # In a field, and written with a sign, it is words.
    assert words("title:2505.17997 -2505.17997") == [("2505.17997", "title"), ("-2505.17997", None)]
