"""Many queries at once, for evaluating and scripting retrieval.

Queries come from a file, one a line: TSV (``id<TAB>text``) or JSON lines (``{"_id" or
"id": ..., "text": ...}``, as BEIR's ``queries.jsonl``). Each is searched exactly as
``pubsearch query`` searches it, and the hits are written as a TREC run::

    qid Q0 docid rank score tag

where ``docid`` is the record's own id (as given by its source file).

A batch keeps going: a line that is not a query, or a query whose text is refused, is
reported with its file and line and gets no hits; the other queries run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pubsearch.core.errors import ParameterError, PubsearchError, ReadError, UsageError
from pubsearch.search.request import MAX_PAGE_SIZE, MAX_RESULT_DEPTH, Mode, SearchRequest

if TYPE_CHECKING:
    from pubsearch.search.results import Hit
    from pubsearch.search.service import SearchService

DEFAULT_HITS = 100
DEFAULT_TAG = "pubsearch"

_WHITESPACE = re.compile(r"\s")


@dataclass(frozen=True)
class BatchQuery:
    """One query of a batch; ``where`` is ``path:line``."""

    id: str
    text: str
    where: str


def read_queries(path: Path, problems: list[str] | None = None) -> list[BatchQuery]:
    """Every query of a TSV or JSON-lines file. A line that is not a query (no tab, not
    JSON, no id or text, an id with white space or one given before) raises a ReadError
    naming ``path:line``; with ``problems``, it is added there instead (one line each) and
    the other lines are read. A file with no line at all, or one that is not UTF-8 text,
    is an error either way."""
    name = str(path)
    numbered: list[tuple[int, str]] = []
    number = 0
    try:
        with path.open(encoding="utf-8-sig", newline="") as stream:
            for number, line in enumerate(stream, start=1):
                line = line.rstrip("\r\n")
                if line.strip():
                    numbered.append((number, line))
    except OSError as exc:
        raise ReadError(name, exc.strerror or str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ReadError(f"{name}:{number + 1}", f"not UTF-8 text ({exc.reason})") from None
    if not numbered:
        raise ReadError(name, "no queries (expected 'id<TAB>text' or JSON lines with id and text)")
    as_json = numbered[0][1].lstrip().startswith("{")
    queries: list[BatchQuery] = []
    seen: dict[str, str] = {}
    for number, line in numbered:
        where = f"{name}:{number}"
        try:
            qid, text = _json_query(line, where) if as_json else _tsv_query(line, where)
            if _WHITESPACE.search(qid):
                raise ReadError(
                    where, f"query id {qid!r} contains white space (a run cannot hold it)"
                )
            if qid in seen:
                raise ReadError(where, f"query id {qid!r} repeats the one at {seen[qid]}")
        except ReadError as exc:
            if problems is None:
                raise
            problems.append(str(exc))
            continue
        seen[qid] = where
        queries.append(BatchQuery(qid, text, where))
    return queries


def _tsv_query(line: str, where: str) -> tuple[str, str]:
    qid, tab, text = line.partition("\t")
    if not tab:
        raise ReadError(where, "expected 'id<TAB>text'")
    if not qid.strip() or not text.strip():
        raise ReadError(where, "empty query id or text")
    return qid.strip(), text.strip()


def _json_query(line: str, where: str) -> tuple[str, str]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ReadError(where, f"not JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise ReadError(where, "expected a JSON object with '_id' or 'id' and 'text'")
    qid = obj.get("_id", obj.get("id"))
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or not str(qid).strip():
        raise ReadError(where, "no query id ('_id' or 'id', a string or an integer)")
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ReadError(where, "no query text ('text', a non-empty string)")
    return str(qid).strip(), text.strip()


def search_hits(
    service: SearchService, text: str, hits: int, mode: Mode | None = None, loose: bool = False
) -> Iterator[Hit]:
    """The first ``hits`` results for ``text`` by relevance, as ``pubsearch query`` ranks them
    (``loose``: as ``pubsearch query --loose``)."""
    check_hits(hits)
    size = min(hits, MAX_PAGE_SIZE)
    page = 1
    served = 0
    while served < hits:
        request = SearchRequest(
            q=text, page=page, page_size=size, highlight=False, mode=mode, loose=loose
        )
        results = service.search(request)
        for hit in results.hits[: hits - served]:
            served += 1
            yield hit
        if len(results.hits) < size:
            return
        page += 1


def check_hits(hits: int) -> None:
    if not 1 <= hits <= MAX_RESULT_DEPTH:
        raise ParameterError("hits", f"must be between 1 and {MAX_RESULT_DEPTH:,}")


def run_lines(
    service: SearchService,
    query: BatchQuery,
    hits: int = DEFAULT_HITS,
    tag: str = DEFAULT_TAG,
    mode: Mode | None = None,
    loose: bool = False,
) -> Iterator[str]:
    """The TREC run lines (without newlines) for one query."""
    for hit in search_hits(service, query.text, hits, mode, loose):
        if _WHITESPACE.search(hit.id):
            raise ReadError(
                query.where, f"record id {hit.id!r} contains white space (a run cannot hold it)"
            )
        score = hit.score if hit.score is not None else 0.0
        yield f"{query.id} Q0 {hit.id} {hit.rank} {score:.4f} {tag}"


@dataclass(frozen=True)
class QueryRun:
    """One query's run lines, or why it could not be searched (``error``: one line that
    names the query's file and line; then ``lines`` is empty)."""

    query: BatchQuery
    lines: list[str]
    error: str | None = None


def query_run(
    service: SearchService,
    query: BatchQuery,
    hits: int = DEFAULT_HITS,
    tag: str = DEFAULT_TAG,
    mode: Mode | None = None,
    loose: bool = False,
) -> QueryRun:
    """One query's run. A query that cannot be searched (its text is refused) gives a
    QueryRun with the reason; any other problem (the index) is raised."""
    try:
        return QueryRun(query, list(run_lines(service, query, hits, tag, mode, loose)))
    except UsageError as exc:
        return QueryRun(query, [], f"{query.where}: {exc}")


def run(
    service: SearchService,
    queries: Iterable[BatchQuery],
    hits: int = DEFAULT_HITS,
    tag: str = DEFAULT_TAG,
    mode: Mode | None = None,
    loose: bool = False,
) -> Iterator[QueryRun]:
    """Every query's run, in the order given."""
    _check_run(hits, tag)
    for query in queries:
        yield query_run(service, query, hits, tag, mode, loose)


def _check_run(hits: int, tag: str) -> None:
    check_hits(hits)
    if not tag or _WHITESPACE.search(tag):
        raise ParameterError("tag", "must be one word")


def run_in_processes(
    index_dir: Path,
    queries: Sequence[BatchQuery],
    processes: int,
    hits: int = DEFAULT_HITS,
    tag: str = DEFAULT_TAG,
    mode: Mode | None = None,
    loose: bool = False,
) -> Iterator[QueryRun]:
    """Each query's run (as :func:`run` gives them), in the order given, searched by
    ``processes`` worker processes that each open the index at ``index_dir``. The runs
    are the same as :func:`run`'s; only the time differs. A batch of fewer than
    :data:`MIN_QUERIES_PER_PROCESS` queries a process uses fewer processes (one process
    opening the index costs about as much as a few queries)."""
    _check_run(hits, tag)
    processes = max(1, min(processes, len(queries) // MIN_QUERIES_PER_PROCESS))
    from pubsearch.search.service import SearchService

    if processes == 1:
        service = SearchService(index_dir)
        try:
            yield from run(service, queries, hits, tag, mode, loose)
        finally:
            service.close()
        return
    import multiprocessing

    # spawn, not fork: the caller may have threads (a progress bar's monitor).
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes, initializer=_open_worker, initargs=(index_dir,)) as pool:
        jobs = ((query, hits, tag, mode, loose) for query in queries)
        for failure, outcome in pool.imap(_worker_run, jobs, chunksize=4):
            if failure is None:
                assert isinstance(outcome, QueryRun)
                yield outcome
                continue
            # The worker's error, raised here as the same kind with the same one line.
            raise (UsageError if failure else PubsearchError)(outcome)


# The fewest queries worth a process of their own in run_in_processes.
MIN_QUERIES_PER_PROCESS = 8

_worker_service: SearchService | None = None


def _open_worker(index_dir: Path) -> None:
    from pubsearch.search.service import SearchService

    global _worker_service
    _worker_service = SearchService(index_dir)


def _worker_run(
    job: tuple[BatchQuery, int, str, Mode | None, bool],
) -> tuple[bool | None, QueryRun | str]:
    """In a worker: (None, the query's run), or (whether it is a usage error, its one
    line) when searching failed for another reason than the query (errors are sent as
    text: not every error pickles)."""
    query, hits, tag, mode, loose = job
    assert _worker_service is not None  # _open_worker ran
    try:
        return None, query_run(_worker_service, query, hits, tag, mode, loose)
    except PubsearchError as exc:
        return isinstance(exc, UsageError), str(exc)
