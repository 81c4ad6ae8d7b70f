"""Freed memory handed back by a busy server process (glibc's malloc_trim)."""

from __future__ import annotations

import ctypes
import platform
import threading
import time

import pytest

from pubsearch.core import memory

GLIBC = platform.libc_ver()[0] == "glibc"


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_trimming_hands_back_what_was_freed_below_a_live_block() -> None:
    # Blocks of 64 kB come from the heap (under glibc's mapping threshold); the last one
    # kept pins the heap's top, so that freeing the rest hands nothing back by itself.
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    size, count = 64 << 10, 3200  # 200 MB
    done = threading.Event()
    result: list[float] = []

    def work() -> None:  # in a thread of its own: an arena of its own, as a request's
        blocks = [libc.malloc(size) for _ in range(count)]
        for block in blocks:
            ctypes.memset(block, 1, size)  # touched: resident
        grown = _rss_mb()
        for block in blocks[:-1]:
            libc.free(block)
        freed = _rss_mb()
        trimmer = memory.Trimmer()
        trimmer.trim_now()
        result.extend([grown, freed, _rss_mb(), trimmer.trims])
        libc.free(blocks[-1])
        done.set()

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    grown, freed, trimmed, trims = result
    assert trims == 1
    assert freed > grown - 50  # glibc kept it
    assert trimmed < freed - 150  # handed back


def test_a_busy_process_is_trimmed_and_an_idle_one_is_not() -> None:
    if not GLIBC:
        pytest.skip("malloc_trim is glibc's")
    trimmer = memory.Trimmer(interval=0.01)
    assert trimmer.available
    trimmer.start()
    time.sleep(0.1)
    assert trimmer.trims == 0  # nothing used: nothing done
    trimmer.used()
    deadline = time.monotonic() + 10
    while trimmer.trims == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert trimmer.trims == 1
    time.sleep(0.1)
    assert trimmer.trims == 1  # once for each time it was used


def test_trim_now_says_whether_it_could() -> None:
    assert memory.trim() is GLIBC
