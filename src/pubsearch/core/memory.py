"""Handing freed memory back to the system, in a long-running server process.

A query at 1,000,000 records allocates masks and score arrays of 1 to 8 MB and frees them
when it is answered. glibc keeps what its threads free in their arenas, and raises the size
from which it maps an allocation on its own after each large one is freed, so that the next
ones come from the arenas: a server's processes kept growing during a request mix while
the memory Python had allocated stayed flat (docs/growth.md). A server process asks glibc
to hand free pages back (``malloc_trim``) once a second while requests come in; a build's
worker, after each segment it writes, and a build before it waits for its people table
(:func:`trim`). Elsewhere than glibc, nothing is done.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable

# How often a busy server process hands free memory back.
TRIM_INTERVAL_SECONDS = 1.0


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)``, or None where there is none."""
    try:
        function = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return lambda: function(0)


def trim() -> bool:
    """Hand the memory freed so far back to the system, now; False where that cannot be
    done."""
    function = _malloc_trim()
    if function is None:
        return False
    function()
    return True


class Trimmer:
    """Hands free memory back at most once every ``interval`` seconds, after :meth:`used`
    said that memory was used since the last time; in a daemon thread of its own."""

    def __init__(self, interval: float = TRIM_INTERVAL_SECONDS) -> None:
        self._interval = interval
        self._used = threading.Event()
        self._trim = _malloc_trim()
        self.trims = 0  # times memory was handed back

    @property
    def available(self) -> bool:
        return self._trim is not None

    def used(self) -> None:
        """Note that memory was used (a request was answered)."""
        self._used.set()

    def start(self) -> None:
        if self._trim is not None:
            threading.Thread(target=self._run, name="pubsearch-trim", daemon=True).start()

    def _run(self) -> None:
        while True:  # a daemon thread: it ends with its process
            time.sleep(self._interval)
            if self._used.is_set():
                self._used.clear()
                self.trim_now()

    def trim_now(self) -> None:
        if self._trim is not None:
            self._trim()
            self.trims += 1
