"""The Whoosh 3 columns read by pubsearch.codec.w3columns: the stored fields' reader with
its documents' offsets added up by numpy gives what Whoosh's own gives."""

from __future__ import annotations

from pathlib import Path

from pubsearch.codec import w3columns
from pubsearch.index import storage


def test_stored_fields_read_as_whoosh_reads_them(seed_index: Path) -> None:
    _, ix = storage.open_current(seed_index)
    try:
        with ix.searcher() as theirs, ix.searcher() as ours:
            w3columns.prepare_stored_fields(ours.reader())
            leaves = [segment for segment, _ in ours.reader().leaf_readers()]
            assert all(
                type(leaf._perdoc._readers["_stored"]) is w3columns._LazyStored for leaf in leaves
            )
            count = theirs.doc_count_all()
            assert count > 10
            # Every document, last first (a reader made for a late document reads the
            # whole segment's lengths all the same).
            for docnum in reversed(range(count)):
                assert ours.stored_fields(docnum) == theirs.stored_fields(docnum), docnum
            assert list(ours.reader().all_stored_fields()) == list(
                theirs.reader().all_stored_fields()
            )
    finally:
        ix.close()


def test_stored_fields_prepared_twice_are_prepared_once(seed_index: Path) -> None:
    _, ix = storage.open_current(seed_index)
    try:
        with ix.searcher() as searcher:
            w3columns.prepare_stored_fields(searcher.reader())
            leaf = next(iter(searcher.reader().leaf_readers()))[0]
            first = leaf._perdoc._readers["_stored"]
            w3columns.prepare_stored_fields(searcher.reader())
            assert leaf._perdoc._readers["_stored"] is first
    finally:
        ix.close()
