"""The C code (pubsearch.core._speedups) must give what the Python it stands for gives."""

from __future__ import annotations

import copy
import random
import struct
from array import array
from collections import Counter
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from whoosh import formats
from whoosh.analysis import StopFilter as WhooshStopFilter
from whoosh.analysis.analyzers import CompositeAnalyzer

from pubsearch.codec import w3format, w3write
from pubsearch.codec.pool import FieldPostings, TermNumbers
from pubsearch.core import speedups
from pubsearch.index import analysis
from pubsearch.index.schema import build_schema

pytestmark = [
    pytest.mark.speedups,
    pytest.mark.skipif(
        speedups.compiled is None,
        reason="pubsearch.core._speedups (C) was not built: it needs a C compiler and "
        "Python's headers",
    ),
]

_STEMS = st.lists(st.sampled_from(["a", "b", "cé", "d", "net", "x" * 30]), max_size=60)


@settings(max_examples=300, deadline=None)
@given(
    lists=st.lists(_STEMS, min_size=1, max_size=4),
    known=st.lists(st.sampled_from(["b", "net", "zz"]), unique=True),
    first=st.integers(0, 70_000),
    positions=st.booleans(),
    boost=st.sampled_from([1.0, 1.5, 0.1]),
    fieldboost=st.sampled_from([1.0, 3.0]),
    again=st.integers(0, 3),
)
def test_doc_postings_are_whoosh_postings(
    lists: list[list[str]],
    known: list[str],
    first: int,
    positions: bool,
    boost: float,
    fieldboost: float,
    again: int,
) -> None:
    """Each term once, with its frequency times the boosts as its weight and Whoosh's own
    encoding of its positions (or frequency) as its value; new terms numbered on. The same
    list may come again (the content field gives the title's words three times)."""
    if positions:
        lists = lists[:1]
    else:
        lists = [*lists[:1], *lists[1:2] * again, *lists[1:], *lists[:1] * again]
    numbers = TermNumbers()
    for term in known:
        numbers[term]  # noqa: B018  # numbered
    assert speedups.compiled is not None
    encoded = speedups.compiled.doc_postings(numbers, lists, first, positions, boost, fieldboost)
    base, new_terms, termnums, weights, sizes, values, count, length, last = encoded
    assert base == len(known)
    words = [w for stems in lists for w in stems]
    assert new_terms == list(dict.fromkeys(w for w in words if w not in known))
    assert length == len(words)
    numbers.update(zip(new_terms, range(base, base + len(new_terms)), strict=True))
    by_number = list(numbers)
    nums = array("I", termnums).tolist()
    ws = array("d", weights).tolist()
    ends = list(_running(array("I", sizes).tolist()))
    got = {
        by_number[n]: (w, values[ends[i] : ends[i + 1]])
        for i, (n, w) in enumerate(zip(nums, ws, strict=True))
    }
    assert len(got) == count == len(nums)
    assert nums == sorted(nums)  # in term number order
    counts = Counter(words)
    want = {}
    for term, freq in counts.items():
        if positions:
            where = [first + i for i, w in enumerate(words) if w == term]
            value = formats.Positions().encode(where)
        else:
            value = struct.pack("!I", freq)
        want[term] = (float(freq) * boost * fieldboost, value)
    assert got == want
    assert last == (values[ends[-2] :] if count else b"")


def _running(sizes: list[int]) -> list[int]:
    ends = [0]
    for size in sizes:
        ends.append(ends[-1] + size)
    return ends


@pytest.mark.parametrize("order", ["shuffled", "ascending", "descending", "organ pipe", "one"])
def test_doc_postings_of_long_texts_in_any_order(order: str) -> None:
    """Texts of thousands of words, their terms first seen in orders a sort can stumble
    on: each term's positions in order, postings by term number."""
    rng = random.Random(order)
    known = [f"t{i}" for i in range(700)]
    numbers = TermNumbers()
    for term in known:
        numbers[term]  # noqa: B018  # numbered
    terms = {
        "shuffled": [rng.choice(known) for _ in range(5000)],
        "ascending": known * 3,
        "descending": known[::-1] * 3,
        "organ pipe": known[:350] + known[349::-1] + known[350:] + known[:100],
        "one": ["t5"] * 3000,
    }[order]
    encoded = speedups.compiled.doc_postings(numbers, [terms], 7, True, 1.0, 1.0)  # type: ignore[union-attr]
    _, new_terms, termnums, _, sizes, values, count, length, _ = encoded
    assert new_terms == [] and length == len(terms)
    nums = array("I", termnums).tolist()
    assert nums == sorted(set(numbers[t] for t in terms))
    ends = _running(array("I", sizes).tolist())
    for i, n in enumerate(nums):
        where = [7 + p for p, t in enumerate(terms) if t == known[n]]
        # (Decoded: for over 1,000 positions pickle's own list comes in batches.)
        assert formats.Positions().decode_positions(values[ends[i] : ends[i + 1]]) == where
    assert count == len(nums)


def test_doc_postings_refuses_what_it_cannot_do() -> None:
    assert speedups.compiled is not None
    with pytest.raises(ValueError, match="one list"):
        speedups.compiled.doc_postings(TermNumbers(), [["a"], ["b"]], 0, True, 1.0, 1.0)
    with pytest.raises(TypeError, match="must be a list"):
        speedups.compiled.doc_postings(TermNumbers(), [("a",)], 0, False, 1.0, 1.0)


@settings(max_examples=300, deadline=None)
@given(
    stems=_STEMS,
    second=_STEMS,
    known=st.lists(st.sampled_from(["b", "net", "zz"]), unique=True),
    mapped_before=st.booleans(),
    first=st.integers(0, 70_000),
    positions=st.booleans(),
    boost=st.sampled_from([1.0, 1.5]),
    fieldboost=st.sampled_from([1.0, 3.0]),
    dropped=st.booleans(),
    seed=st.integers(0, 3),
)
def test_doc_postings_ids_are_doc_postings(
    stems: list[str],
    second: list[str],
    known: list[str],
    mapped_before: bool,
    first: int,
    positions: bool,
    boost: float,
    fieldboost: float,
    dropped: bool,
    seed: int,
) -> None:
    """The words as their numbers in a vocabulary (numbered in an order of its own) give
    what their stems give, for a document and the next one, whether the first was added
    (its new terms numbered in the field) or dropped (as a failed document is): the field
    map takes only term numbers the field has, so a dropped document's leave no trace."""
    compiled = speedups.compiled
    assert compiled is not None
    vocabulary = analysis.Vocabulary()
    words = sorted({"zz", *stems, *second})
    random.Random(seed).shuffle(words)
    for word in words:
        vocabulary.number(word)
    numbers = TermNumbers()
    for term in known:
        numbers[term]  # noqa: B018  # numbered
    fieldmap = bytearray()
    if mapped_before:  # an earlier document had the known terms: the map has them
        ids = array("I", map(vocabulary.number, known)).tobytes()
        compiled.doc_postings_ids(numbers, fieldmap, vocabulary.stems, ids, 0, True, 1.0, 1.0)
    for doc in (stems, second):
        ids = array("I", map(vocabulary.number, doc)).tobytes()
        args = (first, positions, boost, fieldboost)
        want = compiled.doc_postings(copy.copy(numbers), [doc], *args)
        got = compiled.doc_postings_ids(numbers, fieldmap, vocabulary.stems, ids, *args)
        assert got == want
        held = array("I", bytes(fieldmap)).tolist()
        assert len(held) >= len(vocabulary.stems)
        for number, plus_one in enumerate(held):
            if plus_one:  # only terms the field has numbered, with their numbers
                assert dict.get(numbers, vocabulary.stems[number]) == plus_one - 1
        if not dropped or doc is second:
            base, new_terms = got[0], got[1]
            numbers.update(zip(new_terms, range(base, base + len(new_terms)), strict=True))


def test_doc_postings_ids_refuses_what_it_cannot_do() -> None:
    compiled = speedups.compiled
    assert compiled is not None
    stems = ["a", "b"]
    with pytest.raises(ValueError, match="4-byte"):
        compiled.doc_postings_ids({}, bytearray(), stems, b"\0\0\0", 0, True, 1.0, 1.0)
    with pytest.raises(ValueError, match="past the stems"):
        past = array("I", [0, 2]).tobytes()
        compiled.doc_postings_ids({}, bytearray(), stems, past, 0, True, 1.0, 1.0)
    with pytest.raises(TypeError):
        compiled.doc_postings_ids({}, b"", stems, b"", 0, True, 1.0, 1.0)  # type: ignore[arg-type]
    empty = compiled.doc_postings_ids({}, bytearray(), stems, b"", 0, True, 1.0, 1.0)
    assert empty == compiled.doc_postings({}, [[]], 0, True, 1.0, 1.0)


# -- blocks: the C writer against w3write.py's Python writer, decoded -----------------------------


def _value_strategy(fixed: int | None, mixed: bool) -> st.SearchStrategy[bytes]:
    if fixed == 0:
        return st.just(b"")
    if fixed is not None and fixed > 0:
        # Values of the format's size are kept as one array; others (mixed) end to end.
        return st.binary(max_size=fixed + 2) if mixed else st.binary(min_size=fixed, max_size=fixed)
    return st.one_of(
        st.just(b""),
        st.lists(st.integers(0, 300), min_size=1, max_size=5).map(formats.Positions().encode),
        st.binary(min_size=1, max_size=300),
    )


@st.composite
def _field(draw: Any) -> tuple[Any, FieldPostings, Any]:
    fixed = draw(st.sampled_from([None, -1, 0, 4, 2]))
    int_weights = draw(st.booleans())
    mixed = draw(st.booleans())
    held = FieldPostings()
    terms = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "é", "long" * 20]), max_size=6))
    docs = draw(st.integers(1, 300))
    weight = st.integers(1, 5).map(float) if int_weights else st.floats(0.0, 9.0, width=32)
    for docnum in range(docs):
        here = draw(st.lists(st.sampled_from(terms), unique=True)) if terms else []
        if not here:
            continue
        values = [draw(_value_strategy(fixed, mixed)) for _ in here]
        weights = [draw(weight) for _ in here]
        held.add_many(docnum, here, weights, values, int_weights)
    assume(len(held))  # w3write.write_postings skips a field without postings
    lengths = draw(st.none() | st.binary(min_size=docs, max_size=docs))
    column = array("B", lengths) if lengths is not None else None
    fmt = SimpleNamespace(fixed_value_size=lambda: fixed)
    codec = SimpleNamespace(
        _blocklimit=draw(st.sampled_from([1, 3, 128])),
        _compression=draw(st.sampled_from([0, 3])),
    )
    return codec, held, (fmt, column)


def _written(codec: Any, held: FieldPostings, extra: Any, in_c: bool) -> Any:
    fmt, column = extra
    saved = speedups.enabled
    speedups.enabled = in_c
    try:
        # Copied: _FieldBlocks takes the field's values over (it empties them).
        blocks = w3write.FieldBlocks(codec, fmt, copy.deepcopy(held), column)
        out = []
        pos = 100
        for texts, posts, infos in blocks.chunks(pos):
            for text, info in zip(texts, infos, strict=True):
                offset, size = struct.unpack("!qi", info[-12:])
                raw = posts[offset - pos : offset - pos + size]
                listed = w3format.w3_blocks(raw)
                decoded = [
                    (count, maxid, maxweight, type(maxweight), minlen, maxlen, data)
                    for (count, maxid, maxweight, _, minlen, maxlen), data in listed
                ]
                out.append((text, info[:-12], decoded))
            pos += len(posts)
        return out
    finally:
        speedups.enabled = saved


@settings(max_examples=150, deadline=None)
@given(field=_field(), chunk=st.sampled_from([1, 7, 1 << 17]))
def test_c_blocks_are_python_blocks(field: Any, chunk: int) -> None:
    """Every term's statistics byte for byte, and its blocks once unpickled (their sizes,
    and so their offsets and whether they are compressed, differ: no pickle memo)."""
    codec, held, extra = field
    saved = w3write._CHUNK_POSTINGS
    w3write._CHUNK_POSTINGS = chunk
    try:
        assert _written(codec, held, extra, True) == _written(codec, held, extra, False)
    finally:
        w3write._CHUNK_POSTINGS = saved


def test_write_blocks_checks_its_arrays() -> None:
    import numpy

    compiled = speedups.compiled
    assert compiled is not None
    args: dict[str, Any] = {
        "bounds": numpy.array([2], dtype=numpy.int64),
        "docs": numpy.array([0, 1, 2], dtype=numpy.int64),
        "weights": numpy.ones(3),
        "lengths": None,
        "values": None,
        "starts": None,
        "ends": None,
        "fixed_values": None,
        "fixed": 0,
        "mode": 0,
        "has_empty": False,
        "int_weights": True,
        "blocklimit": 128,
        "compression": 3,
        "min_compressed": 80,
        "magic": b"W3Bl",
        "pos": 0,
        "compress": lambda data, level: data,
    }
    with pytest.raises(ValueError, match="differ in length"):
        compiled.write_blocks(**args)
    with pytest.raises(ValueError, match="not of 8-byte items"):
        compiled.write_blocks(**{**args, "bounds": b"abc"})
    with pytest.raises(ValueError, match="bad blocklimit"):
        compiled.write_blocks(**{**args, "blocklimit": 0})
    with pytest.raises(TypeError, match="values is required"):
        compiled.write_blocks(**{**args, "bounds": args["bounds"] + 1, "mode": 2})
    posts, infos = compiled.write_blocks(**{**args, "bounds": args["bounds"] + 1})
    assert posts.startswith(b"W3Bl") and len(infos) == 1


# -- analysis: a text's stems, run by run --------------------------------------------------

_PIECES = list("ab Xé.,;:()[]-'\"/") + ["\n", "\t", "\u00a0", "\u2003", "the ", "of", "Über"]
# Characters where runs of word characters end, or do not (C decides, Python's re is the
# reference): a combining accent, degree sign, right quote and dashes end one; an
# underscore, superscript two, one half, Arabic-Indic three and a titlecase letter do not.
_PIECES += [
    "e\u0301",
    "\u00b0",
    "\u2019",
    "\u2013",
    "_",
    "\u00b2",
    "\u00bd",
    "\u0663",
    "\u01c5",
    "$",
]
_TEXT = st.lists(st.sampled_from([*_PIECES, "u.s", "1.2", "models"]), max_size=40).map("".join)


def _index_words(
    text: str, in_c: bool, field: str = "abstract"
) -> tuple[list[str], list[int], list[str]]:
    saved = speedups.enabled
    speedups.enabled = in_c
    try:
        analyzer = analysis.FastAnalyzer(*build_schema()[field].analyzer.items)
        words = analyzer.index_words(text)
        assert words is not None
        return words.stems, list(words.positions), words.unstemmed()
    finally:
        speedups.enabled = saved


@settings(max_examples=400, deadline=None)
@given(text=_TEXT, clear=st.booleans())
def test_run_stems_are_the_python_stems(text: str, clear: bool) -> None:
    """The same stems, positions and unstemmed words, also after the caches were cleared
    (as they are when full): then the C code asks the Python for a run's lead."""
    if clear:
        for cache in analysis._CACHES.values():
            for part in cache:
                if part is not None:
                    part.clear()
            stem_chunks = cache[3]
            if stem_chunks is not None:
                stem_chunks.leads.clear()
    in_c = _index_words(text, True)
    if clear:
        for cache in analysis._CACHES.values():
            stem_chunks = cache[3]
            if stem_chunks is not None:
                stem_chunks.leads.clear()  # a lead gone while its run's stems stay
    assert in_c == _index_words(text, False) == _index_words(text, True)
    chain = CompositeAnalyzer(*build_schema()["abstract"].analyzer.items)
    tokens = [(t.text, t.pos) for t in chain(text, positions=True, mode="index")]
    assert list(zip(in_c[0], in_c[1], strict=True)) == tokens


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, clear=st.booleans())
def test_names_run_by_run_are_the_python_words(text: str, clear: bool) -> None:
    """A chain that keeps every word (author names: no stop filter, no stemming) takes
    its words run by run in C too: the same words and positions as the Python and the
    chain, also after its caches were cleared."""
    if clear:
        for cache in analysis._CACHES.values():
            chunks = cache[2]
            if chunks is not None:
                chunks.runs.clear()
    in_c = _index_words(text, True, "author")
    plan = analysis.FastAnalyzer(*build_schema()["author"].analyzer.items)._plan
    assert plan is not None and plan.caches is not None and plan.caches[2] is not None
    assert bool(plan.caches[2].runs) or not in_c[0]  # the C path ran
    assert in_c == _index_words(text, False, "author")
    chain = CompositeAnalyzer(*build_schema()["author"].analyzer.items)
    tokens = [(t.text, t.pos) for t in chain(text, positions=True, mode="index")]
    assert list(zip(in_c[0], in_c[1], strict=True)) == tokens


def test_run_stems_refuses_a_cache_of_the_wrong_kind() -> None:
    compiled = speedups.compiled
    assert compiled is not None
    with pytest.raises(TypeError, match="must give tuples"):
        compiled.run_stems("a b", {"a": ["x"]}, {}, ".", lambda cache, piece: (1, 0))
    with pytest.raises(ValueError, match="ASCII"):
        compiled.run_stems("a b", {}, {}, "é", lambda cache, piece: (1, 0))
    assert compiled.run_stems("(a) b", {"a": ("x",), "b": ("y",)}, {}, "()", lambda c, p: (1, 0))


def _stopping_chain() -> list[Any]:
    """The schema's text chain with English stop words (and their minimum size) dropped."""
    tokenizer, lower, charset, _, stemmer = build_schema()["abstract"].analyzer.items
    return [tokenizer, lower, charset, WhooshStopFilter(), stemmer]


@settings(max_examples=400, deadline=None)
@given(
    text=_TEXT,
    clear=st.sampled_from(["nothing", "runs", "leads", "vocabulary"]),
    stop_words=st.booleans(),
)
def test_run_ids_are_the_words_numbered(text: str, clear: str, stop_words: bool) -> None:
    """index_ids gives index_words's words as written as their numbers in the chain's
    vocabulary (each word its own number, which knows its stem), with the same positions;
    also after the runs' cache was cleared, or only its leads (then the C code asks the
    Python for a run's lead), or the vocabulary numbered anew."""
    items = _stopping_chain() if stop_words else build_schema()["abstract"].analyzer.items
    analyzer = analysis.FastAnalyzer(*items)
    vocabulary = analyzer.vocabulary()
    assert vocabulary is not None
    plan = analyzer._plan
    assert plan is not None and plan.caches is not None
    stem_chunks = plan.caches[3]
    assert stem_chunks is not None and stem_chunks.ids is not None
    if clear == "runs":
        stem_chunks.ids.clear()  # a lead gone, its run's numbers too
    elif clear == "leads":
        stem_chunks.ids.leads.clear()  # a lead gone while its run's numbers stay
    elif clear == "vocabulary":
        generation, numbered = vocabulary.generation, bool(vocabulary.stems)
        vocabulary.trim(limit=0)
        assert vocabulary.stems == [] and (not stem_chunks.ids or not numbered)
        assert vocabulary.generation == generation + numbered
    words = analyzer.index_ids(text)
    plain = analyzer.index_words(text)
    assert words is not None and plain is not None and words.ids is not None
    numbers = array("I", words.ids).tolist()
    assert vocabulary.stems_of(words.ids) == plain.stems == words.stems
    assert vocabulary.words_of(words.ids) == plain.unstemmed()
    assert numbers == [vocabulary.numbers[word] for word in plain.unstemmed()]
    assert list(words.positions) == list(plain.positions) and len(words) == len(plain.stems)
    assert words.unstemmed() == plain.unstemmed()


def test_run_ids_refuses_a_cache_of_the_wrong_kind() -> None:
    compiled = speedups.compiled
    assert compiled is not None
    with pytest.raises(TypeError, match="must give bytes"):
        compiled.run_ids("a b", {"a": ("x",)}, {}, ".", lambda cache, piece: (1, 0))
    two = array("I", [3, 4]).tobytes()
    found = compiled.run_ids("(a) b", {"a": two, "b": two[:4]}, {}, "()", lambda c, p: (1, 0))
    assert found == (two + two[:4], 0)


def test_numbered_words_refuse_a_vocabulary_numbered_anew() -> None:
    analyzer = analysis.FastAnalyzer(*build_schema()["abstract"].analyzer.items)
    vocabulary = analyzer.vocabulary()
    words = analyzer.index_ids("Models of models")
    assert words is not None and vocabulary is not None
    vocabulary.trim(limit=0)
    with pytest.raises(RuntimeError, match="numbered anew"):
        words.stems  # noqa: B018
    again = analyzer.index_ids("Models of models")
    assert again is not None and again.stems == ["model", "of", "model"]
