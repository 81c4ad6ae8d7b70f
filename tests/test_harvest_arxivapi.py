"""`pubsearch harvest arxiv --query` against a real arXiv-API-shaped server on 127.0.0.1
(tests/api_server.py): Atom pages by start, newest first, read down to the last harvest;
faults, the API's error feed, a kill between pages."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from api_server import Works, arxiv_error, sample_objects, serving
from cli_support import assert_one_line_error
from click.testing import Result
from harvest_support import harvest, indexed, killed_between_pages
from oai_server import Answer

SOURCE = ["arxiv", "--query", "cat:astro-ph.GA AND ti:infrared"]


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUBSEARCH_HARVEST_BACKOFF", "0")


@pytest.fixture
def works() -> Works:
    return Works("arxiv", sample_objects(50))


def run(index_dir: Path, url: str, *args: str) -> Result:
    return harvest(SOURCE, index_dir, url, "--max-results", "10", *args)


def test_pages_by_start_newest_first_to_the_end(works: Works, tmp_path: Path) -> None:
    with serving(works) as url:
        result = run(tmp_path / "ix", url)
    assert result.exit_code == 0, result.output
    assert "harvested 50 records in 5 pages" in result.output
    assert "50 new, 0 updated, 0 unchanged;" in result.output
    assert [r["start"] for r in works.requests] == ["0", "10", "20", "30", "40"]
    assert works.requests[0] == {
        "search_query": "cat:astro-ph.GA AND ti:infrared",
        "start": "0",
        "max_results": "10",
        "sortBy": "lastUpdatedDate",
        "sortOrder": "descending",
    }
    assert works.paths[0].startswith("/api/query?search_query=cat%3Aastro-ph.GA+AND+ti%3A")
    assert works.user_agents[0].startswith("pubsearch/")


def test_entries_are_read_as_records(works: Works, tmp_path: Path) -> None:
    with serving(works) as url:
        assert run(tmp_path / "ix", url).exit_code == 0
    docs = indexed(tmp_path / "ix")
    assert len(docs) == 50
    for obj in works.objects:
        doc = docs[obj["id"]]  # the arXiv id without its version
        assert doc["title"] == obj["title"]
        assert doc["abstract"] == " ".join(obj["abstract"].split())
        assert tuple(doc["author"]) == tuple(obj["authors"])
        assert doc["subject"][0] == obj["primary_category"]
        assert set(doc["subject"]) == set(obj["categories"])
        assert doc["year"] == obj["year"]
        assert doc["source"] == "arXiv"


def test_a_rerun_reads_only_down_to_the_last_harvest(works: Works, tmp_path: Path) -> None:
    with serving(works) as url:
        assert run(tmp_path / "ix", url).exit_code == 0
        before = indexed(tmp_path / "ix")
        works.requests.clear()
        again = run(tmp_path / "ix", url)
        assert again.exit_code == 0, again.output
        assert [r["start"] for r in works.requests] == ["0"]
        assert "harvested 10 records in 1 pages" in again.output
        assert " 0 new, 0 updated, 10 unchanged;" in again.output
        assert indexed(tmp_path / "ix") == before
        # Three papers changed upstream and one new: they come first, and the run ends
        # at the page after them (the first with nothing newer).
        newcomer = sample_objects(51)[50]
        works.objects.append(newcomer)
        for obj in [*works.objects[:3], newcomer]:
            works.changed[obj["id"]] = "2030-01-02"
        works.objects[1]["title"] = "A corrected title"
        works.requests.clear()
        third = run(tmp_path / "ix", url)
    assert third.exit_code == 0, third.output
    assert [r["start"] for r in works.requests] == ["0", "10"]
    assert "harvested 20 records in 2 pages" in third.output
    assert "1 new, 1 updated, 18 unchanged;" in third.output
    assert "the next run starts since 2030-01-02T08:00:00Z" in third.output
    docs = indexed(tmp_path / "ix")
    assert docs[works.objects[1]["id"]]["title"] == "A corrected title"
    assert newcomer["id"] in docs


def test_from_reads_the_first_list_down_to_a_day(works: Works, tmp_path: Path) -> None:
    days = sorted((obj["date"] for obj in works.objects), reverse=True)
    since = days[25]
    pages = [days[start : start + 10] for start in range(0, 50, 10)]
    # Newest first: read to the first page with nothing on or after the day.
    read = next(n for n, page in enumerate(pages) if max(page) < since) + 1
    with serving(works) as url:
        result = run(tmp_path / "ix", url, "--from", since)
    assert result.exit_code == 0, result.output
    assert [r["start"] for r in works.requests] == [str(10 * n) for n in range(read)]
    assert read < 5


def test_503_with_retry_after_and_429_are_waited_out(works: Works, tmp_path: Path) -> None:
    works.faults[2] = [Answer(503, b"busy", {"Retry-After": "1"})]
    works.faults[3] = [Answer(429, b"slow down", {"Retry-After": "0"})]
    started = time.monotonic()
    with serving(works) as url:
        result = run(tmp_path / "ix", url)
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started >= 1.0
    assert len(works.requests) == 7
    assert len(indexed(tmp_path / "ix")) == 50


def test_a_cut_feed_is_one_line_and_the_next_run_goes_on(works: Works, tmp_path: Path) -> None:
    body = Works("arxiv", works.objects).answer("/api/query", {"start": "20", "max_results": "10"})
    works.faults[3] = [Answer(200, body.body[: len(body.body) // 2])]
    with serving(works) as url:
        result = run(tmp_path / "ix", url)
        assert_one_line_error(result, 1, url, "start=20", "page 3", "not an Atom feed")
        assert "stopped after harvesting 20 records in 2 pages" in result.stdout
        assert len(indexed(tmp_path / "ix")) == 20
        works.requests.clear()
        again = run(tmp_path / "ix", url)
    assert again.exit_code == 0, again.output
    assert [r["start"] for r in works.requests] == ["20", "30", "40"]
    assert "30 new" in again.output
    assert len(indexed(tmp_path / "ix")) == 50


def test_an_html_page_and_the_api_error_feed_are_one_line(works: Works, tmp_path: Path) -> None:
    works.faults[2] = [Answer(200, b"<!DOCTYPE html><html><body>Bad gateway</body></html>")]
    with serving(works) as url:
        result = run(tmp_path / "ix", url)
        assert_one_line_error(result, 1, "page 2", "an HTML page")
        works.faults[1] = [arxiv_error("incorrect id format for 1234.12345")]
        refused = run(tmp_path / "other", url)
    assert_one_line_error(refused, 1, "page 1", "HTTP 400", "incorrect id format")


def test_oai_options_are_refused_with_query(tmp_path: Path) -> None:
    result = harvest(SOURCE, tmp_path / "ix", "http://127.0.0.1:9/api/query", "--set", "cs")
    assert_one_line_error(result, 2, "--set", "OAI-PMH")


def test_a_killed_harvest_run_again_ends_as_one_uninterrupted_run(
    works: Works, tmp_path: Path
) -> None:
    with serving(works) as url:
        assert run(tmp_path / "whole", url).exit_code == 0
        killed_between_pages(works, SOURCE, tmp_path / "killed", url, 4, "--max-results", "10")
        assert len(indexed(tmp_path / "killed")) == 30
        works.requests.clear()
        again = run(tmp_path / "killed", url)
        assert again.exit_code == 0, again.output
        assert works.requests[0]["start"] == "30"
        assert "20 new" in again.output
        twice = run(tmp_path / "killed", url)
    assert indexed(tmp_path / "killed") == indexed(tmp_path / "whole")
    assert " 0 new, 0 updated" in twice.output
