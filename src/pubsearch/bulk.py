"""Writing many documents into a Whoosh index quickly.

Two things make Whoosh's own writer slow on a large build: its posting pool sorts every
posting as a Python tuple and, past ``limitmb``, pickles them to disk and merges them back;
and it uses one core. Here:

* :class:`BulkWriter` is a ``SegmentWriter`` whose pool keeps postings grouped by term in
  memory (documents arrive in order, so only the terms need sorting at the end);
* :func:`write_documents` spreads documents over worker processes, each writing its own
  segments (a new one every ``docs_per_segment`` documents, which bounds its memory), and
  commits them all as one generation of the index. Small inputs are written in-process.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from whoosh.util.numeric import byte_to_length, length_to_byte
from whoosh.writing import SegmentWriter

from pubsearch import storage

Doc = dict[str, Any]

# Below this many documents a build stays in one process (starting workers costs ~1 s).
PARALLEL_THRESHOLD = 5_000
# Documents per segment a worker writes before starting another (bounds its memory).
DOCS_PER_SEGMENT = 30_000
BATCH_SIZE = 250
# How long the parent waits for a worker's result once it has sent everything.
RESULT_TIMEOUT_SECONDS = 600.0


class _Postings:
    """One term's postings in compact arrays: docnums, weights, and the values' bytes
    end to end with where each ends."""

    __slots__ = ("docnums", "ends", "values", "weights")

    def __init__(self) -> None:
        self.docnums = array("I")
        self.weights = array("d")
        self.values = bytearray()
        self.ends = array("I")

    def add(self, docnum: int, weight: float, value: bytes | None) -> None:
        if self.docnums and self.docnums[-1] > docnum:
            raise ValueError("postings out of document order")
        self.docnums.append(docnum)
        self.weights.append(weight)
        if value:
            self.values += value
        self.ends.append(len(self.values))

    def __iter__(self) -> Iterator[tuple[int, float, bytes]]:
        values = bytes(self.values)
        start = 0
        for docnum, weight, end in zip(self.docnums, self.weights, self.ends, strict=True):
            yield docnum, weight, values[start:end]
            start = end


_Single = tuple[int, float, bytes]


class TermPool:
    """Postings kept in memory, grouped by ``(field, term)``.

    Whoosh's writer hands postings over as ``(field, term, docnum, weight, value)`` in
    document order, so each term's postings are already in docnum order and only the terms
    need sorting when the segment is written. (Spelling words are all posted as document
    0, once per document that has them: how Whoosh counts their frequency.) A term seen
    once (most terms) is kept as one tuple; others in arrays, about 25 bytes a posting,
    where a tuple per posting takes about 150.
    """

    def __init__(self) -> None:
        self._terms: dict[tuple[str, bytes], _Single | _Postings] = {}
        self.fieldnames: set[str] = set()

    def add(self, item: tuple[str, bytes, int, float, bytes | None]) -> None:
        fieldname, text, docnum, weight, value = item
        key = (fieldname, text)
        held = self._terms.get(key)
        if held is None:
            self._terms[key] = (docnum, weight, value or b"")
            self.fieldnames.add(fieldname)
            return
        if not isinstance(held, _Postings):
            first = held
            held = self._terms[key] = _Postings()
            held.add(*first)
        try:
            held.add(docnum, weight, value)
        except ValueError:
            raise ValueError(f"postings out of document order for {key!r}") from None

    def iter_postings(self) -> Iterator[tuple[str, bytes, int, float, bytes]]:
        terms = self._terms
        for key in sorted(terms):
            fieldname, text = key
            held = terms.pop(key)
            if isinstance(held, _Postings):
                for docnum, weight, value in held:
                    yield fieldname, text, docnum, weight, value
            else:
                yield fieldname, text, *held

    def save(self) -> None:
        """Nothing to spill: segments are kept small enough instead."""

    def cleanup(self) -> None:
        self._terms.clear()


class _Lengths:
    """Each document's field lengths as the segment stores them (one byte), kept in memory
    while the segment is written, so that writing the postings need not read them back
    from the segment's files one posting at a time."""

    def __init__(self) -> None:
        self._bytes: dict[str, array[int]] = {}

    def add(self, fieldname: str, docnum: int, length: int) -> None:
        column = self._bytes.setdefault(fieldname, array("B"))
        if len(column) <= docnum:
            column.extend(bytes(docnum + 1 - len(column)))
        column[docnum] = length_to_byte(length)

    def doc_field_length_reader(self, fieldname: str) -> Callable[[int], int | None]:
        # What Whoosh's W3PerDocReader.doc_field_length_reader returns, from memory.
        column = self._bytes.get(fieldname, array("B"))
        size = len(column)

        def get(docnum: int) -> int | None:
            lbyte = column[docnum] if docnum < size else 0
            return byte_to_length(lbyte) if lbyte else None

        return get


class _TellingFile:
    """A file being written that knows its position without asking the system: Whoosh
    asks ``tell()`` for every term written, and each ask is a system call."""

    def __init__(self, file: Any) -> None:
        self._file = file
        self._pos: int = file.tell()

    def write(self, data: Any) -> int:
        written: int = self._file.write(data)
        self._pos += written
        return written

    def tell(self) -> int:
        return self._pos

    def seek(self, *args: Any) -> int:
        self._pos = int(self._file.seek(*args))
        return self._pos

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class BulkWriter(SegmentWriter):  # type: ignore[misc]  # whoosh is Any to mypy
    """A ``SegmentWriter`` with a :class:`TermPool`, field lengths kept in memory, and
    position-keeping segment files."""

    def __init__(self, ix: Any, **kwargs: Any) -> None:
        super().__init__(ix, **kwargs)
        whoosh_pool: Any = self.pool
        whoosh_pool.cleanup()
        self.pool: TermPool = TermPool()
        self._lengths = _Lengths()
        perdoc = self.perdocwriter
        whoosh_add_field = perdoc.add_field

        def add_field(fieldname: str, fieldobj: Any, value: Any, length: int) -> None:
            if length:
                self._lengths.add(fieldname, self.docnum, length)
            whoosh_add_field(fieldname, fieldobj, value, length)

        perdoc.add_field = add_field
        for name in ("_postfile", "_tindex"):
            holder = getattr(self.fieldwriter, name, None)
            structfile = getattr(holder, "dbfile", holder)  # the terms file is in a table
            if structfile is not None and hasattr(structfile, "file"):
                structfile.file = _TellingFile(structfile.file)

    def _flush_segment(self) -> None:
        # SegmentWriter._flush_segment, with the lengths from memory.
        self.perdocwriter.close()
        lengths = self._lengths if self.codec.length_stats else None
        self.fieldwriter.add_postings(self.schema, lengths, self.pool.iter_postings())
        self.fieldwriter.close()


def _finish_segment(writer: BulkWriter) -> Any:
    """Write out ``writer``'s segment without committing a table of contents.

    The writer's temporary directory is shared by every writer of the index (Whoosh
    names it after the index), so it is left for the committing writer to remove.
    """
    segment = writer._finalize_segment()
    writer.is_closed = True
    return segment


def _worker(index_dir: str, jobs: Any, results: Any, docs_per_segment: int) -> None:
    """Worker process: write the documents of each batch from ``jobs`` into segments."""
    try:
        ix = storage.open_index(index_dir)
        segments: list[Any] = []
        writer: BulkWriter | None = None
        count = 0
        while (batch := _next_batch(jobs)) is not None:
            for doc in batch:
                if writer is None:
                    writer = BulkWriter(ix, _lk=False)
                writer.add_document(**doc)
                count += 1
                if count >= docs_per_segment:
                    segments.append(_finish_segment(writer))
                    writer, count = None, 0
        if writer is not None:
            segments.append(_finish_segment(writer))
        results.put(("ok", segments))
    except BaseException as exc:  # reported to the parent, which raises it
        results.put(("error", f"{type(exc).__name__}: {exc}"))
        raise


def _next_batch(jobs: Any) -> list[Doc] | None:
    """The next batch of documents, or None at the end. A worker whose parent has died
    (a build killed with SIGKILL) exits instead of waiting for work forever."""
    parent = multiprocessing.parent_process()
    while True:
        try:
            batch: list[Doc] | None = jobs.get(timeout=1.0)
            return batch
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                os._exit(1)  # nothing to report to; the next build removes the files


class WorkerError(RuntimeError):
    """A worker process failed while writing documents."""


def write_documents(
    index_dir: Path,
    docs: Iterable[Doc],
    workers: int = 2,
    docs_per_segment: int | None = None,
    parallel_threshold: int | None = None,
) -> int:
    """Add ``docs`` to the (new, empty) index in ``index_dir`` and commit; return the count.

    The first ``parallel_threshold`` documents are buffered: a smaller input is written
    in this process as one segment; a larger one is spread over ``workers`` processes.
    """
    docs_per_segment = docs_per_segment or DOCS_PER_SEGMENT
    parallel_threshold = parallel_threshold or PARALLEL_THRESHOLD
    ix = storage.open_index(index_dir)
    stream = iter(docs)
    head: list[Doc] = []
    for doc in stream:
        head.append(doc)
        if len(head) >= parallel_threshold:
            break
    if len(head) < parallel_threshold or workers < 2:
        writer = BulkWriter(ix)
        try:
            for doc in head:
                writer.add_document(**doc)
            for doc in stream:
                writer.add_document(**doc)
        except BaseException:
            writer.cancel()
            raise
        writer.commit(merge=False)
        count = int(writer.doc_count())
        ix.close()
        return count

    ctx = multiprocessing.get_context("spawn")
    jobs = ctx.Queue(maxsize=workers * 4)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(str(index_dir), jobs, results, docs_per_segment))
        for _ in range(workers)
    ]
    for proc in procs:
        proc.start()
    count = 0
    try:
        batch: list[Doc] = []
        for doc in _chain(head, stream):
            batch.append(doc)
            if len(batch) >= BATCH_SIZE:
                _put(jobs, batch, procs)
                count += len(batch)
                batch = []
        if batch:
            _put(jobs, batch, procs)
            count += len(batch)
        for _ in procs:
            _put(jobs, None, procs)
        segments: list[Any] = []
        for _ in procs:
            status, payload = _get(results, procs)
            if status != "ok":
                raise WorkerError(f"indexing worker failed: {payload}")
            segments.extend(payload)
        for proc in procs:
            proc.join()
    except BaseException:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
            proc.join()
        # Batches still buffered for workers that are gone would block this process's
        # exit (the queue's feeder thread waits to hand them over): drop them.
        jobs.cancel_join_thread()
        raise
    finally:
        jobs.close()
        results.close()
    # One table of contents naming every worker's segments.
    committer = SegmentWriter(ix)
    committer._close_segment()
    committer._commit_toc(segments)
    committer._finish()
    ix.close()
    return count


def _chain(head: list[Doc], stream: Iterator[Doc]) -> Iterator[Doc]:
    yield from head
    head.clear()
    yield from stream


def _put(jobs: Any, item: Any, procs: list[Any]) -> None:
    """Queue ``item`` for the workers, noticing if they have all died."""
    while True:
        try:
            jobs.put(item, timeout=1.0)
            return
        except queue.Full:
            if not any(p.is_alive() for p in procs):
                raise WorkerError("indexing workers stopped unexpectedly") from None


def _get(results: Any, procs: list[Any]) -> Any:
    waited = 0.0
    while True:
        try:
            return results.get(timeout=1.0)
        except queue.Empty:
            waited += 1.0
            if waited >= RESULT_TIMEOUT_SECONDS or not any(p.is_alive() for p in procs):
                raise WorkerError("indexing workers stopped without a result") from None
