"""Shared fixtures: a real Whoosh index of the real seeds, built once per test session."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from flask import Flask
from flask.testing import FlaskClient

from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search.service import SearchService
from pubsearch.web import SERVICE_KEY, create_app

if TYPE_CHECKING:
    from pubsearch.index.embedding import Embedder

REPO = Path(__file__).resolve().parent.parent
SEEDS = REPO / "seeds"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def _no_vectors_unless_asked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pubsearch index` makes no vectors in tests (as PUBSEARCH_NO_VECTORS=1 asks), but
    in those marked ``semantic``, which run the real model: embedding the seeds at every
    one of the suite's builds would add minutes and test nothing more."""
    if request.node.get_closest_marker("semantic") is None:
        monkeypatch.setenv("PUBSEARCH_NO_VECTORS", "1")
    else:
        monkeypatch.delenv("PUBSEARCH_NO_VECTORS", raising=False)


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    return SEEDS


@pytest.fixture(scope="session")
def seed_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of seeds/, shared read-only by the tests that only search it."""
    index_dir = tmp_path_factory.mktemp("seed-index")
    build_index(index_dir, read_paths([SEEDS], ReadReport()))
    return index_dir


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real sentence model (the semantic extra), loaded once."""
    from pubsearch.index.embedding import Embedder

    return Embedder()


@pytest.fixture(scope="session")
def vector_index(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """An index of seeds/ whose records have vectors, shared read-only."""
    from pubsearch.index.vectors import embed_index

    index_dir = tmp_path_factory.mktemp("vector-index")
    build_index(index_dir, read_paths([SEEDS], ReadReport()))
    embed_index(index_dir, embedder)
    return index_dir


@pytest.fixture
def vector_service(vector_index: Path) -> Iterator[SearchService]:
    svc = SearchService(vector_index)
    yield svc
    svc.close()


@pytest.fixture(scope="session")
def formats_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of tests/data/formats/ (BibTeX, RIS, CSL JSON, OpenAlex, Crossref: records
    with keywords and topics for subjects, and citation counts), shared read-only."""
    index_dir = tmp_path_factory.mktemp("formats-index")
    build_index(index_dir, read_paths([DATA / "formats"], ReadReport()))
    return index_dir


@pytest.fixture
def service(seed_index: Path) -> Iterator[SearchService]:
    svc = SearchService(seed_index)
    yield svc
    svc.close()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI nothing may skip silently: a skipped test fails the run."""
    if os.environ.get("CI", "").lower() != "true" or exitstatus != 0:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped:
        reporter.write_line(f"CI: {len(skipped)} test(s) skipped; in CI every test must run.")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# -- the web application (tests/test_web_*.py) -----------------------------------------------


@pytest.fixture
def app(seed_index: Path) -> Iterator[Flask]:
    app = create_app(seed_index, test_config={"TESTING": True})
    yield app
    app.extensions[SERVICE_KEY].close()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


# -- the real server (`pubsearch serve` in a subprocess) -------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def running_server(index_dir: Path, log: Path, options: Sequence[str] = ()) -> Iterator[str]:
    """`python -m pubsearch serve` on a free port; yields its base URL, stops it after."""
    with server_process(index_dir, log, options) as (url, _):
        yield url


@contextlib.contextmanager
def server_process(
    index_dir: Path, log: Path, options: Sequence[str] = ()
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """:func:`running_server`, yielding the process too."""
    port = free_port()
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pubsearch", "serve", "--index", str(index_dir)]
            + ["--port", str(port), *options],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                pytest.fail(f"pubsearch serve exited early:\n{log.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"pubsearch serve did not listen within 30 s:\n{log.read_text()}")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def serve() -> Callable[[Path, Path], AbstractContextManager[str]]:
    """Start `pubsearch serve` of an index: ``with serve(index_dir, log_path) as url: ...``."""
    return running_server


@pytest.fixture(scope="session")
def serve_process() -> Callable[..., AbstractContextManager[tuple[str, subprocess.Popen[bytes]]]]:
    """:func:`serve` with options, yielding the process too:
    ``with serve_process(index_dir, log_path, ["--processes", "2"]) as (url, proc): ...``."""
    return server_process


@pytest.fixture(scope="session")
def live_server(seed_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a real `pubsearch serve` of the seed index."""
    log = tmp_path_factory.mktemp("server") / "serve.log"
    with running_server(seed_index, log) as url:
        yield url


@pytest.fixture(scope="module")
def vector_server(vector_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`pubsearch serve` of the seeds with vectors (hybrid search)."""
    log = tmp_path_factory.mktemp("vector-server") / "serve.log"
    with running_server(vector_index, log) as url:
        yield url


@pytest.fixture(scope="session")
def tex_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of records with TeX in their titles and abstracts, a paper with two arXiv
    ids and two DOIs, and one dated by its submission (format_fixtures.TEX_RECORDS)."""
    from format_fixtures import build_tex_index

    return build_tex_index(tmp_path_factory.mktemp("tex-index"))
