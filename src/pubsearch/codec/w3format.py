"""The Whoosh 3 segment format, read: with :mod:`pubsearch.codec.w3write` (which
writes it), the only module that knows Whoosh's byte layout and private attributes, here
those of its readers, matchers, columns, queries and weighting models.

The search side (:mod:`pubsearch.search.masks`, :mod:`pubsearch.search.topdocs`,
:mod:`pubsearch.index.facets`) reads through it, a posting list, column or table in one read
where Whoosh's reader would take one Python call per item:

* :func:`segment_postings`: a term's posting list in a segment (from the arrays the
  segment's longest lists are kept in, :func:`kept_lists`; else :func:`raw_list`: one read
  of its bytes, the blocks taken apart by :func:`w3_blocks` and :class:`BlockArrays`);
* :func:`prefix_postings`: the lists of every word from a prefix on, in one read;
* :func:`position_table`: encoded position lists (``formats.Positions``) as arrays;
* :func:`segment_length_bytes`, :data:`LENGTH_OF_BYTE`: a field's length column;
* :func:`varbytes_values`, :func:`numeric_values`: a facet column's stored values;
* :func:`pattern_words`, :func:`compile_query`, :func:`term_range_texts`,
  :func:`bm25_b`: what Whoosh's queries and BM25F keep in private attributes.

Where the installed Whoosh is not a version whose format this knows
(:data:`KNOWN_WHOOSH_VERSIONS`), :func:`fast_paths` says so (with one warning) and every
function here, and :mod:`pubsearch.index.segments.workers`, takes Whoosh's public API instead:
slower, the same results.

It imports nothing of the writing side (no writer, no worker processes).
"""

from __future__ import annotations

import importlib.metadata
import io
import os
import pickle
import re
import struct
import threading
import warnings
import weakref
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt
from isal import isal_zlib
from whoosh import columns, formats
from whoosh.codec.whoosh3 import (
    LENGTHS_COLUMN,
    WHOOSH3_HEADER_MAGIC,
    W3LeafMatcher,
    W3TermInfo,
    W3TermsReader,
)
from whoosh.filedb import filetables
from whoosh.filedb.compound import SubFile
from whoosh.filedb.filestore import OverlayStorage
from whoosh.matching.wrappers import FilterMatcher
from whoosh.system import _INT_SIZE
from whoosh.util.numeric import byte_to_length, length_to_byte

from pubsearch.codec import hotlists
from pubsearch.core import speedups

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# The whoosh3 releases whose segment format, and readers' and writers' private attributes,
# this module and w3write were written against and tested with (pyproject.toml's pin).
KNOWN_WHOOSH_VERSIONS = frozenset({"3.54.0"})


def _installed_whoosh() -> str:
    try:
        return importlib.metadata.version("whoosh3")
    except importlib.metadata.PackageNotFoundError:  # Whoosh installed otherwise
        import whoosh

        return str(whoosh.versionstring())


# The Whoosh version the fast paths go by (a test pretends another).
WHOOSH_VERSION = _installed_whoosh()
_warned = False


class UnknownWhooshWarning(UserWarning):
    """The installed Whoosh is not a version whose format the fast paths know."""


def fast_paths() -> bool:
    """Whether the installed Whoosh is one of :data:`KNOWN_WHOOSH_VERSIONS`, whose segment
    format the fast paths (this module's readers, w3write's writer) know. Otherwise the
    index is written by Whoosh's own writer and read through Whoosh's API, and the first
    call in the process warns (:class:`UnknownWhooshWarning`), once."""
    global _warned
    if WHOOSH_VERSION in KNOWN_WHOOSH_VERSIONS:
        return True
    if not _warned:
        _warned = True
        known = ", ".join(sorted(KNOWN_WHOOSH_VERSIONS))
        warnings.warn(
            f"Whoosh {WHOOSH_VERSION} is not a version whose index format pubsearch's fast "
            f"paths know ({known}): indexing and searching through Whoosh's own writer and "
            "readers instead, which is slower",
            UnknownWhooshWarning,
            stacklevel=2,
        )
    return False


# byte_to_length for every possible length byte (0: no length, as Whoosh's None).
LENGTH_OF_BYTE = np.array([byte_to_length(b) if b else 0 for b in range(256)], dtype=np.float64)


# -- posting lists ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PackedValues:
    """Postings' values (encoded positions) one after another: value ``i`` is the bytes of
    ``joined`` from ``starts[i]`` to ``ends[i]``. Rather than a bytes object a posting:
    a phrase of common words reads some two million values at 1,000,000 records. Some
    of them are selected (:meth:`take`) without copying their bytes."""

    joined: bytes
    starts: IntArray
    ends: IntArray

    @classmethod
    def of(cls, values: list[bytes]) -> PackedValues:
        sizes = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        ends = np.cumsum(sizes)
        return cls(b"".join(values), ends - sizes, ends)

    def __len__(self) -> int:
        return len(self.starts)

    def take(self, indices: IntArray) -> PackedValues:
        return PackedValues(self.joined, self.starts[indices], self.ends[indices])

    def as_list(self) -> list[bytes]:
        joined = self.joined
        return [joined[a:b] for a, b in zip(self.starts.tolist(), self.ends.tolist(), strict=True)]


NO_VALUES = PackedValues(b"", np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def segment_postings(
    segment: Any,
    fieldname: str,
    text: str | bytes,
    with_values: bool,
    row: bytes | None = None,
) -> tuple[IntArray, FloatArray, PackedValues]:
    """The posting list of ``fieldname:text`` in ``segment`` (which has the term), deleted
    documents included: its document numbers in the segment, its weights, and with
    ``with_values`` its values (encoded positions), each block read once. ``row``: the
    term's row in the segment (:func:`term_rows_many`), when the caller has it.

    From the list's bytes in one read where it is a run of W3 blocks (:func:`raw_list`),
    else a block at a time from Whoosh's W3 matcher (decoded with numpy: Whoosh's
    ``_read_ids`` undoes the delta coding one number at a time), else posting by posting
    (the only way, for a Whoosh whose format this does not know)."""
    fast = fast_paths()
    if fast and not with_values:
        lists = kept_lists(segment)
        if lists is not None:
            found = lists.get(fieldname, segment._text_to_bytes(fieldname, text))
            if found is not None:
                return found[0], found[1], NO_VALUES
    whole = raw_list(segment, fieldname, text, with_values, row) if fast else None
    if whole is not None:
        return whole
    ids: list[IntArray] = []
    weights: list[FloatArray] = []
    values: list[bytes] = []
    matcher = segment.postings(fieldname, text)
    if isinstance(matcher, FilterMatcher):  # the segment's deletions: masked by callers
        matcher = matcher.child
        matcher.reset()  # the filter has moved it past the first deleted documents
    if fast and isinstance(matcher, W3LeafMatcher):
        while matcher.is_active():
            block_id_array, block_weight_array = _block_arrays(matcher)
            ids.append(block_id_array)
            weights.append(block_weight_array)
            if with_values:
                matcher._read_values()
                values.extend(matcher._values)
            matcher._next_block()
    else:
        block_ids: list[int] = []
        block_weights: list[float] = []
        while matcher.is_active():
            block_ids.append(matcher.id())
            block_weights.append(matcher.weight())
            if with_values:
                values.append(matcher.value())
            matcher.next()
        ids.append(np.asarray(block_ids, dtype=np.int64))
        weights.append(np.asarray(block_weights, dtype=np.float64))
    packed = PackedValues.of(values) if with_values else NO_VALUES
    if not ids:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), packed
    return np.concatenate(ids), np.concatenate(weights), packed


def mark_postings(
    segment: Any, fieldname: str, text: str | bytes, out: npt.NDArray[np.bool_]
) -> bool:
    """Set ``out[d]`` (one flag per document of ``segment``) for each document ``d`` in
    the posting list of ``fieldname:text`` (deleted documents included) where the list
    is kept as arrays (:func:`kept_lists`), and say so; False (``out`` untouched) where
    it is not: the caller reads it with :func:`segment_postings`."""
    lists = kept_lists(segment) if fast_paths() else None
    return lists is not None and lists.mark(fieldname, segment._text_to_bytes(fieldname, text), out)


def keeps_list(segment: Any, fieldname: str, text: str | bytes) -> bool:
    """Whether ``segment`` keeps the posting list of ``fieldname:text`` as arrays (see
    :func:`kept_lists`)."""
    lists = kept_lists(segment) if fast_paths() else None
    if lists is None:
        return False
    return lists.row(fieldname, segment._text_to_bytes(fieldname, text)) is not None


def kept_lists(segment: Any) -> hotlists.HotLists | None:
    """The longest posting lists of ``segment`` (a ``SegmentReader``), kept beside it as
    arrays (see :mod:`pubsearch.codec.hotlists`), or None."""
    return _opened(segment).kept


class _SegmentFiles:
    """What this module opens of a segment besides Whoosh: its kept lists, and its terms
    table read from a file descriptor of its own (:class:`_TermsTable`)."""

    def __init__(self, segment: Any) -> None:
        self.kept: hotlists.HotLists | None = None
        self.table: _TermsTable | None = None
        files = getattr(segment, "_storage", None)
        if isinstance(files, OverlayStorage):  # a compound segment: its directory's storage
            files = files.b
        folder = getattr(files, "folder", None)
        segid = getattr(segment, "_segid", None)
        if not folder or not isinstance(segid, str):
            return
        path = os.path.join(folder, segid + hotlists.SUFFIX)
        self.kept = hotlists.open_lists(path, segment.doc_count_all())
        terms = getattr(segment, "_terms", None)
        tindex = getattr(terms, "_tindex", None)
        sub = getattr(getattr(tindex, "dbfile", None), "file", None)
        if (
            isinstance(terms, W3TermsReader)
            and tindex is not None
            and type(tindex) is filetables.OrderedHashReader
            and tindex.hashfn is filetables.md5_hash
            and isinstance(sub, SubFile)
        ):
            try:
                fd = os.open(os.path.join(folder, segid + ".seg"), os.O_RDONLY)
            except OSError:
                return
            self.table = _TermsTable(fd, sub._offset, tindex.tables, tindex.endofdata)


class _TermsTable:
    """A segment's terms table (an ``OrderedHashReader`` inside its compound file), read
    with ``os.pread``: a look-up reads a slot or two and then the item in one read, where
    Whoosh's reader seeks and reads a few bytes at a time through three layers of file
    objects, some 40 µs a term when nothing is cached."""

    def __init__(self, fd: int, base: int, tables: list[tuple[int, int]], end: int) -> None:
        self.fd = fd
        self.base = base  # where the table starts in the file
        self.tables = tables  # each hash table's start and number of slots
        self.end = end  # where the items end (the hash tables follow)
        self._packed_tables = np.asarray(tables, dtype=np.int64).reshape(-1, 2).tobytes()
        weakref.finalize(self, os.close, fd)

    def get(self, key: bytes) -> bytes | None:
        """``HashReader.get(key)``: the slots of the key's hash table are probed from its
        hash on, and the first item with the key gives its value."""
        keyhash = filetables.md5_hash(key)
        start, slots = self.tables[keyhash & 255]
        if not slots:
            return None
        slot = (keyhash >> 8) % slots
        for _ in range(slots):
            at = self.base + start + slot * _SLOT.size
            slothash, itempos = _SLOT.unpack(os.pread(self.fd, _SLOT.size, at))
            if not itempos:
                return None
            if slothash == keyhash:
                # The item: its lengths, its key, its value (a term's row: some 30 bytes).
                item = os.pread(self.fd, _KEY_LENGTHS.size + len(key) + 64, self.base + itempos)
                keylen, datalen = _KEY_LENGTHS.unpack_from(item)
                head = _KEY_LENGTHS.size
                if keylen == len(key) and item[head : head + keylen] == key:
                    if len(item) < head + keylen + datalen:
                        item = os.pread(self.fd, head + keylen + datalen, self.base + itempos)
                    return item[head + keylen : head + keylen + datalen]
            slot = slot + 1 if slot + 1 < slots else 0
        return None

    def get_many(self, keys: list[bytes], hashes: bytes) -> list[bytes | None]:
        """:meth:`get` of each key (``hashes``: their ``md5_hash``, as uint32), in one C
        call where the speedups are built (a pasted abstract asks some 300 words of each
        of a generation's segments)."""
        compiled = speedups.active()
        if compiled is None or len(self.tables) != 256:
            return [self.get(key) for key in keys]
        found: list[bytes | None] = compiled.table_get_many(
            self.fd, self.base, self._packed_tables, keys, hashes
        )
        return found

    def items_from(self, pos: int) -> Iterator[tuple[bytes, bytes]]:
        """The keys and values of the items from position ``pos`` on, in order, read
        :data:`_ITEMS_READ` bytes at a time."""
        buffer = b""
        at = 0  # where buffer starts in the table
        while pos < self.end:
            if pos + _KEY_LENGTHS.size > at + len(buffer):
                buffer, at = self._read(pos), pos
            keylen, datalen = _KEY_LENGTHS.unpack_from(buffer, pos - at)
            size = _KEY_LENGTHS.size + keylen + datalen
            if pos + size > at + len(buffer):
                buffer, at = self._read(pos, size), pos
            i = pos - at + _KEY_LENGTHS.size
            yield buffer[i : i + keylen], buffer[i + keylen : i + keylen + datalen]
            pos += size

    def scan(self, pos: int, start: bytes, compiled: Any) -> _Scanned:
        """The words of the items from position ``pos`` on whose keys start with
        ``start`` (a field's number, then a prefix), with their lists' document
        frequencies, offsets and lengths: read :data:`_ITEMS_READ` bytes at a time and
        scanned in C (``_speedups.scan_terms``). ValueError for items it does not read."""
        words: list[str] = []
        pieces: list[tuple[bytes, bytes, bytes]] = []
        size = _ITEMS_READ
        stats = W3TermInfo._struct.size
        while pos < self.end:
            buffer = self._read(pos, size)
            used, done, found, dfs, offsets, lengths = compiled.scan_terms(
                buffer, 0, start, _FIELD_NUMBER_SIZE, stats
            )
            words += found
            pieces.append((dfs, offsets, lengths))
            if done:
                break
            if used == 0:  # an item longer than the buffer
                if len(buffer) >= self.end - pos:
                    raise ValueError("a terms table's item runs past its end")
                size = 2 * len(buffer)
            pos += used
        return _Scanned(
            words,
            *(np.frombuffer(b"".join(p[i] for p in pieces), dtype=np.int64) for i in range(3)),
        )

    def _read(self, pos: int, size: int = 0) -> bytes:
        size = min(max(size, _ITEMS_READ), self.end - pos)
        found = os.pread(self.fd, size, self.base + pos)
        if len(found) < size:
            raise OSError(f"terms table of {len(found)} bytes where {size} were expected")
        return found


_ITEMS_READ = 64 * 1024
_FIELD_NUMBER_SIZE = 2  # a whoosh3 term's key: the field's number (unsigned short), the term


@dataclass(frozen=True)
class _Scanned:
    """Words of a terms table (see :meth:`_TermsTable.scan`) and, for each, its posting
    list's document frequency, offset and length in the postings file."""

    words: list[str]
    frequencies: IntArray
    offsets: IntArray
    lengths: IntArray

    def only(self, keep: IntArray) -> _Scanned:
        return _Scanned(
            [self.words[i] for i in keep.tolist()],
            self.frequencies[keep],
            self.offsets[keep],
            self.lengths[keep],
        )


_OPENED: weakref.WeakKeyDictionary[Any, _SegmentFiles] = weakref.WeakKeyDictionary()
_OPENED_LOCK = threading.Lock()


def _opened(segment: Any) -> _SegmentFiles:
    with _OPENED_LOCK:
        found = _OPENED.get(segment)
    if found is None:
        found = _SegmentFiles(segment)
        with _OPENED_LOCK:
            found = _OPENED.setdefault(segment, found)
    return found


_SLOT = struct.Struct("!Iq")  # a hash table's slot: the key's hash, where the key is
_KEY_LENGTHS = struct.Struct("!ii")  # an item's key and value lengths


class NotWhoosh3(Exception):
    """A segment whose terms are not in whoosh3's table (another codec, or the fast paths
    turned off): ask Whoosh instead."""


def term_rows_many(
    segments: list[Any], fieldname: str, texts: list[str | bytes]
) -> list[list[bytes | None]]:
    """The row of each of ``texts`` (of ``fieldname``) in the terms table of each of
    ``segments`` (whoosh3 segments): the term's statistics, then where its posting list
    lies or the postings themselves; None where the segment does not have the term. One
    look-up in the table's hash (Whoosh asks it once to know if the term is there, again
    for its frequency and again for its postings): in a segment, the rows of the lists it
    keeps as arrays are found with one search of its words, the others' with one call
    (:meth:`_TermsTable.get_many`); each text's key and hash are made once. Raises
    NotWhoosh3 for a segment of another codec."""
    tbytes: list[bytes] = []
    schema = None
    keys: dict[int, tuple[list[bytes], npt.NDArray[np.uint32]]] = {}  # by field number
    out: list[list[bytes | None]] = []
    for segment in segments:
        terms = getattr(segment, "_terms", None)
        if not isinstance(terms, W3TermsReader) or not fast_paths():
            raise NotWhoosh3(fieldname)
        if fieldname not in terms._fieldmap:
            out.append([None] * len(texts))
            continue
        if segment.schema is not schema:
            schema = segment.schema
            tbytes = [segment._text_to_bytes(fieldname, text) for text in texts]
            keys.clear()
        opened = _opened(segment)
        rows: list[bytes | None] = (
            opened.kept.rows(fieldname, tbytes) if opened.kept is not None else [None] * len(texts)
        )
        out.append(rows)
        missing = [i for i, row in enumerate(rows) if row is None]
        if not missing:
            continue
        number = terms._fieldmap[fieldname]
        if number not in keys:
            every = [terms._keycoder(fieldname, b) for b in tbytes]
            hashed = map(filetables.md5_hash, every)
            keys[number] = (every, np.fromiter(hashed, dtype=np.uint32, count=len(every)))
        every, hashes = keys[number]
        if opened.table is not None:
            found = opened.table.get_many([every[i] for i in missing], hashes[missing].tobytes())
        else:
            found = [terms._tindex.get(every[i]) for i in missing]
        for i, row in zip(missing, found, strict=True):
            rows[i] = row
    return out


def row_doc_frequency(row: bytes) -> int:
    """The number of documents (deleted ones included) in a term's row (see term_rows_many):
    W3TermInfo's statistics are a flag byte, the total weight (float) and then this."""
    return int.from_bytes(row[5:9], "big")


def raw_list(
    segment: Any,
    fieldname: str,
    text: str | bytes,
    with_values: bool,
    row: bytes | None = None,
) -> tuple[IntArray, FloatArray, PackedValues] | None:
    """A posting list in a whoosh3 segment, deleted documents included: its document
    numbers, weights and (with ``with_values``) values, from one read of the list's bytes.
    None when the list is not a run of W3 blocks (postings kept in the terms file, another
    codec): then Whoosh's matcher reads it.

    Whoosh's matcher reads a block's header pickle from the file opcode by opcode (some 20
    file reads a block); this reads the list once and takes the blocks apart in memory."""
    terms = getattr(segment, "_terms", None)
    if not isinstance(terms, W3TermsReader):
        return None
    if row is None:  # not given (see term_rows_many): looked up
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
    if compiled is not None:
        try:
            values = NO_VALUES
            if with_values:
                ids_bytes, weights_bytes, joined, ends_bytes = compiled.decode_list(
                    raw, WHOOSH3_HEADER_MAGIC, isal_zlib.decompress, 2
                )
                ends = np.frombuffer(ends_bytes, dtype=np.int64)
                starts = np.concatenate(([0], ends[:-1])) if len(ends) else ends
                values = PackedValues(joined, starts, ends)
            else:
                ids_bytes, weights_bytes = compiled.decode_list(
                    raw, WHOOSH3_HEADER_MAGIC, isal_zlib.decompress
                )
        except ValueError:
            pass  # pickles the C code does not read: Python's pickle reads them
        else:
            return (
                np.frombuffer(ids_bytes, dtype=np.int64),
                np.frombuffer(weights_bytes, dtype=np.float64),
                values,
            )
    decoded = BlockArrays(with_values)
    decoded.add_list(raw)
    ids, weights = decoded.arrays()
    return ids, weights, PackedValues.of(decoded.values) if with_values else NO_VALUES


class BlockArrays:
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


def _block_arrays(matcher: Any) -> tuple[IntArray, FloatArray]:
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


@dataclass(frozen=True)
class SegmentWords:
    """Words of a segment and their posting lists one after another: word ``i``'s
    postings are ``counts[i]`` long, deleted documents included, numbered in the segment.
    The lists the segment keeps as arrays are in ``kept`` instead (word ``i``'s numbers
    and weights; ``counts[i]`` is then 0): a short prefix's common words hold most of its
    postings, which are then not copied."""

    words: list[str]
    ids: IntArray
    weights: FloatArray
    counts: IntArray
    kept: dict[int, tuple[IntArray, FloatArray]] = dataclass_field(default_factory=dict)


def prefix_postings(
    segment: Any, fieldname: str, prefix: str, pattern: re.Pattern[str] | None
) -> SegmentWords | None:
    """Each word of ``segment``'s ``fieldname`` that starts with ``prefix`` (and matches
    ``pattern``), with its posting list; None when the segment is not whoosh3's.

    The words are read in order from the prefix on (many at a time, see
    :class:`_TermsTable`). Their lists lie one after another in the postings
    file (written in word order): those the segment does not keep as arrays (see
    :func:`kept_lists`) are read in one piece, and decoded in C where it is built."""
    terms = getattr(segment, "_terms", None) if fast_paths() else None
    if not isinstance(terms, W3TermsReader) or fieldname not in terms._fieldmap:
        return None
    start = prefix.encode("utf-8")
    opened = _opened(segment)
    compiled = speedups.active()
    if compiled is not None and opened.table is not None:
        try:
            return _prefix_postings_in_c(segment, opened, fieldname, start, pattern, compiled)
        except ValueError:
            pass  # postings in the terms table, or encoded otherwise: read word by word
    stats = W3TermInfo._struct.size
    words: list[str] = []
    inline: dict[int, tuple[Any, Any]] = {}
    extents: dict[int, tuple[int, int]] = {}
    frequencies: dict[int, int] = {}
    for key, row in _items_from(opened, terms._tindex, terms._keycoder(fieldname, start)):
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
            frequencies[len(words)] = row_doc_frequency(row)
        words.append(word)
    lists: dict[int, tuple[IntArray, FloatArray]] = {}
    for number, (inline_ids, inline_weights) in inline.items():
        lists[number] = (
            np.asarray(inline_ids, dtype=np.int64),
            np.asarray(list(inline_weights), dtype=np.float64),
        )
    numbers = np.fromiter(frequencies, dtype=np.int64, count=len(frequencies))
    counts = np.fromiter(frequencies.values(), dtype=np.int64, count=len(frequencies))
    for number, found in _kept_words(segment, opened, fieldname, words, numbers, counts).items():
        lists[number] = found
        del extents[number]
    first = min((o for o, _ in extents.values()), default=0)
    end = max((o + n for o, n in extents.values()), default=0)
    joined = terms._postfile.get(first, end - first) if extents else b""
    compiled = speedups.active()
    rest = BlockArrays()
    rest_ends: dict[int, int] = {}
    in_c: dict[int, tuple[bytes, bytes]] = {}
    for number, (offset, length) in sorted(extents.items()):
        raw = joined[offset - first : offset - first + length]
        if compiled is not None:
            try:
                in_c[number] = compiled.decode_list(raw, WHOOSH3_HEADER_MAGIC, isal_zlib.decompress)
                continue
            except ValueError:
                pass  # pickles the C code does not read: Python's pickle reads them
        rest.add_list(raw)
        rest_ends[number] = len(rest)
    if in_c:  # (turned into arrays at once: most of a prefix's lists are short)
        c_ids = np.frombuffer(b"".join(i for i, _ in in_c.values()), dtype=np.int64)
        c_weights = np.frombuffer(b"".join(w for _, w in in_c.values()), dtype=np.float64)
        begin = 0
        for number, (ids_bytes, _) in in_c.items():
            stop = begin + len(ids_bytes) // 8
            lists[number] = (c_ids[begin:stop], c_weights[begin:stop])
            begin = stop
    if rest_ends:
        ids, weight_array = rest.arrays()
        begin = 0
        for number, stop in rest_ends.items():
            lists[number] = (ids[begin:stop], weight_array[begin:stop])
            begin = stop
    ordered = [lists[number] for number in range(len(words))]
    return SegmentWords(
        words,
        np.concatenate([i for i, _ in ordered]) if ordered else np.zeros(0, dtype=np.int64),
        np.concatenate([w for _, w in ordered]) if ordered else np.zeros(0, dtype=np.float64),
        np.array([len(i) for i, _ in ordered], dtype=np.int64),
    )


def _kept_words(
    segment: Any,
    opened: _SegmentFiles,
    fieldname: str,
    words: list[str],
    numbers: IntArray,
    frequencies: IntArray,
) -> dict[int, tuple[IntArray, FloatArray]]:
    """The lists the segment keeps as arrays (see :func:`kept_lists`) of the words
    ``words[numbers[i]]`` whose document frequency (``frequencies[i]``) is long enough
    to be kept, by their number."""
    if opened.kept is None:
        return {}
    long = hotlists.threshold(segment.doc_count_all())
    kept: dict[int, tuple[IntArray, FloatArray]] = {}
    for number in numbers[frequencies >= long].tolist():
        found = opened.kept.get(fieldname, words[number].encode("utf-8"))
        if found is not None:
            kept[number] = found
    return kept


def _prefix_postings_in_c(
    segment: Any,
    opened: _SegmentFiles,
    fieldname: str,
    start: bytes,
    pattern: re.Pattern[str] | None,
    compiled: Any,
) -> SegmentWords:
    """:func:`prefix_postings`, each step for all the words at once, in C: the words and
    their rows scanned from the terms table, the lists decoded in one call for each run
    of them between those the segment keeps as arrays. ValueError where a step meets
    what it does not read."""
    terms = segment._terms
    key = terms._keycoder(fieldname, start)
    if len(key) != _FIELD_NUMBER_SIZE + len(start):
        raise ValueError("not whoosh3's keys")
    pos = terms._tindex.closest_key_pos(key)
    assert opened.table is not None
    scanned = (
        opened.table.scan(pos, key, compiled)
        if pos is not None
        else _Scanned([], *(np.zeros(0, dtype=np.int64) for _ in range(3)))
    )
    if pattern is not None:
        fits = [i for i, word in enumerate(scanned.words) if pattern.fullmatch(word)]
        scanned = scanned.only(np.array(fits, dtype=np.int64))
    every = np.arange(len(scanned.words))
    kept = _kept_words(segment, opened, fieldname, scanned.words, every, scanned.frequencies)
    ids: list[IntArray] = []
    weights: list[FloatArray] = []
    counts: list[IntArray] = []
    begin = 0
    for stop in [*sorted(kept), len(scanned.words)]:
        if stop > begin:  # the lists of words begin..stop, one after another in the file
            offsets = scanned.offsets[begin:stop]
            first = int(offsets[0])
            end = int(offsets[-1] + scanned.lengths[stop - 1])
            if np.any(offsets[1:] < offsets[:-1] + scanned.lengths[begin : stop - 1]):
                raise ValueError("posting lists not in the order of their words")
            found_ids, found_weights, found_counts = compiled.decode_lists(
                terms._postfile.get(first, end - first),
                offsets - first,
                scanned.lengths[begin:stop],
                WHOOSH3_HEADER_MAGIC,
                isal_zlib.decompress,
            )
            ids.append(np.frombuffer(found_ids, dtype=np.int64))
            weights.append(np.frombuffer(found_weights, dtype=np.float64))
            counts.append(np.frombuffer(found_counts, dtype=np.int64))
        if stop in kept:
            counts.append(np.zeros(1, dtype=np.int64))  # (its postings in kept)
        begin = stop + 1
    return SegmentWords(
        scanned.words,
        np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64),
        np.concatenate(weights) if weights else np.zeros(0, dtype=np.float64),
        np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64),
        kept,
    )


def _items_from(opened: _SegmentFiles, tindex: Any, key: bytes) -> Iterator[tuple[bytes, bytes]]:
    """``tindex.items_from(key)`` (an ``OrderedHashReader``'s keys and values in order,
    from ``key`` on), read many at a time where the table is open (Whoosh reads three
    times a key: its lengths, the key, the value)."""
    if opened.table is None:
        yield from tindex.items_from(key)
        return
    pos = tindex.closest_key_pos(key)
    if pos is not None:
        yield from opened.table.items_from(pos)


def phrase_fits(values: list[PackedValues], slop: int) -> npt.NDArray[np.bool_] | None:
    """Which candidates hold a phrase: ``values`` has, for each word of the phrase, the
    encoded positions (see :func:`position_table`) of the word in each candidate. A
    candidate fits where some position of each word stands 1 to ``slop`` after the
    nearest position before it that the word before reached (every position of the first
    word is reached). Worked out a candidate at a time in C, without a table of every
    position; None where the C speedups are not built or the positions are encoded
    otherwise: then :func:`position_table` gives them to numpy."""
    compiled = speedups.active()
    if compiled is None or not fast_paths():
        return None
    try:
        fits = compiled.phrase_fits([(v.joined, v.starts, v.ends) for v in values], slop)
    except ValueError:
        return None
    return np.frombuffer(fits, dtype=np.bool_)


def position_table(values: list[bytes]) -> tuple[IntArray, IntArray]:
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
    if not fast_paths():
        return _decoded_position_table(values)
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


def _decoded_position_table(values: list[bytes]) -> tuple[IntArray, IntArray]:
    """:func:`position_table` through Whoosh's own ``Positions.decode_positions``."""
    decode = formats.Positions().decode_positions
    lists = [decode(value) for value in values]
    counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    owners = np.repeat(np.arange(len(values), dtype=np.int64), counts)
    total = int(counts.sum())
    return owners, np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=total)


_STOP = ord(".")
_PICKLE_PROTOCOL_2 = b"\x80\x02"


# -- columns ---------------------------------------------------------------------------------


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


# -- queries and weighting ----------------------------------------------------------------


def pattern_words(segment: Any, q: Any) -> list[str]:
    """The words of ``segment`` that the pattern query ``q`` (Prefix, Wildcard) stands
    for, as Whoosh expands it."""
    field = segment.schema[q.fieldname]
    texts = q._btexts(segment) if fast_paths() else (t for _, t in q.expanded_terms(segment))
    return [field.from_bytes(b) for b in sorted(set(texts)) if b]


def compile_query(q: Any, reader: Any) -> Any:
    """The query Whoosh runs for ``q`` (a ``NumericRange``: ranges of its terms; through
    its public ``simplify`` for a Whoosh whose internals this does not know)."""
    return q._compile_query(reader) if fast_paths() else q.simplify(reader)


def term_range_texts(q: Any, reader: Any) -> list[bytes]:
    """The indexed terms (bytes) of ``reader`` a ``TermRange`` stands for."""
    if not fast_paths():
        return [t for _, t in q.expanded_terms(reader)]
    return list(q._btexts(reader))


def bm25_b(weighting: Any, searcher: Any, fieldname: str, text: str) -> float | None:
    """``B`` of a ``BM25F`` weighting model for ``fieldname`` (its per-field value): as
    the model keeps it, else as its scorer of ``fieldname:text`` has it (None: unknown)."""
    if fast_paths():
        return float(weighting._field_B.get(fieldname, weighting.B))
    b = getattr(weighting.scorer(searcher, fieldname, text), "B", None)
    return float(b) if isinstance(b, int | float) else None
