"""Which documents match a query, as a boolean array over document numbers.

Whoosh's ``docs_for_query`` steps a matcher tree document by document in Python; for a
common word at 100k records that is most of a query's time. For the queries people mostly
type (words combined with AND, OR, NOT) the same set is the boolean combination of each
word's posting list, and each posting list is read in one go. Everything else (phrases,
ranges, wildcards, ...) is still asked of ``docs_for_query``, one sub-query at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from whoosh import fields
from whoosh import query as wq

from pubsearch.facets import BoolArray

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
        if (q.fieldname, q.text) in reader:
            ids = reader.postings(q.fieldname, q.text).all_ids()
            mask[np.fromiter(ids, dtype=np.int64)] = True
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


def _is_text_field(searcher: Any, fieldname: str) -> bool:
    schema = searcher.schema
    return fieldname in schema and isinstance(schema[fieldname], _TEXT_FIELDS)
