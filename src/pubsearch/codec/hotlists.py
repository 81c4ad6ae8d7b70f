"""A segment's longest posting lists kept a second time, as plain arrays beside it.

A Whoosh 3 posting list is a run of blocks, each one zlib stream holding the block's
document numbers, weights and positions together: to know which documents have a word,
or to score them, every block is inflated and its positions are inflated with it. For a
word in a third of the abstracts that is 32 bytes inflated per posting, and a query of
many common words (a pasted paragraph) inflates hundreds of megabytes at a million
records. The few hundred words of a segment that are in more than one document in
:data:`SHARE` (three quarters of its postings) are written again when the segment is
written, in ``<segment id>.hot.npz``: per field, the words (sorted, each with its row of
the segment's terms table), and for each its document numbers (a bitmap for a list of more
than one document in :data:`DENSE`, else ``uint16`` when the segment has at most 65,536
documents) and weights (``uint8``: a word whose weights are not whole numbers from 1 to 255
is left out). The file is mapped, not read, so a list costs a slice and a conversion.

The file is a cache of what the segment holds, never the only copy: a segment without
one (written by Whoosh's own writer, or by an older pubsearch) is read from its blocks,
and Whoosh deletes the file with its segment (its name is the segment's, with another
extension). Positions are not kept here: phrases read them from the blocks.
"""

from __future__ import annotations

import threading
import zipfile
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from pubsearch.core import npzfiles

SUFFIX = ".hot.npz"
# A list is kept when it has at least this share of the segment's documents...
SHARE = 32
# ... and at least this many postings (a small segment's lists inflate fast anyway).
MIN_POSTINGS = 512
_FORMAT = 1

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def threshold(doc_count: int) -> int:
    """The postings a list of a segment of ``doc_count`` documents needs to be kept."""
    return max(MIN_POSTINGS, doc_count // SHARE)


@dataclass
class FieldLists:
    """One field's kept lists. List ``i`` (of ``texts[i]``, whose row in the segment's
    terms table is ``rows[i]``: the table need not be searched for it) has postings
    ``ends[i-1]:ends[i]`` of ``weights``; its document numbers are ``ids[id_ends[i-1]:
    id_ends[i]]`` when that is as many, else the set bits of the ``i``-th bitmap of
    ``bits`` (each ``ceil(documents / 8)`` bytes, a list of more than one document in
    :data:`DENSE` that way)."""

    texts: npt.NDArray[np.bytes_]
    rows: npt.NDArray[np.uint8]
    ends: npt.NDArray[np.int64]
    ids: npt.NDArray[Any]
    id_ends: npt.NDArray[np.int64]
    bits: npt.NDArray[np.uint8]
    weights: npt.NDArray[np.uint8]


# A list of more than one document in this many is kept as a bitmap: smaller than its
# document numbers as 16-bit numbers.
DENSE = 16


def select(
    texts: Sequence[bytes],
    bounds: Sequence[int],
    order: npt.NDArray[Any],
    docnums: npt.NDArray[Any],
    weights: npt.NDArray[np.float64],
    doc_count: int,
) -> FieldLists | None:
    """The lists of one field worth keeping, from a segment's sorted postings:
    ``texts[i]``'s postings are ``order[bounds[i-1]:bounds[i]]`` (in document order),
    ``docnums`` and ``weights`` each posting's. None when no list is long enough."""
    ends = np.asarray(bounds, dtype=np.int64)
    starts = np.concatenate(([0], ends[:-1])) if len(ends) else ends
    lengths = ends - starts
    long = np.flatnonzero(lengths >= threshold(doc_count))
    if not len(long):
        return None
    id_type = np.uint16 if doc_count <= 1 << 16 else np.uint32
    row = (doc_count + 7) // 8
    fit: list[int] = []
    sparse_ids, bitmaps, kept_weights = [], [], []
    id_ends, kept_ends = [], []
    id_total = posting_total = 0
    for k in long:
        postings = order[starts[k] : ends[k]]
        w = weights[postings]
        if not bool(((w >= 1) & (w <= 255) & (w == np.round(w))).all()):
            continue  # whole-number weights from 1 to 255 only: the rest stay in blocks
        fit.append(int(k))
        docs = docnums[postings]
        if len(docs) * DENSE > doc_count:
            flags = np.zeros(row * 8, dtype=np.bool_)
            flags[docs] = True
            bitmaps.append(np.packbits(flags))
        else:
            sparse_ids.append(docs.astype(id_type))
            id_total += len(docs)
        kept_weights.append(w.astype(np.uint8))
        posting_total += len(docs)
        id_ends.append(id_total)
        kept_ends.append(posting_total)
    if not fit:
        return None
    return FieldLists(
        texts=np.array([texts[k] for k in fit], dtype=np.bytes_),
        rows=np.zeros((0, 0), dtype=np.uint8),  # (see with_rows)
        ends=np.array(kept_ends, dtype=np.int64),
        ids=np.concatenate(sparse_ids) if sparse_ids else np.zeros(0, dtype=id_type),
        id_ends=np.array(id_ends, dtype=np.int64),
        bits=np.concatenate(bitmaps) if bitmaps else np.zeros(0, dtype=np.uint8),
        weights=np.concatenate(kept_weights),
    )


def with_rows(lists: FieldLists, rows: dict[bytes, bytes]) -> FieldLists | None:
    """``lists`` with each text's row of the terms table (``rows``); None when a row is
    missing or the rows are not all one length (postings kept in the table: never so
    for a list this long)."""
    found = [rows.get(bytes(text)) for text in lists.texts]
    if any(row is None for row in found) or len({len(row) for row in found if row}) != 1:
        return None
    table = np.frombuffer(b"".join(row for row in found if row), dtype=np.uint8)
    lists.rows = table.reshape(len(found), -1)
    return lists


_PARTS = ("texts", "rows", "ends", "ids", "id_ends", "bits", "weights")


def save(path: Path, fields: dict[str, FieldLists]) -> None:
    """Write the kept lists of a segment's fields to ``path`` (see the module's text)."""
    arrays: dict[str, Any] = {"format": np.array([_FORMAT], dtype=np.int64)}
    for fieldname, lists in fields.items():
        for part in _PARTS:
            arrays[f"{fieldname}.{part}"] = getattr(lists, part)
    npzfiles.save_arrays(path, arrays)


class HotLists:
    """A segment's kept lists, mapped from its file."""

    def __init__(self, arrays: dict[str, Any], doc_count: int) -> None:
        """Raises ValueError when ``arrays`` do not fit together as :func:`save` writes
        them for a segment of ``doc_count`` documents."""
        self._count = doc_count
        self._row = (doc_count + 7) // 8
        self._fields: dict[str, FieldLists] = {}
        names = {name.removesuffix(".texts") for name in arrays if name.endswith(".texts")}
        for fieldname in names:
            parts = [arrays.get(f"{fieldname}.{part}") for part in _PARTS]
            if any(part is None for part in parts):
                raise ValueError(f"{fieldname}: kept lists without all their parts")
            lists = FieldLists(*cast(list[Any], parts))
            dense = len(lists.texts) - int(np.count_nonzero(np.diff(lists.id_ends, prepend=0)))
            if (
                lists.texts.dtype.kind != "S"
                or lists.rows.dtype != np.uint8
                or lists.rows.ndim != 2
                or len(lists.rows) != len(lists.texts)
                or lists.ends.dtype != np.int64
                or lists.id_ends.dtype != np.int64
                or lists.ids.dtype not in (np.uint16, np.uint32)
                or lists.bits.dtype != np.uint8
                or lists.weights.dtype != np.uint8
                or not len(lists.texts)
                or len(lists.ends) != len(lists.texts)
                or len(lists.id_ends) != len(lists.texts)
                or int(lists.ends[-1]) != len(lists.weights)
                or int(lists.id_ends[-1]) != len(lists.ids)
                or dense * self._row != len(lists.bits)
            ):
                raise ValueError(f"{fieldname}: kept lists that do not fit together")
            self._fields[fieldname] = lists
        # Which bitmap of its field each list kept as one is (a list with no numbers).
        self._bit_rows = {
            name: np.cumsum(np.diff(lists.id_ends, prepend=0) == 0) - 1
            for name, lists in self._fields.items()
        }

    def mark(self, fieldname: str, text: bytes, out: npt.NDArray[np.bool_]) -> bool:
        """Set ``out[d]`` (``out``: one flag per document of the segment) for every
        document ``d`` of ``fieldname:text``'s postings; False when the list is not kept
        here (``out`` is then untouched)."""
        found = self._find(fieldname, text)
        if found is None:
            return False
        docs = self._docs(fieldname, *found)
        if docs.dtype == np.bool_:
            out |= docs
        else:
            out[docs] = True
        return True

    def _docs(self, fieldname: str, lists: FieldLists, i: int) -> npt.NDArray[Any]:
        """List ``i``'s documents: its numbers as stored, or, for a list kept as a bitmap,
        a flag per document of the segment (an array of booleans)."""
        id_start, id_end = (int(lists.id_ends[i - 1]) if i else 0), int(lists.id_ends[i])
        if id_end > id_start:
            return lists.ids[id_start:id_end]
        at = int(self._bit_rows[fieldname][i]) * self._row
        bits = np.unpackbits(lists.bits[at : at + self._row], count=self._count)
        return bits.view(np.bool_)

    def _find(self, fieldname: str, text: bytes) -> tuple[FieldLists, int] | None:
        lists = self._fields.get(fieldname)
        if lists is None:
            return None
        texts = lists.texts
        i = int(texts.searchsorted(np.bytes_(text)))
        if i >= len(texts) or texts[i] != text:  # (a text ending in NUL is never found)
            return None
        return lists, i

    def row(self, fieldname: str, text: bytes) -> bytes | None:
        """The row of ``fieldname:text`` in the segment's terms table, or None when its
        list is not kept here (the table has the row, or the segment not the term)."""
        found = self._find(fieldname, text)
        return None if found is None else found[0].rows[found[1]].tobytes()

    def rows(self, fieldname: str, texts: Sequence[bytes]) -> list[bytes | None]:
        """:meth:`row` of each of ``texts``, found with one search."""
        lists = self._fields.get(fieldname)
        if lists is None or not texts:
            return [None] * len(texts)
        wanted = np.array(texts, dtype=np.bytes_)
        at = np.minimum(lists.texts.searchsorted(wanted), len(lists.texts) - 1)
        # (a text ending in NUL is never found, as with row)
        hit = (lists.texts[at] == wanted) & np.fromiter(
            (not text.endswith(b"\0") for text in texts), dtype=np.bool_, count=len(texts)
        )
        pairs = zip(at.tolist(), hit.tolist(), strict=True)
        return [lists.rows[i].tobytes() if h else None for i, h in pairs]

    def get(self, fieldname: str, text: bytes) -> tuple[IntArray, FloatArray] | None:
        """The document numbers (in the segment) and weights of ``fieldname:text``'s
        postings, or None when the list is not kept here."""
        found = self._find(fieldname, text)
        if found is None:
            return None
        lists, i = found
        start, end = (int(lists.ends[i - 1]) if i else 0), int(lists.ends[i])
        docs = self._docs(fieldname, lists, i)
        ids = np.flatnonzero(docs) if docs.dtype == np.bool_ else docs.astype(np.int64)
        if len(ids) != end - start:
            return None  # a damaged bitmap: the segment's blocks are read instead
        return ids, lists.weights[start:end].astype(np.float64)


# Files opened by this process, by path: a segment's file is written once, under a
# generation directory's unique name, and never changed.
_OPENED: OrderedDict[str, HotLists | None] = OrderedDict()
_OPENED_LIMIT = 4096
_LOCK = threading.Lock()


def open_lists(path: str, doc_count: int) -> HotLists | None:
    """The kept lists in the file ``path`` (of a segment of ``doc_count`` documents), or
    None when there is no such file or it is not one this reads (the segment's blocks are
    read instead)."""
    key = path
    with _LOCK:
        if key in _OPENED:
            _OPENED.move_to_end(key)
            return _OPENED[key]
    found: HotLists | None = None
    try:
        arrays = npzfiles.load_arrays(Path(path))
        fmt = arrays.get("format")
        if fmt is not None and fmt.tolist() == [_FORMAT]:
            found = HotLists(arrays, doc_count)
    except (OSError, ValueError, zipfile.BadZipFile):
        pass  # no file, or a damaged one: the blocks are read
    with _LOCK:
        _OPENED[key] = found
        while len(_OPENED) > _OPENED_LIMIT:
            _OPENED.popitem(last=False)
    return found
