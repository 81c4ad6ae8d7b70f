"""Finding source files, opening them, and choosing a reader for each.

Files are read as a stream of lines, never whole: gzip-compressed files (recognised by
their first bytes, whatever their name) are decompressed on the way, ``-`` is standard
input, and each line is decoded as UTF-8 on its own so that a bad byte is reported with
its line number.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from itertools import chain
from pathlib import Path
from typing import IO, TYPE_CHECKING

from isal import igzip, isal_zlib

from pubsearch.core.errors import ParameterError, ReadError
from pubsearch.ingest.readers.arxiv_snapshot import looks_like_arxiv_snapshot, read_arxiv_snapshot
from pubsearch.ingest.readers.bibtex import looks_like_bibtex, read_bibtex
from pubsearch.ingest.readers.crossref import looks_like_crossref, read_crossref
from pubsearch.ingest.readers.csljson import looks_like_csljson, read_csljson
from pubsearch.ingest.readers.jsonl import read_jsonl
from pubsearch.ingest.readers.jsonstream import looks_like_json
from pubsearch.ingest.readers.openalex import looks_like_openalex, read_openalex
from pubsearch.ingest.readers.profile import looks_like_profile, read_profile
from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.readers.ris import looks_like_ris, read_ris
from pubsearch.ingest.records import Record

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

Reader = Callable[[Iterable[str], str, ReadReport], Iterator[Record]]

FORMATS: dict[str, Reader] = {
    "profile": read_profile,
    "jsonl": read_jsonl,
    "arxiv": read_arxiv_snapshot,
    "bibtex": read_bibtex,
    "ris": read_ris,
    "csljson": read_csljson,
    "openalex": read_openalex,
    "crossref": read_crossref,
}

STDIN = "-"
STDIN_ORIGIN = "<stdin>"

_SNIFF_LINES = 32  # non-blank lines looked at to choose a format
_SNIFF_CHARS = 1 << 20
_MAX_LINE = 64 << 20  # longer lines are refused rather than held in memory
_GZIP_MAGIC = b"\x1f\x8b"
# A record with more text than this is not a publication record (a 50 MB "abstract").
MAX_RECORD_CHARS = 200_000
_HEAD = 4096


def iter_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files named, and files below directories named, in a stable order.

    Hidden files and ``README*`` files inside directories are passed over.
    """
    for raw in paths:
        path = Path(raw)
        if str(raw) == STDIN:
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


def display_name(path: Path) -> str:
    """How ``path`` is named in records' origins and in messages."""
    return STDIN_ORIGIN if str(path) == STDIN else str(path)


class _Prefixed(io.RawIOBase):
    """A binary stream that gives back ``head`` (already read from ``rest``) before the
    rest of ``rest``: how the first bytes are looked at on a stream that cannot seek."""

    def __init__(
        self, head: bytes, rest: IO[bytes], on_bytes: Callable[[int], None] | None = None
    ) -> None:
        super().__init__()
        self._head = head
        self._rest = rest
        self._on_bytes = on_bytes
        if on_bytes is not None:
            on_bytes(len(head))

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        if self._head:
            count = min(len(self._head), len(view))
            view[:count] = self._head[:count]
            self._head = self._head[count:]
            return count
        data = self._rest.read(len(view))
        view[: len(data)] = data
        if self._on_bytes is not None:
            self._on_bytes(len(data))
        return len(data)


def open_binary(
    path: Path, stack: ExitStack, on_bytes: Callable[[int], None] | None = None
) -> io.BufferedIOBase:
    """``path`` as a binary stream, decompressed when it is gzip; ``-`` is standard
    input. Files opened are closed by ``stack``; standard input is left open.
    ``on_bytes`` is told how many bytes of the file (compressed, as stored) are read."""
    origin = display_name(path)
    if str(path) == STDIN:
        raw: IO[bytes] = sys.stdin.buffer
    else:
        try:
            raw = stack.enter_context(path.open("rb"))
        except OSError as exc:
            raise ReadError(origin, exc.strerror or str(exc)) from None
    try:
        head = raw.read(_HEAD)
    except OSError as exc:
        raise ReadError(origin, exc.strerror or str(exc)) from None
    stream: io.BufferedIOBase = io.BufferedReader(_Prefixed(head, raw, on_bytes))
    if head.startswith(_GZIP_MAGIC):
        # ISA-L's gzip reader: the same stream as gzip's, in a third of the time.
        unzipped = igzip.IGzipFile(fileobj=stream, mode="rb")  # type: ignore[no-untyped-call]
        stack.enter_context(unzipped)
        head = _peek_gzip(unzipped, origin)
        stream = unzipped
    if b"\x00" in head:
        raise ReadError(origin, "not a text file (binary content)")
    return stream


# What reading a damaged gzip stream raises, besides OSError (a bad header or checksum).
_ISAL_ERROR: type[BaseException] = isal_zlib.error  # type: ignore[assignment]  # a class
_DECOMPRESSION_ERRORS: tuple[type[BaseException], ...] = (EOFError, zlib.error, _ISAL_ERROR)
_PEEK_ERRORS: tuple[type[BaseException], ...] = (*_DECOMPRESSION_ERRORS, OSError)


def _peek_gzip(stream: gzip.GzipFile, origin: str) -> bytes:
    """The first decompressed bytes, without using them up."""
    try:
        return stream.peek(_HEAD)[:_HEAD]
    except _PEEK_ERRORS as exc:
        raise _gzip_error(origin, 0, exc) from None


def _gzip_error(origin: str, lines_read: int, exc: BaseException) -> ReadError:
    if isinstance(exc, EOFError):
        message = "gzip file is truncated (the compressed data ends early"
    else:
        message = f"gzip data is corrupt ({exc}"
    return ReadError(origin, f"{message}; {lines_read} lines read before that)")


def _binary_lines(stream: io.BufferedIOBase, origin: str) -> Iterator[bytes]:
    """Raw lines of ``stream``; decompression and I/O failures become ReadError."""
    count = 0
    while True:
        try:
            line = stream.readline(_MAX_LINE)
        except _DECOMPRESSION_ERRORS as exc:
            raise _gzip_error(origin, count, exc) from None
        except OSError as exc:
            if isinstance(stream, gzip.GzipFile):
                raise _gzip_error(origin, count, exc) from None
            raise ReadError(origin, exc.strerror or str(exc)) from None
        if not line:
            return
        count += 1
        if len(line) >= _MAX_LINE and not line.endswith(b"\n"):
            raise ReadError(f"{origin}:{count}", f"line is longer than {_MAX_LINE >> 20} MiB")
        yield line


def text_lines(stream: io.BufferedIOBase, origin: str) -> Iterator[str]:
    """Lines of ``stream`` as text, each ending in ``\\n`` but perhaps the last.

    UTF-8, a byte-order mark at the start dropped; ``\\r\\n`` and a lone ``\\r`` end lines
    too. Bytes that are not UTF-8 raise :class:`ReadError` naming file and line.
    """
    number = 0
    for raw in _binary_lines(stream, origin):
        number += 1
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ReadError(
                f"{origin}:{number}",
                f"not UTF-8 text ({exc.reason}: byte {exc.start + 1} of the line)",
            ) from None
        if number == 1:
            line = line.removeprefix("\ufeff")
        line = line.replace("\r\n", "\n")
        if "\r" in line:
            pieces = line.split("\r")
            yield from (piece + "\n" for piece in pieces[:-1])
            number += len(pieces) - 1
            line = pieces[-1]
            if not line:
                continue
        yield line


def detect_format(first_lines: list[str]) -> str | None:
    """Name of the reader for content that starts with ``first_lines``, or None."""
    if looks_like_profile(first_lines):
        return "profile"
    if looks_like_json(first_lines):
        # The formats with keys of their own first; generic JSON takes the rest.
        for name, looks_like in _JSON_FORMATS:
            if looks_like(first_lines):
                return name
        return "jsonl"
    if looks_like_ris(first_lines):
        return "ris"
    if looks_like_bibtex(first_lines):
        return "bibtex"
    return None


_JSON_FORMATS: tuple[tuple[str, Callable[[list[str]], bool]], ...] = (
    ("arxiv", looks_like_arxiv_snapshot),
    ("crossref", looks_like_crossref),
    ("openalex", looks_like_openalex),
    ("csljson", looks_like_csljson),
)


def _sniff(lines: Iterator[str]) -> tuple[list[str], Iterator[str]]:
    """The opening lines of ``lines``, enough to choose a format, and all the lines again.

    A read error among the opening lines is raised only where it happened, after the lines
    before it have been handed on, so that their records are kept.
    """
    first: list[str] = []
    non_blank = chars = 0
    try:
        for line in lines:
            first.append(line)
            chars += len(line)
            non_blank += bool(line.strip())
            if non_blank >= _SNIFF_LINES or chars >= _SNIFF_CHARS:
                break
    except ReadError as exc:
        if not any(line.strip() for line in first):
            raise
        return first, chain(first, _raise(exc))
    return first, chain(first, lines)


def _raise(error: ReadError) -> Iterator[str]:
    raise error
    yield  # a generator, so that the error comes when this point of the stream is read


def check_format(fmt: str) -> None:
    """Raise :class:`ParameterError` unless ``fmt`` is ``auto`` or a known format."""
    if fmt != "auto" and fmt not in FORMATS:
        known = ", ".join(["auto", *FORMATS])
        raise ParameterError("format", f"unknown format {fmt!r} (one of {known})")


def read_file(path: Path, report: ReadReport, fmt: str = "auto") -> Iterator[Record]:
    """Records of one file; the whole-file problems raise ReadError.

    ``fmt`` is a name in :data:`FORMATS`, or ``auto`` to choose by the content.
    """
    check_format(fmt)
    origin = display_name(path)
    with ExitStack() as stack:
        lines = text_lines(open_binary(path, stack, report.count_bytes), origin)
        first, lines = _sniff(lines)
        if not any(line.strip() for line in first):
            report.skip(f"{origin}:1", "empty file")
            return
        name = fmt if fmt != "auto" else detect_format(first)
        if name is None:
            raise ReadError(origin, "unrecognised format (use --format to choose one)")
        report.files += 1
        for record in FORMATS[name](lines, origin, report):
            size = len(record.title) + len(record.abstract)
            if size > MAX_RECORD_CHARS:
                where = record.origins[0] if record.origins else origin
                report.skip(
                    where, f"record of {size:,} characters skipped (at most {MAX_RECORD_CHARS:,})"
                )
                continue
            report.records_read += 1
            yield record


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
    check_format(fmt)
    for path in iter_files(paths):
        try:
            yield from read_file(path, report, fmt)
        except ReadError as exc:
            if on_file_error is None:
                raise
            on_file_error(exc)
