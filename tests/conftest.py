"""Shared fixtures: a real Whoosh index of the real seeds, built once per test session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pubsearch.indexing import build_index
from pubsearch.readers import ReadReport, read_paths
from pubsearch.searching import SearchService

REPO = Path(__file__).resolve().parent.parent
SEEDS = REPO / "seeds"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    return SEEDS


@pytest.fixture(scope="session")
def seed_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of seeds/, shared read-only by the tests that only search it."""
    index_dir = tmp_path_factory.mktemp("seed-index")
    build_index(index_dir, read_paths([SEEDS], ReadReport()))
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
