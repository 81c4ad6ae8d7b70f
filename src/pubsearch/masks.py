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
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh import fields
from whoosh import query as wq
from whoosh.codec.whoosh3 import W3LeafMatcher
from whoosh.matching.wrappers import FilterMatcher

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
    recent: OrderedDict[tuple[int, str, str], tuple[Any, IntArray, FloatArray]]
    recent = getattr(_RECENT, "lists", None) or OrderedDict()
    _RECENT.lists = recent
    key = (id(reader), fieldname, text)
    held = recent.get(key)
    if held is not None and held[0] is reader:
        recent.move_to_end(key)
        return held[1], held[2]
    ids, weights = _read_postings(reader, fieldname, text)
    recent[key] = (reader, ids, weights)
    if len(recent) > _RECENT_SIZE:
        recent.popitem(last=False)
    return ids, weights


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


def _is_text_field(searcher: Any, fieldname: str) -> bool:
    schema = searcher.schema
    return fieldname in schema and isinstance(schema[fieldname], _TEXT_FIELDS)
