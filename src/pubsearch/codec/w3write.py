"""The Whoosh 3 segment format, written: with :mod:`pubsearch.codec.w3format` (which
reads it), the only module that knows Whoosh's byte layout and private attributes, here
those of its writers.

What it writes is what Whoosh's own writer would (tests/test_bulk.py compares them):

* :class:`PoolSegmentWriter`, Whoosh's ``SegmentWriter`` with a
  :class:`~pubsearch.codec.pool.TermPool` and the field lengths kept in memory
  (:class:`Lengths`); its subclass, :class:`pubsearch.index.segments.writer.BulkWriter`, adds
  documents through the hooks here (:meth:`~PoolSegmentWriter.start_document`, ...)
  rather than through ``SegmentWriter``'s private methods;
* :func:`write_postings`: W3 blocks and term infos a chunk of terms at a time
  (:class:`FieldBlocks`: one pickle per block, as Whoosh, but with a newer protocol; see
  :data:`_BLOCK_PROTOCOL`), in C where ``pubsearch.core._speedups`` was built; the terms table
  in bulk (:class:`_TermsTable`, :func:`_write_hashes`);
* the length columns written whole, stored fields deflated by ISA-L (:func:`_deflate`),
  the values of Whoosh's ``Positions`` and ``Frequency`` formats (:func:`encode_positions`);
* segments finished without a table of contents, and committed together
  (:func:`commit_segments`).

Whoosh's own writer is used instead where its codec is not the one this writes
(:func:`can_write_fast`) or the installed Whoosh is not a version whose format this knows
(:func:`pubsearch.codec.w3format.fast_paths`).
"""

from __future__ import annotations

import hashlib
import itertools
import pickle
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy
from isal import isal_zlib
from whoosh import columns as whoosh_columns
from whoosh.codec import whoosh3
from whoosh.filedb import filetables
from whoosh.reading import SegmentReader
from whoosh.util.numeric import byte_to_length, length_to_byte
from whoosh.writing import SegmentWriter

from pubsearch.codec import hotlists
from pubsearch.codec.pool import FieldPostings, TermPool, sort_postings
from pubsearch.core import speedups

# Length bytes (Whoosh's ``length_to_byte``) of the lengths most fields have, looked up.
_LENGTH_TABLE_SIZE = 4096
_LENGTH_BYTES = bytes(map(length_to_byte, range(_LENGTH_TABLE_SIZE)))


class Lengths:
    """Each document's field lengths as the segment stores them (one byte), and each
    field's total, kept in memory while the segment is written: writing the postings need
    not read them back from the segment's files one posting at a time, and the length
    columns are written whole (:meth:`PoolSegmentWriter.write_lengths`)."""

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


class _PositionKeepingFile:
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


def can_write_fast(fieldwriter: Any) -> bool:
    """Whether :func:`write_postings` writes what ``fieldwriter`` would: Whoosh 3's codec
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


def write_postings(
    fieldwriter: Any,
    schema: Any,
    pool: TermPool,
    lengths: Lengths | None,
    kept: dict[str, hotlists.FieldLists] | None = None,
    doc_count: int = 0,
    kept_fields: frozenset[str] = frozenset(),
) -> None:
    """Write ``pool``'s postings through ``fieldwriter`` (a ``W3FieldWriter``) as its
    ``add_postings`` would, with a few Python calls per term instead of several per
    posting: the same blocks (ids delta-encoded, weights and values minified, pickled,
    compressed past the same size; see :data:`_BLOCK_PROTOCOL`), the same block and term
    statistics, the same terms table. With ``kept``, the longest lists of each field of
    ``kept_fields`` (of a segment of ``doc_count`` documents) are put there too (see
    :mod:`pubsearch.codec.hotlists`)."""
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
        blocks = FieldBlocks(fieldwriter._codec, schema[fieldname].format, held, column)
        lists = None
        if kept is not None and fieldname in kept_fields:
            lists = hotlists.select(
                blocks.texts, blocks.bounds, blocks.order, blocks.docnums, blocks.weights, doc_count
            )
        wanted = set(lists.texts) if lists is not None else set()
        rows: dict[bytes, bytes] = {}
        keyprefix = _USHORT.pack(fieldid)
        for texts, posts, infos in blocks.chunks(pos):
            postfile.write(posts)
            pos += len(posts)
            terms.add(keyprefix, texts, infos)
            if wanted:
                rows.update((t, info) for t, info in zip(texts, infos, strict=True) if t in wanted)
        if lists is not None and (lists := hotlists.with_rows(lists, rows)) is not None:
            assert kept is not None  # (lists are only selected for it)
            kept[fieldname] = lists
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
# ``_codecs.encode`` on a Latin-1 string, costly to write and to read (docs/performance.md
# has the figures). A block of one posting (most terms) takes protocol 3, whose short
# pickles have no 9-byte frame header.
_BLOCK_PROTOCOL = 5
_SINGLE_PROTOCOL = 3
# Pickled block infos and single-posting blocks remembered, per field, for reuse (a
# document's rare terms share them).
_BLOCK_CACHE_LIMIT = 1 << 16


class FieldBlocks:
    """One field's postings, sorted, turned into W3 blocks (``W3PostingsWriter``) and term
    infos (``W3TermInfo.to_bytes``) a chunk of terms at a time."""

    def __init__(self, codec: Any, fmt: Any, held: FieldPostings, column: Any) -> None:
        self.blocklimit: int = codec._blocklimit
        self.compression: int = codec._compression
        self.fixed: int | None = fmt.fixed_value_size()
        self.int_weights = held.int_weights
        self.texts, order, self.bounds = sort_postings(held)
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
        """:meth:`_chunk` by ``pubsearch.core._speedups.write_blocks``: the same blocks and term
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


# How _speedups.write_blocks is to write a block's values (see FieldBlocks._chunk).
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


class _PositionsValue(dict[int, bytes]):
    """A position -> ``Positions.encode([position])``: the value of a word seen once."""

    def __missing__(self, pos: int) -> bytes:
        value = self[pos] = encode_positions([pos])
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
        value = encode_positions(positions)
        if len(positions) <= 3:
            if len(self) >= _VALUES_CACHE_LIMIT:
                self.clear()
            self[positions] = value
        return value


_VALUES_CACHE_LIMIT = 1 << 18


def encode_positions(positions: Iterable[int]) -> bytes:
    # formats.Positions.encode
    deltas = []
    base = 0
    for pos in positions:
        deltas.append(pos - base)
        base = pos
    return _UINT.pack(len(deltas)) + pickle.dumps(deltas, 2)


_UINT = struct.Struct("!I")
SINGLE_POSITION = _PositionsValue()
POSITIONS = _PositionsValues()
FREQUENCY = _FrequencyValue()


# ISA-L's level for what Whoosh compresses with zlib's level 3: postings blocks come out
# 3% larger and stored documents the same size, each in about half zlib's time
# (docs/performance.md).
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


# -- a segment writer of documents' postings made elsewhere -----------------------------------


class PoolSegmentWriter(SegmentWriter):  # type: ignore[misc]  # whoosh is Any to mypy
    """A ``SegmentWriter`` whose postings are kept in a :class:`TermPool` (``self.pool``)
    and written by :func:`write_postings`, whose field lengths are kept in memory
    (``self.lengths``) and written a column at a time, whose segment files know their
    position, and whose stored fields are deflated by ISA-L.

    A subclass's ``add_document`` calls :meth:`start_document`, then
    :meth:`cancel_document` or :meth:`finish_document`, then :meth:`document_added`:
    ``SegmentWriter.add_document``'s steps, in its order. Postings a subclass makes only
    when the segment is written come from :meth:`add_pending_postings`.
    """

    # The fields whose longest posting lists are kept again beside the segment (hotlists).
    kept_list_fields: frozenset[str] = frozenset()

    def __init__(self, ix: Any, lock: bool = True, **kwargs: Any) -> None:
        # Without ``lock``, the index's write lock is not taken: a worker process writes
        # segments that the parent, holding the lock, commits.
        super().__init__(ix, _lk=lock, **kwargs)
        whoosh_pool: Any = self.pool
        whoosh_pool.cleanup()
        self.pool: TermPool = TermPool()
        self.lengths = Lengths()
        self._kept_lists: dict[str, hotlists.FieldLists] | None = None
        perdoc = self.perdocwriter
        whoosh_add_field = perdoc.add_field

        def add_field(fieldname: str, fieldobj: Any, value: Any, length: int) -> None:
            if length:  # the length column and total are written with the segment
                self.lengths.add(fieldname, self.docnum, length)
            whoosh_add_field(fieldname, fieldobj, value, 0)

        perdoc.add_field = add_field  # as documents are copied in by a merge
        _deflate_stored_fields(perdoc)
        for name in ("_postfile", "_tindex"):
            holder = getattr(self.fieldwriter, name, None)
            structfile = getattr(holder, "dbfile", holder)  # the terms file is in a table
            if structfile is not None and hasattr(structfile, "file"):
                structfile.file = _PositionKeepingFile(structfile.file)

    def start_document(self, fields: dict[str, Any]) -> tuple[float, list[str], dict[str, Any]]:
        """Begin the document of ``fields`` as ``SegmentWriter.add_document`` does (the
        writer's state and the field names checked): its boost, its field names in order,
        and the dict its stored fields go in."""
        self._check_state()
        docboost: float = self._doc_boost(fields)
        fieldnames = sorted([name for name in fields if not name.startswith("_")])
        self._check_fields(self.schema, fieldnames)
        perdoc = self.perdocwriter
        perdoc.start_doc(self.docnum)
        stored: dict[str, Any] = perdoc._storedfields
        return docboost, fieldnames, stored

    def cancel_document(self) -> None:
        """Drop the document begun (its analysis failed)."""
        self.perdocwriter.cancel_doc()

    def finish_document(self) -> None:
        """Write the document's stored fields and columns."""
        self.perdocwriter.finish_doc()

    def document_added(self) -> None:
        """Count the document written: the next one takes the next docnum."""
        self._added = True
        self.docnum += 1

    def add_pending_postings(self) -> None:
        """Add to the pool the postings left to be made when the segment is written (none
        here)."""

    def kept_for_summary(self) -> Any:
        """What the writer kept of the segment's documents for ``finish_segment``'s
        ``summarize`` (none here; see pubsearch.index.segments.writer)."""
        return None

    def write_lengths(self) -> None:
        """What Whoosh's ``W3PerDocWriter.add_field`` writes of a document's field lengths
        (a byte in a column, added to the field's total), for the whole segment at once."""
        perdoc = self.perdocwriter
        for fieldname, column in self.lengths.columns():
            perdoc._fieldlengths[fieldname] += self.lengths.totals[fieldname]
            lenfield = whoosh3._lenfield(fieldname)
            if not perdoc._has_column(lenfield):
                perdoc._create_column(lenfield, whoosh3.LENGTHS_COLUMN)
            writer = perdoc._get_column(lenfield)
            # A NumericColumn("B") writer: a byte per document so far, 0 where none.
            if writer._count:
                raise RuntimeError(f"the {fieldname} lengths column was written already")
            writer._dbfile.write(bytes(column))
            writer._count = len(column)

    def _flush_segment(self) -> None:
        # SegmentWriter._flush_segment, with the lengths from memory and the pending
        # postings made.
        self.add_pending_postings()
        self.write_lengths()
        self.perdocwriter.close()
        lengths = self.lengths if self.codec.length_stats else None
        if can_write_fast(self.fieldwriter):
            kept: dict[str, hotlists.FieldLists] | None = (
                {} if getattr(self.storage, "folder", None) else None  # (a RamStorage has none)
            )
            write_postings(
                self.fieldwriter,
                self.schema,
                self.pool,
                lengths,
                kept,
                self.docnum,
                self.kept_list_fields,
            )
            self._kept_lists = kept
        else:
            self.fieldwriter.add_postings(self.schema, lengths, self.pool.iter_postings())
        self.fieldwriter.close()

    def _assemble_segment(self) -> None:
        # After Whoosh has gathered the segment's files into its compound file (which
        # takes every file named after the segment): the longest lists, beside it.
        super()._assemble_segment()
        kept = self._kept_lists
        if kept:
            name = self.newsegment.segment_id() + hotlists.SUFFIX
            hotlists.save(Path(self.storage.folder) / name, kept)
        self._kept_lists = None

    def finish_segment(
        self,
        summarize: Callable[[Any, Any], Any] | None = None,
        summaries: list[Any] | None = None,
    ) -> Any:
        """Write out the segment without committing a table of contents (and with
        ``summarize``, append to ``summaries`` what it makes of a reader of the segment
        and of what the writer kept for it, :meth:`kept_for_summary`).

        The writer's temporary directory is shared by every writer of the index (Whoosh
        names it after the index), so it is left for the committing writer to remove.
        """
        segment = self._finalize_segment()
        self.is_closed = True
        if summarize is not None and summaries is not None:
            reader = SegmentReader(self.storage, self.schema, segment)
            try:
                summaries.append(summarize(reader, self.kept_for_summary()))
            finally:
                reader.close()
        return segment


def commit_segments(ix: Any, segments: list[Any]) -> None:
    """Commit ``segments`` (finished by :meth:`PoolSegmentWriter.finish_segment`) as the
    index's next generation: one table of contents naming them all."""
    committer = SegmentWriter(ix)
    committer._close_segment()
    committer._commit_toc(segments)
    committer._finish()
    ix.close()


def frequency_values(freqs: numpy.ndarray[Any, Any]) -> bytes:
    """The values of a ``Frequency`` field's postings of these frequencies, end to end
    (``Frequency.encode``: a 4-byte big-endian number each)."""
    return bytes(freqs.astype(">u4").tobytes())
