from __future__ import annotations

from pathlib import Path

from pubsearch.config import resolve_index_dir


def test_option_beats_environment_beats_default() -> None:
    env = {"PUBSEARCH_INDEX": "/from/env"}
    assert resolve_index_dir("/opt", env) == Path("/opt")
    assert resolve_index_dir(None, env) == Path("/from/env")
    assert resolve_index_dir(None, {}) == Path("index")
    assert resolve_index_dir(None, {"PUBSEARCH_INDEX": "  "}) == Path("index")
