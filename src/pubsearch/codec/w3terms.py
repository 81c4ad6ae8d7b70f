"""The terms table of the Whoosh 3 format read below Whoosh's API: a segment's files opened
once, its hash table of terms looked up with ``pread`` (many terms of many segments at
once, in C where it was built), its items scanned from a key on, and a term's row (its
document frequency and where its posting list is)."""

from __future__ import annotations

import os
import struct
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh.codec.whoosh3 import (
    W3TermInfo,
    W3TermsReader,
)
from whoosh.filedb import filetables
from whoosh.filedb.compound import SubFile
from whoosh.filedb.filestore import OverlayStorage

from pubsearch.codec import hotlists
from pubsearch.codec.w3version import fast_paths
from pubsearch.core import speedups

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# The whoosh3 releases whose segment format, and readers' and writers' private attributes,
# this module and w3write were written against and tested with (pyproject.toml's pin).


class SegmentFiles:
    """What this module opens of a segment besides Whoosh: its kept lists, and its terms
    table read from a file descriptor of its own (:class:`TermsTable`)."""

    def __init__(self, segment: Any) -> None:
        self.kept: hotlists.HotLists | None = None
        self.table: TermsTable | None = None
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
            self.table = TermsTable(fd, sub._offset, tindex.tables, tindex.endofdata)


class TermsTable:
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

    def scan(self, pos: int, start: bytes, compiled: Any) -> Scanned:
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
                buffer, 0, start, FIELD_NUMBER_SIZE, stats
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
        return Scanned(
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


FIELD_NUMBER_SIZE = 2  # a whoosh3 term's key: the field's number (unsigned short), the term


@dataclass(frozen=True)
class Scanned:
    """Words of a terms table (see :meth:`TermsTable.scan`) and, for each, its posting
    list's document frequency, offset and length in the postings file."""

    words: list[str]
    frequencies: IntArray
    offsets: IntArray
    lengths: IntArray

    def only(self, keep: IntArray) -> Scanned:
        return Scanned(
            [self.words[i] for i in keep.tolist()],
            self.frequencies[keep],
            self.offsets[keep],
            self.lengths[keep],
        )


_OPENED_LOCK = threading.Lock()


def opened_files(segment: Any) -> SegmentFiles:
    with _OPENED_LOCK:
        found = _OPENED.get(segment)
    if found is None:
        found = SegmentFiles(segment)
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
    (:meth:`TermsTable.get_many`); each text's key and hash are made once. Raises
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
        opened = opened_files(segment)
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


def items_from(opened: SegmentFiles, tindex: Any, key: bytes) -> Iterator[tuple[bytes, bytes]]:
    """``tindex.items_from(key)`` (an ``OrderedHashReader``'s keys and values in order,
    from ``key`` on), read many at a time where the table is open (Whoosh reads three
    times a key: its lengths, the key, the value)."""
    if opened.table is None:
        yield from tindex.items_from(key)
        return
    pos = tindex.closest_key_pos(key)
    if pos is not None:
        yield from opened.table.items_from(pos)


_OPENED: weakref.WeakKeyDictionary[Any, SegmentFiles] = weakref.WeakKeyDictionary()
