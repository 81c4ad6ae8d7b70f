"""Writing many documents into a Whoosh index quickly: the index Whoosh's own writer
writes (tests/test_bulk.py compares them), with far fewer Python calls.

Whoosh's writer spends its time per token and per posting: a Token object per word, a
``Format.word_values`` pass per field, a tuple per posting in a pool it sorts whole, and a
``W3PostingsWriter.add_posting`` call per posting. Here:

* :class:`BulkWriter` is a ``SegmentWriter`` whose ``add_document`` takes a text field with
  a :class:`~pubsearch.analysis.FastAnalyzer` from word lists (:func:`_bulk_postings`: the
  analyzer's cached per-word results, a ``Counter``, positions encoded as
  ``Positions.encode`` would; the title and abstract words reused for ``content``); every
  other field takes Whoosh's own path;
* its :class:`TermPool` keeps each field's postings in flat arrays, sorted by term and
  docnum with numpy when the segment is written;
* :func:`_write_postings` writes W3 blocks and term infos a term at a time, from slices of
  those arrays (one pickle per block, as Whoosh), and the terms table in bulk. Blocks are
  pickled with a newer protocol than Whoosh's 2, which stores each position list as plain
  bytes instead of a call to ``_codecs.encode`` on a Latin-1 string: Whoosh's reader
  unpickles the very same tuples, from blocks a quarter smaller, several times faster;
* where ``pubsearch._speedups`` was built (see :mod:`pubsearch.speedups`), a document's
  postings in a text field (``doc_postings``) and a chunk of terms' blocks
  (``write_blocks``) are computed in C instead, giving the same postings and blocks;
* :func:`write_documents` spreads documents over worker processes, each writing its own
  segments (a new one every ``docs_per_segment`` documents, which bounds its memory), and
  commits them all as one generation of the index. Small inputs are written in-process.
"""

from __future__ import annotations

import ctypes
import gc
import hashlib
import itertools
import multiprocessing
import multiprocessing.connection
import os
import pickle
import queue
import re
import struct
import sys
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy
from isal import isal_zlib
from whoosh import columns as whoosh_columns
from whoosh import fields as whoosh_fields
from whoosh import formats
from whoosh.analysis import (
    IDTokenizer,
    LowercaseFilter,
    RegexTokenizer,
    StripFilter,
)
from whoosh.analysis.analyzers import CompositeAnalyzer
from whoosh.codec import whoosh3
from whoosh.filedb import filetables
from whoosh.reading import SegmentReader
from whoosh.util.numeric import byte_to_length, length_to_byte
from whoosh.writing import SegmentWriter

from pubsearch import gcpause, speedups, storage
from pubsearch.analysis import FastAnalyzer, IndexWords, Vocabulary
from pubsearch.errors import WorkerError
from pubsearch.schema import CONTENT_PARTS, DEFAULT_FIELD

Doc = dict[str, Any]

# Below this many documents a build stays in one process: starting the workers costs
# about 1 s of CPU, which 2,000 records take to write. (While the first of them are read,
# the other CPU waits: the lower the threshold, the sooner the workers start.)
PARALLEL_THRESHOLD = 2_000
# Documents per segment a worker writes before starting another (bounds its memory).
DOCS_PER_SEGMENT = 30_000
BATCH_SIZE = 250
# How long the parent waits for a worker's result once it has sent everything.
RESULT_TIMEOUT_SECONDS = 600.0


class _FieldPostings:
    """One field's postings in the order they were added, in compact arrays: each posting's
    term number, docnum, weight, and the size of its value; the values end to end."""

    __slots__ = (
        "_fieldmap",
        "_mapped",
        "int_weights",
        "numbers",
        "run_counts",
        "run_docs",
        "sizes",
        "termnums",
        "values",
        "weights",
    )

    def __init__(self) -> None:
        # Term -> number, given in order of first appearance (the dict keeps that order, so
        # ``list(numbers)`` is the terms by number). A term is its bytes, or its text when
        # the bulk path adds it (a stem from the analyzer's cache: its hash is kept, and
        # it is encoded once, when written); both forms of a term get the same rank.
        self.numbers: _Numbers = _Numbers()
        self.termnums = array("I")
        # The docnums in runs (a document's postings in a field are added together).
        self.run_docs = array("I")
        self.run_counts = array("I")
        self.weights = array("d")
        self.sizes = array("I")
        self.values = bytearray()
        # Whether every weight given was an int: Whoosh keeps a block's highest weight as
        # given, which pickles differently for 1 and 1.0 (spelling words are posted as 1).
        self.int_weights = True
        # A vocabulary's word numbers -> term number + 1 (see fieldmap).
        self._fieldmap = bytearray()
        self._mapped: tuple[Vocabulary, int] | None = None

    def fieldmap(self, vocabulary: Vocabulary) -> bytearray:
        """The map from ``vocabulary``'s numbers to this field's term numbers, plus one (0:
        not known yet) that ``_speedups.doc_postings_ids`` reads and fills; started anew
        for another vocabulary, or the same one numbered anew."""
        held = self._mapped
        if held is None or held[0] is not vocabulary or held[1] != vocabulary.generation:
            self._fieldmap = bytearray()
            self._mapped = (vocabulary, vocabulary.generation)
        return self._fieldmap

    def add_many(
        self,
        docnum: int,
        texts: list[bytes] | list[str],
        weights: list[float],
        values: list[bytes],
        int_weights: bool,
    ) -> None:
        self.termnums.extend(map(self.numbers.__getitem__, texts))
        self.run_docs.append(docnum)
        self.run_counts.append(len(texts))
        self.weights.fromlist(weights)
        self.sizes.extend(map(len, values))
        self.values += b"".join(values)
        if not int_weights:
            self.int_weights = False

    def add_encoded(self, docnum: int, encoded: tuple[Any, ...]) -> None:
        """Add one document's postings as ``_speedups.doc_postings`` gave them: the terms
        new to the field (numbered from ``base`` on, in order), and the postings' term
        numbers, weights, value sizes and values, packed."""
        base, new_terms, termnums, weights, sizes, values, count = encoded[:7]
        numbers = self.numbers
        if len(numbers) != base:
            raise RuntimeError("terms were numbered out of step with the field")
        if new_terms:
            numbers.update(zip(new_terms, range(base, base + len(new_terms)), strict=True))
        self.termnums.frombytes(termnums)
        self.run_docs.append(docnum)
        self.run_counts.append(count)
        self.weights.frombytes(weights)
        self.sizes.frombytes(sizes)
        self.values += values
        self.int_weights = False

    def __len__(self) -> int:
        return len(self.termnums)

    def docnums(self) -> numpy.ndarray[Any, Any]:
        """Each posting's docnum."""
        return numpy.repeat(
            numpy.frombuffer(self.run_docs, dtype=numpy.uint32),
            numpy.frombuffer(self.run_counts, dtype=numpy.uint32),
        )


class _Numbers(dict[bytes | str, int]):
    """Term -> number, the next number (the count so far) for a term not seen yet."""

    def __missing__(self, term: bytes | str) -> int:
        number = self[term] = len(self)
        return number


class TermPool:
    """Postings kept in memory, grouped by field, sorted by term and docnum when written.

    Documents are added in docnum order, so the postings need only a stable sort by term
    (done with numpy when the segment is written), which also puts any posting that
    arrives out of order (as when merging segments) in its place. About 20 bytes a
    posting plus its value, where Whoosh's pool keeps a tuple per posting.
    """

    def __init__(self) -> None:
        self._fields: dict[str, _FieldPostings] = {}

    @property
    def fieldnames(self) -> set[str]:
        return set(self._fields)

    def _field(self, fieldname: str) -> _FieldPostings:
        held = self._fields.get(fieldname)
        if held is None:
            held = self._fields[fieldname] = _FieldPostings()
        return held

    def add(self, item: tuple[str, bytes, int, float, bytes | None]) -> None:
        """Add one ``(fieldname, text, docnum, weight, value)`` posting (Whoosh's API)."""
        fieldname, text, docnum, weight, value = item
        self._field(fieldname).add_many(
            docnum, [text], [weight], [value or b""], type(weight) is int
        )

    def add_many(
        self,
        fieldname: str,
        docnum: int,
        texts: list[bytes] | list[str],
        weights: list[float],
        values: list[bytes],
        int_weights: bool = False,
    ) -> None:
        """Add one document's postings in ``fieldname``: ``texts[i]`` with ``weights[i]``
        and ``values[i]``."""
        if texts:
            self._field(fieldname).add_many(docnum, texts, weights, values, int_weights)

    def add_encoded(self, fieldname: str, docnum: int, encoded: tuple[Any, ...]) -> None:
        """Add one document's postings in ``fieldname`` from ``_speedups.doc_postings``
        (none: nothing to add)."""
        count = encoded[6]
        if count:
            self._field(fieldname).add_encoded(docnum, encoded)

    def numbers(self, fieldname: str) -> _Numbers:
        """``fieldname``'s term numbers (what ``_speedups.doc_postings`` looks terms up in)."""
        return self._field(fieldname).numbers

    def fieldmap(self, fieldname: str, vocabulary: Vocabulary) -> bytearray:
        """``fieldname``'s map from ``vocabulary``'s numbers to its term numbers (see
        :meth:`_FieldPostings.fieldmap`)."""
        return self._field(fieldname).fieldmap(vocabulary)

    def sorted_fields(self) -> list[tuple[str, _FieldPostings]]:
        return sorted(self._fields.items())

    def drop(self, fieldname: str) -> None:
        self._fields.pop(fieldname, None)

    def iter_postings(self) -> Iterator[tuple[str, bytes, int, float, bytes]]:
        """Every posting as ``(fieldname, text, docnum, weight, value)``, sorted by field,
        term and docnum (what Whoosh's ``add_postings`` takes)."""
        for fieldname, held in self.sorted_fields():
            texts, sort_order, bounds = _sort_postings(held)
            order = sort_order.tolist()
            docnums = held.docnums().tolist()
            weights = held.weights
            values = bytes(held.values)
            ends = list(itertools.accumulate(held.sizes, initial=0))
            start = 0
            for t, end in enumerate(bounds):
                text = texts[t]
                for i in order[start:end]:
                    yield fieldname, text, docnums[i], weights[i], values[ends[i] : ends[i + 1]]
                start = end

    def save(self) -> None:
        """Nothing to spill: segments are kept small enough instead."""

    def cleanup(self) -> None:
        self._fields.clear()


def _sort_postings(held: _FieldPostings) -> tuple[list[bytes], numpy.ndarray[Any, Any], list[int]]:
    """``held``'s terms in order, the order of its postings (by term, then docnum, else as
    added), and where each term's postings end in that order."""
    by_number: list[bytes] = [t.encode("utf-8") if isinstance(t, str) else t for t in held.numbers]
    texts = sorted(set(by_number))
    rank_of = {text: r for r, text in enumerate(texts)}
    rank = numpy.fromiter(map(rank_of.__getitem__, by_number), numpy.int64, len(by_number))
    ranks = rank[numpy.frombuffer(held.termnums, dtype=numpy.uint32)]
    run_docs = numpy.frombuffer(held.run_docs, dtype=numpy.uint32)
    if bool((run_docs[1:] >= run_docs[:-1]).all()):
        # Added in docnum order (as documents are): a stable sort by term is enough.
        order = _stable_order(ranks)
    else:
        order = numpy.lexsort((held.docnums(), ranks))
    bounds = numpy.cumsum(numpy.bincount(ranks, minlength=len(texts)))
    return texts, order, bounds.tolist()


def _stable_order(keys: numpy.ndarray[Any, Any]) -> numpy.ndarray[Any, Any]:
    """``numpy.argsort(keys, kind="stable")`` for keys in ``0 .. 2**32 - 1``, as a radix
    sort on 16-bit halves (numpy sorts 16-bit keys by radix: 2.5x faster than its merge
    sort on the millions of postings of a segment's text fields)."""
    if keys.size == 0 or int(keys.max()) < 1 << 16:
        return numpy.argsort(keys.astype(numpy.uint16), kind="stable")
    low = (keys & 0xFFFF).astype(numpy.uint16)
    order = numpy.argsort(low, kind="stable")
    high = (keys >> 16).astype(numpy.uint16)[order]
    result: numpy.ndarray[Any, Any] = order[numpy.argsort(high, kind="stable")]
    return result


# Length bytes (Whoosh's ``length_to_byte``) of the lengths most fields have, looked up.
_LENGTH_TABLE_SIZE = 4096
_LENGTH_BYTES = bytes(map(length_to_byte, range(_LENGTH_TABLE_SIZE)))


class _Lengths:
    """Each document's field lengths as the segment stores them (one byte), and each
    field's total, kept in memory while the segment is written: writing the postings need
    not read them back from the segment's files one posting at a time, and the length
    columns are written whole (:meth:`BulkWriter._write_lengths`)."""

    def __init__(self) -> None:
        self._bytes: dict[str, bytearray] = {}
        self.totals: dict[str, int] = {}

    def add(self, fieldname: str, docnum: int, length: int) -> None:
        column = self._bytes.get(fieldname)
        if column is None:
            column = self._bytes[fieldname] = bytearray()
            self.totals[fieldname] = 0
        self.totals[fieldname] += length
        lbyte = _LENGTH_BYTES[length] if length < _LENGTH_TABLE_SIZE else length_to_byte(length)
        size = len(column)
        if size == docnum:  # documents come in order
            column.append(lbyte)
            return
        if size < docnum:
            column.extend(bytes(docnum - size))
            column.append(lbyte)
        else:
            column[docnum] = lbyte

    def column(self, fieldname: str) -> bytearray | None:
        """The length bytes of ``fieldname`` by docnum (missing at the end: 0), if any."""
        return self._bytes.get(fieldname)

    def columns(self) -> Iterator[tuple[str, bytearray]]:
        return iter(self._bytes.items())

    def doc_field_length_reader(self, fieldname: str) -> Callable[[int], int | None]:
        # What Whoosh's W3PerDocReader.doc_field_length_reader returns, from memory.
        column = self._bytes.get(fieldname, bytearray())
        size = len(column)

        def get(docnum: int) -> int | None:
            lbyte = column[docnum] if docnum < size else 0
            return byte_to_length(lbyte) if lbyte else None

        return get


class _TellingFile:
    """A file being written that knows its position without asking the system: Whoosh
    asks ``tell()`` for every term written, and each ask is a system call."""

    def __init__(self, file: Any) -> None:
        self._file = file
        self._pos: int = file.tell()

    def write(self, data: Any) -> int:
        written: int = self._file.write(data)
        self._pos += written
        return written

    def tell(self) -> int:
        return self._pos

    def seek(self, *args: Any) -> int:
        self._pos = int(self._file.seek(*args))
        return self._pos

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


# -- writing a segment's postings ------------------------------------------------------------

_TERMINFO = struct.Struct("!BfIBBfII")  # W3TermInfo's fixed part
_KEY_VALUE_LENGTHS = struct.Struct("!ii")  # before each key and value in the terms table
_HASH_POINTER = struct.Struct("!Iq")  # a slot of the terms table's hash tables
# Postings written to the file in one go (bounds the memory the pending bytes take).
_WRITE_EVERY = 1 << 22


def _can_write_fast(fieldwriter: Any) -> bool:
    """Whether :func:`_write_postings` writes what ``fieldwriter`` would: Whoosh 3's codec
    with nothing inlined in the terms table and MD5 hashes."""
    codec: Any = getattr(fieldwriter, "_codec", None)
    return (
        type(fieldwriter) is whoosh3.W3FieldWriter
        and type(codec) is whoosh3.W3Codec
        and codec._inlinelimit <= 1
        and codec._blocklimit >= 1
        and type(fieldwriter._tindex) is filetables.OrderedHashWriter
        and fieldwriter._tindex.hashfn is filetables.md5_hash
        and not fieldwriter._fieldmap
    )


def _write_postings(
    fieldwriter: Any, schema: Any, pool: TermPool, lengths: _Lengths | None
) -> None:
    """Write ``pool``'s postings through ``fieldwriter`` (a ``W3FieldWriter``) as its
    ``add_postings`` would, with a few Python calls per term instead of several per
    posting: the same blocks (ids delta-encoded, weights and values minified, pickled,
    compressed past the same size; see :data:`_BLOCK_PROTOCOL`), the same block and term
    statistics, the same terms table."""
    terms = _TermsTable(fieldwriter._tindex)
    postfile = fieldwriter._postfile
    fieldmap = fieldwriter._fieldmap
    pos: int = postfile.tell()
    for fieldname, held in pool.sorted_fields():
        pool.drop(fieldname)  # its arrays go once written
        if not len(held):
            continue
        fieldid = fieldmap[fieldname] = len(fieldmap)
        column = lengths.column(fieldname) if lengths is not None else None
        blocks = _FieldBlocks(fieldwriter._codec, schema[fieldname].format, held, column)
        keyprefix = _USHORT.pack(fieldid)
        for texts, posts, infos in blocks.chunks(pos):
            postfile.write(posts)
            pos += len(posts)
            terms.add(keyprefix, texts, infos)
    terms.finish()
    if postfile.tell() != pos:
        raise RuntimeError("postings written out of step with the file")


class _TermsTable:
    """Rows added to a ``W3FieldWriter``'s terms table (an ``OrderedHashWriter``) as its
    ``add`` adds them, many at a time, and its hash tables written a table at a time."""

    def __init__(self, tindex: Any) -> None:
        self._tindex = tindex
        self._pos: int = tindex.dbfile.tell()
        self._lastkey: bytes = tindex.lastkey

    def add(self, keyprefix: bytes, texts: list[bytes], infos: list[bytes]) -> None:
        tindex = self._tindex
        index_append = tindex.index.append
        buckets = tindex.buckets
        md5 = hashlib.md5
        pack_lengths = _KEY_VALUE_LENGTHS.pack
        lastkey = self._lastkey
        tpos = self._pos
        rows: list[bytes] = []
        for text, info in zip(texts, infos, strict=True):
            key = keyprefix + text
            if key <= lastkey:
                raise ValueError(f"Keys must increase: {lastkey!r}..{key!r}")
            lastkey = key
            index_append(tpos)
            # filetables.md5_hash: the digest's low 32 bits
            h = int.from_bytes(md5(key, usedforsecurity=False).digest()[-4:], "big")
            buckets[h & 255].append((h, tpos))
            rows.append(pack_lengths(len(key), len(info)))
            rows.append(key)
            rows.append(info)
            tpos += 8 + len(key) + len(info)
        tindex.dbfile.write(b"".join(rows))
        self._lastkey = lastkey
        self._pos = tpos

    def finish(self) -> None:
        tindex = self._tindex
        tindex.lastkey = self._lastkey
        if tindex.dbfile.tell() != self._pos:
            raise RuntimeError("terms written out of step with the file")
        tindex._write_hashes = lambda: _write_hashes(tindex)


# Postings a chunk of terms spans (bounds the Python lists made from the numpy arrays).
_CHUNK_POSTINGS = 1 << 17
# The pickle protocol of a block's data: Whoosh's reader unpickles any. Whoosh writes
# protocol 2, where each bytes value (an encoded position list) becomes a call to
# ``_codecs.encode`` on a Latin-1 string, costly to write and to read. Measured on
# 30,000 arXiv records: index 155 -> 117 MB, indexing CPU 1.71-1.76 -> 1.39-1.48 ms per
# record; unpickling a 128-posting block 106 -> 16 us. A block of one posting (most
# terms) takes protocol 3, whose short pickles have no 9-byte frame header.
_BLOCK_PROTOCOL = 5
_SINGLE_PROTOCOL = 3
# Pickled block infos and single-posting blocks remembered, per field, for reuse (a
# document's rare terms share them).
_BLOCK_CACHE_LIMIT = 1 << 16


class _FieldBlocks:
    """One field's postings, sorted, turned into W3 blocks (``W3PostingsWriter``) and term
    infos (``W3TermInfo.to_bytes``) a chunk of terms at a time."""

    def __init__(self, codec: Any, fmt: Any, held: _FieldPostings, column: Any) -> None:
        self.blocklimit: int = codec._blocklimit
        self.compression: int = codec._compression
        self.fixed: int | None = fmt.fixed_value_size()
        self.int_weights = held.int_weights
        self.texts, order, self.bounds = _sort_postings(held)
        # Postings are taken in sorted order a chunk at a time (``order``'s slice), which
        # keeps the memory this takes to a few arrays of the field's size.
        self.order = order.astype(numpy.int32) if len(order) < 2**31 else order
        del order
        self.docnums = held.docnums()
        self.weights = numpy.frombuffer(held.weights, dtype=numpy.float64)
        sizes = numpy.frombuffer(held.sizes, dtype=numpy.uint32)
        self.has_empty = bool((sizes == 0).any())
        self.values = bytes(held.values)
        held.values = bytearray()
        fixed = self.fixed
        self.fixed_values: bytes | None = None
        self.value_ends: numpy.ndarray[Any, Any] | None = None
        if fixed is not None and fixed > 0 and not self.has_empty and bool((sizes == fixed).all()):
            self.fixed_values = (
                numpy.frombuffer(self.values, dtype=numpy.uint8)
                .reshape(-1, fixed)[self.order]
                .tobytes()
            )
            self.values = b""
        elif fixed != 0:
            self.value_ends = numpy.cumsum(sizes, dtype=numpy.int64)
        self.sizes = sizes
        self.lengths: numpy.ndarray[Any, Any] | None = None
        if column:
            top = max(len(column), int(self.docnums.max()) + 1)
            self.lengths = numpy.zeros(top, dtype=numpy.uint8)
            self.lengths[: len(column)] = numpy.frombuffer(column, dtype=numpy.uint8)
        self.info_cache: dict[tuple[Any, ...], bytes] = {}
        self.data_cache: dict[tuple[Any, ...], bytes] = {}

    def chunks(self, pos: int) -> Iterator[tuple[list[bytes], bytes, list[bytes]]]:
        """For each chunk of terms, from postings file offset ``pos`` on: their texts, their
        postings' bytes, and their term infos."""
        bounds = self.bounds
        first = 0
        while first < len(bounds):
            a = bounds[first - 1] if first else 0
            last = first
            while last + 1 < len(bounds) and bounds[last + 1] - a <= _CHUNK_POSTINGS:
                last += 1
            posts, infos = self._chunk(first, last + 1, a, pos)
            yield self.texts[first : last + 1], posts, infos
            pos += len(posts)
            first = last + 1

    def _chunk(self, first: int, stop: int, a0: int, pos: int) -> tuple[bytes, list[bytes]]:
        """Terms ``first`` to ``stop`` (their postings from ``a0`` on) written from ``pos``."""
        compiled = speedups.active()
        if compiled is not None:
            return self._chunk_in_c(compiled, first, stop, a0, pos)
        b0 = self.bounds[stop - 1]
        order = self.order[a0:b0]
        sorted_docs = self.docnums[order].astype(numpy.int64)
        docs = sorted_docs.tolist()
        deltas = numpy.diff(sorted_docs, prepend=0).tolist()
        raw_weights = self.weights[order]
        weights = raw_weights.tolist()
        # What Whoosh's block holds: each weight kept in an array("f").
        weights32 = raw_weights.astype(numpy.float32).astype(numpy.float64).tolist()
        lbytes = self.lengths[sorted_docs].tolist() if self.lengths is not None else None
        fixed = self.fixed
        fixed_values = self.fixed_values
        if fixed_values is not None:
            fixed_values = fixed_values[a0 * fixed : b0 * fixed]  # type: ignore[operator]
        values = self.values
        starts: list[int] = []
        ends: list[int] = []
        if self.value_ends is not None:
            chunk_ends = self.value_ends[order]
            ends = chunk_ends.tolist()
            starts = (chunk_ends - self.sizes[order]).tolist()
        has_empty = self.has_empty
        tuple_values = fixed is None or fixed < 0
        cache_data = fixed is not None and fixed >= 0  # small values, repeated in a document
        int_weights = self.int_weights
        blocklimit = self.blocklimit
        compression = self.compression
        min_compressed: int = whoosh3.COMPRESSION_MIN_SIZE
        magic: bytes = whoosh3.WHOOSH3_HEADER_MAGIC
        dumps = pickle.dumps
        compress = _deflate
        pack_size = _INT.pack
        pack_terminfo = _TERMINFO.pack
        pack_extent = _EXTENT.pack
        info_cache = self.info_cache
        data_cache = self.data_cache
        if len(info_cache) > _BLOCK_CACHE_LIMIT:
            info_cache.clear()
        if len(data_cache) > _BLOCK_CACHE_LIMIT:
            data_cache.clear()
        posts: list[bytes] = []
        infos: list[bytes] = []
        a = 0
        for b in self.bounds[first:stop]:
            b -= a0
            termstart = pos
            if b - a == 1:
                # One posting (most terms): one block, its statistics the posting's.
                doc = docs[a]
                w32 = weights32[a]
                mini_weights: Any = None if w32 == 1.0 else w32
                if fixed == 0:
                    mini_values: Any = None
                elif fixed_values is not None:
                    mini_values = fixed_values[a * fixed : b * fixed]  # type: ignore[operator]
                else:
                    value = values[starts[a] : ends[a]]
                    if tuple_values:
                        mini_values = (value,) if value or not has_empty else ()
                    else:
                        mini_values = value
                key = (doc, mini_weights, mini_values)
                data = data_cache.get(key) if cache_data else None
                if data is None:
                    data = dumps(((doc,), mini_weights, mini_values), _SINGLE_PROTOCOL)
                    if compression and len(data) >= min_compressed:
                        data = compress(data, compression)
                    if cache_data:
                        data_cache[key] = data
                comp = compression if data[:1] != b"\x80" else 0
                weight = weights[a]
                block_max: Any = (int(weight) if int_weights else weight) if weight > 0 else 0
                length_byte = lbytes[a] if lbytes is not None else 0
                info_key = (doc, block_max, comp, length_byte)
                info = info_cache.get(info_key)
                if info is None:
                    info = info_cache[info_key] = dumps(
                        (1, doc, block_max, comp, length_byte, length_byte), 2
                    )
                size = len(info) + len(data)
                posts += (magic, pack_size(-size), info, data)
                pos += 8 + size
                infos.append(
                    pack_terminfo(0, w32, 1, length_byte, length_byte, block_max, doc, doc)
                    + pack_extent(termstart, 8 + size)
                )
                a = b
                continue
            posts.append(magic)
            pos += 4
            total_weight: float = 0
            max_weight: Any = 0
            min_len = 0
            max_len = 0
            for s in range(a, b, blocklimit):
                e = min(s + blocklimit, b)
                n = e - s
                ids = (docs[s], *deltas[s + 1 : e])
                ws = weights32[s:e]
                if ws.count(1.0) == n:
                    mini_weights = None
                elif ws.count(ws[0]) == n:
                    mini_weights = ws[0]
                else:
                    mini_weights = tuple(ws)
                if fixed == 0:
                    mini_values = None
                elif fixed_values is not None:
                    mini_values = fixed_values[s * fixed : e * fixed]  # type: ignore[operator]
                else:
                    found: Iterable[bytes] = map(
                        values.__getitem__, map(slice, starts[s:e], ends[s:e])
                    )
                    if has_empty:
                        found = filter(None, found)
                    mini_values = tuple(found) if tuple_values else b"".join(found)
                data = dumps((ids, mini_weights, mini_values), _BLOCK_PROTOCOL)
                comp = compression if len(data) >= min_compressed else 0
                if comp:
                    data = compress(data, comp)
                block_max = max(weights[s:e])
                if not block_max > 0:
                    block_max = 0
                elif int_weights:
                    block_max = int(block_max)
                if lbytes is not None:
                    lb = lbytes[s:e]
                    block_maxlen = max(lb)
                    block_minlen = min(lb)
                    if not block_minlen and block_maxlen:
                        block_minlen = min(x for x in lb if x)
                else:
                    block_minlen = block_maxlen = 0
                info = dumps((n, docs[e - 1], block_max, comp, block_minlen, block_maxlen), 2)
                size = len(info) + len(data)
                posts += (pack_size(-size if e == b else size), info, data)
                pos += 4 + size
                total_weight += sum(ws)
                if block_max > max_weight:
                    max_weight = block_max
                if block_maxlen:
                    if not min_len or block_minlen < min_len:
                        min_len = block_minlen
                    if block_maxlen > max_len:
                        max_len = block_maxlen
            infos.append(
                pack_terminfo(
                    0, total_weight, b - a, min_len, max_len, max_weight, docs[a], docs[b - 1]
                )
                + pack_extent(termstart, pos - termstart)
            )
            a = b
        return b"".join(posts), infos

    def _chunk_in_c(
        self, compiled: Any, first: int, stop: int, a0: int, pos: int
    ) -> tuple[bytes, list[bytes]]:
        """:meth:`_chunk` by ``pubsearch._speedups.write_blocks``: the same blocks and term
        infos, once unpickled (its pickles have no memo and no frame)."""
        b0 = self.bounds[stop - 1]
        order = self.order[a0:b0]
        docs = self.docnums[order]
        fixed = self.fixed
        values: bytes | None = None
        starts = ends = fixed_values = None
        if fixed == 0:
            mode = _VALUES_NONE
        elif self.fixed_values is not None:
            mode = _VALUES_FIXED
            fixed_values = self.fixed_values[a0 * fixed : b0 * fixed]  # type: ignore[operator]
        else:
            mode = _VALUES_TUPLE if fixed is None or fixed < 0 else _VALUES_JOINED
            assert self.value_ends is not None
            values = self.values
            ends = self.value_ends[order]
            starts = ends - self.sizes[order]
        posts, infos = compiled.write_blocks(
            bounds=numpy.asarray(self.bounds[first:stop], dtype=numpy.int64) - a0,
            docs=docs.astype(numpy.int64),
            weights=self.weights[order],
            lengths=self.lengths[docs] if self.lengths is not None else None,
            values=values,
            starts=starts,
            ends=ends,
            fixed_values=fixed_values,
            fixed=fixed or 0,
            mode=mode,
            has_empty=self.has_empty,
            int_weights=self.int_weights,
            blocklimit=self.blocklimit,
            compression=self.compression,
            min_compressed=whoosh3.COMPRESSION_MIN_SIZE,
            magic=whoosh3.WHOOSH3_HEADER_MAGIC,
            pos=pos,
            compress=_deflate,
        )
        return posts, infos


# How _speedups.write_blocks is to write a block's values (see _FieldBlocks._chunk).
_VALUES_NONE, _VALUES_FIXED, _VALUES_TUPLE, _VALUES_JOINED = range(4)


def _write_hashes(tindex: Any) -> None:
    """``HashWriter._write_hashes``: the same tables, written one per call, not one slot."""
    dbfile = tindex.dbfile
    null = (0, 0)
    for entries in tindex.buckets:
        tablepos = dbfile.tell()
        numslots = 2 * len(entries)
        tindex.directory.append((tablepos, numslots))
        table: list[tuple[int, int]] = [null] * numslots
        for entry in entries:
            slot = (entry[0] >> 8) % numslots
            while table[slot] != null:
                slot = (slot + 1) % numslots
            table[slot] = entry
        dbfile.write(b"".join(itertools.starmap(_HASH_POINTER.pack, table)))


_INT = struct.Struct("!i")
_USHORT = struct.Struct("!H")
_EXTENT = struct.Struct("!qi")  # a term's offset and length in the postings file


# -- analysing a document's text fields in bulk ---------------------------------------------


@dataclass(frozen=True)
class _BulkField:
    """A text field whose postings :func:`_bulk_postings` computes from word lists."""

    analyzer: FastAnalyzer
    key: tuple[int, bool]  # the analyzer's index_key
    positions: bool  # the format stores positions (else frequencies)
    field_boost: float  # the format's
    scorable: bool
    by_lines: bool  # words never span a line: a text can be analysed line by line


def _bulk_fields(schema: Any) -> dict[str, _BulkField]:
    """The fields of ``schema`` that :func:`_bulk_postings` can index: plain ``TEXT`` with a
    bulk-capable :class:`FastAnalyzer`, storing positions or frequencies, no vectors."""
    found: dict[str, _BulkField] = {}
    for name, field in schema.items():
        analyzer = getattr(field, "analyzer", None)
        fmt: Any = getattr(field, "format", None)
        if (
            type(field) is whoosh_fields.TEXT
            and field.indexed
            and not field.vector
            and isinstance(analyzer, FastAnalyzer)
            and type(fmt) in (formats.Positions, formats.Frequency)
        ):
            key = analyzer.index_key()
            if key is not None:
                found[name] = _BulkField(
                    analyzer=analyzer,
                    key=key,
                    positions=type(fmt) is formats.Positions,
                    field_boost=float(fmt.field_boost),
                    scorable=bool(field.scorable),
                    by_lines=analyzer.splits_at_spaces(),
                )
    return found


# Documents whose derived postings are made together (see _add_derived_postings).
_DERIVED_DOCS_AT_ONCE = 4096


@dataclass(frozen=True)
class _Derivation:
    """A frequency field whose text is other fields' texts, each given some times, one a
    line (``content``: the title three times, then the abstract; see
    :func:`pubsearch.schema.content_text`): its postings are made when the segment is
    written, from those fields' (a term's frequency is the sum of its frequencies there,
    each times its count), rather than by looking every word up once more."""

    field: str
    parts: tuple[tuple[str, int], ...]  # (field, times), in the order of the text

    def applies(self, fields: dict[str, Any]) -> bool:
        """Whether the document of ``fields`` has the field made of its parts' texts, as
        strings, with no boost (else its postings are made as any field's)."""
        if "_boost" in fields or f"_{self.field}_boost" in fields:
            return False
        texts: list[str] = []
        for name, times in self.parts:
            value = fields.get(name)
            if not isinstance(value, str) or f"_{name}_boost" in fields:
                return False
            texts += [value] * times
        value = fields.get(self.field)
        return isinstance(value, str) and value == "\n".join(texts)


def _derivation(bulk_fields: dict[str, _BulkField]) -> _Derivation | None:
    """How ``content`` is derived, when the schema's fields allow it: it and its parts
    analysed alike and unboosted, it keeping frequencies and its parts positions (whose
    weights are then frequencies)."""
    target = bulk_fields.get(DEFAULT_FIELD)
    specs = [bulk_fields.get(name) for name, _ in CONTENT_PARTS]
    if target is None or target.positions or not target.by_lines or target.field_boost != 1:
        return None
    for spec in specs:
        if spec is None or spec.key != target.key or spec.field_boost != 1:
            return None
    return _Derivation(DEFAULT_FIELD, CONTENT_PARTS)


class _PositionsValue(dict[int, bytes]):
    """A position -> ``Positions.encode([position])``: the value of a word seen once."""

    def __missing__(self, pos: int) -> bytes:
        value = self[pos] = _encode_positions([pos])
        return value


class _FrequencyValue(dict[int, bytes]):
    """A frequency -> its value in a ``Frequency`` field (``pack_uint``)."""

    def __missing__(self, freq: int) -> bytes:
        value = self[freq] = _UINT.pack(freq)
        return value


class _PositionsValues(dict[tuple[int, ...], bytes]):
    """Positions -> ``Positions.encode(positions)``, for words seen a few times (a pair of
    positions recurs across documents)."""

    def __missing__(self, positions: tuple[int, ...]) -> bytes:
        value = _encode_positions(positions)
        if len(positions) <= 3:
            if len(self) >= _VALUES_CACHE_LIMIT:
                self.clear()
            self[positions] = value
        return value


_VALUES_CACHE_LIMIT = 1 << 18


def _encode_positions(positions: Iterable[int]) -> bytes:
    # formats.Positions.encode
    deltas = []
    base = 0
    for pos in positions:
        deltas.append(pos - base)
        base = pos
    return _UINT.pack(len(deltas)) + pickle.dumps(deltas, 2)


_UINT = struct.Struct("!I")
_SINGLE_POSITION = _PositionsValue()
_POSITIONS = _PositionsValues()
_FREQUENCY = _FrequencyValue()

_Memo = dict[tuple[tuple[int, bool], str], IndexWords]


def _words(spec: _BulkField, text: str, memo: _Memo) -> IndexWords:
    """``spec``'s analyzer's index words for ``text``, remembered for the document (the
    content field repeats the title and the abstract)."""
    key = (spec.key, text)
    words = memo.get(key)
    if words is None:
        # As numbers in the analyzer's vocabulary where it can (stems worked out if asked).
        found = spec.analyzer.index_ids(text) or spec.analyzer.index_words(text)
        assert found is not None  # _bulk_fields checked
        words = memo[key] = found
    return words


def _bulk_postings(
    spec: _BulkField, value: str, boost: float, memo: _Memo
) -> tuple[list[str], list[int], list[bytes], IndexWords | None]:
    """What ``field.index(value)`` yields, as lists (terms not yet encoded): the terms in
    order of first appearance, their frequencies and values; and the index words when
    they were computed for the whole value."""
    if not spec.positions:
        if spec.by_lines and "\n" in value:
            # Frequencies only: the lines' words counted line by line give the same.
            counts: Counter[str] = Counter()
            for line in value.split("\n"):
                counts.update(_words(spec, line, memo).stems)
            whole = None
        else:
            whole = _words(spec, value, memo)
            counts = Counter(whole.stems)
        freqs = list(counts.values())
        return list(counts), freqs, list(map(_FREQUENCY.__getitem__, freqs)), whole
    whole = _words(spec, value, memo)
    stems = whole.stems
    positions = whole.positions
    counts = Counter(stems)
    terms = list(counts)
    freqs = list(counts.values())
    if len(terms) == len(stems):  # every word once: positions in order
        values = list(map(_SINGLE_POSITION.__getitem__, positions))
    else:
        seen: dict[str, list[int]] = {}
        for stem, pos in zip(stems, positions, strict=True):
            held = seen.get(stem)
            if held is None:
                seen[stem] = [pos]
            else:
                held.append(pos)
        values = [
            _SINGLE_POSITION[p[0]] if len(p) == 1 else _POSITIONS[tuple(p)] for p in seen.values()
        ]
    return terms, freqs, values, whole


def _stem_lists(
    spec: _BulkField, value: str, memo: _Memo
) -> tuple[list[list[str]] | bytes, int] | None:
    """For ``_speedups.doc_postings``: the stems of ``value`` (in lists, line by line for
    a frequency field that splits at spaces) and the first word's position; None where
    the positions are not consecutive (:func:`_bulk_postings` then). For positions, the
    words' numbers in the analyzer's vocabulary instead where they came so (for
    ``_speedups.doc_postings_ids``)."""
    if not spec.positions:
        if spec.by_lines and "\n" in value:
            return [_words(spec, line, memo).stems for line in value.split("\n")], 0
        return [_words(spec, value, memo).stems], 0
    words = _words(spec, value, memo)
    positions = words.positions
    if type(positions) is not range or positions.step != 1:
        return None
    if words.ids is not None:
        return words.ids, positions.start
    return [words.stems], positions.start


# Freed memory glibc keeps at the top of the heap instead of handing it back.
_TRIM_THRESHOLD = 64 << 20
_M_TRIM_THRESHOLD = -1  # mallopt's parameter numbers
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 4 << 20


def _keep_freed_memory() -> None:
    """Have glibc keep up to :data:`_TRIM_THRESHOLD` of freed memory rather than return it
    to the system at once, and map only allocations of :data:`_MMAP_THRESHOLD` or more.
    Each compression of a postings block or a document's stored fields allocates buffers
    and frees them: memory handed back after each call is faulted in page by page on the
    next (a ``zlib.compress`` of 100 bytes took 200 µs, not 15; :func:`_deflate` of 300
    bytes 23 µs, not 8, when its buffers were mapped). Elsewhere than glibc, nothing
    changes."""
    global _memory_kept
    if _memory_kept:
        return
    _memory_kept = True
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    # Setting one threshold fixes the other at its default: an allocation of 128 kB or more
    # would be mapped and unmapped at each call.
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)


_memory_kept = False


# ISA-L's level for what Whoosh compresses with zlib's level 3: postings blocks came out
# 3% larger (344 against 335 bytes on average, 20,000 records) and a stored document the
# same size (931 bytes), each in about half zlib's time (12.6 against 25.0 µs a block,
# 15.0 against 42.6 a document).
_DEFLATE_LEVEL = 1


def _deflate_stored_fields(perdoc: Any) -> None:
    """Have a ``W3PerDocWriter`` compress each document's stored fields with
    :func:`_deflate` (its column: a ``PickleColumn`` of a ``CompressedBytesColumn``, whose
    writer compresses with its ``_compress(value, level)``); left alone when its writer is
    not that."""
    writer = getattr(perdoc, "_colwriters", {}).get("_stored")
    child = getattr(writer, "_child", None)
    if isinstance(child, whoosh_columns.CompressedBytesColumn.Writer):
        child._compress = _deflate


def _deflate(data: bytes, level: int) -> bytes:
    """``data`` in ``zlib.compress``'s format (what Whoosh's readers decompress), made by
    ISA-L at :data:`_DEFLATE_LEVEL` whatever zlib ``level`` Whoosh asked for."""
    return isal_zlib.compress(data, _DEFLATE_LEVEL)


# What ``FieldType.index`` yields for one word: (bytes, frequency, weight, value).
_Posting = tuple[bytes, int, float, bytes]
_DirectTerms = Callable[[Any], list[_Posting]]
_COMMA_RUN = re.compile(r"[^,]+")
_NUMERIC_MEMO_LIMIT = 4096


def _direct_terms(field: Any) -> _DirectTerms | None:
    """A function giving ``list(field.index(value))``, for a string ``value`` without
    Whoosh's token objects, for the analyzers ``ID`` and ``KEYWORD(commas=True)`` fields
    are made with (optionally lower-cased), with an ``Existence`` or ``Frequency`` format;
    None for any other field. (Whoosh's chain costs about 25 µs a value.)"""
    fmt = field.format
    if (
        type(field).index is not whoosh_fields.FieldType.index  # NUMERIC, DATETIME, ...
        or type(fmt) not in (formats.Existence, formats.Frequency)
        or field.vector
    ):
        return None
    analyzer = field.analyzer
    items = list(analyzer.items) if type(analyzer) is CompositeAnalyzer else [analyzer]
    lower = bool(items) and type(items[-1]) is LowercaseFilter
    if lower:
        items.pop()
    if len(items) == 1 and type(items[0]) is IDTokenizer:
        by_commas = False
    elif (
        len(items) == 2
        and type(items[0]) is RegexTokenizer
        and items[0].expression.pattern == _COMMA_RUN.pattern
        and not items[0].gaps
        and type(items[1]) is StripFilter
    ):
        by_commas = True
    else:
        return None
    boost = float(fmt.field_boost)
    existence = type(fmt) is formats.Existence
    once = _FREQUENCY[1]

    def terms(value: Any) -> list[_Posting]:
        if not isinstance(value, str):  # a list of words: Whoosh's own way
            return list(field.index(value))
        words = [w.strip() for w in _COMMA_RUN.findall(value)] if by_commas else [value]
        if lower:
            words = [w.lower() for w in words]
        if existence:
            return [(w.encode("utf-8"), 1, boost, b"") for w in dict.fromkeys(words)]
        if len(words) == 1 or len(set(words)) == len(words):  # each word once (Counter's
            # order, without its cost: about 2 µs a value)
            return [(w.encode("utf-8"), 1, boost, once) for w in words]
        counts = Counter(words)
        return [(w.encode("utf-8"), n, n * boost, _FREQUENCY[n]) for w, n in counts.items()]

    return terms


def _numeric_terms(field: Any) -> _DirectTerms | None:
    """``list(field.index(value))`` for a ``NUMERIC`` field, remembered per value (a year
    recurs in every other document); None for any other field."""
    if not isinstance(field, whoosh_fields.NUMERIC):
        return None
    memo: dict[tuple[type, Any], list[_Posting]] = {}

    def terms(value: Any) -> list[_Posting]:
        key = (type(value), value)
        found = memo.get(key)
        if found is None:
            found = list(field.index(value))
            if len(memo) >= _NUMERIC_MEMO_LIMIT:
                memo.clear()
            memo[key] = found
        return found

    return terms


@dataclass(frozen=True)
class _FieldPlan:
    """What :meth:`BulkWriter.add_document` asks a field, asked once."""

    field: Any
    indexed: bool
    bulk: _BulkField | None
    scorable: bool
    spelling: str | None  # the spelling field's name, when the field has one
    vector: Any
    stored: bool
    column: Any
    boost_key: str
    stored_key: str
    # ``list(field.index(value))`` without Whoosh's analysis chain, for a field of a shape
    # that allows it (see _direct_terms, _numeric_terms).
    direct: _DirectTerms | None = None


class BulkWriter(SegmentWriter):  # type: ignore[misc]  # whoosh is Any to mypy
    """A ``SegmentWriter`` with a :class:`TermPool`, field lengths kept in memory,
    position-keeping segment files, text fields analysed in bulk (see
    :meth:`add_document`) and postings written a term at a time (:func:`_write_postings`).
    """

    def __init__(self, ix: Any, **kwargs: Any) -> None:
        super().__init__(ix, **kwargs)
        _keep_freed_memory()
        whoosh_pool: Any = self.pool
        whoosh_pool.cleanup()
        self.pool: TermPool = TermPool()
        self._lengths = _Lengths()
        self._bulk = _bulk_fields(self.schema)
        for spec in self._bulk.values():  # numbered anew past its limit, between segments
            vocabulary = spec.analyzer.vocabulary()
            if vocabulary is not None:
                vocabulary.trim()
        self._derivation = _derivation(self._bulk)
        self._derived_docs = array("I")  # documents whose derived field is made at flush
        self._plans: dict[str, _FieldPlan] = {}
        perdoc = self.perdocwriter
        whoosh_add_field = perdoc.add_field

        def add_field(fieldname: str, fieldobj: Any, value: Any, length: int) -> None:
            if length:  # the length column and total are written with the segment
                self._lengths.add(fieldname, self.docnum, length)
            whoosh_add_field(fieldname, fieldobj, value, 0)

        perdoc.add_field = add_field  # as documents are copied in by a merge
        _deflate_stored_fields(perdoc)
        for name in ("_postfile", "_tindex"):
            holder = getattr(self.fieldwriter, name, None)
            structfile = getattr(holder, "dbfile", holder)  # the terms file is in a table
            if structfile is not None and hasattr(structfile, "file"):
                structfile.file = _TellingFile(structfile.file)

    def add_document(self, **fields: Any) -> None:
        """``SegmentWriter.add_document``, step by step, except that a text field of
        :func:`_bulk_fields` given a string gets its postings from
        :func:`_bulk_postings` (lists, no Token per word; the title and abstract words
        reused for the content field), and that the postings reach the pool a field at a
        time, once the whole document went through (Whoosh's leaves a failed document's
        postings in the pool)."""
        self._check_state()
        schema = self.schema
        docnum = self.docnum
        perdoc = self.perdocwriter
        plans = self._plans
        docboost = self._doc_boost(fields)
        fieldnames = sorted([name for name in fields if not name.startswith("_")])
        self._check_fields(schema, fieldnames)
        postings: list[tuple[str, int, list[bytes] | list[str], list[float], list[bytes], bool]]
        postings = []
        packed: list[tuple[str, tuple[Any, ...]]] = []  # from _speedups.doc_postings
        memo: _Memo = {}
        vbytes: bytes | None = None  # the last posting's value, as Whoosh's loop leaves it
        compiled = speedups.active()
        perdoc.start_doc(docnum)
        stored: dict[str, Any] = perdoc._storedfields
        lengths: list[tuple[str, int]] = []
        derived = self._derivation if compiled is not None else None
        if derived is not None and not derived.applies(fields):
            derived = None
        try:
            for fieldname in fieldnames:
                value = fields[fieldname]
                if value is None:
                    continue
                plan = plans.get(fieldname) or self._plan(fieldname)
                field = plan.field
                spec = plan.bulk if isinstance(value, str) else None
                length = 0
                words: IndexWords | None = None
                if derived is not None and spec is not None and fieldname == derived.field:
                    # Its postings come from its parts' when the segment is written.
                    if spec.scorable:
                        for name, times in derived.parts:
                            length += len(_words(spec, fields[name], memo)) * times
                elif plan.indexed:
                    boost_key = plan.boost_key
                    fieldboost = float(fields[boost_key]) if boost_key in fields else docboost
                    found = _stem_lists(spec, value, memo) if compiled and spec else None
                    if found is not None:
                        assert spec is not None and compiled is not None
                        stem_lists, first = found
                        vocabulary = spec.analyzer.vocabulary()
                        if isinstance(stem_lists, bytes) and vocabulary is not None:
                            encoded = compiled.doc_postings_ids(
                                self.pool.numbers(fieldname),
                                self.pool.fieldmap(fieldname, vocabulary),
                                vocabulary.stems,
                                stem_lists,
                                first,
                                spec.positions,
                                spec.field_boost,
                                fieldboost,
                            )
                        else:
                            assert not isinstance(stem_lists, bytes)
                            encoded = compiled.doc_postings(
                                self.pool.numbers(fieldname),
                                stem_lists,
                                first,
                                spec.positions,
                                spec.field_boost,
                                fieldboost,
                            )
                        *_, count, words_count, last_value = encoded
                        if spec.scorable:
                            length = words_count
                        packed.append((fieldname, encoded))
                        values = [last_value] if count else []
                    elif spec is not None:
                        terms, freqs, values, words = _bulk_postings(spec, value, fieldboost, memo)
                        boost = spec.field_boost
                        if boost == 1.0 and fieldboost == 1.0:
                            weights = list(map(float, freqs))
                        else:
                            weights = [float(f) * boost * fieldboost for f in freqs]
                        if spec.scorable:
                            length = sum(freqs)
                        postings.append((fieldname, docnum, terms, weights, values, False))
                    else:
                        texts: list[bytes] = []
                        weights, values = [], []
                        scorable = plan.scorable
                        direct = plan.direct
                        found_terms = direct(value) if direct else field.index(value)
                        for tbytes, freq, weight, vb in found_terms:
                            texts.append(tbytes)
                            weights.append(weight * fieldboost)
                            values.append(vb)
                            if scorable:
                                length += freq
                        postings.append((fieldname, docnum, texts, weights, values, False))
                    if values:
                        vbytes = values[-1]

                spellfield = plan.spelling
                if spellfield is not None:
                    if spec is not None:
                        if words is None:
                            words = _words(spec, value, memo)
                        spell = sorted(set(words.unstemmed()))
                    else:
                        spell = list(field.spellable_words(value))
                    if spell:
                        if vbytes is None:
                            raise UnboundLocalError("no posting value for spelling words")
                        # Whoosh posts spelling words to document 0, once per document
                        # having them (their count is all it reads).
                        postings.append(
                            (
                                spellfield,
                                0,
                                list(map(str.encode, spell)),
                                [1] * len(spell),
                                [vbytes] * len(spell),
                                True,
                            )
                        )

                vformat = plan.vector
                if vformat:
                    vitems = vformat.word_values(value, field.analyzer, mode="index")
                    vitems = sorted((text, weight, vb) for text, _, weight, vb in vitems)
                    perdoc.add_vector_items(fieldname, field, vitems)

                customval = fields.get(plan.stored_key, value)
                if length:
                    lengths.append((fieldname, length))
                if plan.stored and customval is not None:
                    stored[fieldname] = customval  # as Whoosh's add_field
                column = plan.column
                if column and customval is not None:
                    perdoc.add_column_value(fieldname, column, field.to_column_value(customval))
        except ValueError:
            perdoc.cancel_doc()
            raise

        perdoc.finish_doc()
        add_length = self._lengths.add  # the length columns and totals: written with the segment
        for fieldname, length in lengths:
            add_length(fieldname, docnum, length)
        add_many = self.pool.add_many
        for fieldname, postdoc, texts_or_terms, weights, values, int_weights in postings:
            add_many(fieldname, postdoc, texts_or_terms, weights, values, int_weights)
        add_encoded = self.pool.add_encoded
        for fieldname, encoded in packed:
            add_encoded(fieldname, docnum, encoded)
        if derived is not None:
            self._derived_docs.append(docnum)
        self._added = True
        self.docnum += 1

    def _plan(self, fieldname: str) -> _FieldPlan:
        field = self.schema[fieldname]
        plan = self._plans[fieldname] = _FieldPlan(
            field=field,
            indexed=bool(field.indexed),
            bulk=self._bulk.get(fieldname),
            scorable=bool(field.scorable),
            spelling=field.spelling_fieldname(fieldname) if field.separate_spelling() else None,
            vector=field.vector,
            stored=bool(field.stored),
            column=field.column_type,
            boost_key=f"_{fieldname}_boost",
            stored_key=f"_stored_{fieldname}",
            direct=_direct_terms(field) or _numeric_terms(field) if field.indexed else None,
        )
        return plan

    def _write_lengths(self) -> None:
        """What Whoosh's ``W3PerDocWriter.add_field`` writes of a document's field lengths
        (a byte in a column, added to the field's total), for the whole segment at once."""
        perdoc = self.perdocwriter
        for fieldname, column in self._lengths.columns():
            perdoc._fieldlengths[fieldname] += self._lengths.totals[fieldname]
            lenfield = whoosh3._lenfield(fieldname)
            if not perdoc._has_column(lenfield):
                perdoc._create_column(lenfield, whoosh3.LENGTHS_COLUMN)
            writer = perdoc._get_column(lenfield)
            # A NumericColumn("B") writer: a byte per document so far, 0 where none.
            if writer._count:
                raise RuntimeError(f"the {fieldname} lengths column was written already")
            writer._dbfile.write(bytes(column))
            writer._count = len(column)

    def _add_derived_postings(self) -> None:
        """The derived field's postings (see :class:`_Derivation`) of the documents that
        :meth:`add_document` left them to, made from its parts' postings: the same ones
        ``_speedups.doc_postings`` gives, a term's weight its frequency, its value the
        frequency packed. A few thousand documents at a time, which bounds the memory."""
        derivation = self._derivation
        if derivation is None or not self._derived_docs:
            return
        wanted = numpy.zeros(self.docnum, dtype=numpy.bool_)
        wanted[numpy.frombuffer(self._derived_docs, dtype=numpy.uint32)] = True
        target = self.pool._field(derivation.field)
        numbers = target.numbers
        parts = []
        for name, times in derivation.parts:
            held = self.pool._fields.get(name)
            if held is None or not len(held):
                continue
            # The part's term numbers as the derived field's (numbering any new to it).
            renumber = numpy.fromiter(
                map(numbers.__getitem__, held.numbers), dtype=numpy.uint32, count=len(held.numbers)
            )
            parts.append((held, renumber, held.docnums(), times))
        # Postings added document by document are in document order, and can be taken a
        # range of documents at a time; a merge adds a segment's term by term.
        in_order = all(bool((docs[1:] >= docs[:-1]).all()) for _, _, docs, _ in parts)
        step = _DERIVED_DOCS_AT_ONCE if in_order else max(self.docnum, 1)
        for start in range(0, self.docnum, step):
            self._add_derived_range(target, parts, wanted, start, start + step, in_order)
        self._derived_docs = array("I")

    @staticmethod
    def _add_derived_range(
        target: _FieldPostings,
        parts: list[Any],
        wanted: Any,
        start: int,
        stop: int,
        in_order: bool,
    ) -> None:
        """:meth:`_add_derived_postings` for the documents ``start`` to ``stop`` (all of
        them, when the postings are not ``in_order``)."""
        keys, freqs = [], []
        for held, renumber, docs, times in parts:
            lo, hi = numpy.searchsorted(docs, [start, stop]) if in_order else (0, len(docs))
            chunk_docs = docs[lo:hi]
            keep = wanted[chunk_docs]
            terms = renumber[numpy.frombuffer(held.termnums, dtype=numpy.uint32)[lo:hi][keep]]
            keys.append((chunk_docs[keep].astype(numpy.uint64) << 32) | terms)
            # Unboosted, a positions field's weight is the term's frequency.
            weights = numpy.frombuffer(held.weights, dtype=numpy.float64)[lo:hi][keep]
            freqs.append(weights.astype(numpy.uint32) * numpy.uint32(times))
        key = numpy.concatenate(keys)
        if not len(key):
            return
        order = numpy.argsort(key, kind="stable")  # by document, then term number
        key, freq = key[order], numpy.concatenate(freqs)[order]
        first = numpy.ones(len(key), dtype=numpy.bool_)
        first[1:] = key[1:] != key[:-1]
        starts = numpy.flatnonzero(first)
        freq = numpy.add.reduceat(freq, starts)
        key = key[starts]
        run_docs, run_counts = numpy.unique(key >> 32, return_counts=True)
        target.termnums.frombytes((key & 0xFFFFFFFF).astype(numpy.uint32).tobytes())
        target.run_docs.frombytes(run_docs.astype(numpy.uint32).tobytes())
        target.run_counts.frombytes(run_counts.astype(numpy.uint32).tobytes())
        target.weights.frombytes(freq.astype(numpy.float64).tobytes())
        target.sizes.frombytes(numpy.full(len(key), 4, dtype=numpy.uint32).tobytes())
        target.values += freq.astype(">u4").tobytes()  # Frequency.encode: "!I"
        target.int_weights = False

    def _flush_segment(self) -> None:
        # SegmentWriter._flush_segment, with the lengths from memory and the derived
        # field's postings made.
        self._add_derived_postings()
        self._write_lengths()
        self.perdocwriter.close()
        lengths = self._lengths if self.codec.length_stats else None
        if _can_write_fast(self.fieldwriter):
            _write_postings(self.fieldwriter, self.schema, self.pool, lengths)
        else:
            self.fieldwriter.add_postings(self.schema, lengths, self.pool.iter_postings())
        self.fieldwriter.close()


def _finish_segment(
    writer: BulkWriter,
    summarize: Callable[[Any], Any] | None = None,
    summaries: list[Any] | None = None,
) -> Any:
    """Write out ``writer``'s segment without committing a table of contents (and with
    ``summarize``, append to ``summaries`` what it makes of a reader of the segment).

    The writer's temporary directory is shared by every writer of the index (Whoosh
    names it after the index), so it is left for the committing writer to remove.
    """
    segment = writer._finalize_segment()
    writer.is_closed = True
    if summarize is not None and summaries is not None:
        reader = SegmentReader(writer.storage, writer.schema, segment)
        try:
            summaries.append(summarize(reader))
        finally:
            reader.close()
    return segment


def _write_segments(
    ix: Any,
    docs: Iterable[Doc],
    docs_per_segment: int,
    summarize: Callable[[Any], Any] | None = None,
    summaries: list[Any] | None = None,
) -> list[Any]:
    """Write ``docs`` into new segments of ``docs_per_segment`` documents (the last one
    fewer), left for a committing writer to name in a table of contents. With
    ``summarize``, what it makes of a reader of each segment is appended to
    ``summaries``, segment by segment.

    The garbage collector is paused (see :mod:`pubsearch.gcpause`) but for the young
    objects after each segment, so that cycles, were there any, would not outlive it (a
    segment of 30,000 records left 30 objects for it).
    """
    segments: list[Any] = []
    writer: BulkWriter | None = None
    count = 0
    try:
        with gcpause.paused():
            for doc in docs:
                if writer is None:
                    writer = BulkWriter(ix, _lk=False)
                writer.add_document(**doc)
                count += 1
                if count >= docs_per_segment:
                    segments.append(_finish_segment(writer, summarize, summaries))
                    writer, count = None, 0
                    gc.collect(0)
            if writer is not None:
                segments.append(_finish_segment(writer, summarize, summaries))
                writer = None
    finally:
        if writer is not None:
            writer.cancel()
    return segments


def _worker(
    index_dir: str,
    jobs: Any,
    results: Any,
    docs_per_segment: int,
    to_doc: Callable[[Any], Doc] | None = None,
    summarize: Callable[[Any], Any] | None = None,
    number: int = 0,
) -> None:
    """Worker process ``number``: write the documents of each batch from ``jobs`` (or
    those ``to_doc`` makes of its items) into segments; send them back, with what
    ``summarize`` makes of each."""
    _exit_with_parent()
    try:
        ix = storage.open_index(index_dir)

        def docs() -> Iterator[Doc]:
            while (batch := _next_batch(jobs)) is not None:
                yield from map(to_doc, batch) if to_doc else batch

        summaries: list[Any] = []
        segments = _write_segments(ix, docs(), docs_per_segment, summarize, summaries)
        results.put(("ok", (number, (segments, summaries))))
    except BaseException as exc:  # reported to the parent, which raises it
        results.put(("error", f"{type(exc).__name__}: {exc}"))
        raise
    # Its files are written and closed: once the results are through, the process ends
    # without the interpreter's teardown, which would free its caches object by object
    # (0.2 s at 25,000 records a worker, while the build goes on).
    results.close()
    results.join_thread()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _exit_with_parent() -> None:
    """End this worker process as soon as its parent is gone (a build killed with SIGKILL),
    wherever the worker is waiting. Checking between batches is not enough: a parent killed
    while it sent a batch leaves the worker reading the rest of it for ever (the worker
    holds the queue's other end open too), and with it the parent's standard output."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    sentinel = parent.sentinel

    def watch() -> None:
        multiprocessing.connection.wait([sentinel])
        os._exit(1)  # nothing to report to; the next build removes the files

    threading.Thread(target=watch, name="pubsearch-parent-watch", daemon=True).start()


def _next_batch(jobs: Any) -> list[Any] | None:
    """The next batch of documents, or None at the end. A worker whose parent has died
    (a build killed with SIGKILL) exits instead of waiting for work forever."""
    parent = multiprocessing.parent_process()
    while True:
        try:
            batch: list[Any] | None = jobs.get(timeout=1.0)
            return batch
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                os._exit(1)  # nothing to report to; the next build removes the files


def write_documents(
    index_dir: Path,
    docs: Iterable[Any],
    workers: int = 2,
    docs_per_segment: int | None = None,
    parallel_threshold: int | None = None,
    to_doc: Callable[[Any], Doc] | None = None,
    summarize: Callable[[Any], Any] | None = None,
    summaries: list[Any] | None = None,
) -> int:
    """Add ``docs`` to the (new, empty) index in ``index_dir`` and commit; return the count.

    The first ``parallel_threshold`` documents are buffered: a smaller input (or any
    input, with one worker) is written in this process; a larger one is spread over
    ``workers`` processes. Either way, in segments of ``docs_per_segment`` documents.
    The garbage collector does not run by itself meanwhile (see :mod:`pubsearch.gcpause`;
    no reference cycles are made): this process reads the documents.

    With ``to_doc`` (a module-level function, which a worker can import), ``docs`` are
    items it makes documents of, where they are written: what a worker is sent is then
    the items, which can be smaller than the documents.

    With ``summarize`` (module-level too), ``summaries`` receives what it makes of a
    reader of each segment, in the order of the segments in the index, computed where the
    segment was written.
    """
    with gcpause.paused():
        return _write_documents(
            index_dir,
            docs,
            workers,
            docs_per_segment,
            parallel_threshold,
            to_doc,
            summarize,
            summaries if summaries is not None else [],
        )


def _write_documents(
    index_dir: Path,
    docs: Iterable[Any],
    workers: int,
    docs_per_segment: int | None,
    parallel_threshold: int | None,
    to_doc: Callable[[Any], Doc] | None,
    summarize: Callable[[Any], Any] | None,
    summaries: list[Any],
) -> int:
    docs_per_segment = docs_per_segment or DOCS_PER_SEGMENT
    parallel_threshold = parallel_threshold or PARALLEL_THRESHOLD
    ix = storage.open_index(index_dir)
    stream = iter(docs)
    head: list[Any] = []
    for doc in stream:
        head.append(doc)
        if len(head) >= parallel_threshold:
            break
    if len(head) < parallel_threshold or workers < 2:
        # In this process, in segments as a worker writes them (which bounds the memory).
        items = _chain(head, stream)
        made = map(to_doc, items) if to_doc else items
        segments = _write_segments(ix, made, docs_per_segment, summarize, summaries)
        _commit_segments(ix, segments)
        return sum(int(segment.doc_count_all()) for segment in segments)

    # Each worker takes every n-th batch from a queue of its own, and the segments are
    # committed in worker order: the same input makes the same document numbers in every
    # build (ties in score are ordered by document number), whichever worker is faster.
    ctx = multiprocessing.get_context("spawn")
    queues = [ctx.Queue(maxsize=4) for _ in range(workers)]
    results = ctx.Queue()
    procs = [
        ctx.Process(
            target=_worker,
            args=(str(index_dir), jobs, results, docs_per_segment, to_doc, summarize, number),
        )
        for number, jobs in enumerate(queues)
    ]
    for proc in procs:
        proc.start()
    count = 0
    turn = 0
    try:
        batch: list[Any] = []
        for doc in _chain(head, stream):
            batch.append(doc)
            if len(batch) >= BATCH_SIZE:
                _put(queues[turn % workers], batch, [procs[turn % workers]])
                turn += 1
                count += len(batch)
                batch = []
        if batch:
            _put(queues[turn % workers], batch, [procs[turn % workers]])
            count += len(batch)
        for jobs, proc in zip(queues, procs, strict=True):
            _put(jobs, None, [proc])
        done: dict[int, Any] = {}
        for _ in procs:
            status, payload = _get(results, procs)
            if status != "ok":
                raise WorkerError(f"indexing worker failed: {payload}")
            number, written = payload
            done[number] = written
        segments = []
        for number in sorted(done):
            segments.extend(done[number][0])
            summaries.extend(done[number][1])
        _join_meanwhile(procs)
    except BaseException:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
            proc.join()
        # Batches still buffered for workers that are gone would block this process's
        # exit (the queue's feeder thread waits to hand them over): drop them.
        for jobs in queues:
            jobs.cancel_join_thread()
        raise
    finally:
        for jobs in queues:
            jobs.close()
        results.close()
    _commit_segments(ix, segments)
    return count


def _join_meanwhile(procs: list[Any]) -> None:
    """Join the worker processes in a thread of their own. A worker that has sent its
    segments has finished with them, but takes a while to exit (0.2 s at 30,000 records,
    0.45 at 102,289: its memory handed back), which this process need not wait for to
    commit them and build the facet table, on the other CPU."""

    def join_all() -> None:
        for proc in procs:
            proc.join()

    threading.Thread(target=join_all, name="pubsearch-worker-join", daemon=True).start()


def _commit_segments(ix: Any, segments: list[Any]) -> None:
    """Commit ``segments`` as the index's next generation: one table of contents naming
    them all."""
    committer = SegmentWriter(ix)
    committer._close_segment()
    committer._commit_toc(segments)
    committer._finish()
    ix.close()


def _chain(head: list[Any], stream: Iterator[Any]) -> Iterator[Any]:
    yield from head
    head.clear()
    yield from stream


def _put(jobs: Any, item: Any, procs: list[Any]) -> None:
    """Queue ``item`` for the workers, noticing if they have all died."""
    while True:
        try:
            jobs.put(item, timeout=1.0)
            return
        except queue.Full:
            if not any(p.is_alive() for p in procs):
                raise WorkerError("indexing workers stopped unexpectedly") from None


def _get(results: Any, procs: list[Any]) -> Any:
    waited = 0.0
    while True:
        try:
            return results.get(timeout=1.0)
        except queue.Empty:
            waited += 1.0
            if waited >= RESULT_TIMEOUT_SECONDS or not any(p.is_alive() for p in procs):
                raise WorkerError("indexing workers stopped without a result") from None
