"""Facet values per document, held as compact arrays and counted with numpy.

A :class:`FacetTable` is built once per index generation from the index's columns and saved
beside the index files (``facets.npz``), so that opening a generation reads arrays instead of
every document; counting the values of any set of documents is then a vectorised
``bincount``.
Values that differ only in case or accents (``C. Balázs`` and ``c. balazs``) are one value,
shown as first seen.
"""

from __future__ import annotations

import threading
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, overload

import numpy as np
import numpy.typing as npt
from whoosh.reading import IndexReader

from pubsearch.codec import w3columns
from pubsearch.core import gcpause, npzfiles
from pubsearch.core.ranges import gathered
from pubsearch.index.schema import VALUE_SEP
from pubsearch.ingest.records import fold

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]


@dataclass(frozen=True)
class ValueParts:
    """A multi-valued facet's table for one segment, as its writer sends it back: the
    labels and their folded keys packed (each UTF-8, joined by VALUE_SEP), offsets and
    value ids. Packed, the labels and keys of 30,000 records' authors take 3 MB rather
    than the 17 MB of two lists of strings, which a build's processes would hold for
    every segment until the table is joined (docs/growth.md)."""

    labels: bytes
    keys: bytes
    count: int
    offsets: IntArray
    value_ids: Int32Array


FACETS_FILE = "facets.npz"
# A document's citation count when its source gave none.
NO_COUNT = -1
# Bump when the saved arrays change meaning; older files are then rebuilt from the index.
FORMAT_VERSION = 4  # 2: no year is 0, not the column's default; 3: dates; 4: citations
# Separates the documents' column values when they are decoded in one go.
_DOC_SEP = "\x1e"
# Below this share of matching documents, counting walks the matches' own entries.
_SPARSE_SHARE = 0.05
# Above this one, those of the documents left out, taken from every document's counts:
# at 1M records (6.3M authors' entries), 16 to 31 ms against 45 to 50 for testing every
# entry, for 90 % to 70 % of the documents (warm; bench of 2 December 2026 in
# docs/growth.md).
_MOST_SHARE = 0.6


@dataclass(frozen=True)
class MultiValued:
    """Document -> values, as CSR arrays: the values of doc ``d`` are
    ``value_ids[offsets[d]:offsets[d + 1]]``."""

    labels: Sequence[str]  # by id
    ids_by_key: Mapping[str, int]  # folded value -> its id
    offsets: IntArray
    value_ids: Int32Array
    doc_of_entry: Int32Array

    @classmethod
    def from_values(
        cls,
        per_doc: list[list[str]],
        labels: list[str] | None = None,
        known: Mapping[str, int] | None = None,
    ) -> MultiValued:
        """From each document's values; ``labels`` (optional) fixes the ids of known values,
        and ``known`` (optional) gives their folded keys (else each label is folded)."""
        labels = list(labels or ())
        if known is None:
            ids_by_key = {fold(label): i for i, label in enumerate(labels)}
        elif isinstance(known, _SavedKeys):
            ids_by_key = known.copy()
        else:
            ids_by_key = dict(known)
        ids_by_value: dict[str, int] = {}
        lengths = np.zeros(len(per_doc), dtype=np.int64)
        value_ids: list[int] = []
        for docnum, values in enumerate(per_doc):
            if not values:
                continue
            lengths[docnum] = len(values)
            for value in values:
                vid = ids_by_value.get(value)
                if vid is None:
                    key = fold(value)
                    vid = ids_by_key.get(key)
                    if vid is None:
                        vid = ids_by_key[key] = len(labels)
                        labels.append(value)
                    ids_by_value[value] = vid
                value_ids.append(vid)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls._from_arrays(
            tuple(labels), ids_by_key, offsets, np.asarray(value_ids, dtype=np.int32)
        )

    @classmethod
    def _from_arrays(
        cls,
        labels: Sequence[str],
        ids_by_key: Mapping[str, int],
        offsets: IntArray,
        value_ids: Int32Array,
    ) -> MultiValued:
        lengths = np.diff(offsets)
        return cls(
            labels=labels,
            ids_by_key=ids_by_key,
            offsets=offsets,
            value_ids=value_ids,
            doc_of_entry=np.repeat(np.arange(len(lengths), dtype=np.int32), lengths),
        )

    @classmethod
    def from_column(cls, reader: IndexReader, column: str) -> MultiValued:
        return cls.from_values(_column_values(reader, column))

    def extended(self, per_doc: list[list[str]]) -> MultiValued:
        """This table with documents appended (ids of known values unchanged)."""
        # The keys known already, not every label folded again (a million at 1M records).
        added = MultiValued.from_values(per_doc, list(self.labels), self.ids_by_key)
        offsets = np.concatenate([self.offsets, self.offsets[-1] + added.offsets[1:]])
        value_ids = np.concatenate([self.value_ids, added.value_ids]).astype(np.int32)
        return MultiValued._from_arrays(added.labels, added.ids_by_key, offsets, value_ids)

    def count(self, docs: BoolArray) -> IntArray:
        """Count of documents in ``docs`` per value id."""
        matches = np.count_nonzero(docs)
        if matches > _MOST_SHARE * len(docs):
            # Most documents (a common word, a short prefix, a pasted paragraph): every
            # document's counts less those of the ones left out.
            return self._every_count - self._count_of(np.flatnonzero(~docs))
        if matches < _SPARSE_SHARE * len(docs):
            return self._count_of(np.flatnonzero(docs))
        return np.bincount(self.value_ids[docs[self.doc_of_entry]], minlength=len(self.labels))

    def _count_of(self, docs: IntArray) -> IntArray:
        """:meth:`count` of a few documents (their numbers): their own entries gathered,
        rather than every entry tested."""
        starts = self.offsets[docs]
        lengths = self.offsets[docs + 1] - starts
        firsts = np.cumsum(lengths) - lengths  # where each document's entries begin
        entries = np.repeat(starts - firsts, lengths) + np.arange(int(lengths.sum()))
        return np.bincount(self.value_ids[entries], minlength=len(self.labels))

    def prepare(self) -> None:
        """Work out every document's counts now (see :meth:`count`), not for the first
        search that matches nearly every document; and make the dict of every key, which a
        saved table makes after its first lookups (a server looks up thousands)."""
        self._every_count  # noqa: B018
        if isinstance(self.ids_by_key, _SavedKeys):
            self.ids_by_key.prepare()

    @cached_property
    def _every_count(self) -> IntArray:
        """Count of every document (deleted ones too) per value id: worked out once."""
        counts = np.bincount(self.value_ids, minlength=len(self.labels))
        counts.flags.writeable = False
        return counts

    def docs_with_ids(self, ids: list[int]) -> BoolArray:
        """Mask of documents having at least one of the values ``ids``."""
        mask = np.zeros(len(self.offsets) - 1, dtype=np.bool_)
        if ids:
            hits = np.isin(self.value_ids, np.asarray(ids, dtype=np.int32))
            mask[self.doc_of_entry[hits]] = True
        return mask

    def _arrays(self, prefix: str) -> dict[str, Any]:
        keys = _keys_in_id_order(self.ids_by_key, len(self.labels))
        # The ids in the order of their keys (code points, as UTF-8's bytes compare): a
        # process that looks up a few values finds them by bisection (_SavedKeys).
        order = sorted(range(len(keys)), key=keys.__getitem__)
        labels, packed_keys = _pack_strings(self.labels), _pack_strings(keys)
        return {
            f"{prefix}_count": np.asarray([len(self.labels)], dtype=np.int64),
            f"{prefix}_labels": labels,
            f"{prefix}_label_ends": string_ends(labels, len(self.labels)),
            f"{prefix}_keys": packed_keys,
            f"{prefix}_key_ends": string_ends(packed_keys, len(keys)),
            f"{prefix}_key_order": np.asarray(order, dtype=np.int32),
            f"{prefix}_offsets": self.offsets,
            f"{prefix}_value_ids": self.value_ids,
        }

    def parts(self) -> ValueParts:
        """This table as :meth:`joined` takes it."""
        keys = _keys_in_id_order(self.ids_by_key, len(self.labels))
        return ValueParts(
            labels=_pack_text(self.labels),
            keys=_pack_text(keys),
            count=len(self.labels),
            offsets=self.offsets,
            value_ids=self.value_ids,
        )

    @classmethod
    def joined(cls, parts: list[ValueParts]) -> MultiValued:
        """The table of the documents of ``parts`` one after another: what
        :meth:`from_values` makes of them all, the same ids and labels, for the cost of a
        dict lookup per distinct value of each part (not per value, nor a fold).

        A part's values are numbered in the order they first appear in it, and each is
        shown as first seen: taken part by part, a value new to the whole gets the next
        id and keeps the label its first part gave it.
        """
        labels: list[str] = []
        ids_by_key: dict[str, int] = {}
        lengths: list[IntArray] = []
        value_ids: list[Int32Array] = []
        for part in parts:
            part_labels = _unpack_text(part.labels, part.count)
            part_keys = _unpack_text(part.keys, part.count)
            remap: list[int] = []
            for label, key in zip(part_labels, part_keys, strict=True):
                vid = ids_by_key.get(key)
                if vid is None:
                    vid = ids_by_key[key] = len(labels)
                    labels.append(label)
                remap.append(vid)
            lengths.append(np.diff(part.offsets))
            value_ids.append(np.asarray(remap, dtype=np.int32)[part.value_ids])
        if not parts:
            return cls.from_values([])
        offsets = np.zeros(sum(map(len, lengths)) + 1, dtype=np.int64)
        np.cumsum(np.concatenate(lengths), out=offsets[1:])
        return cls._from_arrays(
            tuple(labels), ids_by_key, offsets, np.concatenate(value_ids).astype(np.int32)
        )

    @classmethod
    def _from_saved(cls, data: Any, prefix: str) -> MultiValued:
        count = int(data[f"{prefix}_count"][0])
        return cls._from_arrays(
            _SavedLabels(data[f"{prefix}_labels"], count, data.get(f"{prefix}_label_ends")),
            _SavedKeys(
                data[f"{prefix}_keys"],
                count,
                data.get(f"{prefix}_key_order"),
                data.get(f"{prefix}_key_ends"),
            ),
            np.asarray(data[f"{prefix}_offsets"], dtype=np.int64),  # a copy only if not
            np.asarray(data[f"{prefix}_value_ids"], dtype=np.int32),
        )


@dataclass(frozen=True)
class FacetTable:
    """Authors, subjects, years, dates and citation counts of every document of one index
    generation."""

    authors: MultiValued
    subjects: MultiValued
    years: IntArray  # 0 where a document has no year
    live: BoolArray  # False for deleted documents
    dates: IntArray  # YYYYMMDD, 0 where a document has no date
    cited: IntArray  # citation counts, NO_COUNT where the source gave none

    @property
    def has_citations(self) -> bool:
        """Whether any live document has a citation count (a "most cited" sort means
        something)."""
        return bool(np.any((self.cited != NO_COUNT) & self.live))

    @classmethod
    def build(cls, reader: IndexReader) -> FacetTable:
        """Read every document's facet values from the index (the slow way, once)."""
        with gcpause.paused():  # hundreds of thousands of strings and lists, no cycles
            return cls(
                authors=MultiValued.from_column(reader, "author_facet"),
                subjects=MultiValued.from_column(reader, "subject_facet"),
                years=_years(reader, 0, reader.doc_count_all()),
                live=_live(reader),
                dates=_dates(reader, 0, reader.doc_count_all()),
                cited=_cited(reader, 0, reader.doc_count_all()),
            )

    @classmethod
    def from_segments(cls, segments: list[SegmentFacets]) -> FacetTable:
        """The table of an index of these segments, in this order, none with deletions:
        :meth:`build`'s, from what the writers of the segments worked out (see
        :func:`segment_facets`)."""
        with gcpause.paused():
            years = [s.years for s in segments]
            dates = [s.dates for s in segments]
            cited = [s.cited for s in segments]
            return cls(
                authors=MultiValued.joined([s.authors for s in segments]),
                subjects=MultiValued.joined([s.subjects for s in segments]),
                years=np.concatenate(years) if years else np.zeros(0, dtype=np.int64),
                live=np.ones(sum(map(len, years)), dtype=np.bool_),
                dates=np.concatenate(dates) if dates else np.zeros(0, dtype=np.int64),
                cited=np.concatenate(cited) if cited else np.zeros(0, dtype=np.int64),
            )

    def extended(self, reader: IndexReader) -> FacetTable:
        """This table for ``reader``, an index that is this one's documents (some now
        deleted) followed by new ones: only the new documents are read."""
        start, stop = self.size, reader.doc_count_all()
        return FacetTable(
            authors=self.authors.extended(_column_values(reader, "author_facet", start)),
            subjects=self.subjects.extended(_column_values(reader, "subject_facet", start)),
            years=np.concatenate([self.years, _years(reader, start, stop)]),
            live=_live(reader),
            dates=np.concatenate([self.dates, _dates(reader, start, stop)]),
            cited=np.concatenate([self.cited, _cited(reader, start, stop)]),
        )

    @classmethod
    def load(cls, directory: Path, reader: IndexReader, generation: int) -> FacetTable | None:
        """The table saved in ``directory`` for Whoosh generation ``generation`` of the
        index ``reader`` reads, or None when there is none (or it is for another)."""
        try:
            # Mapped from the file: two server processes share one copy in the page cache.
            data = npzfiles.load_arrays(directory / FACETS_FILE)
            meta = data["meta"]
            if int(meta[0]) != FORMAT_VERSION or int(meta[1]) != generation:
                return None
            if int(meta[2]) != reader.doc_count_all():
                return None
            return cls(
                authors=MultiValued._from_saved(data, "authors"),
                subjects=MultiValued._from_saved(data, "subjects"),
                years=np.asarray(data["years"], dtype=np.int64),
                live=_live(reader),
                dates=np.asarray(data["dates"], dtype=np.int64),
                cited=np.asarray(data["cited"], dtype=np.int64),
            )
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):
            return None

    def save(self, directory: Path, generation: int) -> None:
        """Write the table into ``directory`` (a new file, renamed into place)."""
        npzfiles.save_arrays(
            directory / FACETS_FILE,
            dict(
                meta=np.asarray([FORMAT_VERSION, generation, self.size], dtype=np.int64),
                years=self.years.astype(np.int16),
                dates=self.dates.astype(np.int32),
                cited=self.cited.astype(np.int64),
                **self.authors._arrays("authors"),
                **self.subjects._arrays("subjects"),
            ),
        )

    def prepare(self) -> None:
        """Work out now what counting the values of nearly every document takes (a server
        does this before it answers): every document's counts of each value."""
        for values in (self.authors, self.subjects):
            values.prepare()

    @property
    def size(self) -> int:
        return len(self.live)

    def year_mask(self, start: int | None, end: int | None) -> BoolArray:
        mask = self.years > 0
        if start is not None:
            mask &= self.years >= start
        if end is not None:
            mask &= self.years <= end
        return mask

    def count_years(self, docs: BoolArray) -> dict[int, int]:
        counts = np.bincount(self.years[docs & (self.years > 0)])
        return {int(y): int(c) for y, c in enumerate(counts) if c}


@dataclass(frozen=True)
class SegmentFacets:
    """The facet values of one segment's documents, as a worker that wrote the segment
    sends them back with it (see :meth:`FacetTable.from_segments`)."""

    authors: ValueParts
    subjects: ValueParts
    years: IntArray
    dates: IntArray
    cited: IntArray


def segment_facets(reader: IndexReader) -> SegmentFacets:
    """The facet values of the segment ``reader`` reads: computed by the worker that
    wrote it, while the other writes its own, rather than for the whole index once both
    are done, with one CPU idle."""
    with gcpause.paused():
        return SegmentFacets(
            authors=MultiValued.from_column(reader, "author_facet").parts(),
            subjects=MultiValued.from_column(reader, "subject_facet").parts(),
            years=_years(reader, 0, reader.doc_count_all()),
            dates=_dates(reader, 0, reader.doc_count_all()),
            cited=_cited(reader, 0, reader.doc_count_all()),
        )


def _column_values(reader: IndexReader, column: str, start: int = 0) -> list[list[str]]:
    """Each document's values (from ``start`` on), decoded in one go."""
    n = reader.doc_count_all()
    if not reader.has_column(column) or start >= n:
        return [[] for _ in range(start, n)]
    field = reader.schema[column]
    pieces = [
        _joined_values(leaf, column, field, first)
        for leaf, offset in reader.leaf_readers()
        if leaf.doc_count_all() > (first := max(start - offset, 0))
    ]
    text = _DOC_SEP.encode().join(pieces).decode("utf-8")
    return [chunk.split(VALUE_SEP) if chunk else [] for chunk in text.split(_DOC_SEP)]


def _joined_values(leaf: IndexReader, column: str, field: Any, start: int) -> bytes:
    """The column values of the segment ``leaf``'s documents from ``start`` on, as stored,
    joined by :data:`_DOC_SEP`.

    A ``VarBytesColumn`` (the facet columns) is read at once (see
    :func:`pubsearch.codec.w3columns.varbytes_values`).
    """
    creader = leaf.column_reader(column, translate=False)
    stop = leaf.doc_count_all()
    joined = w3columns.varbytes_values(creader, start, stop, _DOC_SEP.encode())
    if joined is not None:
        return joined
    convert = field.from_column_value
    return _DOC_SEP.encode().join(convert(creader[d]) for d in range(start, stop))


def _years(reader: IndexReader, start: int, stop: int) -> IntArray:
    """Each document's year (from ``start`` to ``stop``), 0 for a document without one.

    Whoosh's column gives such a document the column's default (65,535 for our year
    column, so that it sorts last), which is not a year.
    """
    return _column_numbers(reader, "year", start, stop)


def _dates(reader: IndexReader, start: int, stop: int) -> IntArray:
    """Each document's date as YYYYMMDD, 0 for a document without one (or an index made
    before dates were kept)."""
    return _column_numbers(reader, "date", start, stop)


def _cited(reader: IndexReader, start: int, stop: int) -> IntArray:
    """Each document's citation count, :data:`NO_COUNT` for a document without one (or
    any document of an index made before counts were kept)."""
    return _column_numbers(reader, "cited", start, stop, none=NO_COUNT)


def _column_numbers(
    reader: IndexReader, name: str, start: int, stop: int, none: int = 0
) -> IntArray:
    """Each document's value of the numeric column ``name``, ``none`` where it has none."""
    years = np.full(stop - start, none, dtype=np.int64)
    if name not in reader.schema or not reader.has_column(name):
        return years
    field = reader.schema[name]
    missing = field.column_type.default_value()
    for leaf, offset in reader.leaf_readers():
        count = leaf.doc_count_all()
        lo, hi = max(start - offset, 0), min(stop - offset, count)
        if lo >= hi:
            continue
        raw = w3columns.numeric_values(leaf.column_reader(name, translate=False), lo, hi)
        # The few distinct stored values, each converted as Whoosh's reader would.
        distinct, inverse = np.unique(raw, return_inverse=True)
        converted = np.asarray(
            [none if v == missing else field.from_column_value(int(v)) or 0 for v in distinct],
            dtype=np.int64,
        )
        years[offset + lo - start : offset + hi - start] = converted[inverse]
    return years


def _live(reader: IndexReader) -> BoolArray:
    """False for each deleted document: read from each segment's set of deleted documents,
    not by asking about every document."""
    live = np.ones(reader.doc_count_all(), dtype=np.bool_)
    if reader.has_deletions():
        for segment_reader, offset in reader.leaf_readers():
            if segment_reader.has_deletions():
                deleted = segment_reader.segment().deleted_docs()
                live[offset + np.fromiter(deleted, dtype=np.int64)] = False
    return live


def _pack_text(values: Any) -> bytes:
    return VALUE_SEP.join(values).encode("utf-8")


def _unpack_text(packed: bytes, count: int) -> list[str]:
    values = packed.decode("utf-8").split(VALUE_SEP) if count else []
    if len(values) != count:
        raise ValueError("saved facet strings do not match their count")
    return values


def _pack_strings(values: Any) -> npt.NDArray[np.uint8]:
    return np.frombuffer(_pack_text(values), dtype=np.uint8)


def _unpack_strings(packed: npt.NDArray[np.uint8], count: int) -> list[str]:
    return _unpack_text(packed.tobytes(), count)


class _SavedLabels(Sequence[str]):
    """Labels by id, from the labels saved in id order: a label is decoded when asked (a
    page shows a few dozen), all of them at once when iterated (the name index reads
    them all), not when a generation is opened (1.2 million authors at 1M records)."""

    def __init__(
        self,
        packed: npt.NDArray[np.uint8],
        count: int,
        ends: npt.NDArray[np.int64] | None = None,
    ) -> None:
        # Checked now (a bad file is then read afresh from the index: FacetTable.load);
        # where each label ends is saved by the build (string_ends), or found when one is
        # first asked for in a table saved without them.
        check_strings(packed, count, ends, "facet labels")
        self._packed = packed
        self._ends = ends
        self._count = count
        self._all: list[str] | None = None

    def __len__(self) -> int:
        return self._count

    def many(self, indices: Sequence[int]) -> list[str]:
        """The labels ``indices``, decoded in one go."""
        if self._all is not None:
            return [self._all[i] for i in indices]
        return strings_at(self._packed, self._label_ends(), indices)

    def _label_ends(self) -> npt.NDArray[np.int64]:
        ends = self._ends
        if ends is None:
            ends = self._ends = string_ends(self._packed, self._count)
        return ends

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if self._all is not None or isinstance(index, slice):
            return self._decoded()[index]
        if not -self._count <= index < self._count:
            raise IndexError("label id out of range")
        index %= self._count
        ends = self._label_ends()
        start = int(ends[index - 1]) + 1 if index else 0
        return self._packed[start : int(ends[index])].tobytes().decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def _decoded(self) -> list[str]:
        if self._all is None:
            self._all = _unpack_strings(self._packed, self._count)
        return self._all


class _SavedKeys(Mapping[str, int]):
    """Folded value -> id, from the keys saved in id order. A key is looked up by
    bisection over the ids in key order (saved beside them) for the first
    :data:`BISECTED_LOOKUPS` lookups, then from a dict of every key, made once: a one-shot
    query filters by a name or two and shows a page's authors (the dict of the 261,836
    author keys of the arXiv records takes 0.15 s to make), a server asks thousands. A
    table saved without the order makes the dict the first time it is asked."""

    def __init__(
        self,
        packed: npt.NDArray[np.uint8],
        count: int,
        order: npt.NDArray[np.int32] | None = None,
        ends: npt.NDArray[np.int64] | None = None,
    ) -> None:
        # What _unpack_strings will find, checked now, while a bad file can still be
        # read afresh from the index (FacetTable.load).
        check_strings(packed, count, ends, "facet keys")
        if order is not None and len(order) != count:
            raise ValueError("saved facet key order does not match its count")
        self._packed: npt.NDArray[np.uint8] | None = packed
        self._count = count
        self._ids: dict[str, int] | None = None
        self._order = order
        self._ends = ends
        self._bisected = 0
        self._lock = threading.Lock()

    def _lookup(self, key: str) -> int | None:
        """``key``'s id, or None."""
        ids = self._ids
        if ids is None and self._order is not None and self._bisected < BISECTED_LOOKUPS:
            packed = self._packed
            if packed is not None:  # (None: the dict was made meanwhile)
                self._bisected += 1
                try:
                    wanted = key.encode("utf-8")
                except UnicodeEncodeError:  # (a lone surrogate: no saved key has one)
                    return None
                return self._bisect(packed, self._order, wanted)
        return self._dict().get(key)

    def _bisect(
        self, packed: npt.NDArray[np.uint8], order: npt.NDArray[np.int32], wanted: bytes
    ) -> int | None:
        ends = self._ends
        if ends is None:
            ends = self._ends = string_ends(packed, self._count)
        low, high = 0, self._count
        while low < high:
            middle = (low + high) // 2
            vid = int(order[middle])
            start = int(ends[vid - 1]) + 1 if vid else 0
            found = packed[start : int(ends[vid])].tobytes()
            if found < wanted:
                low = middle + 1
            elif found > wanted:
                high = middle
            else:
                return vid
        return None

    def _dict(self) -> dict[str, int]:
        ids = self._ids
        if ids is None:
            with self._lock:
                if self._ids is None:
                    assert self._packed is not None
                    keys = _unpack_strings(self._packed, self._count)
                    self._ids = dict(zip(keys, range(len(keys)), strict=True))
                    self._packed = None
                ids = self._ids
        return ids

    def copy(self) -> dict[str, int]:
        return dict(self._dict())

    def prepare(self) -> None:
        """Make the dict of every key now."""
        self._dict()

    def __getitem__(self, key: str) -> int:
        vid = self._lookup(key) if isinstance(key, str) else None
        if vid is None:
            raise KeyError(key)
        return vid

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._lookup(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return self._count


_SEP_BYTE = ord(VALUE_SEP)
# How many keys a saved table looks up by bisection before making its dict of them all.
BISECTED_LOOKUPS = 256


def _separators(packed: npt.NDArray[np.uint8]) -> int:
    """How many value separators ``packed`` holds (a count: a tenth of the time of
    finding where they are)."""
    return int(np.count_nonzero(packed == _SEP_BYTE))


def string_ends(packed: npt.NDArray[np.uint8], count: int) -> npt.NDArray[np.int64]:
    """Where each of the ``count`` strings packed in ``packed`` (joined by the separator)
    ends: string ``i`` is ``packed[ends[i - 1] + 1 : ends[i]]`` (from 0 for the first)."""
    if not count:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([np.flatnonzero(packed == _SEP_BYTE), [len(packed)]]).astype(np.int64)


def labels_at(labels: Sequence[str], indices: Sequence[int]) -> list[str]:
    """``labels[i]`` for each of ``indices``: saved labels decoded in one go."""
    many = getattr(labels, "many", None)
    if many is not None:
        found: list[str] = many(indices)
        return found
    return [labels[i] for i in indices]


def strings_at(
    packed: npt.NDArray[np.uint8], ends: npt.NDArray[np.int64], indices: Sequence[int]
) -> list[str]:
    """The strings ``indices`` of ``packed`` (ending at ``ends``: see :func:`string_ends`),
    decoded in one go: a facet's thousand people's hints and ids, one call each, took a
    few milliseconds a name."""
    if not len(indices):
        return []
    at = np.asarray(indices, dtype=np.int64)
    starts = np.where(at > 0, ends[at - 1] + 1, 0)
    lengths = ends[at] - starts
    sizes = lengths + 1  # each string, then a separator
    out = np.full(int(sizes.sum()), _SEP_BYTE, dtype=np.uint8)
    out[gathered(np.cumsum(sizes) - sizes, lengths)] = packed[gathered(starts, lengths)]
    return out[:-1].tobytes().decode("utf-8").split(VALUE_SEP)


def check_strings(
    packed: npt.NDArray[np.uint8], count: int, ends: npt.NDArray[np.int64] | None, what: str
) -> None:
    """Raise ValueError unless ``packed`` holds ``count`` strings (ending at ``ends``,
    where the build saved them: a separator at each end but the last, the last at the
    end; else its separators counted)."""
    if ends is None:
        ok = not count or _separators(packed) == count - 1
    else:
        ok = len(ends) == count and (
            not count
            or (
                int(ends[-1]) == len(packed)
                and bool(np.all(packed[ends[:-1]] == _SEP_BYTE))
                and _separators(packed[int(ends[-2]) + 1 :] if count > 1 else packed) == 0
            )
        )
    if not ok:
        raise ValueError(f"saved {what} do not match their count")


def _keys_in_id_order(ids_by_key: Mapping[str, int], size: int) -> list[str]:
    keys = [""] * size
    for key, vid in ids_by_key.items():
        keys[vid] = key
    return keys
