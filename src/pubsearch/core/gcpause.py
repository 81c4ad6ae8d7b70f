"""The cyclic garbage collector, paused around bulk work that makes no reference cycles.

Building an index allocates millions of short-lived lists, tuples and records, none in
cycles, while long-lived caches grow: at its default thresholds the collector runs every
700 allocations and keeps passing over what stays (what that cost is in
docs/performance.md).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No automatic collection inside the block; the collector as it was after it (so a
    nested block leaves it to the outermost), whatever the block raised."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
