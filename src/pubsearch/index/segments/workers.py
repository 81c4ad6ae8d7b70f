"""Writing many documents into a new index: :func:`write_documents` spreads them over
worker processes, each writing its own segments with a
:class:`~pubsearch.index.segments.writer.BulkWriter` (a new one every ``docs_per_segment``
documents, which bounds its memory), and commits them all as one generation of the index.
Small inputs are written in this process; and every input, by Whoosh's own writer, where
the installed Whoosh is not a version whose format the fast paths know
(:func:`pubsearch.codec.w3version.fast_paths`).

The only module of pubsearch that starts processes (a search imports neither it nor
``multiprocessing``; tests/test_imports.py).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import queue
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pubsearch.codec import w3version, w3write
from pubsearch.core import gcpause
from pubsearch.core.errors import WorkerError
from pubsearch.index import storage
from pubsearch.index.segments.writer import Doc, write_segments

# Below this many documents a build stays in one process: starting the workers costs
# about the CPU that 2,000 records take to write. (While the first of them are read,
# the other CPU waits: the lower the threshold, the sooner the workers start.)
PARALLEL_THRESHOLD = 2_000
# Documents per segment a worker writes before starting another (bounds its memory).
DOCS_PER_SEGMENT = 30_000
BATCH_SIZE = 250
# How long the parent waits for a worker's result once it has sent everything.
RESULT_TIMEOUT_SECONDS = 600.0


def _worker(
    index_dir: str,
    jobs: Any,
    results: Any,
    docs_per_segment: int,
    to_doc: Callable[[Any], Doc] | None = None,
    summarize: Callable[[Any, Any], Any] | None = None,
    number: int = 0,
) -> None:
    """Worker process ``number``: write the documents of each batch from ``jobs`` (or
    those ``to_doc`` makes of its items) into segments; send them back, with what
    ``summarize`` makes of each."""
    _exit_with_parent()
    try:
        ix = storage.open_index(index_dir)

        def docs() -> Iterator[Doc]:
            while (batch := _next_batch(jobs)) is not None:
                yield from map(to_doc, batch) if to_doc else batch

        summaries: list[Any] = []
        segments = write_segments(ix, docs(), docs_per_segment, summarize, summaries)
        results.put(("ok", (number, (segments, summaries))))
    except BaseException as exc:  # reported to the parent, which raises it
        results.put(("error", f"{type(exc).__name__}: {exc}"))
        raise
    # Its files are written and closed: once the results are through, the process ends
    # without the interpreter's teardown, which would free its caches object by object
    # while the build goes on.
    results.close()
    results.join_thread()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _exit_with_parent() -> None:
    """End this worker process as soon as its parent is gone (a build killed with SIGKILL),
    wherever the worker is waiting. Checking between batches is not enough: a parent killed
    while it sent a batch leaves the worker reading the rest of it for ever (the worker
    holds the queue's other end open too), and with it the parent's standard output."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    sentinel = parent.sentinel

    def watch() -> None:
        multiprocessing.connection.wait([sentinel])
        os._exit(1)  # nothing to report to; the next build removes the files

    threading.Thread(target=watch, name="pubsearch-parent-watch", daemon=True).start()


def _next_batch(jobs: Any) -> list[Any] | None:
    """The next batch of documents, or None at the end. A worker whose parent has died
    (a build killed with SIGKILL) exits instead of waiting for work forever."""
    parent = multiprocessing.parent_process()
    while True:
        try:
            batch: list[Any] | None = jobs.get(timeout=1.0)
            return batch
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                os._exit(1)  # nothing to report to; the next build removes the files


def write_documents(
    index_dir: Path,
    docs: Iterable[Any],
    workers: int = 2,
    docs_per_segment: int | None = None,
    parallel_threshold: int | None = None,
    to_doc: Callable[[Any], Doc] | None = None,
    summarize: Callable[[Any, Any], Any] | None = None,
    summaries: list[Any] | None = None,
) -> int:
    """Add ``docs`` to the (new, empty) index in ``index_dir`` and commit; return the count.

    The first ``parallel_threshold`` documents are buffered: a smaller input (or any
    input, with one worker) is written in this process; a larger one is spread over
    ``workers`` processes. Either way, in segments of ``docs_per_segment`` documents.
    The garbage collector does not run by itself meanwhile (see :mod:`pubsearch.core.gcpause`;
    no reference cycles are made): this process reads the documents.

    With ``to_doc`` (a module-level function, which a worker can import), ``docs`` are
    items it makes documents of, where they are written: what a worker is sent is then
    the items, which can be smaller than the documents.

    With ``summarize`` (module-level too), ``summaries`` receives what it makes of a
    reader of each segment and of what its writer kept of the documents (a
    :class:`~pubsearch.index.segments.writer.DocumentTerms`, or None), in the order of
    the segments in the index, computed where the segment was written.
    """
    with gcpause.paused():
        return _write_documents(
            index_dir,
            docs,
            workers,
            docs_per_segment,
            parallel_threshold,
            to_doc,
            summarize,
            summaries if summaries is not None else [],
        )


def _write_documents(
    index_dir: Path,
    docs: Iterable[Any],
    workers: int,
    docs_per_segment: int | None,
    parallel_threshold: int | None,
    to_doc: Callable[[Any], Doc] | None,
    summarize: Callable[[Any, Any], Any] | None,
    summaries: list[Any],
) -> int:
    docs_per_segment = docs_per_segment or DOCS_PER_SEGMENT
    parallel_threshold = parallel_threshold or PARALLEL_THRESHOLD
    if not w3version.fast_paths():
        return _write_with_whoosh(index_dir, docs, to_doc, summarize, summaries)
    ix = storage.open_index(index_dir)
    stream = iter(docs)
    head: list[Any] = []
    for doc in stream:
        head.append(doc)
        if len(head) >= parallel_threshold:
            break
    if len(head) < parallel_threshold or workers < 2:
        # In this process, in segments as a worker writes them (which bounds the memory).
        items = _chain(head, stream)
        made = map(to_doc, items) if to_doc else items
        segments = write_segments(ix, made, docs_per_segment, summarize, summaries)
        w3write.commit_segments(ix, segments)
        return sum(int(segment.doc_count_all()) for segment in segments)

    # Each worker takes every n-th batch from a queue of its own, and the segments are
    # committed in worker order: the same input makes the same document numbers in every
    # build (ties in score are ordered by document number), whichever worker is faster.
    ctx = multiprocessing.get_context("spawn")
    queues = [ctx.Queue(maxsize=4) for _ in range(workers)]
    results = ctx.Queue()
    procs = [
        ctx.Process(
            target=_worker,
            args=(str(index_dir), jobs, results, docs_per_segment, to_doc, summarize, number),
        )
        for number, jobs in enumerate(queues)
    ]
    for proc in procs:
        proc.start()
    count = 0
    turn = 0
    try:
        batch: list[Any] = []
        for doc in _chain(head, stream):
            batch.append(doc)
            if len(batch) >= BATCH_SIZE:
                _put(queues[turn % workers], batch, [procs[turn % workers]])
                turn += 1
                count += len(batch)
                batch = []
        if batch:
            _put(queues[turn % workers], batch, [procs[turn % workers]])
            count += len(batch)
        for jobs, proc in zip(queues, procs, strict=True):
            _put(jobs, None, [proc])
        done: dict[int, Any] = {}
        for _ in procs:
            status, payload = _get(results, procs)
            if status != "ok":
                raise WorkerError(f"indexing worker failed: {payload}")
            number, written = payload
            done[number] = written
        segments = []
        for number in sorted(done):
            segments.extend(done[number][0])
            summaries.extend(done[number][1])
        _join_meanwhile(procs)
    except BaseException:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
            proc.join()
        # Batches still buffered for workers that are gone would block this process's
        # exit (the queue's feeder thread waits to hand them over): drop them.
        for jobs in queues:
            jobs.cancel_join_thread()
        raise
    finally:
        for jobs in queues:
            jobs.close()
        results.close()
    w3write.commit_segments(ix, segments)
    return count


def _write_with_whoosh(
    index_dir: Path,
    docs: Iterable[Any],
    to_doc: Callable[[Any], Doc] | None,
    summarize: Callable[[Any, Any], Any] | None,
    summaries: list[Any],
) -> int:
    """:func:`write_documents` by Whoosh's own writer, in this process, through its
    public API only: for a Whoosh whose format the fast paths do not know."""
    ix = storage.open_index(index_dir)
    writer = ix.writer()
    count = 0
    try:
        for item in docs:
            writer.add_document(**(to_doc(item) if to_doc else item))
            count += 1
    except BaseException:
        writer.cancel()
        ix.close()
        raise
    writer.commit()
    if summarize is not None:
        with ix.reader() as reader:
            for leaf, _ in reader.leaf_readers():
                summaries.append(summarize(leaf, None))
    ix.close()
    return count


def _join_meanwhile(procs: list[Any]) -> None:
    """Join the worker processes in a thread of their own. A worker that has sent its
    segments has finished with them, but takes a while to exit (its memory handed back),
    which this process need not wait for to commit them and build the facet table, on the
    other CPU."""

    def join_all() -> None:
        for proc in procs:
            proc.join()

    threading.Thread(target=join_all, name="pubsearch-worker-join", daemon=True).start()


def _chain(head: list[Any], stream: Iterator[Any]) -> Iterator[Any]:
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
