"""Which documents match a query, as a boolean array over document numbers.

Whoosh's ``docs_for_query`` steps a matcher tree document by document in Python; for a
common word at 100k records that is most of a query's time. For the queries people mostly
type (words combined with AND, OR, NOT) the same set is the boolean combination of each
word's posting list, and each posting list is read in one go. Everything else (phrases,
ranges, wildcards, ...) is still asked of ``docs_for_query``, one sub-query at a time.
"""

from __future__ import annotations

import io
import pickle
import re
import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh import columns, fields
from whoosh import query as wq
from whoosh.codec.whoosh3 import (
    LENGTHS_COLUMN,
    WHOOSH3_HEADER_MAGIC,
    W3LeafMatcher,
    W3TermInfo,
    W3TermsReader,
)
from whoosh.matching.wrappers import FilterMatcher
from whoosh.system import _INT_SIZE

from pubsearch import speedups
from pubsearch.facets import BoolArray, IntArray

FloatArray = npt.NDArray[np.float64]

# Fields whose terms are plain text, so that a Term query's text is the indexed term.
_TEXT_FIELDS = (fields.TEXT, fields.KEYWORD, fields.ID)


class DocumentSet(wq.Query):  # type: ignore[misc]  # whoosh is Any to mypy
    """A query matching given documents (deleted ones or not), scored as ``scoring``
    scores them (its matches among them; the others score nothing): the papers of the
    authors a name in the search box stands for (see :mod:`pubsearch.names`)."""

    def __init__(self, docs: IntArray, scoring: wq.Query, boost: float = 1.0) -> None:
        self.docs = np.unique(np.asarray(docs, dtype=np.int64))
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

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        from whoosh.matching import ListMatcher

        live = [int(d) for d in self.docs if not searcher.reader().is_deleted(int(d))]
        return ListMatcher(live, all_weights=self.boost)


def query_mask(searcher: Any, query: wq.Query, size: int) -> BoolArray:
    """Documents (deleted ones included or not: callers AND with the live mask) that
    ``query`` matches, the same set as ``searcher.docs_for_query(query)``."""
    return _mask(searcher, searcher.reader(), query, size)


def _mask(searcher: Any, reader: Any, q: wq.Query, size: int) -> BoolArray:
    kind = type(q)
    if kind is wq.Term and _is_text_field(searcher, q.fieldname) and isinstance(q.text, str):
        mask = np.zeros(size, dtype=np.bool_)
        mask[term_docs(reader, q.fieldname, q.text)] = True
        return mask
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
        mask[found.ids] = True
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
    mask = np.zeros(size, dtype=np.bool_)
    mask[np.fromiter(searcher.docs_for_query(q), dtype=np.int64)] = True
    return mask


def field_docs(reader: Any, fieldname: str) -> IntArray | None:
    """Documents (deleted ones included) with any term in ``fieldname`` (``title:*``): the
    union of the field's posting lists, worked out once per generation. None for a field
    the index lacks."""
    if fieldname not in reader.schema:
        return None
    key = (_segments_of(reader), "field:*", fieldname)
    held = _PHRASES.get(key)
    if held is not None:
        return held[0]
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
    column = f"_{fieldname}_len"  # the field's length column (whoosh/codec/whoosh3.py)
    for segment, offset in reader.leaf_readers():
        perdoc = segment._perdoc
        count = segment.doc_count_all()
        if perdoc.has_column(column):
            lengths = perdoc.column_reader(column, LENGTHS_COLUMN)
            out[offset : offset + count] = length_bytes(lengths, count)
    return out


def length_bytes(lengths: Any, count: int) -> npt.NDArray[np.uint8]:
    """A segment's length bytes, one per document (0 for none), from its length column.

    The column is one byte per document up to the last that has the field: read in one
    piece, not a file read per document (0.15 to 0.2 s a field at 102k records, paid by
    each new searcher)."""
    if (
        isinstance(lengths, columns.NumericColumn.Reader)
        and lengths._fixedlen == 1
        and lengths._default == 0
    ):
        stored = min(lengths._count, count)
        raw = np.zeros(count, dtype=np.uint8)
        if stored:
            data = lengths._dbfile.get(lengths._basepos, stored)
            raw[:stored] = np.frombuffer(data, dtype=np.uint8)
        return raw
    return np.fromiter((b or 0 for b in lengths), dtype=np.uint8, count=count)


@dataclass(frozen=True)
class PatternPostings:
    """The posting lists of every word a pattern (``optim*``, ``ba?ch``) stands for, one
    after another: document numbers (deleted ones included), weights, and for each posting
    the index of its word in ``words``."""

    words: tuple[str, ...]
    ids: IntArray
    weights: FloatArray
    word_of: IntArray

    @property
    def nbytes(self) -> int:
        return int(self.ids.nbytes + self.weights.nbytes + self.word_of.nbytes)


def pattern_postings(reader: Any, q: wq.PatternQuery) -> PatternPostings | None:
    """The postings of the words ``q`` (a Prefix or Wildcard on a field of plain text)
    expands to, or None for another field. Worked out once per generation and pattern.

    A short prefix stands for thousands of words (``co*``: 2,773 at 102,289 records), most
    of them rare: each segment's words are read in order from the prefix on, and each
    short posting list straight from the terms file where Whoosh keeps it, rather than
    looking every word up again in every segment."""
    if not _is_text_field_of(reader.schema, q.fieldname) or not isinstance(q.text, str):
        return None
    key = (_segments_of(reader), type(q).__name__, q.fieldname, q.text)
    held = _PATTERNS.get(key)
    if held is not None:
        return PatternPostings(tuple(held[3].tolist()), held[0], held[1], held[2])
    prefix, pattern = _pattern_parts(q)
    words: dict[str, int] = {}
    ids: list[IntArray] = []
    weights: list[FloatArray] = []
    word_of: list[IntArray] = []
    for segment, offset in reader.leaf_readers():
        found = _segment_pattern_postings(segment, q.fieldname, prefix, pattern)
        if found is None:  # not a whoosh3 segment: through Whoosh, word by word
            found = []
            for word in _segment_words(segment, q):
                seg_ids, seg_weights, _ = _read_postings(segment, q.fieldname, word, False)
                found.append((word, seg_ids, seg_weights))
        for word, seg_ids, seg_weights in found:
            number = words.setdefault(word, len(words))
            ids.append(seg_ids + offset)
            weights.append(seg_weights)
            word_of.append(np.full(len(seg_ids), number, dtype=np.int32))
    result = PatternPostings(
        tuple(words),
        np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64),
        np.concatenate(weights) if weights else np.zeros(0, dtype=np.float64),
        np.concatenate(word_of) if word_of else np.zeros(0, dtype=np.int32),
    )
    _PATTERNS.put(
        key, (result.ids, result.weights, result.word_of, np.array(result.words, dtype=object))
    )
    return result


def _pattern_parts(q: wq.PatternQuery) -> tuple[str, re.Pattern[str] | None]:
    """The literal start of a pattern, and a regular expression for the rest (None for a
    prefix: every word that starts so)."""
    if type(q) is wq.Prefix:
        return q.text, None
    literal = re.split(r"[*?]", q.text, maxsplit=1)[0]
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in q.text)
    return literal, re.compile(regex, re.DOTALL)


def _segment_words(segment: Any, q: wq.PatternQuery) -> list[str]:
    field = segment.schema[q.fieldname]
    return [field.from_bytes(b) for b in sorted(set(q._btexts(segment))) if b]


def _segment_pattern_postings(
    segment: Any, fieldname: str, prefix: str, pattern: re.Pattern[str] | None
) -> list[tuple[str, IntArray, FloatArray]] | None:
    """Each word of ``segment``'s ``fieldname`` that starts with ``prefix`` (and matches
    ``pattern``), with its posting list; None when the segment is not whoosh3's.

    The words' lists lie one after another in the postings file (written in word order):
    they are read in one piece, and their blocks' numbers turned into arrays at once."""
    terms = getattr(segment, "_terms", None)
    if not isinstance(terms, W3TermsReader) or fieldname not in terms._fieldmap:
        return None
    start = prefix.encode("utf-8")
    stats = W3TermInfo._struct.size
    words: list[str] = []
    inline: dict[int, tuple[Any, Any]] = {}
    extents: dict[int, tuple[int, int]] = {}
    for key, row in terms._tindex.items_from(terms._keycoder(fieldname, start)):
        name, tbytes = terms._keydecoder(key)
        if name != fieldname or not tbytes.startswith(start):
            break
        word = tbytes.decode("utf-8")
        if pattern is not None and not pattern.fullmatch(word):
            continue
        if row[0]:  # postings kept in the terms file: (ids, weights, values), pickled
            inline_ids, inline_weights, _ = pickle.loads(row[stats:])
            inline[len(words)] = (inline_ids, inline_weights)
        else:
            offset = int.from_bytes(row[stats : stats + 8], "big")
            length = int.from_bytes(row[stats + 8 : stats + _EXTENT_SIZE], "big")
            extents[len(words)] = (offset, length)
        words.append(word)
    if not words:
        return []
    first = min((o for o, _ in extents.values()), default=0)
    end = max((o + n for o, n in extents.values()), default=0)
    joined = terms._postfile.get(first, end - first) if extents else b""
    decoded = _BlockArrays()
    list_ends: list[int] = []
    for number in range(len(words)):
        if number in inline:
            decoded.add_postings(*inline[number])
        else:
            offset, length = extents[number]
            decoded.add_list(joined[offset - first : offset - first + length])
        list_ends.append(len(decoded))
    ids, weight_array = decoded.arrays()
    bounds = [0, *list_ends]
    return [
        (word, ids[bounds[i] : bounds[i + 1]], weight_array[bounds[i] : bounds[i + 1]])
        for i, word in enumerate(words)
    ]


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
        stack = [q._compile_query(reader)]
        while stack:
            part = stack.pop()
            if isinstance(part, wq.ConstantScoreQuery):
                stack.append(part.child)
            elif type(part) is wq.Or:
                stack.extend(part.subqueries)
            elif type(part) is wq.TermRange:
                found.extend((fieldname, b) for b in part._btexts(reader))
            elif type(part) is wq.Term and isinstance(part.text, bytes):
                found.append((fieldname, part.text))
            elif part is not wq.NullQuery and not isinstance(part, type(wq.NullQuery)):
                return None
        return found
    return None


def term_docs(reader: Any, fieldname: str, text: str | bytes) -> IntArray:
    """Document numbers in the posting list of ``fieldname:text``, deleted ones included."""
    return postings(reader, fieldname, text)[0]


# The posting lists read last, per thread: a search reads each word's list for its mask
# and again to score it; each block read costs an unpickling of its positions too.
_RECENT = threading.local()
_RECENT_SIZE = 16


def postings(reader: Any, fieldname: str, text: str | bytes) -> tuple[IntArray, FloatArray]:
    """Document numbers (deleted ones included) and weights of the posting list of
    ``fieldname:text``, read a block at a time: a Whoosh matcher yields one document per
    Python call, and filters out deleted documents one by one. Long lists are kept for
    every thread (:data:`_LONG_LISTS`), the last few of any length for this one."""
    recent = _recent()
    key = (id(reader), fieldname, text)
    held = recent.get(key)
    if held is not None and held[0] is reader:
        recent.move_to_end(key)
        return held[1], held[2]
    shared_key = (_segments_of(reader), fieldname, text)
    shared = _LONG_LISTS.get(shared_key)
    if shared is not None:
        ids, weights = shared
    else:
        ids, weights, _ = _read_postings(reader, fieldname, text, False)
        _share_if_long(shared_key, ids, weights)
    _remember(recent, key, (reader, ids, weights))
    return ids, weights


def _share_if_long(key: Any, ids: IntArray, weights: FloatArray) -> None:
    if len(ids) >= _LONG_LIST_POSTINGS:
        _LONG_LISTS.put(key, (ids, weights))


def _postings_with_values(reader: Any, fieldname: str, text: str) -> tuple[IntArray, list[bytes]]:
    """Document numbers and values (encoded positions) of a posting list, each block read
    once. Only the numbers and weights are kept for the next :func:`postings` call: the
    values take many times their memory, and phrase matches are kept instead."""
    ids, weights, values = _read_postings(reader, fieldname, text, True)
    _remember(_recent(), (id(reader), fieldname, text), (reader, ids, weights))
    _share_if_long((_segments_of(reader), fieldname, text), ids, weights)
    assert values is not None
    return ids, values


def _recent() -> OrderedDict[Any, tuple[Any, ...]]:
    recent: OrderedDict[Any, tuple[Any, ...]] | None = getattr(_RECENT, "lists", None)
    if recent is None:
        recent = _RECENT.lists = OrderedDict()
    return recent


def _remember(recent: OrderedDict[Any, tuple[Any, ...]], key: Any, value: tuple[Any, ...]) -> None:
    recent[key] = value
    recent.move_to_end(key)
    if len(recent) > _RECENT_SIZE:
        recent.popitem(last=False)


def _read_postings(
    reader: Any, fieldname: str, text: str | bytes, with_values: bool
) -> tuple[IntArray, FloatArray, list[bytes] | None]:
    """The posting list's document numbers and weights, and with ``with_values`` its
    values (encoded positions), each block read once."""
    ids: list[IntArray] = []
    weights: list[FloatArray] = []
    values: list[bytes] | None = [] if with_values else None
    for segment, offset in reader.leaf_readers():
        if (fieldname, text) not in segment:
            continue
        whole = _raw_list(segment, fieldname, text, with_values)
        if whole is not None:
            ids.append(whole[0] + offset)
            weights.append(whole[1])
            if values is not None:
                values.extend(whole[2])
            continue
        matcher = segment.postings(fieldname, text)
        if isinstance(matcher, FilterMatcher):  # the segment's deletions: masked by callers
            matcher = matcher.child
            matcher.reset()  # the filter has moved it past the first deleted documents
        if isinstance(matcher, W3LeafMatcher):
            while matcher.is_active():
                block_id_array, block_weight_array = _block_arrays(matcher)
                ids.append(block_id_array + offset)
                weights.append(block_weight_array)
                if values is not None:
                    matcher._read_values()
                    values.extend(matcher._values)
                matcher._next_block()
        else:
            block_ids: list[int] = []
            block_weights: list[float] = []
            while matcher.is_active():
                block_ids.append(matcher.id())
                block_weights.append(matcher.weight())
                if values is not None:
                    values.append(matcher.value())
                matcher.next()
            ids.append(np.asarray(block_ids, dtype=np.int64) + offset)
            weights.append(np.asarray(block_weights, dtype=np.float64))
    if not ids:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), values
    return np.concatenate(ids), np.concatenate(weights), values


def _raw_list(
    segment: Any, fieldname: str, text: str | bytes, with_values: bool
) -> tuple[IntArray, FloatArray, list[Any]] | None:
    """A posting list in a whoosh3 segment, deleted documents included: its document
    numbers, weights and (with ``with_values``) values, from one read of the list's bytes.
    None when the list is not a run of W3 blocks (postings kept in the terms file, another
    codec): then Whoosh's matcher reads it.

    Whoosh's matcher reads a block's header pickle from the file opcode by opcode (some 20
    file reads a block); this reads the list once and takes the blocks apart in memory."""
    terms = getattr(segment, "_terms", None)
    if not isinstance(terms, W3TermsReader):
        return None
    tbytes = segment._text_to_bytes(fieldname, text)
    row = terms._tindex.get(terms._keycoder(fieldname, tbytes))
    stats = W3TermInfo._struct.size
    if row is None or len(row) != stats + _EXTENT_SIZE or row[0] != 0:  # inlined postings
        return None
    offset = int.from_bytes(row[stats : stats + 8], "big")
    length = int.from_bytes(row[stats + 8 : stats + _EXTENT_SIZE], "big")
    raw = terms._postfile.get(offset, length)
    if raw[:_MAGIC_SIZE] != WHOOSH3_HEADER_MAGIC:
        return None
    compiled = speedups.active()
    if compiled is not None and not with_values:
        try:
            ids_bytes, weights_bytes = compiled.decode_list(
                raw, WHOOSH3_HEADER_MAGIC, zlib.decompress
            )
        except ValueError:
            pass  # pickles the C code does not read: Python's pickle reads them
        else:
            return (
                np.frombuffer(ids_bytes, dtype=np.int64),
                np.frombuffer(weights_bytes, dtype=np.float64),
                [],
            )
    decoded = _BlockArrays(with_values)
    decoded.add_list(raw)
    ids, weights = decoded.arrays()
    return ids, weights, decoded.values


class _BlockArrays:
    """Posting lists' blocks joined into arrays: each block's id deltas and weights are
    gathered in Python lists and turned into arrays once, not a block at a time."""

    def __init__(self, with_values: bool = False) -> None:
        self.deltas: list[int] = []
        self.weights: list[float] = []
        self.block_starts: list[int] = []
        self.values: list[Any] = []
        self.with_values = with_values

    def add_list(self, raw: bytes) -> None:
        """The blocks of one list's bytes (see w3_blocks)."""
        deltas, weights = self.deltas, self.weights
        for info, (block_deltas, block_weights, block_values) in w3_blocks(raw):
            self.block_starts.append(len(deltas))
            deltas.extend(block_deltas)
            if block_weights is None:
                weights.extend([1.0] * info[0])
            elif isinstance(block_weights, float):
                weights.extend([block_weights] * info[0])
            else:
                weights.extend(block_weights)
            if self.with_values:
                self.values.extend(block_values)

    def add_postings(self, ids: Any, weights: Any) -> None:
        """A list given as its document numbers and weights (kept in the terms file)."""
        self.block_starts.append(len(self.deltas))
        self.deltas.append(ids[0])
        self.deltas.extend(b - a for a, b in zip(ids, ids[1:], strict=False))
        self.weights.extend(weights)

    def __len__(self) -> int:
        return len(self.deltas)

    def arrays(self) -> tuple[IntArray, FloatArray]:
        """Every posting's document number (each block's deltas summed from 0) and weight."""
        steps = np.asarray(self.deltas, dtype=np.int64)
        if not len(steps):
            return steps, np.zeros(0, dtype=np.float64)
        running = np.cumsum(steps)
        starts = np.asarray(self.block_starts, dtype=np.int64)
        counts = np.diff(np.append(starts, len(steps)))
        ids = running - np.repeat(running[starts] - steps[starts], counts)
        return ids, np.asarray(self.weights, dtype=np.float64)


def w3_blocks(raw: bytes) -> Iterator[tuple[tuple[Any, ...], tuple[Any, Any, Any]]]:
    """The blocks of one posting list's bytes in a whoosh3 postings file, in order: each
    block's info (postings, last id, highest weight, compression, shortest and longest
    length byte) and its data unpickled (id deltas, weights, values, minified as
    ``W3PostingsWriter`` keeps them)."""
    if raw[:_MAGIC_SIZE] != WHOOSH3_HEADER_MAGIC:
        raise ValueError("not a whoosh3 posting list")
    pos = _MAGIC_SIZE
    last = False
    while not last:
        size = int.from_bytes(raw[pos : pos + 4], "big", signed=True)
        last = size < 0
        block = io.BytesIO(raw[pos + 4 : pos + 4 + abs(size)])
        info = pickle.load(block)
        data = block.read()
        yield info, pickle.loads(zlib.decompress(data) if info[3] else data)
        pos += 4 + abs(size)
    if pos != len(raw):
        raise ValueError("a posting list does not end with its last block")


_MAGIC_SIZE = len(WHOOSH3_HEADER_MAGIC)
_EXTENT_SIZE = 12  # a posting list's offset (8 bytes) and length (4) in the postings file


def _block_arrays(matcher: W3LeafMatcher) -> tuple[IntArray, FloatArray]:
    """The document numbers (in the segment) and weights of ``matcher``'s current block,
    decoded with numpy: Whoosh's ``_read_ids`` undoes the delta coding one number at a
    time in a Python generator."""
    if matcher._data is None:
        matcher._read_data()
    deltas, weights = matcher._data[0], matcher._data[1]
    count = matcher._blocklength
    ids = np.cumsum(np.asarray(deltas, dtype=np.int64))
    if weights is None:
        return ids, np.ones(count, dtype=np.float64)
    if isinstance(weights, float):
        return ids, np.full(count, weights, dtype=np.float64)
    return ids, np.asarray(weights, dtype=np.float64)


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
    key = (_segments_of(reader), fieldname, words, q.slop)
    held = _PHRASES.get(key)
    if held is not None:
        return held[0]
    found = _phrase_docs(reader, fieldname, words, q.slop)
    _PHRASES.put(key, (found,))
    return found


def _segments_of(reader: Any) -> tuple[tuple[str, int], ...]:
    """What a reader's document numbers depend on: its segments and where each starts.
    Every thread's reader of one index generation gives the same."""
    return tuple((segment.segment().segid, offset) for segment, offset in reader.leaf_readers())


class _SharedResults:
    """Arrays worked out from an index generation's segments, shared by every thread, the
    least recently used dropped past ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[Any, tuple[npt.NDArray[Any], ...]] = OrderedDict()
        self._bytes = 0
        self._max_bytes = max_bytes

    def get(self, key: Any) -> tuple[npt.NDArray[Any], ...] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: Any, arrays: tuple[npt.NDArray[Any], ...]) -> None:
        for array in arrays:
            array.flags.writeable = False  # shared: no caller may change it
        with self._lock:
            if key in self._items:
                return
            self._items[key] = arrays
            self._bytes += sum(array.nbytes for array in arrays)
            while self._bytes > self._max_bytes and len(self._items) > 1:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= sum(array.nbytes for array in dropped)


# Phrase matches: a phrase costs a decoding of every position of its words, and people
# search the same phrases again.
_PHRASES = _SharedResults(max_bytes=32 * 1024 * 1024)

# The postings of patterns' words: a short prefix stands for thousands of words.
_PATTERNS = _SharedResults(max_bytes=64 * 1024 * 1024)

# Posting lists (numbers and weights) of at least _LONG_LIST_POSTINGS documents. With stop
# words indexed, a pasted sentence scores its common words, each in nearly every record,
# and with the words of its feedback it reads more lists than a thread keeps (_RECENT_SIZE):
# warm, such a sentence read 50 lists a search at 102,289 records.
_LONG_LIST_POSTINGS = 2_000
_LONG_LISTS = _SharedResults(max_bytes=96 * 1024 * 1024)


def _phrase_docs(reader: Any, fieldname: str, words: tuple[str, ...], slop: int) -> IntArray:
    if slop < 1 and len(words) > 1:
        return np.zeros(0, dtype=np.int64)  # no two words can be fewer than 1 apart
    if len(words) == 1:
        return postings(reader, fieldname, words[0])[0]
    candidates: IntArray | None = None
    lists = []
    for word in words:
        ids, word_values = _postings_with_values(reader, fieldname, word)
        lists.append((ids, word_values))
        # Posting lists are sorted and without repeats: no sort needed to intersect them.
        candidates = ids if candidates is None else _sorted_common(candidates, ids)
        if not len(candidates):
            return candidates
    assert candidates is not None
    values = [_values_for(ids, word_values, candidates) for ids, word_values in lists]
    if slop == 1:
        # Where the phrase could start in each candidate, as (candidate, position) keys
        # narrowed word by word: word k must be at start + k.
        starts: IntArray | None = None
        for k, word_values in enumerate(values):
            owners, positions = _position_table(word_values)
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
        keys = _sorted_keys(*_position_table(word_values))
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
        keys = np.unique(keys)
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


def _position_table(values: list[bytes]) -> tuple[IntArray, IntArray]:
    """Every position in ``values`` (encoded position lists, one per candidate) as two
    arrays: the candidate's index in ``values``, and the position.

    Each value is a 4-byte count and a pickled list of position deltas
    (formats.Positions.encode). The values are joined, their counts and pickle headers cut
    out with numpy, and the rest unpickled as one list of lists, in one call; with the C
    speedups, the pickles' opcodes are read in C.
    """
    if not values:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    compiled = speedups.active()
    if compiled is not None:
        try:
            owners, positions = compiled.position_table(values)
        except ValueError:
            pass  # not the encoding the C code reads: pickle decides
        else:
            return np.frombuffer(owners, dtype=np.int64), np.frombuffer(positions, dtype=np.int64)
    joined = np.frombuffer(b"".join(values), dtype=np.uint8)
    sizes = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    ends = np.cumsum(sizes)
    starts = ends - sizes
    header = _INT_SIZE + len(_PICKLE_PROTOCOL_2)
    if bool((sizes <= header).any()):
        raise ValueError("unexpected encoding of positions")
    head = joined[starts[:, None] + np.arange(header)]
    if not bool((head[:, _INT_SIZE:] == np.frombuffer(_PICKLE_PROTOCOL_2, np.uint8)).all()):
        raise ValueError("unexpected encoding of positions")
    # Each pickle body: after the header, up to its STOP.
    keep = np.ones(len(joined), dtype=np.bool_)
    keep[(starts[:, None] + np.arange(header)).ravel()] = False
    keep[(ends - 1)[joined[ends - 1] == _STOP]] = False
    lists = pickle.loads(_PICKLE_PROTOCOL_2 + b"](" + joined[keep].tobytes() + b"e.")
    if len(lists) != len(values):
        raise ValueError("unexpected encoding of positions")
    counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    deltas = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=int(counts.sum()))
    owners = np.repeat(np.arange(len(values), dtype=np.int64), counts)
    # Positions are running sums of the deltas, restarted at each value.
    running = np.concatenate(([0], np.cumsum(deltas)))
    firsts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    positions = running[1:] - np.repeat(running[firsts], counts)
    return owners, positions


_STOP = ord(".")
_PICKLE_PROTOCOL_2 = b"\x80\x02"


def _values_for(ids: IntArray, values: list[bytes], docs: IntArray) -> list[bytes]:
    """The values of the postings of ``docs``, which must all be in ``ids`` (a posting
    list's document numbers, ``values`` its values), in the order of ``docs``."""
    # Document numbers grow along a posting list, segment after segment.
    return [values[i] for i in np.searchsorted(ids, docs).tolist()]


def _is_text_field(searcher: Any, fieldname: str) -> bool:
    return _is_text_field_of(searcher.schema, fieldname)


def _is_text_field_of(schema: Any, fieldname: str) -> bool:
    return fieldname in schema and isinstance(schema[fieldname], _TEXT_FIELDS)
