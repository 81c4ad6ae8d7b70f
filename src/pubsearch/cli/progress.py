"""The progress of ``pubsearch index``: records counted, and on a terminal a bar."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pubsearch.core.errors import PubsearchError
from pubsearch.ingest.readers import ReadReport
from pubsearch.ingest.records import Record


class IndexProgress:
    """Counts records as they pass. On a terminal, shows a bar: how much of the input has
    been read (bytes as stored, so compressed bytes for gzip files), records so far,
    records per second and the time left; once all is read, that the index is being
    written, with the time it has taken so far."""

    # Redraw every this many records, so that the bar costs nothing measurable.
    EVERY = 200
    # While the last segments are written, the bar is redrawn this often (seconds).
    TICK = 0.5

    def __init__(self, records: Iterator[Record], report: ReadReport, total_bytes: int | None):
        self._records = records
        self._report = report
        self._bar: Any = None
        self._done = threading.Event()
        if sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(
                total=total_bytes or None,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                desc="indexing",
                file=sys.stderr,
                leave=False,
                bar_format=(
                    "{desc} {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]"
                    if total_bytes
                    else "{desc} [{elapsed}]"
                ),
            )

    def __iter__(self) -> Iterator[Record]:
        bar = self._bar
        started = time.monotonic()
        count = 0
        for record in self._records:
            count += 1
            if bar is not None and count % self.EVERY == 0:
                self._show(count, started)
            yield record
        if bar is not None:
            self._show(count, started)
            bar.bar_format = "{desc} [{elapsed}]"
            bar.set_description_str(f"all {count:,} records read; writing the index")
            threading.Thread(target=self._tick, name="pubsearch-progress", daemon=True).start()

    def _tick(self) -> None:
        while not self._done.wait(self.TICK):
            self._bar.refresh()

    def _show(self, count: int, started: float) -> None:
        bar = self._bar
        done = self._report.bytes_read
        if bar.total:
            done = min(done, bar.total)
        bar.update(done - bar.n)
        rate = count / max(time.monotonic() - started, 1e-6)
        bar.set_description_str(f"indexing: {count:,} records read, {rate:,.0f} records/s,")

    def __enter__(self) -> IndexProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._bar is not None:
            self._bar.close()


def progress(records: Iterator[Record], report: ReadReport, sources: list[Path]) -> IndexProgress:
    """The progress of indexing ``records``, read from ``sources``."""
    return IndexProgress(records, report, _input_bytes(sources))


def _input_bytes(sources: list[Path]) -> int | None:
    """Size of every input file as stored, or None when it cannot be known (stdin)."""
    from pubsearch.ingest.readers import iter_files

    try:
        return sum(path.stat().st_size for path in iter_files(sources) if str(path) != "-")
    except (OSError, PubsearchError):
        return None
