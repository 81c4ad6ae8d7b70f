"""`pubsearch harvest openalex` against a real OpenAlex-shaped API on 127.0.0.1
(tests/api_server.py): cursor pages to the empty page, the polite pool, reruns that ask
only since the latest update, faults, a kill between pages."""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import unquote

import pytest
from api_server import Works, sample_objects, serving
from cli_support import assert_one_line_error
from click.testing import CliRunner, Result
from harvest_support import harvest, indexed, killed_between_pages
from oai_server import Answer

from pubsearch.cli.main import main

SOURCE = ["openalex"]
FILTER = "primary_location.source.id:S4306400194,type:preprint"


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUBSEARCH_HARVEST_BACKOFF", "0")
    monkeypatch.delenv("OPENALEX_API_KEY", raising=False)


@pytest.fixture
def works() -> Works:
    return Works("openalex", sample_objects(50))


def run(index_dir: Path, url: str, *args: str) -> Result:
    return harvest(SOURCE, index_dir, url, "--per-page", "10", "--filter", FILTER, *args)


def test_cursor_pages_are_followed_to_the_empty_page(works: Works, tmp_path: Path) -> None:
    with serving(works) as url:
        result = run(tmp_path / "ix", url, "--search", "infrared", "--mailto", "me@example.org")
    assert result.exit_code == 0, result.output
    assert "harvested 50 records in 6 pages" in result.output
    assert "50 new, 0 updated, 0 unchanged;" in result.output
    first, *rest = works.requests
    assert first == {
        "filter": FILTER,
        "search": "infrared",
        "per_page": "10",
        "cursor": "*",
        "mailto": "me@example.org",
    }
    assert works.paths[0].startswith("/works?filter=primary_location.source.id:S4306400194,")
    assert [r["cursor"] for r in rest] == ["MTA=", "MjA=", "MzA=", "NDA=", "NTA="]
    assert all(r["filter"] == FILTER and r["per_page"] == "10" for r in rest)
    assert works.user_agents[0].startswith("pubsearch/")
    assert works.user_agents[0].endswith("(mailto:me@example.org)")


def test_works_are_read_by_the_openalex_reader(works: Works, tmp_path: Path) -> None:
    with serving(works) as url:
        assert run(tmp_path / "ix", url).exit_code == 0
    docs = indexed(tmp_path / "ix")
    assert len(docs) == 50
    for obj in works.objects:
        doc = docs[obj["id"]]  # the arXiv id, from the DataCite DOI
        assert doc["title"] == obj["title"]
        assert doc["abstract"] == " ".join(obj["abstract"].split())  # from the inverted index
        assert tuple(doc["author"]) == tuple(obj["authors"])
        assert doc["cited"] == len(obj["title"]) % 17
        assert doc["year"] == obj["year"]


def test_a_second_run_asks_only_since_the_latest_update_and_adds_nothing(
    works: Works, tmp_path: Path
) -> None:
    latest = max(obj["date"] for obj in works.objects)
    with serving(works) as url:
        assert run(tmp_path / "ix", url).exit_code == 0
        before = indexed(tmp_path / "ix")
        works.requests.clear()
        works.paths.clear()
        again = run(tmp_path / "ix", url)
    assert again.exit_code == 0, again.output
    assert works.requests[0]["filter"] == f"{FILTER},from_updated_date:{latest}"
    assert works.requests[0]["cursor"] == "*"
    fresh = sum(obj["date"] == latest for obj in works.objects)
    assert f"harvested {fresh} records" in again.output
    assert f" 0 new, 0 updated, {fresh} unchanged;" in again.output
    assert indexed(tmp_path / "ix") == before


def test_a_work_changed_upstream_replaces_the_old(works: Works, tmp_path: Path) -> None:
    with serving(works) as url:
        assert run(tmp_path / "ix", url).exit_code == 0
        changed = works.objects[4]
        changed["title"] = "A corrected title"
        works.changed[changed["id"]] = "2030-01-02"
        again = run(tmp_path / "ix", url)
    assert again.exit_code == 0, again.output
    latest = sum(obj["date"] == max(o["date"] for o in works.objects) for obj in works.objects)
    assert f"harvested {latest + 1} records in 2 pages" in again.output
    assert f"0 new, 1 updated, {latest} unchanged" in again.output
    assert indexed(tmp_path / "ix")[changed["id"]]["title"] == "A corrected title"
    assert "next run starts since 2030-01-02" in again.output


def test_503_with_retry_after_and_429_are_waited_out(works: Works, tmp_path: Path) -> None:
    works.faults[2] = [Answer(503, b"busy", {"Retry-After": "1"})]
    works.faults[3] = [Answer(429, b'{"error": "too many requests"}', {"Retry-After": "0"})]
    started = time.monotonic()
    with serving(works) as url:
        result = run(tmp_path / "ix", url)
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started >= 1.0
    assert "harvested 50 records in 6 pages" in result.output
    assert len(works.requests) == 8
    assert len(indexed(tmp_path / "ix")) == 50


def test_a_bad_json_page_is_one_line_and_the_next_run_goes_on(works: Works, tmp_path: Path) -> None:
    with serving(works) as url:
        good = Works("openalex", works.objects)
        body = good.answer("/works", {"per_page": "10", "cursor": "MjA="}).body
        works.faults[3] = [Answer(200, body[: len(body) // 2])]
        result = run(tmp_path / "ix", url)
        assert_one_line_error(result, 1, "page 3", "not a JSON answer", "cursor=MjA%3D", url)
        assert "stopped after harvesting 20 records in 2 pages" in result.stdout
        assert "20 new" in result.stdout
        assert len(indexed(tmp_path / "ix")) == 20
        works.requests.clear()
        again = run(tmp_path / "ix", url)
        whole = run(tmp_path / "whole", url)
    assert again.exit_code == 0, again.output
    assert whole.exit_code == 0, whole.output
    assert "went on from the saved position of the list" in again.output
    assert works.requests[0]["cursor"] == "MjA="
    assert "harvested 30 records in 4 pages" in again.output
    assert indexed(tmp_path / "ix") == indexed(tmp_path / "whole")


def test_an_html_error_page_is_one_line(works: Works, tmp_path: Path) -> None:
    page = b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>"
    works.faults[2] = [Answer(200, page)]
    with serving(works) as url:
        result = run(tmp_path / "ix", url)
    assert_one_line_error(result, 1, "page 2", "an HTML page")
    assert len(indexed(tmp_path / "ix")) == 10


def test_a_refusal_says_what_the_service_said(works: Works, tmp_path: Path) -> None:
    refusal = {"error": "Invalid query parameters error.", "message": "bad_filter is not valid"}
    works.faults[1] = [Answer(403, json.dumps(refusal).encode())]
    with serving(works) as url:
        result = run(tmp_path / "ix", url)
    assert_one_line_error(result, 1, "page 1", "HTTP 403", "bad_filter is not valid")


def test_the_api_key_is_sent_but_never_shown_nor_saved(works: Works, tmp_path: Path) -> None:
    works.faults[2] = [Answer(200, b"{")]
    with serving(works) as url:
        result = run(tmp_path / "ix", url, "--api-key", "s3cret")
    assert works.requests[0]["api_key"] == "s3cret"
    assert_one_line_error(result, 1, "page 2", "api_key=...")
    assert "s3cret" not in result.output
    assert "s3cret" not in (tmp_path / "ix" / "harvests.json").read_text()


def test_a_killed_harvest_run_again_ends_as_one_uninterrupted_run(
    works: Works, tmp_path: Path
) -> None:
    args = ["--per-page", "10", "--filter", FILTER]
    with serving(works) as url:
        assert run(tmp_path / "whole", url).exit_code == 0
        killed_between_pages(works, SOURCE, tmp_path / "killed", url, 4, *args)
        assert len(indexed(tmp_path / "killed")) == 30
        works.requests.clear()
        again = run(tmp_path / "killed", url)
        assert again.exit_code == 0, again.output
        assert works.requests[0]["cursor"] == "MzA="
        assert "20 new" in again.output
        twice = run(tmp_path / "killed", url)
    assert indexed(tmp_path / "killed") == indexed(tmp_path / "whole")
    assert " 0 new, 0 updated" in twice.output


def test_list_shows_the_saved_harvest(works: Works, tmp_path: Path) -> None:
    with serving(works) as url:
        assert run(tmp_path / "ix", url, "--search", "dust").exit_code == 0
    listed = CliRunner().invoke(main, ["harvest", "--list", "--index", str(tmp_path / "ix")])
    assert listed.exit_code == 0, listed.output
    (line,) = listed.output.strip().splitlines()
    assert line.startswith(f"openalex, filter={FILTER}, search=dust: dates ")
    assert "50 records" in line and "next run from 20" in line and url in line
    assert unquote(line) == line
