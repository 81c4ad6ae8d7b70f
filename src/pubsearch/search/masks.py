"""Which documents match a query, as a boolean array over document numbers.

Whoosh's ``docs_for_query`` steps a matcher tree document by document in Python; for a
common word at 100k records that is most of a query's time. Here the set is the boolean
combination of posting lists read in one go, segment by segment (words, numbers and
ranges of numbers), of phrases' positions and of patterns' words: every kind of query the
compiler makes (:data:`EXECUTED`); any other raises :class:`UnsupportedQuery`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh import fields
from whoosh import query as wq

from pubsearch.codec import w3columns, w3format, w3positions
from pubsearch.core import speedups
from pubsearch.index.facets import BoolArray, Int32Array, IntArray
from pubsearch.index.postings import (
    FloatArray,
    SharedResults,
    kept_pieces,
    postings,
    postings_with_values,
    read_postings,
    segments_key,
    term_docs,
)
from pubsearch.search.wildcards import pattern_parts

# Fields whose terms are plain text, so that a Term query's text is the indexed term.
_TEXT_FIELDS = (fields.TEXT, fields.KEYWORD, fields.ID)


class DocumentSet(wq.Query):  # type: ignore[misc]  # whoosh is Any to mypy
    """A query matching given documents (deleted ones or not), scored as ``scoring``
    scores them (its matches among them; the others score nothing): the papers of the
    authors a name in the search box stands for (see :mod:`pubsearch.index.names`)."""

    def __init__(self, docs: IntArray, scoring: wq.Query, boost: float = 1.0) -> None:
        # Sorted, each once (np.unique would load numpy.ma: 40 ms of a one-shot query).
        self.docs = _first_of_runs(np.sort(np.asarray(docs, dtype=np.int64)))
        self.scoring = scoring
        self.boost = boost

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is DocumentSet
            and np.array_equal(self.docs, other.docs)
            and self.scoring == other.scoring
            and self.boost == other.boost
        )

    def __hash__(self) -> int:
        return hash((len(self.docs), self.scoring, self.boost))

    def __repr__(self) -> str:
        return f"DocumentSet({len(self.docs)} documents, {self.scoring!r}, boost={self.boost})"

    def is_leaf(self) -> bool:
        return True

    def estimate_size(self, ixreader: Any) -> int:
        return len(self.docs)


class UnsupportedQuery(TypeError):
    """A query of a kind the compiler does not make (:data:`EXECUTED`): a mistake in
    pubsearch, never in what someone typed (hostile and random queries are tested)."""

    def __init__(self, query: wq.Query) -> None:
        super().__init__(f"not a query pubsearch runs: {query!r}")


# The kinds of query the compiler (:mod:`pubsearch.search.compiler`) makes, and all that
# the executor (this module's masks, :mod:`pubsearch.search.topdocs`' scores) runs: each
# against the index's segments through :mod:`pubsearch.index.postings` and the codec.
# Whoosh's own matchers and collectors are never run for a search.
EXECUTED = (
    wq.Term,
    wq.Phrase,
    wq.Prefix,
    wq.Wildcard,
    wq.NumericRange,
    wq.Every,
    wq.And,
    wq.Or,
    wq.AndNot,
    wq.AndMaybe,
    wq.Require,
    wq.Not,
    DocumentSet,
)


def query_mask(searcher: Any, query: wq.Query, size: int) -> BoolArray:
    """Documents (deleted ones included or not: callers AND with the live mask) that
    ``query`` matches, the same set as ``searcher.docs_for_query(query)``."""
    return _mask(searcher, searcher.reader(), query, size)


def _mask(searcher: Any, reader: Any, q: wq.Query, size: int) -> BoolArray:
    kind = type(q)
    if kind is wq.Term and _is_text_field(searcher, q.fieldname) and isinstance(q.text, str):
        return term_mask(reader, q.fieldname, q.text, size)
    if (numeric := numeric_terms(reader, q)) is not None:
        mask = np.zeros(size, dtype=np.bool_)
        for fieldname, text in numeric:
            mask[term_docs(reader, fieldname, text)] = True
        return mask
    if kind is wq.And and q.subqueries:
        out = _mask(searcher, reader, q.subqueries[0], size)
        for sub in q.subqueries[1:]:
            if not out.any():
                break
            out &= _mask(searcher, reader, sub, size)
        return out
    if kind is wq.Or and q.subqueries and not getattr(q, "minmatch", 0):
        out = np.zeros(size, dtype=np.bool_)
        for sub in q.subqueries:
            out |= _mask(searcher, reader, sub, size)
        return out
    if kind is wq.AndNot:
        out = _mask(searcher, reader, q.a, size)
        if out.any():
            out &= ~_mask(searcher, reader, q.b, size)
        return out
    if kind is wq.Phrase and (docs := phrase_docs(searcher, q)) is not None:
        mask = np.zeros(size, dtype=np.bool_)
        mask[docs] = True
        return mask
    if kind in (wq.Prefix, wq.Wildcard) and (found := pattern_postings(reader, q)) is not None:
        mask = np.zeros(size, dtype=np.bool_)
        found.mark(mask)
        return mask
    if kind is wq.Not:
        return ~_mask(searcher, reader, q.query, size)
    if kind is DocumentSet:
        mask = np.zeros(size, dtype=np.bool_)
        mask[q.docs[q.docs < size]] = True
        return mask
    if kind is wq.Every:
        if not q.fieldname:
            return np.ones(size, dtype=np.bool_)
        if (docs := field_docs(reader, q.fieldname)) is not None:
            mask = np.zeros(size, dtype=np.bool_)
            mask[docs] = True
            return mask
    if kind is wq.AndMaybe:
        return _mask(searcher, reader, q.a, size)
    if kind is wq.Require:
        return _mask(searcher, reader, q.a, size) & _mask(searcher, reader, q.b, size)
    named = getattr(q, "fieldname", None)
    if isinstance(named, str) and named not in searcher.schema:
        return np.zeros(size, dtype=np.bool_)  # a field no record has matches nothing
    raise UnsupportedQuery(q)


def field_docs(reader: Any, fieldname: str) -> IntArray | None:
    """Documents (deleted ones included) with any term in ``fieldname`` (``title:*``): the
    union of the field's posting lists, worked out once per generation. None for a field
    the index lacks."""
    if fieldname not in reader.schema:
        return None
    key = (segments_key(reader), "field:*", fieldname)
    held = _PHRASES.get(key)
    if held is not None:
        docs: IntArray = held[0]
        return docs
    size = reader.doc_count_all()
    mask = np.zeros(size, dtype=np.bool_)
    lengths = _field_length_bytes(reader, fieldname)
    if lengths is not None:
        mask[:] = lengths > 0  # a field with lengths: a length for every document with it
    else:
        for text in reader.lexicon(fieldname):
            mask[term_docs(reader, fieldname, text)] = True
    found = np.flatnonzero(mask)
    _PHRASES.put(key, (found,))
    return found


def _field_length_bytes(reader: Any, fieldname: str) -> npt.NDArray[np.uint8] | None:
    """Each document's length byte of ``fieldname`` (0: none), or None for a field
    without lengths."""
    if not reader.schema[fieldname].scorable:
        return None
    out = np.zeros(reader.doc_count_all(), dtype=np.uint8)
    for segment, offset in reader.leaf_readers():
        found = w3columns.segment_length_bytes(segment, fieldname)
        if found is not None:
            out[offset : offset + len(found)] = found
    return out


@dataclass(frozen=True)
class KeptPiece:
    """A word's posting list in one segment, kept there as arrays (see
    :class:`PatternPostings`): it stands before ``ids[at]`` of the pattern's postings."""

    at: int
    offset: int  # the segment's first document
    word: int  # its index in the pattern's words
    ids: IntArray  # numbered in the segment
    weights: FloatArray


@dataclass(frozen=True)
class PatternPostings:
    """The posting lists of every word a pattern (``optim*``, ``ba?ch``) stands for, one
    after another: document numbers (deleted ones included), weights, and for each posting
    the index of its word in ``words``. The lists segments keep as arrays are not copied
    into them but listed in ``kept``, each where it stands among them (a short prefix's
    common words hold most of its postings: 5.2 of the 6.4 million of ``co*`` at 1M)."""

    words: tuple[str, ...]
    ids: IntArray
    weights: FloatArray
    word_of: Int32Array
    kept: tuple[KeptPiece, ...] = ()

    @property
    def nbytes(self) -> int:
        held = self.ids.nbytes + self.weights.nbytes + self.word_of.nbytes
        return int(held + sum(p.ids.nbytes + p.weights.nbytes for p in self.kept))

    def whole(self) -> PatternPostings:
        """Every posting in the arrays, the kept ones in their places."""
        if not self.kept:
            return self
        ids: list[IntArray] = []
        weights: list[FloatArray] = []
        word_of: list[Int32Array] = []
        begin = 0
        for piece in self.kept:
            ids += [self.ids[begin : piece.at], piece.ids + piece.offset]
            weights += [self.weights[begin : piece.at], piece.weights]
            word_of += [
                self.word_of[begin : piece.at],
                np.full(len(piece.ids), piece.word, dtype=np.int32),
            ]
            begin = piece.at
        return PatternPostings(
            self.words,
            np.concatenate([*ids, self.ids[begin:]]),
            np.concatenate([*weights, self.weights[begin:]]),
            np.concatenate([*word_of, self.word_of[begin:]]),
        )

    def mark(self, mask: npt.NDArray[np.bool_]) -> None:
        """Set ``mask[d]`` for every document ``d`` of these postings."""
        mask[self.ids] = True
        for piece in self.kept:
            mask[piece.offset :][piece.ids] = True

    def doc_frequencies(self) -> IntArray:
        """Each word's number of postings."""
        dfs = np.bincount(self.word_of, minlength=len(self.words))
        for piece in self.kept:
            dfs[piece.word] += len(piece.ids)
        return dfs


def pattern_postings(reader: Any, q: wq.PatternQuery) -> PatternPostings | None:
    """The postings of the words ``q`` (a Prefix or Wildcard on a field of plain text)
    expands to, or None for another field. Worked out once per generation and pattern.

    A short prefix stands for thousands of words (``co*``: 4,151 abstracts' words as
    written at 102,289 records), most of them rare: each segment's words are read in
    order from the prefix on, and each short posting list straight from the terms file
    where Whoosh keeps it, rather than looking every word up again in every segment."""
    if not _is_text_field_of(reader.schema, q.fieldname) or not isinstance(q.text, str):
        return None
    key = (segments_key(reader), type(q).__name__, q.fieldname, q.text)
    held = _PATTERNS.get(key)
    if held is not None:
        found: PatternPostings = held[0]
        return found
    this_search: dict[Any, PatternPostings] | None = getattr(_SEARCH, "patterns", None)
    if this_search is not None and key in this_search:
        return this_search[key]
    prefix, pattern = pattern_parts(q)
    words: dict[str, int] = {}
    parts: list[tuple[int, w3format.SegmentWords, Int32Array]] = []
    for segment, offset in reader.leaf_readers():
        segment_words = w3format.prefix_postings(segment, q.fieldname, prefix, pattern)
        if segment_words is None:  # not a whoosh3 segment: through Whoosh, word by word
            read = [
                (word, *read_postings(segment, q.fieldname, word))
                for word in w3format.pattern_words(segment, q)
            ]
            segment_words = w3format.SegmentWords(
                [word for word, _, _ in read],
                np.concatenate([i for _, i, _ in read]) if read else np.zeros(0, np.int64),
                np.concatenate([w for _, _, w in read]) if read else np.zeros(0, np.float64),
                np.array([len(i) for _, i, _ in read], dtype=np.int64),
            )
        numbers = np.array(
            [words.setdefault(word, len(words)) for word in segment_words.words], dtype=np.int32
        )
        parts.append((offset, segment_words, numbers))
    # The segments' postings one after another, each copied once into place.
    size = sum(len(part.ids) for _, part, _ in parts)
    result = PatternPostings(
        tuple(words),
        np.empty(size, dtype=np.int64),
        np.empty(size, dtype=np.float64),
        np.empty(size, dtype=np.int32),
        tuple(_kept_pieces_of(parts)),
    )
    begin = 0
    for offset, part, numbers in parts:
        end = begin + len(part.ids)
        np.add(part.ids, offset, out=result.ids[begin:end])
        result.weights[begin:end] = part.weights
        result.word_of[begin:end] = np.repeat(numbers, part.counts)
        begin = end
    for array in (result.ids, result.weights, result.word_of):
        array.flags.writeable = False  # shared: no caller may change it
    _PATTERNS.put(key, (result,))
    if this_search is not None:
        this_search[key] = result
    return result


@contextmanager
def one_search() -> Iterator[None]:
    """Within it, the postings :func:`pattern_postings` works out in this thread are kept
    until it ends, whatever their size: a search reads them twice (its matches, then their
    scores), and a short prefix's at a million records (``co*``'s abstract words: 113 MB)
    are more than the shared results keep, which took them again each time (and two
    fields' dropped each other's)."""
    if getattr(_SEARCH, "patterns", None) is not None:
        yield  # within a search already
        return
    _SEARCH.patterns = {}
    try:
        yield
    finally:
        _SEARCH.patterns = None


def _kept_pieces_of(
    parts: list[tuple[int, w3format.SegmentWords, Int32Array]],
) -> Iterator[KeptPiece]:
    """Each segment's kept lists, where they stand among the postings."""
    begin = 0
    for offset, found, numbers in parts:
        if found.kept:
            before = np.cumsum(found.counts) - found.counts  # postings before each word
            for index, (ids, weights) in sorted(found.kept.items()):
                ids.flags.writeable = weights.flags.writeable = False  # shared, as below
                yield KeptPiece(
                    begin + int(before[index]), offset, int(numbers[index]), ids, weights
                )
        begin += len(found.ids)


def numeric_terms(reader: Any, q: wq.Query) -> list[tuple[str, bytes]] | None:
    """The indexed terms a query on a number field (``year:2021``, ``year:[2019 TO 2021]``)
    matches documents by, or None for any other query. (Whoosh indexes each number as a few
    terms of different precision and turns a range into ranges of those terms.)"""
    kind = type(q)
    fieldname = getattr(q, "fieldname", None)
    if (
        not isinstance(fieldname, str)
        or fieldname not in reader.schema
        or not isinstance(reader.schema[fieldname], fields.NUMERIC)
    ):
        return None
    if kind is wq.Term and isinstance(q.text, bytes):
        return [(fieldname, q.text)]
    if kind is wq.NumericRange:
        found: list[tuple[str, bytes]] = []
        stack = [w3format.compile_query(q, reader)]
        while stack:
            part = stack.pop()
            if isinstance(part, wq.ConstantScoreQuery):
                stack.append(part.child)
            elif type(part) is wq.Or:
                stack.extend(part.subqueries)
            elif type(part) is wq.TermRange:
                found.extend((fieldname, b) for b in w3format.term_range_texts(part, reader))
            elif type(part) is wq.Term and isinstance(part.text, bytes):
                found.append((fieldname, part.text))
            elif part is not wq.NullQuery and not isinstance(part, type(wq.NullQuery)):
                return None
        return found
    return None


def term_mask(reader: Any, fieldname: str, text: str | bytes, size: int) -> BoolArray:
    """A flag per document (of ``size``): whether it is in the posting list of
    ``fieldname:text`` (deleted ones included). A common word's flags are set a segment
    at a time from the lists the segments keep as arrays (see :func:`kept_pieces`)."""
    mask = np.zeros(size, dtype=np.bool_)
    pieces = kept_pieces(reader, fieldname, text)
    if pieces is None:
        mask[term_docs(reader, fieldname, text)] = True
        return mask
    for segment, offset, row in pieces:
        out = mask[offset : offset + segment.doc_count_all()]
        if not w3format.mark_postings(segment, fieldname, text, out):
            out[w3format.segment_postings(segment, fieldname, text, False, row)[0]] = True
    return mask


def phrase_docs(searcher: Any, q: wq.Phrase) -> IntArray | None:
    """Documents where the words of ``q`` stand in order, each at most ``q.slop``
    positions after the one before (next to each other for the usual slop of 1), deleted
    ones included; None for a phrase this does not handle.

    That is what Whoosh's phrase matcher (``SpanNear2``, in order, ``mindist`` 1) matches.
    Here the documents having every word are found from the posting lists, and only their
    positions are decoded.
    """
    fieldname, words = q.fieldname, tuple(q.words)
    schema = searcher.schema
    if not isinstance(q.slop, int) or not words or fieldname not in schema:
        return None
    field = schema[fieldname]
    if not isinstance(field, fields.TEXT) or not field.format.supports("positions"):
        return None
    if not all(isinstance(w, str) for w in words):
        return None
    reader = searcher.reader()
    key = (segments_key(reader), fieldname, words, q.slop)
    held = _PHRASES.get(key)
    if held is not None:
        docs: IntArray = held[0]
        return docs
    found = _phrase_docs(reader, fieldname, words, q.slop)
    _PHRASES.put(key, (found,))
    return found


# Phrase matches: a phrase costs a decoding of every position of its words, and people
# search the same phrases again.
_PHRASES = SharedResults(limit=32 * 1024 * 1024)

# The postings of patterns' words: a short prefix stands for thousands of words.
_PATTERNS = SharedResults(limit=64 * 1024 * 1024, size=lambda held: held[0].nbytes)
# Those of the search each thread is answering (see one_search).
_SEARCH = threading.local()


def _phrase_docs(reader: Any, fieldname: str, words: tuple[str, ...], slop: int) -> IntArray:
    if slop < 1 and len(words) > 1:
        return np.zeros(0, dtype=np.int64)  # no two words can be fewer than 1 apart
    if len(words) == 1:
        return postings(reader, fieldname, words[0])[0]
    # A segment at a time (by offset): the documents having every word so far, and each
    # word's values for each of them (where in its list each of them is, and the list's
    # values).
    candidates: dict[int, IntArray] = {}
    lists: dict[int, list[tuple[IntArray, w3positions.PackedValues]]] = {}
    for k, word in enumerate(words):
        pieces = {
            offset: (ids, values)
            for offset, ids, values in postings_with_values(reader, fieldname, word)
        }
        if not k:
            candidates = {offset: ids for offset, (ids, _) in pieces.items() if len(ids)}
            lists = {
                offset: [(np.arange(len(ids)), values)]
                for offset, (ids, values) in pieces.items()
                if len(ids)
            }
        for offset in list(candidates) if k else ():
            piece = pieces.get(offset)
            if piece is None:
                del candidates[offset], lists[offset]
                continue
            in_candidates, in_list = _common_indices(candidates[offset], piece[0])
            if not len(in_candidates):
                del candidates[offset], lists[offset]
                continue
            candidates[offset] = candidates[offset][in_candidates]
            lists[offset] = [(at[in_candidates], values) for at, values in lists[offset]]
            lists[offset].append((in_list, piece[1]))
        if not candidates:
            return np.zeros(0, dtype=np.int64)
    found = [
        _phrase_in(docs, [values.take(at) for at, values in lists[offset]], slop) + offset
        for offset, docs in candidates.items()
    ]
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def _common_indices(a: IntArray, b: IntArray) -> tuple[IntArray, IntArray]:
    """Where ``a`` and ``b`` (each sorted, without repeats) have the same numbers: their
    indices in ``a`` and in ``b``, in order. A merge in C where it is built, else by
    binary search of ``a``'s numbers in ``b``."""
    compiled = speedups.active()
    if compiled is not None:
        in_a, in_b = compiled.common_indices(
            np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(b, dtype=np.int64)
        )
        return np.frombuffer(in_a, dtype=np.int64), np.frombuffer(in_b, dtype=np.int64)
    at = np.searchsorted(b, a)
    found = at < len(b)
    found[found] = b[at[found]] == a[found]
    return np.flatnonzero(found), at[found]


def _phrase_in(candidates: IntArray, values: list[w3positions.PackedValues], slop: int) -> IntArray:
    """Those of ``candidates`` (documents of one segment having every word) where the
    phrase's words stand in order, at most ``slop`` apart; ``values``: each word's values
    (encoded positions) in each candidate."""
    fits = w3positions.phrase_fits(values, slop)
    if fits is not None:
        return candidates[fits]
    if slop == 1:
        # Where the phrase could start in each candidate, as (candidate, position) keys
        # narrowed word by word: word k must be at start + k.
        starts: IntArray | None = None
        for k, word_values in enumerate(values):
            owners, positions = w3positions.position_table(word_values.as_list())
            fits = positions >= k  # word k cannot start a phrase before position 0
            keys = _sorted_keys(owners[fits], positions[fits] - k)
            starts = keys if starts is None else _sorted_common(starts, keys)
            if not len(starts):
                break
        assert starts is not None
        return candidates[_first_of_runs(starts // _POSITION_SPAN)]
    # Words up to ``slop`` apart: (candidate, position) keys of each word that stand 1 to
    # ``slop`` after a key reached by the word before (the nearest key before it decides).
    reached: IntArray | None = None
    for word_values in values:
        keys = _sorted_keys(*w3positions.position_table(word_values.as_list()))
        if reached is not None:
            before = np.searchsorted(reached, keys, side="left") - 1  # the nearest below
            gap = keys - reached[np.maximum(before, 0)]
            keys = keys[(before >= 0) & (gap <= slop)]
        reached = keys
        if not len(reached):
            return np.zeros(0, dtype=np.int64)
    assert reached is not None
    return candidates[_first_of_runs(reached // _POSITION_SPAN)]


def _sorted_keys(owners: IntArray, positions: IntArray) -> IntArray:
    """(candidate, position) as one number each, sorted."""
    keys = owners * _POSITION_SPAN + positions
    # Candidates in order, each one's positions rising: the keys are sorted and distinct
    # already, which is checked (linear) rather than sorted again.
    if len(keys) > 1 and not bool((keys[1:] > keys[:-1]).all()):
        keys = _first_of_runs(np.sort(keys))
    return keys


def _first_of_runs(sorted_values: IntArray) -> IntArray:
    """Each value of a sorted array once."""
    if len(sorted_values) < 2:
        return sorted_values
    return sorted_values[np.r_[True, sorted_values[1:] != sorted_values[:-1]]]


def _sorted_common(a: IntArray, b: IntArray) -> IntArray:
    """The numbers in both ``a`` and ``b`` (each sorted, without repeats), found by binary
    search of the shorter in the longer rather than by sorting both together."""
    if len(a) > len(b):
        a, b = b, a
    if not len(a):
        return a
    at = np.searchsorted(b, a)
    found = at < len(b)
    found[found] = b[at[found]] == a[found]
    return a[found]


# Larger than any position plus the words of a phrase: (candidate, position) as one number.
_POSITION_SPAN = 1 << 32


def _is_text_field(searcher: Any, fieldname: str) -> bool:
    return _is_text_field_of(searcher.schema, fieldname)


def _is_text_field_of(schema: Any, fieldname: str) -> bool:
    return fieldname in schema and isinstance(schema[fieldname], _TEXT_FIELDS)
