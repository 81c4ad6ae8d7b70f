"""The index directory on disk: generations, the ``CURRENT`` pointer and the writer lock.

Layout of an index directory::

    CURRENT             name of the live generation (replaced atomically)
    gen-<stamp>/        a complete Whoosh index
    .build-<random>/    a build in progress (left behind only by a killed build)
    .lock               held (flock) by the one process that is writing

A build writes a whole new generation into a ``.build-*`` directory, renames it to
``gen-*`` and only then replaces ``CURRENT``; so a crash, Ctrl-C or bad input at any point
leaves the previous generation live. Readers open whatever ``CURRENT`` names.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from whoosh import index as whoosh_index
from whoosh.index import Index

from pubsearch.core.errors import IndexCorruptError, IndexLockedError, IndexMissingError
from pubsearch.index.schema import OPTIONAL_FIELDS, analysed_as_now, build_schema

POINTER = "CURRENT"
LOCK = ".lock"
BUILD_PREFIX = ".build-"
GEN_PREFIX = "gen-"
# Generations kept besides the live one, so that searchers opened just before a swap
# can finish reading.
KEEP_OLD_GENERATIONS = 1
# Files of a generation that an update may share with it instead of copying.
LINKABLE_SUFFIXES = frozenset({".seg", ".npz"})


def current_generation(index_dir: Path) -> Path | None:
    """The live generation directory, or None when nothing was ever built here."""
    try:
        name = (index_dir / POINTER).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise IndexCorruptError(f"{index_dir / POINTER}: {exc.strerror}") from None
    if not name.startswith(GEN_PREFIX) or "/" in name:
        raise IndexCorruptError(f"{index_dir / POINTER}: names no generation ({name!r})")
    return index_dir / name


def open_current(index_dir: Path) -> tuple[str, Index]:
    """Open the live generation: ``(generation name, Whoosh index)``."""
    gen = current_generation(index_dir)
    if gen is None:
        raise IndexMissingError(
            f"no index at {index_dir} (build one with: pubsearch index --index {index_dir} PATH)"
        )
    try:
        ix = open_index(gen)
    except (whoosh_index.EmptyIndexError, FileNotFoundError):
        raise IndexCorruptError(f"index generation {gen} is missing or incomplete") from None
    except ModuleNotFoundError as exc:  # its schema names analyzers this version has not
        if not (exc.name or "").startswith("pubsearch"):
            raise
        raise IndexCorruptError(
            f"the index at {index_dir} was built by another version of pubsearch; "
            f"rebuild it: pubsearch index --index {index_dir} PATH"
        ) from None
    schema = ix.schema  # (Whoosh reads and unpickles it from the index at each ask)
    names, current = set(schema.names()), _field_names()
    if (
        not names <= current
        or not current - names <= OPTIONAL_FIELDS
        or not analysed_as_now(schema)
    ):
        ix.close()
        raise IndexCorruptError(
            f"the index at {index_dir} was built by another version of pubsearch; "
            f"rebuild it: pubsearch index --index {index_dir} PATH"
        )
    return gen.name, ix


@functools.cache
def _field_names() -> frozenset[str]:
    """The fields of this version's schema (made once a process)."""
    return frozenset(build_schema().names())


@contextlib.contextmanager
def writer_lock(index_dir: Path, timeout: float) -> Iterator[None]:
    """Hold the index's writer lock, waiting up to ``timeout`` seconds for it."""
    index_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(index_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise IndexLockedError(
                        f"{index_dir} is being written by another pubsearch process "
                        f"(waited {timeout:g} s; try again when it has finished)"
                    ) from None
                time.sleep(0.1)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def new_build_dir(index_dir: Path) -> Path:
    """A fresh, empty directory for a build, inside ``index_dir``."""
    index_dir.mkdir(parents=True, exist_ok=True)
    import tempfile

    return Path(tempfile.mkdtemp(prefix=BUILD_PREFIX, dir=index_dir))


def open_index(path: Path | str) -> Index:
    """Open the Whoosh index in ``path`` with plain file reads, not ``mmap``.

    whoosh3 copies each memory-mapped segment file into a ``BytesIO`` when a reader opens
    it, which made every searcher large and slow to open. Read through files, a searcher
    opens in a few ms and holds a few MB, and queries take as long (docs/performance.md).
    """
    from whoosh.filedb.filestore import FileStorage

    _alias_moved_modules()
    return FileStorage(str(path), supports_mmap=False).open_index()


# Where the classes an index's pickled schema names (its analyzers) were before pubsearch's
# modules moved into packages (2 December 2026): an index built before then names them so,
# and Whoosh unpickles its schema whenever it opens a reader.
MOVED_MODULES = {
    "pubsearch.analysis": "pubsearch.index.analysis",
    "pubsearch.tokenizer": "pubsearch.index.tokenizer",
}


def _alias_moved_modules() -> None:
    """Let the old names of :data:`MOVED_MODULES` stand for the modules (for this process,
    once an index is opened: never at import)."""
    for old, new in MOVED_MODULES.items():
        if old not in sys.modules:
            sys.modules[old] = importlib.import_module(new)


def create_index(build_dir: Path) -> Index:
    """A new, empty Whoosh index in ``build_dir``."""
    return whoosh_index.create_in(str(build_dir), build_schema())


def copy_generation(source: Path, build_dir: Path) -> None:
    """Copy a generation's files into ``build_dir`` (for an update that must not touch it).

    Segment files are hard links, not copies: Whoosh writes a segment once and never again
    (deletions are recorded in the new table of contents, new documents in a new segment),
    and the other files pubsearch writes are replaced by renaming, never rewritten.
    """
    import shutil  # (here and below: what writes, which a search never loads)

    for item in source.iterdir():
        if not item.is_file():
            continue
        if item.suffix in LINKABLE_SUFFIXES:
            try:
                os.link(item, build_dir / item.name)
                continue
            except OSError:
                pass  # a file system without hard links: copy
        shutil.copy2(item, build_dir / item.name)


def publish(index_dir: Path, build_dir: Path) -> Path:
    """Make a finished build the live generation, then tidy old ones. Call with the lock held."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    gen = index_dir / f"{GEN_PREFIX}{stamp}-{build_dir.name[len(BUILD_PREFIX) :]}"
    os.rename(build_dir, gen)
    _fsync_dir(gen)
    tmp = index_dir / f"{POINTER}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(gen.name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, index_dir / POINTER)
    _fsync_dir(index_dir)
    remove_stale(index_dir)
    return gen


def remove_stale(index_dir: Path) -> None:
    """Delete abandoned builds and all but the newest old generations. Lock must be held."""
    import shutil

    live = current_generation(index_dir)
    for item in index_dir.glob(BUILD_PREFIX + "*"):
        shutil.rmtree(item, ignore_errors=True)
    old = sorted(
        (p for p in index_dir.glob(GEN_PREFIX + "*") if p != live),
        key=lambda p: p.stat().st_mtime,
    )
    for item in old[: max(0, len(old) - KEEP_OLD_GENERATIONS)]:
        shutil.rmtree(item, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
