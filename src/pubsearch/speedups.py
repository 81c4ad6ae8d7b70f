"""The C companion of the indexing code, ``pubsearch._speedups`` (src/pubsearch/_speedups.c),
when it was built.

pyproject.toml builds it where a C compiler and Python's headers are; without them the
install goes on and :mod:`pubsearch.analysis` and :mod:`pubsearch.bulk` run their own
Python instead, which writes the same index more slowly. ``pubsearch --version`` says which.
"""

from __future__ import annotations

import types

compiled: types.ModuleType | None
try:
    import pubsearch._speedups as compiled
except ImportError:  # pragma: no cover - where it could not be built
    compiled = None

# Whether to use the C code when it is there (tests turn it off to test the Python).
enabled = True


def active() -> types.ModuleType | None:
    """The C module, when it is there and enabled."""
    return compiled if enabled else None


def note() -> str:
    """Whether indexing runs with the C code, for ``pubsearch --version``."""
    if compiled is not None:
        return "indexing with its C speedups"
    return "indexing in plain Python: pubsearch._speedups was not built (no C compiler?)"
