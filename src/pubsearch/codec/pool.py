"""Postings kept in memory while a segment is written: :class:`TermPool`, in place of
Whoosh's pool of one tuple per posting, each field's postings in flat arrays
(:class:`FieldPostings`), sorted by term and docnum with numpy when the segment is written
(:func:`sort_postings`).

Imports numpy and nothing of Whoosh's: what the postings become on disk is
:mod:`pubsearch.codec.w3write`'s.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterator
from typing import Any, Protocol

import numpy


class Vocabulary(Protocol):
    """What a field's map from word numbers to term numbers is kept for: a numbering of
    words (:class:`pubsearch.index.analysis.Vocabulary`) and how many times it was started
    anew."""

    generation: int


class FieldPostings:
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
        self.numbers: TermNumbers = TermNumbers()
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


class TermNumbers(dict[bytes | str, int]):
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
        self._fields: dict[str, FieldPostings] = {}

    @property
    def fieldnames(self) -> set[str]:
        return set(self._fields)

    def field(self, fieldname: str) -> FieldPostings:
        """``fieldname``'s postings (none yet: an empty list of them, kept)."""
        held = self._fields.get(fieldname)
        if held is None:
            held = self._fields[fieldname] = FieldPostings()
        return held

    def add(self, item: tuple[str, bytes, int, float, bytes | None]) -> None:
        """Add one ``(fieldname, text, docnum, weight, value)`` posting (Whoosh's API)."""
        fieldname, text, docnum, weight, value = item
        self.field(fieldname).add_many(
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
            self.field(fieldname).add_many(docnum, texts, weights, values, int_weights)

    def add_encoded(self, fieldname: str, docnum: int, encoded: tuple[Any, ...]) -> None:
        """Add one document's postings in ``fieldname`` from ``_speedups.doc_postings``
        (none: nothing to add)."""
        count = encoded[6]
        if count:
            self.field(fieldname).add_encoded(docnum, encoded)

    def numbers(self, fieldname: str) -> TermNumbers:
        """``fieldname``'s term numbers (what ``_speedups.doc_postings`` looks terms up in)."""
        return self.field(fieldname).numbers

    def fieldmap(self, fieldname: str, vocabulary: Vocabulary) -> bytearray:
        """``fieldname``'s map from ``vocabulary``'s numbers to its term numbers (see
        :meth:`FieldPostings.fieldmap`)."""
        return self.field(fieldname).fieldmap(vocabulary)

    def held(self, fieldname: str) -> FieldPostings | None:
        """``fieldname``'s postings, if any were added."""
        return self._fields.get(fieldname)

    def sorted_fields(self) -> list[tuple[str, FieldPostings]]:
        return sorted(self._fields.items())

    def drop(self, fieldname: str) -> None:
        self._fields.pop(fieldname, None)

    def iter_postings(self) -> Iterator[tuple[str, bytes, int, float, bytes]]:
        """Every posting as ``(fieldname, text, docnum, weight, value)``, sorted by field,
        term and docnum (what Whoosh's ``add_postings`` takes)."""
        for fieldname, held in self.sorted_fields():
            texts, sort_order, bounds = sort_postings(held)
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


def sort_postings(held: FieldPostings) -> tuple[list[bytes], numpy.ndarray[Any, Any], list[int]]:
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
