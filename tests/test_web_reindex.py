"""A re-index shows up in a running app without a restart."""

from __future__ import annotations

from pathlib import Path

from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.web import SERVICE_KEY, create_app


def test_reindex_is_served_without_restart(tmp_path: Path, seeds_dir: Path) -> None:
    index_dir = tmp_path / "ix"
    first, second = sorted(seeds_dir.iterdir())
    build_index(index_dir, read_paths([first], ReadReport()))
    app = create_app(index_dir)
    try:
        client = app.test_client()
        before = client.get("/api/search").get_json()
        (you,) = before["facets"]["author"]
        assert (you["value"], you["count"], you["selected"]) == ("Yang You", 18, False)
        assert sum(person["count"] for person in you["people"]) == 18  # several people
        build_index(index_dir, read_paths([first, second], ReadReport()))
        after = client.get("/api/search").get_json()
        assert after["total"] == 36
        assert {v["value"] for v in after["facets"]["author"]} == {"Yang You", "Wei Lin"}
        assert "Wei Lin" in client.get("/").get_data(as_text=True)
    finally:
        app.extensions[SERVICE_KEY].close()


def test_app_started_before_the_index_serves_it_once_built(tmp_path: Path, seeds_dir: Path) -> None:
    index_dir = tmp_path / "ix"
    app = create_app(index_dir)
    try:
        client = app.test_client()
        assert client.get("/").status_code == 503
        build_index(index_dir, read_paths([seeds_dir], ReadReport()))
        assert client.get("/").status_code == 200
    finally:
        app.extensions[SERVICE_KEY].close()
