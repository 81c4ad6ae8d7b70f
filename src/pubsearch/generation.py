"""What a search service keeps for each index generation it has open: the Whoosh index,
its facet table, and the tables built from it when first needed (author names, spelling
words, document frequencies, vectors); and each thread's searcher on it."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from whoosh.index import Index
from whoosh.searching import Searcher

from pubsearch import masks, semantic
from pubsearch.facets import FacetTable
from pubsearch.names import SCANNING_BUDGET, NameIndex, ScannedNames
from pubsearch.querying import SPELLING_FIELDS
from pubsearch.schema import DEFAULT_FIELD, VALUE_SEP
from pubsearch.spelling import Spelling
from pubsearch.vectors import VectorTable

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
    # Words' document frequencies in the combined field, as long texts ask for them (each
    # costs a look-up in every segment).
    frequencies: dict[str, int] = field(default_factory=dict)
    _names: NameIndex | None = None
    _scanned: ScannedNames | None = None
    _spelling: Spelling | None = None
    _meaning: semantic.SemanticIndex | None = None
    _meaning_read: bool = False
    # Each table has a lock of its own: building one (about a second at 100,000 records)
    # holds up no search but those that need it.
    _names_lock: threading.Lock = field(default_factory=threading.Lock)
    _spelling_lock: threading.Lock = field(default_factory=threading.Lock)

    def spelling(self, searcher: Searcher) -> Spelling:
        """The correctly spelt words of this generation: its titles' words (built when
        first asked; docs/performance.md says what that costs)."""
        with self._spelling_lock:
            if self._spelling is None:
                title = searcher.schema[SPELLING_FIELDS[0]]
                field = title.spelling_fieldname(SPELLING_FIELDS[0])
                reader = searcher.reader()
                words = (
                    (w.decode("utf-8") if isinstance(w, bytes) else w)
                    for w in (
                        reader.lexicon(field) if field in reader.indexed_field_names() else ()
                    )
                )
                self._spelling = Spelling(words)
            return self._spelling

    def names(self, table: FacetTable, full: bool = False) -> NameIndex:
        """The author names of this generation, found by surname: from the table of every
        author's surname when it is built (``full``: a server builds it before its first
        search), else by scanning the saved names (a one-off query; see
        :class:`ScannedNames`) until the scans have cost :data:`SCANNING_BUDGET`, or else
        from the table, built now."""
        with self._names_lock:
            if self._names is not None:
                return self._names
            if not full:
                if self._scanned is None:
                    folded = table.authors.folded_keys()
                    if folded is not None:
                        labels = table.authors.labels
                        self._scanned = ScannedNames(labels, folded, ord(VALUE_SEP))
                if self._scanned is not None and self._scanned.seconds < SCANNING_BUDGET:
                    return self._scanned
            self._names = NameIndex(table.authors.labels)
            self._scanned = None
            return self._names

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
            found = masks.doc_frequencies(searcher.reader(), DEFAULT_FIELD, missing)
            known.update(zip(missing, found, strict=True))
            if len(kept) + len(missing) > MAX_KEPT_FREQUENCIES:
                kept.clear()
            kept.update(zip(missing, found, strict=True))
        return [known[stem] for stem in stems]
