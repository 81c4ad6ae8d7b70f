"""Which documents match a query, as a boolean array over document numbers.

Whoosh's ``docs_for_query`` steps a matcher tree document by document in Python; for a
common word at 100k records that is most of a query's time. For the queries people mostly
type (words combined with AND, OR, NOT) the same set is the boolean combination of each
word's posting list, and each posting list is read in one go. Everything else (phrases,
ranges, wildcards, ...) is still asked of ``docs_for_query``, one sub-query at a time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from itertools import accumulate
from pickle import loads
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh import fields
from whoosh import query as wq
from whoosh.codec.whoosh3 import W3LeafMatcher
from whoosh.matching.wrappers import FilterMatcher
from whoosh.system import _INT_SIZE

from pubsearch.facets import BoolArray, IntArray

FloatArray = npt.NDArray[np.float64]

# Fields whose terms are plain text, so that a Term query's text is the indexed term.
_TEXT_FIELDS = (fields.TEXT, fields.KEYWORD, fields.ID)


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
    if kind is wq.Not:
        return ~_mask(searcher, reader, q.query, size)
    if kind is wq.AndMaybe:
        return _mask(searcher, reader, q.a, size)
    if kind is wq.Require:
        return _mask(searcher, reader, q.a, size) & _mask(searcher, reader, q.b, size)
    mask = np.zeros(size, dtype=np.bool_)
    mask[np.fromiter(searcher.docs_for_query(q), dtype=np.int64)] = True
    return mask


def term_docs(reader: Any, fieldname: str, text: str) -> IntArray:
    """Document numbers in the posting list of ``fieldname:text``, deleted ones included."""
    return postings(reader, fieldname, text)[0]


# The posting lists read last, per thread: a search reads each word's list for its mask
# and again to score it; each block read costs an unpickling of its positions too.
_RECENT = threading.local()
_RECENT_SIZE = 16


def postings(reader: Any, fieldname: str, text: str) -> tuple[IntArray, FloatArray]:
    """Document numbers (deleted ones included) and weights of the posting list of
    ``fieldname:text``, read a block at a time: a Whoosh matcher yields one document per
    Python call, and filters out deleted documents one by one."""
    recent = _recent()
    key = (id(reader), fieldname, text)
    held = recent.get(key)
    if held is not None and held[0] is reader:
        return held[1], held[2]
    ids, weights = _read_postings(reader, fieldname, text)
    _remember(recent, key, (reader, ids, weights))
    return ids, weights


def _recent() -> OrderedDict[Any, tuple[Any, ...]]:
    recent: OrderedDict[Any, tuple[Any, ...]] | None = getattr(_RECENT, "lists", None)
    if recent is None:
        recent = _RECENT.lists = OrderedDict()
    return recent


def _remember(recent: OrderedDict[Any, tuple[Any, ...]], key: Any, value: tuple[Any, ...]) -> None:
    recent[key] = value
    if len(recent) > _RECENT_SIZE:
        recent.popitem(last=False)


def _read_postings(reader: Any, fieldname: str, text: str) -> tuple[IntArray, FloatArray]:
    ids: list[IntArray] = []
    weights: list[FloatArray] = []
    for segment, offset in reader.leaf_readers():
        if (fieldname, text) not in segment:
            continue
        matcher = segment.postings(fieldname, text)
        if isinstance(matcher, FilterMatcher):  # the segment's deletions: masked by callers
            matcher = matcher.child
        if isinstance(matcher, W3LeafMatcher):
            while matcher.is_active():
                matcher.id()
                matcher.weight()  # reads the block's document numbers and weights
                ids.append(np.asarray(matcher._ids, dtype=np.int64) + offset)
                weights.append(np.asarray(matcher._weights, dtype=np.float64))
                matcher._next_block()
        else:
            block_ids: list[int] = []
            block_weights: list[float] = []
            while matcher.is_active():
                block_ids.append(matcher.id())
                block_weights.append(matcher.weight())
                matcher.next()
            ids.append(np.asarray(block_ids, dtype=np.int64) + offset)
            weights.append(np.asarray(block_weights, dtype=np.float64))
    if not ids:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    return np.concatenate(ids), np.concatenate(weights)


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
    recent = _recent()
    key = (id(reader), fieldname, words, q.slop)
    held = recent.get(key)
    if held is not None and held[0] is reader:
        return held[1]  # type: ignore[no-any-return]
    found = _phrase_docs(reader, fieldname, words, q.slop)
    _remember(recent, key, (reader, found))
    return found


def _phrase_docs(reader: Any, fieldname: str, words: tuple[str, ...], slop: int) -> IntArray:
    if slop < 1 and len(words) > 1:
        return np.zeros(0, dtype=np.int64)  # no two words can be fewer than 1 apart
    candidates: IntArray | None = None
    for word in words:
        ids = postings(reader, fieldname, word)[0]
        candidates = ids if candidates is None else np.intersect1d(candidates, ids)
        if not len(candidates):
            return candidates
    assert candidates is not None
    if len(words) == 1:
        return candidates
    values = [_values_for(reader, fieldname, word, candidates) for word in words]
    found = []
    for i, docnum in enumerate(candidates.tolist()):
        if slop == 1:
            # Where the phrase could start, narrowed word by word.
            starts = set(_positions(values[0][i]))
            for k in range(1, len(words)):
                starts.intersection_update(p - k for p in _positions(values[k][i]))
                if not starts:
                    break
            matched = bool(starts)
        else:
            matched = _within_slop([list(_positions(v[i])) for v in values], slop)
        if matched:
            found.append(docnum)
    return np.asarray(found, dtype=np.int64)


def _within_slop(positions: list[list[int]], slop: int) -> bool:
    """Whether each word has a position 1 to ``slop`` after one of the previous word's
    positions reached so far, from the first word to the last."""
    ends = positions[0]
    for following in positions[1:]:
        ends = [p for p in following if any(1 <= p - e <= slop for e in ends)]
        if not ends:
            return False
    return True


def _positions(value: bytes) -> Iterator[int]:
    """formats.Positions.decode_positions, as an iterator."""
    if not value.endswith(b"."):
        value += b"."
    return accumulate(loads(value[_INT_SIZE:]))


def _values_for(reader: Any, fieldname: str, text: str, docs: IntArray) -> list[bytes]:
    """The posting values (encoded positions) of ``fieldname:text`` for ``docs``, which
    must all be in the posting list, in the order of ``docs``."""
    out: dict[int, bytes] = {}
    wanted = np.zeros(reader.doc_count_all(), dtype=np.bool_)
    wanted[docs] = True
    for segment, offset in reader.leaf_readers():
        if (fieldname, text) not in segment:
            continue
        matcher = segment.postings(fieldname, text)
        if isinstance(matcher, FilterMatcher):
            matcher = matcher.child
        if isinstance(matcher, W3LeafMatcher):
            while matcher.is_active():
                matcher.id()
                block = np.asarray(matcher._ids, dtype=np.int64) + offset
                hits = np.flatnonzero(wanted[block])
                if len(hits):
                    matcher._read_values()
                    block_values = matcher._values
                    for j in hits.tolist():
                        out[int(block[j])] = block_values[j]
                matcher._next_block()
        else:
            while matcher.is_active():
                out[matcher.id() + offset] = matcher.value()
                matcher.next()
    return [out[d] for d in docs.tolist()]


def _is_text_field(searcher: Any, fieldname: str) -> bool:
    schema = searcher.schema
    return fieldname in schema and isinstance(schema[fieldname], _TEXT_FIELDS)
