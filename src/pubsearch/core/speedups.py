"""The C companion of the indexing and search code, ``pubsearch.core._speedups`` (built
from the C files of src/pubsearch/core/csrc/, which speedups.h there lists), when it was
built.

pyproject.toml builds it where a C compiler and Python's headers are; without them the
install goes on and :mod:`pubsearch.index.analysis`, :mod:`pubsearch.codec` and the
search run their own Python instead, which writes and reads the same index more slowly.
``PUBSEARCH_NO_SPEEDUPS=1`` makes a built module invisible (the tests run both ways).
``pubsearch --version`` says which.
"""

from __future__ import annotations

import os
import types
from typing import Any

from pubsearch.core.config import speedups_disabled

# Whether to use the C code when it is there (tests turn it off to test the Python).
enabled = True

_NOT_LOADED = object()
_compiled: Any = _NOT_LOADED


def _load() -> types.ModuleType | None:
    """The C module, unless it was not built or ``PUBSEARCH_NO_SPEEDUPS`` hides it (read
    when first asked, so that worker processes see the same as their parent)."""
    global _compiled
    if _compiled is _NOT_LOADED:
        if speedups_disabled(os.environ):
            _compiled = None
        else:
            try:
                from pubsearch.core import _speedups

                _compiled = _speedups
            except ImportError:  # pragma: no cover - where it could not be built
                _compiled = None
    loaded: types.ModuleType | None = _compiled
    return loaded


def __getattr__(name: str) -> Any:
    if name == "compiled":
        return _load()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def active() -> types.ModuleType | None:
    """The C module, when it is there and enabled."""
    return _load() if enabled else None


def note() -> str:
    """Whether indexing runs with the C code, for ``pubsearch --version``."""
    if _load() is not None:
        return "indexing with its C speedups"
    if speedups_disabled(os.environ):
        return "indexing in plain Python: PUBSEARCH_NO_SPEEDUPS is set"
    return "indexing in plain Python: pubsearch.core._speedups was not built (no C compiler?)"
