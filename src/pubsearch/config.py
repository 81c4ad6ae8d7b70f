"""Where the index lives: the ``--index`` option, else ``PUBSEARCH_INDEX``, else ``./index``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV_INDEX = "PUBSEARCH_INDEX"
DEFAULT_INDEX = "index"


def resolve_index_dir(option: str | os.PathLike[str] | None, env: Mapping[str, str]) -> Path:
    """The index directory for a command, from its option and the environment given."""
    if option:
        return Path(option)
    from_env = env.get(ENV_INDEX, "").strip()
    if from_env:
        return Path(from_env)
    return Path(DEFAULT_INDEX)
