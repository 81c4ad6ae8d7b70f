from __future__ import annotations

import os
from pathlib import Path

import pytest

from pubsearch.core import config
from pubsearch.core.config import resolve_index_dir


def test_option_beats_environment_beats_default() -> None:
    env = {"PUBSEARCH_INDEX": "/from/env"}
    assert resolve_index_dir("/opt", env) == Path("/opt")
    assert resolve_index_dir(None, env) == Path("/from/env")
    assert resolve_index_dir(None, {}) == Path("index")
    assert resolve_index_dir(None, {"PUBSEARCH_INDEX": "  "}) == Path("index")


def test_default_processes_follow_the_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    assert config.cpus() == 1 and config.default_processes() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert config.cpus() == 16 and config.default_processes() == 2
