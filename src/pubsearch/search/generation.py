"""What a search service keeps for each index generation it has open: the Whoosh index,
its facet table, its documents' field lengths, and the tables built from it when first
needed (author names, subjects, spelling words, document frequencies, vectors); and each
thread's searcher on it."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from whoosh.index import Index
from whoosh.searching import Searcher

from pubsearch.index import postings
from pubsearch.index.facets import FacetTable
from pubsearch.index.lengths import FieldLengths, LengthTable
from pubsearch.index.names import NameIndex
from pubsearch.index.peopletable import PeopleTable
from pubsearch.index.peoplewords import DocWords
from pubsearch.index.schema import DEFAULT_FIELD
from pubsearch.index.spelling import Spelling
from pubsearch.index.tables import keep, name_documents, spelling_table
from pubsearch.index.vectors import VectorTable
from pubsearch.search import semantic
from pubsearch.search.corpus import Corpus
from pubsearch.search.profiles import PeopleIndex
from pubsearch.search.subjectmatch import SubjectIndex

# Document frequencies kept per generation before they are forgotten (about 100 bytes each).
MAX_KEPT_FREQUENCIES = 200_000


def close_all(searchers: set[Searcher], lock: threading.Lock) -> None:
    """Close every searcher of ``searchers`` (emptied, under ``lock``)."""
    with lock:
        left = list(searchers)
        searchers.clear()
    for searcher in left:
        searcher.close()


@dataclass
class Snapshot:
    """A searcher on one generation, owned by one thread."""

    generation: str
    index: Index
    searcher: Searcher


@dataclass
class Generation:
    name: str
    index: Index
    facets: FacetTable | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Its documents' field lengths, read once per field for every thread.
    lengths: LengthTable = field(default_factory=LengthTable)
    # Words' document frequencies in the combined field, as long texts ask for them (each
    # costs a look-up in every segment).
    frequencies: dict[str, int] = field(default_factory=dict)
    _names: NameIndex | None = None
    _spelling: Spelling | None = None
    _subjects: SubjectIndex | None = None
    _meaning: semantic.SemanticIndex | None = None
    _meaning_read: bool = False
    # Every document at once, for the library (pubsearch.search.corpus), read when asked.
    corpus: Corpus | None = None
    # Each table has a lock of its own: building one (about a second at 100,000 records)
    # holds up no search but those that need it.
    _names_lock: threading.Lock = field(default_factory=threading.Lock)
    _spelling_lock: threading.Lock = field(default_factory=threading.Lock)
    _people: PeopleTable | None = None
    _people_index: PeopleIndex | None = None
    _people_lock: threading.Lock = field(default_factory=threading.Lock)

    def field_lengths(self, searcher: Searcher) -> FieldLengths:
        """This generation's field lengths, read (when first asked) through ``searcher``."""
        return FieldLengths(self.lengths, searcher.reader())

    def spelling(self, searcher: Searcher, table: FacetTable, directory: Path) -> Spelling:
        """The correctly spelt words of this generation (pubsearch.index.spelling): the table
        saved with it, read when first asked, or built now when it has none (an update, or
        an older version: two to four seconds at 100,000 records), and saved for the next
        process."""
        with self._spelling_lock:
            if self._spelling is None:
                generation = self.index.latest_generation()
                saved = Spelling.load(directory, generation)
                if saved is None:
                    names = self.names(table, directory)
                    saved = spelling_table(searcher.reader(), names)
                    keep(saved.save, directory, generation)
                self._spelling = saved
            return self._spelling

    def names(self, table: FacetTable, directory: Path) -> NameIndex:
        """The author names of this generation, found by surname: the table saved with
        it, read when first asked (mapped, a few ms), or built from the facet table when
        the generation has none (built by an older version: about a second at 100,000
        records)."""
        with self._names_lock:
            if self._names is None:
                labels = table.authors.labels
                generation = self.index.latest_generation()
                found = NameIndex.load(directory, labels, generation)
                if found is None:
                    found = NameIndex.build(labels, name_documents(table))
                    keep(found.save, directory, generation)
                self._names = found
            return self._names

    def saved_people(self, table: FacetTable, directory: Path) -> PeopleTable | None:
        """The people table saved with this generation (read once), or None when it has
        none: what a results page reads, which never builds it."""
        with self._people_lock:
            if self._people is None:
                generation = self.index.latest_generation()
                entries = len(table.authors.value_ids)
                self._people = PeopleTable.load(directory, generation, entries)
            return self._people

    def people_index(self, table: FacetTable, directory: Path) -> PeopleIndex | None:
        """The saved people table as a results page reads it (see
        :class:`~pubsearch.search.profiles.PeopleIndex`), or None when there is none."""
        people = self.saved_people(table, directory)
        if people is None:
            return None
        with self._people_lock:
            if self._people_index is None or self._people_index.people is not people:
                self._people_index = PeopleIndex(table, people)
            return self._people_index

    def people(self, table: FacetTable, directory: Path) -> PeopleTable:
        """The people of this generation's authors (pubsearch.index.peopletable): the table
        saved with it, read when first asked, or built now when it has none (an index
        built by an older version), and saved for the next process."""
        with self._people_lock:
            if self._people is None:
                generation = self.index.latest_generation()
                entries = len(table.authors.value_ids)
                found = PeopleTable.load(directory, generation, entries)
                if found is None:
                    with self.index.reader() as reader:
                        words = DocWords.of_reader(reader)
                    found = PeopleTable.build(table, words)
                    keep(found.save, directory, generation)
                self._people = found
            return self._people

    def subjects(self, table: FacetTable) -> SubjectIndex:
        """The subjects of this generation, found by what people type (its tables are
        built when first needed)."""
        with self.lock:
            if self._subjects is None:
                self._subjects = SubjectIndex(table.subjects.labels, table.subjects.ids_by_key)
            return self._subjects

    def meaning(self, directory: Path, searcher: Searcher) -> semantic.SemanticIndex | None:
        """This generation's vectors (None when it has none), read when first asked."""
        with self.lock:
            if not self._meaning_read:
                reader = searcher.reader()
                table = VectorTable.load(
                    directory, self.index.latest_generation(), reader.doc_count_all()
                )
                if table is not None and table.present.any():
                    self._meaning = semantic.SemanticIndex.from_table(table)
                self._meaning_read = True
            return self._meaning

    def doc_frequencies(self, searcher: Searcher, stems: Sequence[str]) -> list[int]:
        """How many records have each of ``stems`` in their title or abstract. From the
        terms' rows the generation keeps, those not kept yet looked up together (a
        pasted abstract asks this of some 300 words, in each segment)."""
        kept = self.frequencies  # (another thread may clear it meanwhile)
        known = {stem: df for stem in stems if (df := kept.get(stem)) is not None}
        missing = [stem for stem in dict.fromkeys(stems) if stem not in known]
        if missing:
            found = postings.doc_frequencies(searcher.reader(), DEFAULT_FIELD, missing)
            known.update(zip(missing, found, strict=True))
            if len(kept) + len(missing) > MAX_KEPT_FREQUENCIES:
                kept.clear()
            kept.update(zip(missing, found, strict=True))
        return [known[stem] for stem in stems]
