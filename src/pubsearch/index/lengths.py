"""Each document's length of each field, as Whoosh's BM25F sees it: read through the codec's
length columns (:mod:`pubsearch.codec.w3columns`) once per index generation and field, and
shared by every thread that searches the generation (8 MB a field at 1,000,000 records).

A generation keeps one :class:`LengthTable`; a search takes its lengths as a
:class:`FieldLengths`, the table as read through the search's own reader (each thread has
a reader of its own, closed with its searcher: the table holds none).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pubsearch.codec import w3columns, w3format
from pubsearch.index.postings import FloatArray

# A field's lengths, by the field's name: what scoring takes (a FieldLengths is one).
Lengths = Callable[[str], FloatArray]


def field_lengths(reader: Any, fieldname: str) -> FloatArray:
    """Each document's length of ``fieldname``, as Whoosh's scorers see it (the length
    byte each segment stores, decoded)."""
    out = np.ones(reader.doc_count_all(), dtype=np.float64)  # Whoosh's default: 1
    for segment, offset in reader.leaf_readers():
        found = w3columns.segment_length_bytes(segment, fieldname)
        if found is not None:
            out[offset : offset + len(found)] = w3format.LENGTH_OF_BYTE[found]
    return out


class LengthTable:
    """The field lengths of one generation's documents, each field's read when first asked
    and kept, read-only, for every thread. Safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrays: dict[str, FloatArray] = {}

    def of(self, reader: Any, fieldname: str) -> FloatArray:
        """``fieldname``'s lengths, read through ``reader`` (one of this generation's) if
        not yet kept."""
        found = self._arrays.get(fieldname)
        if found is None:
            # Two threads may both read a field's lengths the first time: the same values,
            # and the first kept is the one both return.
            read = field_lengths(reader, fieldname)
            read.flags.writeable = False  # shared: no caller may change it
            with self._lock:
                found = self._arrays.setdefault(fieldname, read)
        return found


@dataclass(frozen=True)
class FieldLengths:
    """A generation's field lengths as one search reads them: :meth:`of` a field (or the
    object called with the field's name, as a :data:`Lengths`) is its read-only array."""

    table: LengthTable
    reader: Any

    def of(self, fieldname: str) -> FloatArray:
        return self.table.of(self.reader, fieldname)

    def __call__(self, fieldname: str) -> FloatArray:
        return self.table.of(self.reader, fieldname)
