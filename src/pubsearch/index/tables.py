"""The tables a build saves beside a generation's index files, which its searches read
instead of building them: the name table (:mod:`pubsearch.index.names`) and the spelling
table (:mod:`pubsearch.index.spelling`). A generation without them (made by an update,
which leaves them to the first search that needs them) gets them built by that search,
through the same functions, and saved for the processes after it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from whoosh.reading import IndexReader

from pubsearch.index import postings
from pubsearch.index.facets import FacetTable
from pubsearch.index.names import Documents, NameIndex
from pubsearch.index.schema import SPELLING_FIELDS
from pubsearch.index.spelling import Spelling


def name_documents(table: FacetTable) -> Documents:
    """Which documents each author of ``table`` is on (for the name table's counts)."""
    return Documents(table.authors.value_ids, table.authors.doc_of_entry, table.live)


def spelling_table(reader: IndexReader, names: NameIndex) -> Spelling:
    """The spelling table of the index ``reader`` reads: its titles' words, each with
    how many titles use it, and its authors' surnames (from ``names``)."""
    title = reader.schema[SPELLING_FIELDS[0]]
    field = title.spelling_fieldname(SPELLING_FIELDS[0])
    words: list[str] = []
    if field in reader.indexed_field_names():
        words = [w.decode("utf-8") if isinstance(w, bytes) else w for w in reader.lexicon(field)]
    counts = postings.doc_frequencies(reader, field, words) if words else []
    return Spelling.build(zip(words, counts, strict=True), names.surnames())


def keep(save: Callable[[Path, int], None], directory: Path, generation: int) -> None:
    """Save a table built for a generation that had none, for the processes after this
    one (each file is written whole, then renamed into place); where the generation's
    directory cannot be written (read-only, or removed meanwhile), it is built again."""
    try:
        save(directory, generation)
    except OSError:
        pass


def save_tables(directory: Path, reader: IndexReader, table: FacetTable, generation: int) -> None:
    """Save beside a generation's index files the tables its searches read: the name table
    and the spelling table (a one-off query reads them instead of building them)."""
    names = NameIndex.build(table.authors.labels, name_documents(table))
    names.save(directory, generation)
    spelling_table(reader, names).save(directory, generation)
