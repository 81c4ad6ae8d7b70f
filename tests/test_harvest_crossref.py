"""`pubsearch harvest crossref` against a real Crossref-shaped API on 127.0.0.1
(tests/api_server.py): deep paging with cursors to the empty page, JATS abstracts, reruns
that ask only since the latest index date, an expired cursor, faults, a kill between pages."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from api_server import Works, sample_objects, serving
from cli_support import assert_one_line_error
from click.testing import Result
from harvest_support import harvest, indexed, killed_between_pages
from oai_server import Answer

SOURCE = ["crossref"]
FILTER = "type:journal-article,from-index-date:2024-01-01"


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUBSEARCH_HARVEST_BACKOFF", "0")


@pytest.fixture
def works() -> Works:
    return Works("crossref", sample_objects(50))


def run(index_dir: Path, url: str, *args: str) -> Result:
    return harvest(SOURCE, index_dir, url, "--rows", "10", "--filter", FILTER, *args)


def test_cursor_pages_are_followed_to_the_empty_page(works: Works, tmp_path: Path) -> None:
    with serving(works) as url:
        result = run(tmp_path / "ix", url, "--query", "far infrared", "--mailto", "me@example.org")
    assert result.exit_code == 0, result.output
    assert "harvested 50 records in 6 pages" in result.output
    assert "50 new, 0 updated, 0 unchanged;" in result.output
    first, *rest = works.requests
    assert first == {
        "query": "far infrared",
        "filter": FILTER,
        "rows": "10",
        "cursor": "*",
        "mailto": "me@example.org",
    }
    assert works.paths[0].startswith("/works?query=far+infrared&filter=type:journal-article,")
    assert [r["cursor"] for r in rest] == ["MTA=", "MjA=", "MzA=", "NDA=", "NTA="]
    assert works.user_agents[0].endswith("(mailto:me@example.org)")


def test_works_are_read_by_the_crossref_reader(works: Works, tmp_path: Path) -> None:
    with serving(works) as url:
        assert run(tmp_path / "ix", url).exit_code == 0
    docs = indexed(tmp_path / "ix")
    assert len(docs) == 50
    by_doi = {doc["doi"]: doc for doc in docs.values()}
    for obj in works.objects:
        doc = by_doi[f"10.5555/arxiv.{obj['id']}".lower()]
        assert doc["title"] == obj["title"]
        # The JATS heading and tags gone, its entities decoded.
        assert doc["abstract"] == obj["abstract"]
        assert doc["cited"] == len(obj["title"]) % 13
        assert doc["source"] == "Journal of Examples"
        assert doc["year"] == obj["year"]


def test_a_second_run_asks_only_since_the_latest_index_date(works: Works, tmp_path: Path) -> None:
    latest = max(obj["date"] for obj in works.objects)
    with serving(works) as url:
        assert run(tmp_path / "ix", url).exit_code == 0
        before = indexed(tmp_path / "ix")
        works.requests.clear()
        again = run(tmp_path / "ix", url)
    assert again.exit_code == 0, again.output
    # The filter's own from-index-date is older: the latest day seen takes its place.
    assert works.requests[0]["filter"] == f"type:journal-article,from-index-date:{latest}"
    fresh = sum(obj["date"] == latest for obj in works.objects)
    assert f" 0 new, 0 updated, {fresh} unchanged;" in again.output
    assert indexed(tmp_path / "ix") == before


def test_an_expired_cursor_starts_the_list_anew(works: Works, tmp_path: Path) -> None:
    works.faults[3] = [Answer(200, b"<html><body>Gateway Timeout</body></html>")]
    with serving(works) as url:
        assert_one_line_error(run(tmp_path / "ix", url), 1, "page 3", "an HTML page")
        works.expired.add("MjA=")  # Crossref forgets a cursor 5 minutes after its last use
        works.requests.clear()
        again = run(tmp_path / "ix", url)
    assert again.exit_code == 0, again.output
    assert "the list began anew" in again.stderr
    assert [r["cursor"] for r in works.requests[:2]] == ["MjA=", "*"]
    assert "30 new, 0 updated, 20 unchanged" in again.output
    assert len(indexed(tmp_path / "ix")) == 50


def test_503_with_retry_after_and_429_are_waited_out(works: Works, tmp_path: Path) -> None:
    works.faults[1] = [Answer(503, b"busy", {"Retry-After": "1"})]
    works.faults[5] = [Answer(429, b"Too Many Requests", {"Retry-After": "0"})] * 2
    started = time.monotonic()
    with serving(works) as url:
        result = run(tmp_path / "ix", url)
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started >= 1.0
    assert len(works.requests) == 9
    assert len(indexed(tmp_path / "ix")) == 50


def test_a_truncated_page_is_one_line_and_keeps_what_came_before(
    works: Works, tmp_path: Path
) -> None:
    body = Works("crossref", works.objects).answer("/works", {"rows": "10", "cursor": "MzA="})
    works.faults[4] = [Answer(200, body.body[:-40])]
    with serving(works) as url:
        result = run(tmp_path / "ix", url)
    assert_one_line_error(result, 1, url, "page 4", "not a JSON answer", "cut short")
    assert "stopped after harvesting 30 records in 3 pages" in result.stdout
    assert "the next run starts from the saved position of the list" in result.stdout
    assert len(indexed(tmp_path / "ix")) == 30


def test_a_validation_failure_says_what_crossref_said(works: Works, tmp_path: Path) -> None:
    failure = {
        "status": "failed",
        "message-type": "validation-failure",
        "message": [
            {
                "type": "filter-not-available",
                "message": "Filter typ specified but there is no such filter for this route.",
            }
        ],
    }
    works.faults[1] = [Answer(400, json.dumps(failure).encode())]
    with serving(works) as url:
        result = run(tmp_path / "ix", url)
    assert_one_line_error(result, 1, "page 1", "HTTP 400", "Filter typ specified")


def test_a_killed_harvest_run_again_ends_as_one_uninterrupted_run(
    works: Works, tmp_path: Path
) -> None:
    args = ["--rows", "10", "--filter", FILTER]
    with serving(works) as url:
        assert run(tmp_path / "whole", url).exit_code == 0
        killed_between_pages(works, SOURCE, tmp_path / "killed", url, 3, *args)
        assert len(indexed(tmp_path / "killed")) == 20
        works.requests.clear()
        again = run(tmp_path / "killed", url)
        assert again.exit_code == 0, again.output
        assert works.requests[0]["cursor"] == "MjA="
        assert "30 new" in again.output
        twice = run(tmp_path / "killed", url)
    assert indexed(tmp_path / "killed") == indexed(tmp_path / "whole")
    assert " 0 new, 0 updated" in twice.output
