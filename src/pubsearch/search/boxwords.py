"""What words of the search box stand for besides themselves: the people a name names,
and the words a misspelling meant. The search service asks this module, which reads the
generation's name and spelling tables (:mod:`pubsearch.index.names`,
:mod:`pubsearch.index.spelling`).

A single bare word is read as a surname (its people's papers first, then the records
that use the word) when people of that surname wrote at least :data:`SURNAME_RATIO`
times as many records as use it as a word (measured on the 102,289 arXiv records with
``bench/surnames.py``: ``Hinton`` 30 papers by Hintons against 2 records with the word;
``moon`` 157 against 126, ``young`` 109 against 786, ``long`` 446 against 9,873 stay
words), or at least as many when fewer than :data:`RARE_WORD` records use the word
(``Widrow``: 5 against 3, the records that cite Widrow's models). Beside other words it
is read so only when the query as words finds fewer than
:data:`~pubsearch.search.compiler.MIN_STRICT_MATCHES` records (``brown dwarf`` stays the words);
see :mod:`pubsearch.search.compiler`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from whoosh import query as wq
from whoosh.searching import Searcher

from pubsearch.index import postings
from pubsearch.index.facets import BoolArray, FacetTable
from pubsearch.index.names import NameIndex
from pubsearch.index.schema import DEFAULT_FIELD
from pubsearch.index.spelling import Candidate, worth_correcting
from pubsearch.ingest.records import fold
from pubsearch.ingest.textforms import query_text
from pubsearch.search.compiler import (
    COMMON_WORDS,
    FUNCTION_WORDS,
    TextQuery,
    parse_text_query,
    query_words,
)
from pubsearch.search.generation import Generation
from pubsearch.search.masks import DocumentSet, query_mask
from pubsearch.search.selection import subject_query

# How much a paper by the people a name in the search box names gains: times the BM25
# score of the name's words in its author field.
NAME_BOOST = 2.0
# The same for a surname alone, enough to put its people's papers before records that
# only use the word (a word of a title counts three times in the text).
SURNAME_BOOST = 10.0
# A word is a surname when its people wrote this many times as many records as use it.
SURNAME_RATIO = 2
# ... or at least as many, when fewer than this many records use it as a word: a rare word
# that is a surname is a name the texts cite (``Widrow``: 5 papers by Widrows, 3 records
# that cite Widrow's models), not a topic.
RARE_WORD = 10

# The letters of a word as typed, without punctuation around it, for spelling.
_WORD_CORE = re.compile(r"[^\W_](?:[\w'\-]*[^\W_])?")


class BoxWords:
    """The names and spellings of one search's words, on one generation."""

    def __init__(
        self,
        gen: Generation,
        searcher: Searcher,
        table: FacetTable,
        directory: Path,
    ) -> None:
        self._gen = gen
        self._searcher = searcher
        self._table = table
        self._directory = directory
        self._masks: dict[tuple[str, bool], BoolArray] = {}

    def _names(self) -> NameIndex:
        return self._gen.names(self._table, self._directory)

    def name(self, typed: str) -> wq.Query | None:
        """The papers of the people ``typed`` (words of the box) names, or None."""
        return self._people(typed, NAME_BOOST)

    def surname(self, word: str) -> wq.Query | None:
        """The papers of the people whose surname is ``word``, when it is read as a
        surname (see the module's doc); else None."""
        folded = fold(word)
        if folded in FUNCTION_WORDS or folded in COMMON_WORDS or len(folded) < 2:
            return None
        papers = self._names().papers(word)
        uses = self.count_word(word)
        rare = uses < RARE_WORD and papers >= uses  # a name a few texts cite (Widrow)
        if not papers or (papers < SURNAME_RATIO * uses and not rare):
            return None
        return self._people(word, SURNAME_BOOST)

    def subject(self, typed: str) -> tuple[wq.Query, str | None]:
        """What ``subject:`` and ``typed`` stand for: the query of the subjects' records,
        and a notice about it (see :func:`pubsearch.search.selection.subject_query`)."""
        table = self._table
        return subject_query(self._gen.subjects(table), table, self._searcher.schema, typed)

    def _people(self, typed: str, boost: float) -> wq.Query | None:
        index = self._names()
        ids = index.find(typed)
        if not ids:
            return None
        # Every spelling of the name's words the index has scores (Schölkopf, Schoelkopf).
        analyzer = self._searcher.schema["author"]
        stems = {
            stem
            for form in index.spellings(typed)
            for stem in analyzer.process_text(form, mode="query")
        }
        scoring = wq.Or([wq.Term("author", stem) for stem in sorted(stems)])
        docs = np.flatnonzero(self._table.authors.docs_with_ids(ids))
        return DocumentSet(docs, scoring, boost=boost)

    def parse(self, text: str) -> TextQuery | None:
        """``text`` read with its names (see pubsearch.search.compiler.parse_text_query)."""
        return parse_text_query(
            text,
            self._searcher.schema,
            self.informativeness,
            self.name,
            self.subject,
            self.surname,
        )

    def informativeness(self, stems: list[str]) -> list[float]:
        """How much each of ``stems`` says: its idf, 0 for a stem no record has."""
        from pubsearch.search.ranking import idf

        count = self._searcher.doc_count_all()
        dfs = self._gen.doc_frequencies(self._searcher, stems)
        return [idf(count, df) if df else 0.0 for df in dfs]

    # -- spelling ---------------------------------------------------------------------

    def count_word(self, word: str) -> int:
        """How many records have ``word`` (its stems) in their title or abstract."""
        stems = list(self._searcher.schema[DEFAULT_FIELD].process_text(word, mode="query"))
        return min(self._gen.doc_frequencies(self._searcher, stems), default=0)

    def known(self, folded: str) -> bool:
        """Whether the index knows ``folded`` (not a word of its titles: the spelling
        table knows those): a word of an abstract, or of a name. Abstracts keep only
        stems: a word that is not its own stem (``wavs``, stem ``wav``) may be a typing
        mistake, and is corrected only when the query as typed finds nothing."""
        stems = list(self._searcher.schema[DEFAULT_FIELD].process_text(folded, mode="query"))
        if stems == [folded] and self.count_word(folded):
            return True
        reader = self._searcher.reader()
        return any(
            postings.doc_frequency(reader, "author", word)
            for word in self._searcher.schema["author"].process_text(folded, mode="query")
        )

    def together(self, words: Sequence[Candidate]) -> int:
        """How many records have every one of ``words``: in their text, or, for a
        surname, among their authors."""
        mask = self._table.live.copy()
        for candidate in words:
            mask &= self._mask(candidate.word, candidate.name)
            if not mask.any():
                return 0
        return int(mask.sum())

    def _mask(self, word: str, name: bool) -> BoolArray:
        found = self._masks.get((word, name))
        if found is None:
            searcher, size = self._searcher, self._table.size
            stems = searcher.schema[DEFAULT_FIELD].process_text(word, mode="query")
            terms = [wq.Term(DEFAULT_FIELD, stem) for stem in stems]
            found = query_mask(searcher, wq.And(terms), size) if terms else np.zeros(size, bool)
            if name:
                ids = self._names().find(word)
                found = found | self._table.authors.docs_with_ids(ids)
            self._masks[(word, name)] = found
        return found

    def suggestion(self, text: str) -> str | None:
        """The query with its misspelt words corrected (see pubsearch.index.spelling), when that
        query finds something; None otherwise (TeX in it written as the query reads it:
        pubsearch.ingest.textforms.query_text)."""
        text = query_text(text.strip())
        words = []
        for word in query_words(text):
            core = _WORD_CORE.search(text, word.start, word.end)
            if core is not None:
                # "title:" read as a word is corrected as a whole: "tie", not "tie:".
                end = word.end if text[core.end() : word.end] == ":" else core.end()
                words.append((core.start(), end, core.group()))
        if not worth_correcting(words):
            return None  # before the table is read: pasted text never needs it
        spelling = self._gen.spelling(self._searcher, self._table, self._directory)
        corrections = spelling.corrections(words, self.known, self.together)
        if not corrections:
            return None
        corrected = text
        for fix in reversed(corrections):
            corrected = corrected[: fix.start] + fix.word + corrected[fix.end :]
        fixed = self.parse(corrected)
        if fixed is None or fixed.strict is None:
            return None
        found = query_mask(self._searcher, fixed.strict, self._table.size) & self._table.live
        if fixed.named is not None and not found.any():
            found = query_mask(self._searcher, fixed.named, self._table.size)
        return corrected if found.any() else None
