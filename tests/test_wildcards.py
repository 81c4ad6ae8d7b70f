"""The words a pattern stands for: what the index's words are read with (pattern_parts)
and what a hit's words are marked by (word_pattern) say the same, and what fnmatch says."""

from __future__ import annotations

import fnmatch

from hypothesis import given
from hypothesis import strategies as st
from whoosh import query as wq

from pubsearch.search.wildcards import pattern_parts, word_pattern

LETTERS = "abc.é'"
WORDS = st.text(alphabet=LETTERS, max_size=8)
PATTERNS = st.text(alphabet=LETTERS + "*?", min_size=1, max_size=6)


@given(text=PATTERNS, word=WORDS)
def test_a_wildcard_stands_for_the_words_fnmatch_matches(text: str, word: str) -> None:
    q = wq.Wildcard("abstract_words", text)
    literal, regex = pattern_parts(q)
    assert regex is not None and text.startswith(literal) and not set(literal) & set("*?")
    want = fnmatch.fnmatchcase(word, text)
    assert bool(regex.fullmatch(word)) == want
    assert bool(word_pattern(q).fullmatch(word)) == want
    if want:
        assert word.startswith(literal)


@given(text=st.text(alphabet=LETTERS, min_size=1, max_size=4), word=WORDS)
def test_a_prefix_stands_for_the_words_that_start_so(text: str, word: str) -> None:
    q = wq.Prefix("title_words", text)
    assert pattern_parts(q) == (text, None)
    assert bool(word_pattern(q).fullmatch(word)) == word.startswith(text)


def test_characters_of_regular_expressions_are_literal() -> None:
    assert word_pattern(wq.Prefix("title_words", "u.s")).fullmatch("u.s.a")
    assert not word_pattern(wq.Prefix("title_words", "u.s")).fullmatch("uxs")
    assert not word_pattern(wq.Wildcard("title_words", "v1.?")).fullmatch("v1x2")
    assert word_pattern(wq.Wildcard("title_words", "v1.?")).fullmatch("v1.2")
