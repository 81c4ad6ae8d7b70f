"""`pubsearch harvest arxiv` against a real OAI-PMH server on 127.0.0.1 (tests/oai_server.py):
pages linked by resumption tokens, faults, deletions, a kill between pages, --list."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import assert_one_line_error
from click.testing import CliRunner, Result
from oai_server import Answer, Repository, serving, snapshot_objects

from pubsearch.cli.main import main
from pubsearch.index import storage
from pubsearch.ingest.readers.arxiv_snapshot import read_arxiv_snapshot
from pubsearch.ingest.readers.report import ReadReport


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUBSEARCH_HARVEST_BACKOFF", "0")


@pytest.fixture
def repo() -> Repository:
    return Repository(objects=snapshot_objects(), page_size=10)


def harvest(index_dir: Path, endpoint: str, *args: str) -> Result:
    """The command, each page added as it comes unless ``args`` set ``--batch``."""
    argv = ["harvest", "arxiv", "--endpoint", endpoint, "--delay", "0", "--index", str(index_dir)]
    batch = [] if "--batch" in args else ["--batch", "1"]
    return CliRunner().invoke(main, [*argv, *batch, *args])


def indexed(index_dir: Path) -> dict[str, dict[str, Any]]:
    """The stored fields of every document, by id."""
    _, ix = storage.open_current(index_dir)
    try:
        with ix.searcher() as searcher:
            return {doc["id"]: doc for doc in searcher.all_stored_fields()}
    finally:
        ix.close()


def test_pages_are_followed_by_token_to_the_end(repo: Repository, tmp_path: Path) -> None:
    with serving(repo) as url:
        result = harvest(tmp_path / "ix", url)
    assert result.exit_code == 0, result.output
    assert "harvested 50 records in 5 pages" in result.output
    assert "50 new, 0 updated, 0 unchanged, 0 deleted" in result.output
    assert len(indexed(tmp_path / "ix")) == 50
    first, *rest = repo.requests
    assert first == {"verb": "ListRecords", "metadataPrefix": "arXiv"}
    assert len(rest) == 4
    assert all(set(args) == {"verb", "resumptionToken"} for args in rest)
    assert repo.user_agents[0].startswith("pubsearch/")


def test_records_are_read_as_the_snapshot_reader_reads_them(
    repo: Repository, tmp_path: Path
) -> None:
    with serving(repo) as url:
        assert harvest(tmp_path / "ix", url).exit_code == 0
    docs = indexed(tmp_path / "ix")
    lines = Path(repo_data()).read_text(encoding="utf-8").splitlines()
    for record in read_arxiv_snapshot(lines, "snapshot", ReadReport()):
        doc = docs[record.id]
        assert doc["title"] == record.title
        assert doc["abstract"] == record.abstract
        assert tuple(doc["author"]) == record.authors
        assert tuple(doc["subject"]) == record.subjects
        assert doc.get("year") == record.year
        assert doc.get("doi") == record.doi
        assert doc["source"] == "arXiv"


def repo_data() -> Path:
    from oai_server import DATA

    return DATA


@pytest.mark.parametrize("prefix", ["arXivRaw", "oai_dc"])
def test_other_metadata_formats(repo: Repository, tmp_path: Path, prefix: str) -> None:
    with serving(repo) as url:
        result = harvest(tmp_path / "ix", url, "--metadata-prefix", prefix)
    assert result.exit_code == 0, result.output
    assert repo.requests[0]["metadataPrefix"] == prefix
    docs = indexed(tmp_path / "ix")
    assert len(docs) == 50
    doc = docs["0704.0001"]
    assert doc["title"].startswith("Calculation of prompt diphoton production")
    assert doc["author"][0] == "C. Balázs"
    assert doc["year"] == 2007
    assert doc["doi"] == "10.1103/physrevd.76.013009"


def test_a_second_run_adds_nothing_and_asks_from_the_last_datestamp(
    repo: Repository, tmp_path: Path
) -> None:
    with serving(repo) as url:
        assert harvest(tmp_path / "ix", url, "--from", "2000-01-01").exit_code == 0
        latest = max(obj["update_date"] for obj in repo.objects)
        before = indexed(tmp_path / "ix")
        repo.requests.clear()
        again = harvest(tmp_path / "ix", url)  # without --from: from where the last run got
        assert again.exit_code == 0, again.output
        assert repo.requests[0]["from"] == latest
        assert " 0 new, 0 updated" in again.output
        assert indexed(tmp_path / "ix") == before
        repo.requests.clear()
        older = harvest(tmp_path / "ix", url, "--from", "2001-01-01")  # another --from: asked
    assert repo.requests[0]["from"] == "2001-01-01"
    assert "50 records in 5 pages" in older.output and " 0 new, 0 updated" in older.output
    assert indexed(tmp_path / "ix") == before


def test_a_new_version_replaces_the_old(repo: Repository, tmp_path: Path) -> None:
    with serving(repo) as url:
        assert harvest(tmp_path / "ix", url).exit_code == 0
        changed = repo.objects[3]
        changed["title"] = "A corrected title"
        changed["update_date"] = "2030-01-02"
        again = harvest(tmp_path / "ix", url)
    assert again.exit_code == 0, again.output
    assert "0 new, 1 updated" in again.output
    docs = indexed(tmp_path / "ix")
    assert len(docs) == 50
    assert docs[changed["id"]]["title"] == "A corrected title"


def test_a_record_deleted_upstream_is_removed(repo: Repository, tmp_path: Path) -> None:
    with serving(repo) as url:
        assert harvest(tmp_path / "ix", url).exit_code == 0
        gone = repo.objects[7]["id"]
        repo.deleted.add(gone)
        repo.datestamps[gone] = "2030-01-01"
        again = harvest(tmp_path / "ix", url)
    assert again.exit_code == 0, again.output
    assert "1 deleted" in again.output
    docs = indexed(tmp_path / "ix")
    assert gone not in docs
    assert len(docs) == 49


def test_no_records_match_is_zero_new_records(repo: Repository, tmp_path: Path) -> None:
    with serving(repo) as url:
        result = harvest(tmp_path / "ix", url, "--from", "2031-01-01")
    assert result.exit_code == 0, result.output
    assert "harvested 0 records in 1 pages" in result.output


def test_503_with_retry_after_and_429_are_waited_out(repo: Repository, tmp_path: Path) -> None:
    repo.faults[2] = [Answer(503, b"busy", {"Retry-After": "1"})]
    repo.faults[3] = [Answer(429, b"slow down", {"Retry-After": "0"})]
    started = time.monotonic()
    with serving(repo) as url:
        result = harvest(tmp_path / "ix", url)
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started >= 1.0
    assert "harvested 50 records in 5 pages" in result.output
    assert len(repo.requests) == 7
    assert len(indexed(tmp_path / "ix")) == 50


def test_server_errors_are_retried_a_bounded_number_of_times(
    repo: Repository, tmp_path: Path
) -> None:
    repo.faults[2] = [Answer(500, b"oops")] * 20
    with serving(repo) as url:
        result = harvest(tmp_path / "ix", url)
    assert_one_line_error(result, 1, url, "page 2", "HTTP 500")
    assert len(repo.requests) == 1 + 7  # the first page, then page 2 asked 7 times
    assert len(indexed(tmp_path / "ix")) == 10


def cut_page(repo: Repository, number: int) -> None:
    """Page ``number``'s real answer, cut in the middle of its XML."""
    page = Repository(objects=repo.objects, page_size=repo.page_size)
    args = {"verb": "ListRecords", "metadataPrefix": "arXiv"}
    if number > 1:
        start = (number - 1) * repo.page_size
        args = {"verb": "ListRecords", "resumptionToken": f"arXiv||||{start}"}
    body = page.answer(args).body
    repo.faults[number] = [Answer(200, body[: len(body) // 2])]


def test_a_cut_page_is_one_line_and_the_next_run_goes_on(repo: Repository, tmp_path: Path) -> None:
    cut_page(repo, 3)
    with serving(repo) as url:
        result = harvest(tmp_path / "ix", url)
        assert_one_line_error(result, 1, "page 3", "not OAI-PMH XML", "resumptionToken=")
        assert len(indexed(tmp_path / "ix")) == 20
        repo.requests.clear()
        again = harvest(tmp_path / "ix", url)
    assert again.exit_code == 0, again.output
    assert "went on from the saved resumption token" in again.output
    assert repo.requests[0] == {"verb": "ListRecords", "resumptionToken": "arXiv||||20"}
    assert "harvested 30 records in 3 pages" in again.output
    assert len(indexed(tmp_path / "ix")) == 50


def test_pages_are_added_a_batch_at_a_time(repo: Repository, tmp_path: Path) -> None:
    cut_page(repo, 4)
    with serving(repo) as url:
        result = harvest(tmp_path / "ix", url, "--batch", "20")
        assert_one_line_error(result, 1, "page 4")
        assert len(indexed(tmp_path / "ix")) == 20  # pages 1 and 2; page 3 waited for 4
        repo.requests.clear()
        again = harvest(tmp_path / "ix", url, "--batch", "20")
        whole = harvest(tmp_path / "whole", url, "--batch", "5000")
    assert again.exit_code == 0, again.output
    assert repo.requests[0] == {"verb": "ListRecords", "resumptionToken": "arXiv||||20"}
    assert "harvested 30 records in 3 pages" in again.output
    assert whole.exit_code == 0, whole.output
    assert indexed(tmp_path / "ix") == indexed(tmp_path / "whole")


def test_an_html_error_page_is_one_line(repo: Repository, tmp_path: Path) -> None:
    page = b"<!DOCTYPE html><html><body><h1>Service unavailable<br></h1></body></html>"
    repo.faults[2] = [Answer(200, page)]
    with serving(repo) as url:
        result = harvest(tmp_path / "ix", url)
    assert_one_line_error(result, 1, "page 2", "an HTML page")
    assert len(indexed(tmp_path / "ix")) == 10


def test_an_expired_token_asks_the_list_anew(repo: Repository, tmp_path: Path) -> None:
    cut_page(repo, 2)
    with serving(repo) as url:
        assert harvest(tmp_path / "ix", url).exit_code == 1
        expired = b'<error code="badResumptionToken">expired</error>'
        body = (
            b'<?xml version="1.0"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
            b"<responseDate>2026-12-01T10:00:00Z</responseDate>" + expired + b"</OAI-PMH>"
        )
        repo.faults[2] = [Answer(200, body)]
        again = harvest(tmp_path / "ix", url)
    assert again.exit_code == 0, again.output
    assert "expired" in again.stderr
    assert len(indexed(tmp_path / "ix")) == 50


def test_only_http_endpoints(tmp_path: Path) -> None:
    result = harvest(tmp_path / "ix", "file:///etc/passwd")
    assert_one_line_error(result, 2, "--endpoint", "not an http(s) URL")


def test_list_shows_each_saved_harvest(repo: Repository, tmp_path: Path) -> None:
    runner = CliRunner()
    empty = runner.invoke(main, ["harvest", "--list", "--index", str(tmp_path / "ix")])
    assert "no saved harvests" in empty.output
    with serving(repo) as url:
        assert harvest(tmp_path / "ix", url, "--set", "physics:hep-ph").exit_code == 0
    listed = runner.invoke(main, ["harvest", "--list", "--index", str(tmp_path / "ix")])
    assert listed.exit_code == 0, listed.output
    (line,) = listed.output.strip().splitlines()
    assert line.startswith("arxiv, set physics:hep-ph, arXiv: datestamps ")
    assert "next run from " in line and url in line


def run_in_subprocess(index_dir: Path, url: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "pubsearch", "harvest", "arxiv", "--endpoint", url]
    argv += ["--delay", "0", "--batch", "1", "--index", str(index_dir)]
    env = dict(os.environ, PUBSEARCH_HARVEST_BACKOFF="0")
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_a_killed_harvest_run_again_ends_as_one_uninterrupted_run(
    repo: Repository, tmp_path: Path
) -> None:
    with serving(repo) as url:
        assert harvest(tmp_path / "whole", url).exit_code == 0
        whole = indexed(tmp_path / "whole")
        repo.requests.clear()
        repo.block_at = 4
        process = run_in_subprocess(tmp_path / "killed", url)
        try:
            assert repo.reached.wait(60), "the harvest never asked for page 4"
            process.send_signal(signal.SIGKILL)
            process.wait(30)
        finally:
            if process.poll() is None:
                process.kill()
        repo.block_at = None
        repo.release.set()
        assert len(indexed(tmp_path / "killed")) == 30
        repo.requests.clear()
        again = harvest(tmp_path / "killed", url)
        assert again.exit_code == 0, again.output
        assert repo.requests[0] == {"verb": "ListRecords", "resumptionToken": "arXiv||||30"}
        assert "20 new" in again.output
        twice = harvest(tmp_path / "killed", url)
    assert indexed(tmp_path / "killed") == whole
    assert " 0 new, 0 updated" in twice.output
