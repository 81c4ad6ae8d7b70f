"""A document's postings, field by field, without Whoosh's token objects.

Whoosh's ``FieldType.index`` makes a Token per word and runs the field's analysis chain for
every value; for the fields pubsearch's schema has, the same postings come from lists:

* :func:`bulk_postings` (and :func:`stem_lists`, for ``pubsearch.core._speedups``): a text field
  with a :class:`~pubsearch.index.analysis.FastAnalyzer`, from the analyzer's cached word lists;
* :class:`Derivation`: the ``content`` field, made from the title's and abstract's postings
  when the segment is written (:mod:`pubsearch.index.segments.writer`);
* :func:`direct_terms`, :func:`numeric_terms`: ``ID``, comma-separated ``KEYWORD`` and
  ``NUMERIC`` fields, without the analysis chain.

The values (encoded positions, frequencies) are Whoosh's formats' bytes, made by
:mod:`pubsearch.codec.w3write`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from whoosh import fields as whoosh_fields
from whoosh import formats
from whoosh.analysis import (
    IDTokenizer,
    LowercaseFilter,
    RegexTokenizer,
    StripFilter,
)
from whoosh.analysis.analyzers import CompositeAnalyzer

from pubsearch.codec import w3write
from pubsearch.index.analysis import FastAnalyzer, IndexWords, Vocabulary
from pubsearch.index.schema import CONTENT_PARTS, DEFAULT_FIELD, WRITTEN_FIELDS


@dataclass(frozen=True)
class BulkField:
    """A text field whose postings :func:`bulk_postings` computes from word lists."""

    analyzer: FastAnalyzer
    key: tuple[int, bool]  # the analyzer's index_key
    positions: bool  # the format stores positions (else frequencies)
    field_boost: float  # the format's
    scorable: bool
    by_lines: bool  # words never span a line: a text can be analysed line by line
    # The field whose analyzer's words, unstemmed, are this one's (see words_of).
    unstemmed_of: BulkField | None = None


def bulk_fields(schema: Any) -> dict[str, BulkField]:
    """The fields of ``schema`` that :func:`bulk_postings` can index: plain ``TEXT`` with a
    bulk-capable :class:`FastAnalyzer`, storing positions or frequencies, no vectors.

    A field of words as written (:data:`~pubsearch.index.schema.WRITTEN_FIELDS`) whose analyzer
    is its source's but for the stemmer takes its words from its source's analysis, not
    by folding every word once more (see :func:`words_of`)."""
    found: dict[str, BulkField] = {}
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
                found[name] = BulkField(
                    analyzer=analyzer,
                    key=key,
                    positions=type(fmt) is formats.Positions,
                    field_boost=float(fmt.field_boost),
                    scorable=bool(field.scorable),
                    by_lines=analyzer.splits_at_spaces(),
                )
    for source_name, name in WRITTEN_FIELDS.items():
        spec, source = found.get(name), found.get(source_name)
        if spec and source and not spec.positions and spec.analyzer.unstemmed_of(source.analyzer):
            # Analysed whole, not line by line: a source's analysis of the whole text is
            # what a document's other field (the same text) has already made.
            found[name] = replace(spec, by_lines=False, unstemmed_of=source)
    return found


@dataclass(frozen=True)
class Derivation:
    """A frequency field whose text is other fields' texts, each given some times, one a
    line (``content``: the title three times, then the abstract; see
    :func:`pubsearch.index.schema.content_text`): its postings are made when the segment is
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


def derivation(bulk_fields: dict[str, BulkField]) -> Derivation | None:
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
    return Derivation(DEFAULT_FIELD, CONTENT_PARTS)


Memo = dict[tuple[tuple[int, bool], str], IndexWords]


def words_of(spec: BulkField, text: str, memo: Memo) -> IndexWords:
    """``spec``'s analyzer's index words for ``text``, remembered for the document (the
    content field repeats the title and the abstract)."""
    key = (spec.key, text)
    words = memo.get(key)
    if words is None:
        if spec.unstemmed_of is not None:
            # The words as written of the source's analysis (the title's, the abstract's).
            source = words_of(spec.unstemmed_of, text, memo)
            unstemmed = source.unstemmed()
            words = memo[key] = IndexWords(unstemmed, source.positions, unstemmed=unstemmed)
            return words
        # As numbers in the analyzer's vocabulary where it can (stems worked out if asked).
        found = spec.analyzer.index_ids(text) or spec.analyzer.index_words(text)
        assert found is not None  # bulk_fields checked
        words = memo[key] = found
    return words


def bulk_postings(
    spec: BulkField, value: str, boost: float, memo: Memo
) -> tuple[list[str], list[int], list[bytes], IndexWords | None]:
    """What ``field.index(value)`` yields, as lists (terms not yet encoded): the terms in
    order of first appearance, their frequencies and values; and the index words when
    they were computed for the whole value."""
    if not spec.positions:
        if spec.by_lines and "\n" in value:
            # Frequencies only: the lines' words counted line by line give the same.
            counts: Counter[str] = Counter()
            for line in value.split("\n"):
                counts.update(words_of(spec, line, memo).stems)
            whole = None
        else:
            whole = words_of(spec, value, memo)
            counts = Counter(whole.stems)
        freqs = list(counts.values())
        return list(counts), freqs, list(map(w3write.FREQUENCY.__getitem__, freqs)), whole
    whole = words_of(spec, value, memo)
    stems = whole.stems
    positions = whole.positions
    counts = Counter(stems)
    terms = list(counts)
    freqs = list(counts.values())
    if len(terms) == len(stems):  # every word once: positions in order
        values = list(map(w3write.SINGLE_POSITION.__getitem__, positions))
    else:
        seen: dict[str, list[int]] = {}
        for stem, pos in zip(stems, positions, strict=True):
            held = seen.get(stem)
            if held is None:
                seen[stem] = [pos]
            else:
                held.append(pos)
        values = [
            w3write.SINGLE_POSITION[p[0]] if len(p) == 1 else w3write.POSITIONS[tuple(p)]
            for p in seen.values()
        ]
    return terms, freqs, values, whole


def stem_lists(
    spec: BulkField, value: str, memo: Memo
) -> tuple[list[list[str]] | bytes, int] | None:
    """For ``_speedups.doc_postings``: the stems of ``value`` (in lists, line by line for
    a frequency field that splits at spaces) and the first word's position; None where
    the positions are not consecutive (:func:`bulk_postings` then). For positions, and
    for a field of words as written, the words' numbers in a vocabulary instead where
    they came so (for ``_speedups.doc_postings_ids``: see :func:`numbering`)."""
    if not spec.positions:
        if spec.unstemmed_of is not None:
            source = words_of(spec.unstemmed_of, value, memo)
            if source.ids is not None:  # the words' numbers (see numbering)
                return source.ids, 0
        if spec.by_lines and "\n" in value:
            return [words_of(spec, line, memo).stems for line in value.split("\n")], 0
        return [words_of(spec, value, memo).stems], 0
    words = words_of(spec, value, memo)
    positions = words.positions
    if type(positions) is not range or positions.step != 1:
        return None
    if words.ids is not None:
        return words.ids, positions.start
    return [words.stems], positions.start


def numbering(spec: BulkField) -> tuple[Vocabulary, list[str]] | None:
    """The vocabulary whose numbers :func:`stem_lists` gives ``spec``'s words as (when it
    gives numbers), and each number's term in the field: its stem, or for a field of the
    words as written, its word (the numbers are those of its source's analysis)."""
    if spec.unstemmed_of is not None:
        vocabulary = spec.unstemmed_of.analyzer.vocabulary()
        return (vocabulary, vocabulary.words) if vocabulary is not None else None
    vocabulary = spec.analyzer.vocabulary()
    return (vocabulary, vocabulary.stems) if vocabulary is not None else None


# What ``FieldType.index`` yields for one word: (bytes, frequency, weight, value).
Posting = tuple[bytes, int, float, bytes]
DirectTerms = Callable[[Any], list[Posting]]
_COMMA_RUN = re.compile(r"[^,]+")
_NUMERIC_MEMO_LIMIT = 4096


def direct_terms(field: Any) -> DirectTerms | None:
    """A function giving ``list(field.index(value))``, for a string ``value`` without
    Whoosh's token objects, for the analyzers ``ID`` and ``KEYWORD(commas=True)`` fields
    are made with (optionally lower-cased), with an ``Existence`` or ``Frequency`` format;
    None for any other field. (Whoosh's chain costs ten times as much a value.)"""
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
    once = w3write.FREQUENCY[1]

    def terms(value: Any) -> list[Posting]:
        if not isinstance(value, str):  # a list of words: Whoosh's own way
            return list(field.index(value))
        words = [w.strip() for w in _COMMA_RUN.findall(value)] if by_commas else [value]
        if lower:
            words = [w.lower() for w in words]
        if existence:
            return [(w.encode("utf-8"), 1, boost, b"") for w in dict.fromkeys(words)]
        if len(words) == 1 or len(set(words)) == len(words):  # each word once (Counter's
            # order, without its cost)
            return [(w.encode("utf-8"), 1, boost, once) for w in words]
        counts = Counter(words)
        return [(w.encode("utf-8"), n, n * boost, w3write.FREQUENCY[n]) for w, n in counts.items()]

    return terms


def numeric_terms(field: Any) -> DirectTerms | None:
    """``list(field.index(value))`` for a ``NUMERIC`` field, remembered per value (a year
    recurs in every other document); None for any other field."""
    if not isinstance(field, whoosh_fields.NUMERIC):
        return None
    memo: dict[tuple[type, Any], list[Posting]] = {}

    def terms(value: Any) -> list[Posting]:
        key = (type(value), value)
        found = memo.get(key)
        if found is None:
            found = list(field.index(value))
            if len(memo) >= _NUMERIC_MEMO_LIMIT:
                memo.clear()
            memo[key] = found
        return found

    return terms
