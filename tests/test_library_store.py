"""The library's SQLite file: saved searches, tags, the catalog; several processes
writing at once lose nothing."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from pubsearch.core.errors import ParameterError
from pubsearch.library.store import LIBRARY_FILE, Store, request_from_json, request_to_json
from pubsearch.search.request import SearchRequest, parse_year


def test_the_file_is_in_wal_mode_beside_the_generations(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.add_follow("gnn", SearchRequest(q="graph"), 1.0)
    db = sqlite3.connect(tmp_path / LIBRARY_FILE)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_a_saved_request_keeps_text_filters_and_mode() -> None:
    request = SearchRequest(
        q="graph neural",
        authors=("Ada Shared",),
        subjects=("cs.LG", "stat.ML"),
        year=parse_year("2024.."),
        mode="lexical",
        loose=True,
        page=3,
    )
    back = request_from_json(request_to_json(request))
    assert back == SearchRequest(
        q="graph neural",
        authors=("Ada Shared",),
        subjects=("cs.LG", "stat.ML"),
        year=parse_year("2024.."),
        mode="lexical",
        loose=True,
    )


def test_follows_are_added_replaced_marked_and_removed(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        assert store.add_follow("gnn", SearchRequest(q="graph"), 5.0)
        assert not store.add_follow("gnn", SearchRequest(q="graph neural"), 9.0)
        saved = store.follow("gnn")
        assert saved is not None
        assert saved.request.q == "graph neural" and saved.seen == 5.0  # seen kept
        store.mark_seen("gnn", 7.0)
        store.mark_seen("gnn", 6.0)  # never goes back
        assert store.follow("gnn").seen == 7.0  # type: ignore[union-attr]
        assert store.remove_follow("gnn")
        assert not store.remove_follow("gnn")
        assert store.follows() == []


@pytest.mark.parametrize("name", ["", "a b", "../x", ".hidden", "x" * 65, "é"])
def test_a_bad_name_is_refused_with_its_reason(tmp_path: Path, name: str) -> None:
    with Store(tmp_path) as store, pytest.raises(ParameterError, match="NAME"):
        store.add_follow(name, SearchRequest(q="x"), 0.0)
    with Store(tmp_path) as store:
        assert store.follows() == []


def test_tags_are_found_by_any_id_the_record_answered_to(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        assert store.add_tags("reading", {"2503.00001": ["10.1/a"], "2503.00002": []}) == 2
        assert store.add_tags("reading", {"2503.00001": ["10.1/a", "10.1/b"]}) == 0
        assert store.tag_names() == [("reading", 2)]
        assert store.tagged("reading")[0].ids == ("2503.00001", "10.1/a", "10.1/b")
        assert store.remove_tags("reading", ["10.1/b"]) == 1
        assert [t.record for t in store.tagged()] == ["2503.00002"]


def test_the_catalog_keeps_the_first_time_of_each_id(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.catalogue("gen-a", 10.0, {"x": 1.0, "y": 10.0})
        store.catalogue("gen-b", 20.0, {"x": 20.0, "z": 20.0})
        assert store.appeared() == {"x": 1.0, "y": 10.0, "z": 20.0}
        assert store.catalogued("gen-a") == 10.0 and store.catalogued("gen-c") is None
        assert store.catalog_time() == 20.0


WRITERS = 4
EACH = 60


def _write_many(index_dir: str, writer: int) -> None:
    with Store(Path(index_dir)) as store:
        for i in range(EACH):
            store.add_tags(f"t{i % 3}", {f"{writer}-{i}": [f"doi-{writer}-{i}"]})
            store.add_follow(f"s{writer}-{i}", SearchRequest(q=f"w{i}"), float(i))
            store.mark_seen("shared", float(i))
            store.catalogue(f"gen-{writer}-{i}", float(i), {f"k{writer}-{i}": float(i)})


def test_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.add_follow("shared", SearchRequest(q="x"), 0.0)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_many, args=(str(tmp_path), w)) for w in range(WRITERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    with Store(tmp_path) as store:
        assert len(store.tagged()) == WRITERS * EACH
        assert sum(count for _, count in store.tag_names()) == WRITERS * EACH
        assert len(store.follows()) == WRITERS * EACH + 1
        assert store.follow("shared").seen == EACH - 1  # type: ignore[union-attr]
        assert len(store.appeared()) == WRITERS * EACH
