"""The bulk writer must write the very index Whoosh's own writer writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from whoosh import index as whoosh_index

from pubsearch import bulk, storage
from pubsearch.indexing import record_fields
from pubsearch.readers import ReadReport, read_paths

DATA = Path(__file__).resolve().parent / "data"


def _docs() -> list[dict[str, Any]]:
    records = read_paths([DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport())
    return [record_fields(r) for r in records]


def _postings(index_dir: Path) -> dict[tuple[str, bytes], list[tuple[int, float, bytes]]]:
    """Every term's postings, by document id (docnums differ between segment layouts)."""
    ix = whoosh_index.open_dir(str(index_dir))
    out: dict[tuple[str, bytes], list[tuple[int, float, bytes]]] = {}
    with ix.reader() as reader:
        ids = {d: f["id"] for d, f in reader.iter_docs()}
        for fieldname, text in reader.all_terms():
            matcher = reader.postings(fieldname, text)
            items = []
            while matcher.is_active():
                value = matcher.value() if matcher.supports("positions") else b""
                items.append((ids[matcher.id()], round(matcher.weight(), 6), value))
                matcher.next()
            if fieldname.startswith("spell_"):
                # Spelling words are posted to each segment's first document, once per
                # document that has them: only their number means anything.
                items = [("", 1.0, b"")] * len(items)
            out[(fieldname, text)] = sorted(items)
    ix.close()
    return out


def _plain_build(path: Path, docs: list[dict[str, Any]]) -> None:
    ix = storage.create_index(path)
    writer = ix.writer()
    for doc in docs:
        writer.add_document(**doc)
    writer.commit()
    ix.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_bulk_writer_writes_the_same_postings(tmp_path: Path, workers: int) -> None:
    docs = _docs()
    plain, fast = tmp_path / "plain", tmp_path / "fast"
    plain.mkdir()
    fast.mkdir()
    _plain_build(plain, docs)
    storage.create_index(fast).close()
    count = bulk.write_documents(
        fast, iter(docs), workers=workers, docs_per_segment=70, parallel_threshold=100
    )
    assert count == len(docs)
    assert _postings(fast) == _postings(plain)


def test_term_pool_sorts_terms_and_keeps_document_order() -> None:
    pool = bulk.TermPool()
    pool.add(("f", b"a", 0, 1.0, b"x"))
    pool.add(("f", b"a", 3, 2.0, b""))
    pool.add(("e", b"b", 1, 1.0, b"yz"))
    with pytest.raises(ValueError):
        pool.add(("e", b"b", 0, 1.0, b""))
    assert list(pool.iter_postings()) == [
        ("e", b"b", 1, 1.0, b"yz"),
        ("f", b"a", 0, 1.0, b"x"),
        ("f", b"a", 3, 2.0, b""),
    ]
