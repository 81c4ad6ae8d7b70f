"""Facet values per document, held as compact arrays and counted with numpy.

A :class:`FacetTable` is built once per index generation from the index's columns; counting
the values of any set of documents is then a vectorised ``bincount`` over a boolean mask.
Values that differ only in case or accents (``C. Balázs`` and ``c. balazs``) are one value,
shown as first seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from whoosh.reading import IndexReader

from pubsearch.records import fold
from pubsearch.schema import VALUE_SEP

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class MultiValued:
    """Document -> values, as CSR arrays: the values of doc ``d`` are
    ``value_ids[offsets[d]:offsets[d + 1]]``."""

    labels: tuple[str, ...]
    ids_by_key: dict[str, int]
    offsets: IntArray
    value_ids: IntArray
    doc_of_entry: IntArray

    @classmethod
    def from_column(cls, reader: IndexReader, column: str) -> MultiValued:
        labels: list[str] = []
        ids_by_key: dict[str, int] = {}
        lengths = np.zeros(reader.doc_count_all(), dtype=np.int64)
        value_ids: list[int] = []
        creader = reader.column_reader(column)
        for docnum in range(reader.doc_count_all()):
            raw = creader[docnum]
            if not raw:
                continue
            values = raw.decode("utf-8").split(VALUE_SEP)
            for value in values:
                key = fold(value)
                vid = ids_by_key.get(key)
                if vid is None:
                    vid = ids_by_key[key] = len(labels)
                    labels.append(value)
                value_ids.append(vid)
            lengths[docnum] = len(values)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls(
            labels=tuple(labels),
            ids_by_key=ids_by_key,
            offsets=offsets,
            value_ids=np.asarray(value_ids, dtype=np.int64),
            doc_of_entry=np.repeat(np.arange(len(lengths), dtype=np.int64), lengths),
        )

    def count(self, docs: BoolArray) -> IntArray:
        """Count of documents in ``docs`` per value id."""
        entries = docs[self.doc_of_entry]
        return np.bincount(self.value_ids[entries], minlength=len(self.labels))

    def docs_with_any(self, keys: list[str]) -> BoolArray:
        """Mask of documents having at least one of the values (given as folded keys)."""
        wanted = [self.ids_by_key[k] for k in keys if k in self.ids_by_key]
        mask = np.zeros(len(self.offsets) - 1, dtype=np.bool_)
        if wanted:
            hits = np.isin(self.value_ids, np.asarray(wanted, dtype=np.int64))
            mask[self.doc_of_entry[hits]] = True
        return mask


@dataclass(frozen=True)
class FacetTable:
    """Authors, subjects and years of every document of one index generation."""

    authors: MultiValued
    subjects: MultiValued
    years: IntArray  # 0 where a document has no year
    live: BoolArray  # False for deleted documents

    @classmethod
    def build(cls, reader: IndexReader) -> FacetTable:
        n = reader.doc_count_all()
        years = np.zeros(n, dtype=np.int64)
        if reader.has_column("year"):
            ycol = reader.column_reader("year")
            for docnum in range(n):
                years[docnum] = ycol[docnum] or 0
        live = np.ones(n, dtype=np.bool_)
        if reader.has_deletions():
            for docnum in range(n):
                live[docnum] = not reader.is_deleted(docnum)
        return cls(
            authors=MultiValued.from_column(reader, "author_facet"),
            subjects=MultiValued.from_column(reader, "subject_facet"),
            years=years,
            live=live,
        )

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
