"""Readers turn source files into :class:`~pubsearch.records.Record` values.

Each reader is a generator ``read_x(stream_lines, origin, report) -> Iterator[Record]``.
Problems with one block or line go to a :class:`ReadReport` (file and line named) and the
reader carries on; a file that cannot be read at all raises :class:`~pubsearch.errors.ReadError`.

Formats (see :data:`FORMATS`; chosen by content unless forced): ``profile`` (profile pages,
:mod:`.profile`), ``jsonl`` (generic JSON lines or a JSON array, :mod:`.jsonl`) and
``arxiv`` (arXiv's metadata snapshot, :mod:`.arxiv_snapshot`). Any of them may be gzipped.
"""

from __future__ import annotations

from pubsearch.readers.report import ReadProblem, ReadReport
from pubsearch.readers.sources import FORMATS, iter_files, read_paths

__all__ = ["FORMATS", "ReadProblem", "ReadReport", "iter_files", "read_paths"]
