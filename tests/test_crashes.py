"""Killed builds, concurrent writers and searches during a re-index: nothing is lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pubsearch.index import storage
from pubsearch.index.build import build_index
from pubsearch.ingest.records import Record
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService

WORDS = (
    "gradient descent sparse attention kernel tensor graph quantum lattice protein spectral "
    "manifold bayesian inference stochastic convex robust federated privacy compiler cache"
).split()


def big_profile(records: int) -> bytes:
    """A synthetic profile page of ``records`` papers."""
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
    return ("\n\n".join(lines) + "\n").encode("utf-8")


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


@contextmanager
def indexer_reading_stdin(index_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real ``pubsearch index -`` that holds the writer lock, mid-build, for as long as
    its standard input stays open: no race with how fast this machine indexes."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pubsearch", "index", "--index", str(index_dir), "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: any(index_dir.glob(storage.BUILD_PREFIX + "*")) or proc.poll() is not None)
        assert proc.poll() is None, proc.communicate()[1].decode()
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def run_indexer(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pubsearch", "index", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_sigkill_mid_build_leaves_previous_index(tmp_path: Path, seeds_dir: Path) -> None:
    index_dir = tmp_path / "ix"
    build_index(index_dir, [Record(title="Survivor paper", year=2020, authors=("A",))])
    before = (index_dir / "CURRENT").read_text()

    with indexer_reading_stdin(index_dir) as proc:
        assert proc.stdin is not None
        proc.stdin.write(big_profile(3000))
        proc.stdin.flush()
        # Killed while it writes: the records above are being indexed, and more may come.
        wait_for(lambda: _build_bytes(index_dir) > 0)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
    assert list(index_dir.glob(storage.BUILD_PREFIX + "*")), "the abandoned build is left"

    assert (index_dir / "CURRENT").read_text() == before
    assert SearchService(index_dir).search(SearchRequest(q="survivor")).total == 1
    # The next build succeeds without manual cleanup, and removes the abandoned build.
    result = run_indexer("--index", str(index_dir), str(seeds_dir))
    assert result.returncode == 0, result.stderr
    assert not list(index_dir.glob(storage.BUILD_PREFIX + "*"))
    assert SearchService(index_dir).search(SearchRequest()).total == 36


def _build_bytes(index_dir: Path) -> int:
    return sum(
        path.stat().st_size
        for build in index_dir.glob(storage.BUILD_PREFIX + "*")
        for path in build.rglob("*")
        if path.is_file()
    )


def test_second_indexer_waits_then_fails_clearly(tmp_path: Path, seeds_dir: Path) -> None:
    index_dir = tmp_path / "ix"
    with indexer_reading_stdin(index_dir) as first:
        second = run_indexer("--index", str(index_dir), "--wait", "0.5", str(seeds_dir))
        assert second.returncode == 1
        assert second.stderr.strip().startswith("Error: ")
        assert "being written by another pubsearch process" in second.stderr
        assert "Traceback" not in second.stderr
        assert not (index_dir / "CURRENT").exists(), "the second indexer wrote nothing"

        out, err = first.communicate(big_profile(200), timeout=300)
        assert first.returncode == 0, err.decode()
    assert SearchService(index_dir).search(SearchRequest(q="synthetic")).total == 200


def test_second_indexer_waits_for_the_first_to_finish(tmp_path: Path, seeds_dir: Path) -> None:
    index_dir = tmp_path / "ix"
    with indexer_reading_stdin(index_dir) as first:
        second = subprocess.Popen(
            [sys.executable, "-m", "pubsearch", "index", "--index", str(index_dir)]
            + ["--wait", "120", str(seeds_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            time.sleep(1.0)
            assert second.poll() is None, "the second indexer gave up while the first wrote"
            first.communicate(big_profile(200), timeout=300)
            assert first.returncode == 0
            out, err = second.communicate(timeout=300)
        finally:
            if second.poll() is None:
                second.kill()
                second.communicate()
        assert second.returncode == 0, err
    # The second build replaced the first one's.
    assert SearchService(index_dir).search(SearchRequest()).total == 36
    assert SearchService(index_dir).search(SearchRequest(q="token17")).total == 0


def test_searches_keep_answering_during_rebuilds(tmp_path: Path, seeds_dir: Path) -> None:
    from pubsearch.ingest.readers import ReadReport, read_paths

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
