"""What the people tests share: a built index's saved facet and people tables."""

from __future__ import annotations

from pathlib import Path

from pubsearch.index import storage
from pubsearch.index.facets import FacetTable
from pubsearch.index.peopletable import PeopleTable


def saved_tables(index_dir: Path) -> tuple[FacetTable, PeopleTable]:
    """The facet table and the people table saved with ``index_dir``'s current generation."""
    generation = storage.current_generation(index_dir)
    assert generation is not None
    ix = storage.open_index(generation)
    try:
        with ix.reader() as reader:
            table = FacetTable.load(generation, reader, ix.latest_generation())
        assert table is not None
        found = PeopleTable.load(generation, ix.latest_generation(), len(table.authors.value_ids))
    finally:
        ix.close()
    assert found is not None
    return table, found
