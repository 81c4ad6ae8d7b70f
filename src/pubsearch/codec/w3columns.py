"""Columns of the Whoosh 3 format read in one go: field lengths (one byte a document),
variable-length byte values (the facet columns) and numbers; and the reader of the stored
fields' column with its documents' offsets worked out by numpy."""

from __future__ import annotations

import pickle
import struct
from array import array
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh import columns
from whoosh.codec.whoosh3 import (
    LENGTHS_COLUMN,
    STORED_COLUMN,
    W3PerDocReader,
)
from whoosh.util.numeric import length_to_byte

from pubsearch.codec.w3version import fast_paths

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# The whoosh3 releases whose segment format, and readers' and writers' private attributes,
# this module and w3write were written against and tested with (pyproject.toml's pin).


def segment_length_bytes(segment: Any, fieldname: str) -> npt.NDArray[np.uint8] | None:
    """Each of ``segment``'s documents' length byte of ``fieldname`` (0: none), or None
    when the segment has no length column for it."""
    if not fast_paths():
        # A document at a time, as Whoosh's scorers read them: none at all where no
        # document has a length (Whoosh writes the column for the first one).
        count = segment.doc_count_all()
        found = np.fromiter(
            (length_to_byte(segment.doc_field_length(d, fieldname, 0)) for d in range(count)),
            dtype=np.uint8,
            count=count,
        )
        return found if found.any() else None
    column = f"_{fieldname}_len"  # the field's length column (whoosh/codec/whoosh3.py)
    perdoc = segment._perdoc
    if not perdoc.has_column(column):
        return None
    lengths = perdoc.column_reader(column, LENGTHS_COLUMN)
    return length_bytes(lengths, segment.doc_count_all())


def length_bytes(lengths: Any, count: int) -> npt.NDArray[np.uint8]:
    """A segment's length bytes, one per document (0 for none), from its length column.

    The column is one byte per document up to the last that has the field: read in one
    piece, not a file read per document (which each new searcher would pay)."""
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


def varbytes_values(creader: Any, start: int, stop: int, sep: bytes) -> bytes | None:
    """The values of documents ``start`` to ``stop`` in a ``VarBytesColumn`` (the facet
    columns), as stored, joined by ``sep``; None for a reader of any other column.

    Its values lie end to end, in document order, with an array of their lengths: read at
    once (Whoosh's reader reads a document at a time, most of what a facet table took)."""
    if not fast_paths() or type(creader) is not columns.VarBytesColumn.Reader:
        return None
    # Whoosh's writer leaves out the lengths of the segment's last documents when they
    # have no value (its reader then fails on them): none is no value.
    lengths = np.zeros(stop, dtype=np.int64)
    stored = np.asarray(creader._lengths, dtype=np.int64)[:stop]
    lengths[: len(stored)] = stored
    first = int(lengths[:start].sum())
    lengths = lengths[start:]
    total = int(lengths.sum())
    data = np.frombuffer(creader._dbfile.get(creader._basepos + first, total), dtype=np.uint8)
    # Each value shifted right by the separators before it.
    joined = np.full(total + len(lengths) - 1, ord(sep), dtype=np.uint8)
    joined[np.arange(total) + np.repeat(np.arange(len(lengths)), lengths)] = data
    return joined.tobytes()


def numeric_values(creader: Any, start: int, stop: int) -> IntArray:
    """A ``NumericColumn`` reader's stored values of documents ``start`` to ``stop``: the
    fixed-size big-endian numbers it wrote, read at once (the documents past the last it
    wrote have its default), or a document at a time from any other reader."""
    typecode = getattr(creader, "_typecode", "") if fast_paths() else ""
    if type(creader) is not columns.NumericColumn.Reader or typecode not in _INT_TYPECODES:
        return np.asarray([creader[d] for d in range(start, stop)], dtype=np.int64)
    size = creader._fixedlen
    # struct's standard sizes ("!"), which numpy's own letters do not all share ("L").
    dtype = np.dtype(f">{'i' if typecode.islower() else 'u'}{size}")
    values = np.full(stop - start, creader._default, dtype=np.int64)
    written = min(creader._count, stop)
    if written > start:
        data = creader._dbfile.get(creader._basepos + start * size, (written - start) * size)
        values[: written - start] = np.frombuffer(data, dtype=dtype)
    return values


_INT_TYPECODES = frozenset("bBhHiIlLqQ")


# -- stored fields -------------------------------------------------------------------------

_STORED = "_stored"  # the stored fields' column (whoosh/codec/whoosh3.py)


class _StoredBytes(columns.CompressedBytesColumn.Reader):  # type: ignore[misc]  # whoosh is Any
    """Whoosh's reader of the stored fields' bytes, but for where each document's start:
    added up by numpy from their lengths, where Whoosh's adds them up in a Python loop
    over every document of the segment when the reader is made (about 10 ms a segment of
    25,000 documents, paid by the first hit a process shows from it)."""

    def _read_offsets_and_lengths(self) -> None:
        dbfile, doccount = self._dbfile, self._doccount
        last = self._basepos + self._length - 1
        code = chr(dbfile.get_byte(last))
        if code == "X":  # offsets written with the lengths: Whoosh reads them as they are
            super()._read_offsets_and_lengths()
            return
        lengths = dbfile.get_array(last - struct.calcsize(code) * doccount, code, doccount)
        offsets = array("L")
        sums = np.zeros(doccount, dtype=f"u{offsets.itemsize}")
        if doccount > 1:
            np.cumsum(np.asarray(lengths, dtype=sums.dtype)[:-1], out=sums[1:])
        offsets.frombytes(sums.tobytes())
        self._offsets = offsets
        self._lengths = lengths


def prepare_stored_fields(reader: Any) -> None:
    """Give each segment of ``reader`` (an index reader) the stored fields' reader of
    :class:`_StoredBytes` before it reads a document's stored fields (nothing is read
    now). Whoosh's own reader is kept where the format is not the one this knows."""
    if not fast_paths() or type(STORED_COLUMN) is not columns.PickleColumn:
        return
    child = STORED_COLUMN._child
    if type(child) is not columns.CompressedBytesColumn:
        return
    for segment, _ in reader.leaf_readers():
        perdoc: Any = getattr(segment, "_perdoc", None)
        if (
            type(perdoc) is not W3PerDocReader
            or _STORED in perdoc._readers
            or not perdoc.has_column(_STORED)
        ):
            continue
        perdoc._readers[_STORED] = _LazyStored(perdoc, child._module)


class _LazyStored(columns.WrappedColumnReader):  # type: ignore[misc]  # whoosh is Any
    """The stored fields of one segment, unpickled as Whoosh's ``PickleColumn`` reader
    unpickles them, from a :class:`_StoredBytes` made when first asked."""

    def __init__(self, perdoc: Any, module: str) -> None:
        self._perdoc = perdoc
        self._module = module
        self._made: Any = None

    @property
    def _child(self) -> Any:
        if self._made is None:
            perdoc = self._perdoc
            if _STORED not in perdoc._colfiles:
                perdoc._colfiles[_STORED] = perdoc._get_column_file(_STORED)
            colfile, offset, length = perdoc._colfiles[_STORED]
            self._made = _StoredBytes(colfile, offset, length, perdoc._doccount, self._module)
        return self._made

    def __getitem__(self, docnum: int) -> Any:
        value = self._child[docnum]
        return pickle.loads(value) if value else None

    def __iter__(self) -> Any:
        for value in self._child:
            yield pickle.loads(value) if value else None
