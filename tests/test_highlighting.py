"""Matched words marked in a hit's title, snippet and abstract: the same fragments, chosen
and formatted the same, as Whoosh's ``highlight`` gives."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh import highlight
from whoosh.analysis.analyzers import CompositeAnalyzer

from pubsearch.index.schema import build_schema
from pubsearch.ingest.records import MARK_END, MARK_START
from pubsearch.search.highlighting import SNIPPET_CHARS, MarkFormatter, TextTokens, marked

DATA = Path(__file__).resolve().parent / "data"

SNIPPETS = highlight.Highlighter(
    fragmenter=highlight.ContextFragmenter(maxchars=SNIPPET_CHARS, surround=40),
    formatter=MarkFormatter(),
)
WHOLE = highlight.Highlighter(fragmenter=highlight.WholeFragmenter(), formatter=MarkFormatter())
# Small limits, so that texts reach them.
SHORT = highlight.Highlighter(
    fragmenter=highlight.ContextFragmenter(maxchars=30, surround=8, charlimit=200),
    formatter=MarkFormatter(),
)
SHORT_WHOLE = highlight.Highlighter(
    fragmenter=highlight.WholeFragmenter(charlimit=120), formatter=MarkFormatter()
)
HIGHLIGHTERS = {"snippet": SNIPPETS, "whole": WHOLE, "short": SHORT, "short whole": SHORT_WHOLE}


def whooshs(highlighter: highlight.Highlighter, analyzer, text: str, words, top: int) -> str:  # type: ignore[no-untyped-def]
    return str(
        highlight.highlight(
            text, words, analyzer, highlighter.fragmenter, highlighter.formatter, top=top
        )
    )


def _abstracts() -> list[str]:
    with open(DATA / "arxiv-2024-2026.sample.jsonl", encoding="utf-8") as lines:
        return [json.loads(line)["abstract"] for line in lines][:60]


@pytest.mark.parametrize("name", sorted(HIGHLIGHTERS))
@pytest.mark.parametrize("field", ["title", "abstract"])
def test_real_abstracts_are_marked_as_whoosh_marks_them(name: str, field: str) -> None:
    analyzer = build_schema()[field].analyzer
    rnd = random.Random(20261201)
    compared = marked_some = 0
    for text in _abstracts():
        words_of_text = [t.text for t in analyzer(text, mode="query", removestops=False)]
        for count in (1, 2, 5):
            words = frozenset(rnd.sample(words_of_text, min(count, len(words_of_text))))
            for top in (1, 2, 3):
                want = whooshs(HIGHLIGHTERS[name], analyzer, text, words, top)
                got = marked(HIGHLIGHTERS[name], TextTokens.of(analyzer, text, words), top)
                assert got == want, (text, words, top)
                compared += 1
                marked_some += bool(want)
    assert compared == 60 * 9 and marked_some > compared // 4


WORDS = st.sampled_from(
    ["learn", "learning", "the", "of", "neural", "Network", "x", "αβ", "TeX", "$k$", "co-op"]
)


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(st.one_of(WORDS, st.text(max_size=12)), max_size=80),
    chosen=st.frozensets(WORDS, max_size=4),
    name=st.sampled_from(sorted(HIGHLIGHTERS)),
    top=st.integers(min_value=1, max_value=3),
)
def test_any_text_is_marked_as_whoosh_marks_it(
    pieces: list[str], chosen: frozenset[str], name: str, top: int
) -> None:
    analyzer = build_schema()["abstract"].analyzer
    text = " ".join(pieces)
    words = frozenset(t.text for w in chosen for t in analyzer(w, mode="query"))
    want = whooshs(HIGHLIGHTERS[name], analyzer, text, words, top)
    assert marked(HIGHLIGHTERS[name], TextTokens.of(analyzer, text, words), top) == want


def test_an_analyzer_without_a_bulk_path_is_read_token_by_token() -> None:
    """A chain the bulk path does not know (no ``spans``) gives the same marks."""
    from whoosh.analysis import StandardAnalyzer

    analyzer = StandardAnalyzer()
    assert not hasattr(analyzer, "spans")
    text = _abstracts()[0]
    words = frozenset(t.text for t in analyzer(text))
    for name, highlighter in HIGHLIGHTERS.items():
        want = whooshs(highlighter, analyzer, text, words, 2)
        assert marked(highlighter, TextTokens.of(analyzer, text, words), 2) == want, name


def test_a_pattern_marks_the_words_as_written_it_stands_for() -> None:
    """A pattern's words are marked by their form as written (cut and folded, not
    stemmed), as the index's words as written were: transformer* marks "Transformers"
    and "TRANSFORMÉR-based", not "transformation" (of the same stem); not "the" (a
    common word) for th*."""
    import re

    analyzer = build_schema()["abstract"].analyzer
    text = "Transformers, the transformation and a TRANSFORMÉR-based model; thermal theory."
    transformer = re.compile("transformer.*")
    tokens = TextTokens.of(analyzer, text, frozenset(), (transformer,))
    assert marked(WHOLE, tokens, 1) == (
        f"{MARK_START}Transformers{MARK_END}, the transformation and a "
        f"{MARK_START}TRANSFORMÉR{MARK_END}-based model; thermal theory."
    )
    th = TextTokens.of(analyzer, text, frozenset({"model"}), (re.compile("th.*"),))
    words = [tok for tok, hit in zip(th.texts, th.matched, strict=True) if hit]
    assert words == ["model", "thermal", "theori"]  # (the tokens' stems)
    both = TextTokens.of(analyzer, text, frozenset(), (transformer, re.compile("th.*")))
    words = [tok for tok, hit in zip(both.texts, both.matched, strict=True) if hit]
    assert words == ["transform", "transform", "thermal", "theori"]
    # A chain without the bulk path reads the forms as written token by token: the same.
    chain = CompositeAnalyzer(*analyzer.items)
    assert not hasattr(chain, "written_spans")
    plain = TextTokens.of(chain, text, frozenset(), (transformer,))
    assert (plain.texts, plain.starts, plain.matched) == (
        tokens.texts,
        tokens.starts,
        tokens.matched,
    )
