"""Finding source files, opening them, and choosing a reader for each."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from pubsearch.errors import ReadError
from pubsearch.readers.profile import looks_like_profile, read_profile
from pubsearch.readers.report import ReadReport
from pubsearch.records import Record

Reader = Callable[[Iterable[str], str, ReadReport], Iterator[Record]]

FORMATS: dict[str, Reader] = {"profile": read_profile}

_SNIFF_LINES = 8


def iter_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files named, and files below directories named, in a stable order.

    Hidden files and ``README*`` files inside directories are passed over.
    """
    for raw in paths:
        path = Path(raw)
        if str(raw) == "-":
            yield path
        elif path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if name.startswith(".") or name.upper().startswith("README"):
                        continue
                    yield Path(root) / name
        elif path.exists():
            yield path
        else:
            raise ReadError(str(raw), "no such file or directory")


def open_text(path: Path) -> IO[str]:
    """Open ``path`` as UTF-8 text (a BOM is dropped); ``-`` is standard input."""
    if str(path) == "-":
        import sys

        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", newline=None)
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise ReadError(str(path), exc.strerror or str(exc)) from None
    head = raw.read(4096)
    raw.seek(0)
    if b"\x00" in head:
        raw.close()
        raise ReadError(str(path), "not a text file (binary content)")
    return io.TextIOWrapper(raw, encoding="utf-8-sig", errors="strict", newline=None)


def detect_format(first_lines: list[str]) -> str | None:
    """Name of the reader for content that starts with ``first_lines``, or None."""
    if looks_like_profile(first_lines):
        return "profile"
    return None


def read_file(path: Path, report: ReadReport, fmt: str = "auto") -> Iterator[Record]:
    """Records of one file; the whole-file problems raise ReadError."""
    origin = str(path)
    stream = open_text(path)
    try:
        try:
            first: list[str] = []
            for line in stream:
                first.append(line)
                if sum(1 for x in first if x.strip()) >= _SNIFF_LINES:
                    break
        except UnicodeDecodeError as exc:
            raise ReadError(origin, f"not UTF-8 text ({exc.reason})") from None
        name = fmt if fmt != "auto" else detect_format(first)
        if name is None:
            raise ReadError(origin, "unrecognised format (use --format to choose one)")
        reader = FORMATS[name]

        def lines() -> Iterator[str]:
            yield from first
            try:
                yield from stream
            except UnicodeDecodeError as exc:
                raise ReadError(origin, f"not UTF-8 text ({exc.reason})") from None

        report.files += 1
        for record in reader(lines(), origin, report):
            report.records_read += 1
            yield record
    finally:
        stream.close()


def read_paths(
    paths: Iterable[str | Path],
    report: ReadReport,
    fmt: str = "auto",
    on_file_error: Callable[[ReadError], None] | None = None,
) -> Iterator[Record]:
    """Records of every file under ``paths``.

    A file that cannot be read raises :class:`ReadError`, or, when ``on_file_error`` is
    given, is handed to it and skipped.
    """
    for path in iter_files(paths):
        try:
            yield from read_file(path, report, fmt)
        except ReadError as exc:
            if on_file_error is None:
                raise
            on_file_error(exc)
