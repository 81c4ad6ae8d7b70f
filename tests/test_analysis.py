"""The bulk analyzer must give exactly the tokens of the plain Whoosh chain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from whoosh.analysis.analyzers import CompositeAnalyzer

from pubsearch.index import analysis
from pubsearch.index.analysis import FastAnalyzer
from pubsearch.index.schema import WORD_PATTERN, name_analyzer, text_analyzer, written_analyzer
from pubsearch.ingest.readers import ReadReport, read_paths

DATA = Path(__file__).resolve().parent / "data"

ODD = [
    "",
    "the of and",
    "İstanbul ÉCOLE naïve Straße x.y.z it's The a",
    "  Ωmega β-decay 3.14 don't U.S. v1.2 TeX $\\alpha$ résumé  ",
    "ﬁnance ﬂow Ǆ ǅ ǆ",  # ligatures and title-case letters change length when folded
    "Batch size; batch sizes! BATCH-SIZE",
    "(model), 'quoted' .5 u.s. --x-- _under_ (e.g., x.y) \"it's\" ...a.b... $x$ [1,2]",
]

CALLS: list[dict[str, Any]] = [
    {"positions": True, "boosts": True, "mode": "index"},
    {"no_morph": True},
    {"positions": True, "mode": "index", "start_pos": 5},
    {"positions": True, "chars": True, "mode": "index", "removestops": False},
    {"chars": True, "mode": "query", "removestops": False},
    {"positions": True, "chars": True, "start_char": 3, "mode": "index"},
    {"mode": "query"},
    {"mode": "index", "tokenize": False},  # not a bulk call: the chain answers
]


def _texts() -> list[str]:
    records = read_paths([DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport())
    out = list(ODD)
    for record in records:
        out += [record.title, record.abstract, "\n".join(record.authors)]
    return out


def _tokens(analyzer: Any, text: str, kwargs: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            t.text,
            getattr(t, "pos", None),
            getattr(t, "startchar", None),
            getattr(t, "endchar", None),
            t.boost,
            t.stopped,
        )
        for t in analyzer(text, **kwargs)
    ]


ANALYZERS = {"text": text_analyzer, "name": name_analyzer, "written": written_analyzer}


@pytest.mark.parametrize("kind", ANALYZERS)
@pytest.mark.parametrize("kwargs", CALLS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_bulk_tokens_equal_the_chain(kind: str, kwargs: dict[str, Any]) -> None:
    fast = ANALYZERS[kind]()
    assert isinstance(fast, FastAnalyzer)
    chain = CompositeAnalyzer(*fast.items)
    for text in _texts():
        assert _tokens(fast, text, kwargs) == _tokens(chain, text, kwargs), text


@pytest.mark.parametrize("kind", ANALYZERS)
def test_spans_are_the_chains_query_tokens(kind: str) -> None:
    """What highlighting reads: each token's text and character offsets, stop words kept."""
    fast = ANALYZERS[kind]()
    chain = CompositeAnalyzer(*fast.items)
    for text in _texts():
        spans = fast.spans(text)
        assert spans is not None
        tokens = [
            (t.text, t.startchar, t.endchar)
            for t in chain(text, chars=True, mode="query", removestops=False)
        ]
        assert list(zip(*spans, strict=True)) == tokens, text
        written = fast.written_spans(text)
        assert written is not None and written[:3] == spans
        unstemmed = chain(text, chars=True, mode="query", removestops=False, no_morph=True)
        assert written[3] == [t.text for t in unstemmed], text


@pytest.mark.parametrize("small_caches", [False, True])
@pytest.mark.parametrize("kind", ANALYZERS)
def test_index_words_equal_the_chain(
    kind: str, small_caches: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the bulk writer indexes: stems with positions, and the unstemmed words."""
    if small_caches:  # the word caches start anew every few words
        monkeypatch.setattr(analysis, "_CACHE_LIMIT", 5)
    fast = ANALYZERS[kind]()
    assert isinstance(fast, FastAnalyzer)
    chain = CompositeAnalyzer(*fast.items)
    for _ in range(2):  # the second time from the caches
        for text in _texts():
            words = fast.index_words(text)
            assert words is not None
            indexed = [(t.text, t.pos) for t in chain(text, positions=True, mode="index")]
            assert list(zip(words.stems, words.positions, strict=True)) == indexed, text
            assert words.unstemmed() == [t.text for t in chain(text, no_morph=True)], text


def test_the_words_as_written_are_the_text_analyzers_before_stemming() -> None:
    """What the bulk writer takes a field of words as written from: the unstemmed index
    words of its source's analyzer, which are its own (positions too)."""
    written, text, name = written_analyzer(), text_analyzer(), name_analyzer()
    assert isinstance(written, FastAnalyzer)
    assert written.unstemmed_of(text)
    assert not written.unstemmed_of(name)  # another pattern, no stop filter
    assert not text.unstemmed_of(written) and not written.unstemmed_of(written)
    for value in _texts():
        words = text.index_words(value)
        own = written.index_words(value)
        assert words is not None and own is not None
        assert words.unstemmed() == own.stems, value
        assert list(words.positions) == list(own.positions), value


def test_other_chains_are_left_to_whoosh() -> None:
    from whoosh import analysis

    odd = FastAnalyzer(analysis.RegexTokenizer(r"\w+"), analysis.LowercaseFilter())
    assert [t.text for t in odd("Hello World")] == ["hello", "world"]


def test_a_charmap_that_changes_ascii_is_applied_to_ascii_words() -> None:
    """The folding skips the charmap for ASCII words only when it leaves lower-case ASCII
    alone; this one maps "a" to "o" (and "é" to "e")."""
    from whoosh import analysis as whoosh_analysis

    fast = FastAnalyzer(
        whoosh_analysis.RegexTokenizer(WORD_PATTERN),
        whoosh_analysis.LowercaseFilter(),
        whoosh_analysis.CharsetFilter({ord("a"): "o", ord("é"): "e"}),
        whoosh_analysis.StopFilter(stoplist=(), minsize=1),
        whoosh_analysis.PyStemmerFilter("english"),
    )
    chain = CompositeAnalyzer(*fast.items)
    for text in ["Data banana", "Café mathematics", *ODD]:
        words = fast.index_words(text)
        assert words is not None
        indexed = [(t.text, t.pos) for t in chain(text, positions=True, mode="index")]
        assert list(zip(words.stems, words.positions, strict=True)) == indexed, text
    assert fast.index_words("Data banana").stems[0] == "doto"
