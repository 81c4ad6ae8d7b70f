"""Readers turn source files into :class:`~pubsearch.ingest.records.Record` values.

Each reader is a generator ``read_x(stream_lines, origin, report) -> Iterator[Record]``.
Problems with one block or line go to a :class:`ReadReport` (file and line named) and the
reader carries on; a file that cannot be read at all raises
:class:`~pubsearch.core.errors.ReadError`.

Formats (see :data:`FORMATS`; chosen by content unless forced): ``profile`` (profile pages,
:mod:`.profile`), ``jsonl`` (generic JSON lines or a JSON array, :mod:`.jsonl`), ``arxiv``
(arXiv's metadata snapshot, :mod:`.arxiv_snapshot`), ``bibtex`` (:mod:`.bibtex`), ``ris``
(:mod:`.ris`), ``csljson`` (:mod:`.csljson`), ``openalex`` (OpenAlex works,
:mod:`.openalex`) and ``crossref`` (Crossref works, :mod:`.crossref`). Any of them may be
gzipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The formats' names, for the command line's --format without loading the readers
# (tests/test_readers_sources.py keeps it equal to sources.FORMATS).
FORMAT_NAMES = ("profile", "jsonl", "arxiv", "bibtex", "ris", "csljson", "openalex", "crossref")

if TYPE_CHECKING:
    from pubsearch.ingest.readers.report import ReadProblem, ReadReport
    from pubsearch.ingest.readers.sources import FORMATS, iter_files, read_paths

__all__ = ["FORMATS", "FORMAT_NAMES", "ReadProblem", "ReadReport", "iter_files", "read_paths"]


def __getattr__(name: str) -> Any:
    """The readers, loaded when first asked for (``pubsearch --help`` needs none)."""
    if name in ("ReadProblem", "ReadReport"):
        from pubsearch.ingest.readers import report

        return getattr(report, name)
    if name in ("FORMATS", "iter_files", "read_paths"):
        from pubsearch.ingest.readers import sources

        return getattr(sources, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
