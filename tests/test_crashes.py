"""Killed builds, concurrent writers and searches during a re-index: nothing is lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pubsearch import storage
from pubsearch.indexing import build_index
from pubsearch.records import Record
from pubsearch.request import SearchRequest
from pubsearch.searching import SearchService

WORDS = (
    "gradient descent sparse attention kernel tensor graph quantum lattice protein spectral "
    "manifold bayesian inference stochastic convex robust federated privacy compiler cache"
).split()


def write_big_profile(path: Path, records: int) -> None:
    """A synthetic profile page, big enough that indexing it takes a few seconds."""
    lines = [
        "arXiv subjects",
        "Test Person",
        "Publications and source records attributed to Test Person.",
    ]
    for n in range(records):
        words = [WORDS[(n * 7 + k * 3) % len(WORDS)] for k in range(60)]
        lines += [
            f"arXiv{2000 + n % 25}",
            f"Synthetic paper {n} on {words[0]} {words[1]}",
            " ".join(words) + f" token{n}",
            "cs.LG\u2197",
        ]
    path.write_text("\n\n".join(lines) + "\n", "utf-8")


def pubsearch(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pubsearch", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(predicate: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


@pytest.fixture(scope="module")
def big_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.txt"
    write_big_profile(path, 6000)
    return path


def test_sigkill_mid_build_leaves_previous_index(
    tmp_path: Path, seeds_dir: Path, big_page: Path
) -> None:
    index_dir = tmp_path / "ix"
    build_index(index_dir, [Record(title="Survivor paper", year=2020, authors=("A",))])
    before = (index_dir / "CURRENT").read_text()

    proc = pubsearch("index", "--index", str(index_dir), str(big_page))
    wait_for(lambda: any(index_dir.glob(storage.BUILD_PREFIX + "*")) or proc.poll() is not None)
    assert proc.poll() is None, "the build finished before it could be killed"
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL

    assert (index_dir / "CURRENT").read_text() == before
    assert SearchService(index_dir).search(SearchRequest(q="survivor")).total == 1
    # The next build succeeds without manual cleanup, and removes the abandoned build.
    result = subprocess.run(
        [sys.executable, "-m", "pubsearch", "index", "--index", str(index_dir), str(seeds_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert not list(index_dir.glob(storage.BUILD_PREFIX + "*"))
    assert SearchService(index_dir).search(SearchRequest()).total == 36


def test_second_indexer_waits_then_fails_clearly(
    tmp_path: Path, big_page: Path, seeds_dir: Path
) -> None:
    index_dir = tmp_path / "ix"
    first = pubsearch("index", "--index", str(index_dir), str(big_page))
    wait_for(lambda: any(index_dir.glob(storage.BUILD_PREFIX + "*")) or first.poll() is not None)
    assert first.poll() is None
    second = subprocess.run(
        [
            sys.executable,
            "-m",
            "pubsearch",
            "index",
            "--index",
            str(index_dir),
            "--wait",
            "0.5",
            str(seeds_dir),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert second.returncode == 1
    assert second.stderr.strip().startswith("Error: ")
    assert "being written by another pubsearch process" in second.stderr
    assert "Traceback" not in second.stderr
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert SearchService(index_dir).search(SearchRequest(q="synthetic")).total == 6000


def test_searches_keep_answering_during_rebuilds(tmp_path: Path, seeds_dir: Path) -> None:
    from pubsearch.readers import ReadReport, read_paths

    index_dir = tmp_path / "ix"
    build_index(index_dir, read_paths([seeds_dir], ReadReport()))
    service = SearchService(index_dir)
    errors: list[BaseException] = []
    totals: list[int] = []
    stop = threading.Event()

    def search_loop() -> None:
        while not stop.is_set():
            try:
                totals.append(service.search(SearchRequest(q="", facets=True)).total)
            except BaseException as exc:  # noqa: BLE001 - any error at all fails the test
                errors.append(exc)
                return

    threads = [threading.Thread(target=search_loop) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for n in range(6):
            records = (
                read_paths([seeds_dir], ReadReport())
                if n % 2
                else [Record(title=f"Only record {n}", year=2020)]
            )
            build_index(index_dir, records)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    assert set(totals) <= {1, 36}
    assert service.search(SearchRequest()).total == 36
