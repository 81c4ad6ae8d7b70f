"""One harvest, page after page: fetch, read, add to the index, remember.

Pages go into the index, a batch of them at a time, through the update path of
``pubsearch index --update`` (:func:`pubsearch.index.build.update_index`: duplicates
merged by arXiv id, DOI, title and year; a newer version replaces the one before; a
record that comes back unchanged is left as it is), their deleted records removed in the
same update; only then is the last page's resumption token saved
(:mod:`pubsearch.harvest.state`). A harvest stopped anywhere (killed, a network failure, a
page that cannot be read) keeps every batch it added and continues from the page after
the last one; a page added twice changes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pubsearch.core.config import LOCK_TIMEOUT_SECONDS
from pubsearch.core.errors import HarvestError
from pubsearch.harvest import oaipmh
from pubsearch.harvest.arxiv import arxiv_id_of_header, record_of
from pubsearch.harvest.http import PoliteClient
from pubsearch.harvest.state import HarvestState, load_states, save_state
from pubsearch.index import storage
from pubsearch.index.build import build_index, update_index
from pubsearch.ingest.records import Record

if TYPE_CHECKING:
    from pubsearch.index.embedding import Embedder


@dataclass(frozen=True)
class OaiQuery:
    """What a ``ListRecords`` harvest asks for."""

    source: str
    endpoint: str
    metadata_prefix: str = "arXiv"
    set_spec: str = ""
    from_date: str = ""
    until: str = ""

    def new_state(self) -> HarvestState:
        return HarvestState(
            source=self.source,
            endpoint=self.endpoint,
            metadata_prefix=self.metadata_prefix,
            set_spec=self.set_spec,
            from_date=self.from_date,
            until=self.until,
        )


@dataclass
class HarvestCounts:
    """What one run did."""

    fetched: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped: int = 0
    pages: int = 0
    # The list's size, where the repository says.
    expected: int | None = None
    seconds: float = 0.0
    resumed: bool = False
    # Where the next run starts: a resumption token, or the datestamp of a new list.
    next_start: str = ""
    notes: list[str] = field(default_factory=list)


Progress = Callable[[HarvestCounts], None]

# Records added to the index at a time: each addition is one index update, whose cost is
# mostly fixed (5,000 records: a few of arXiv's pages of about 1,000).
DEFAULT_BATCH = 5_000


def harvest_oai(
    index_dir: Path,
    query: OaiQuery,
    client: PoliteClient,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    lock_timeout: float = LOCK_TIMEOUT_SECONDS,
    batch: int = DEFAULT_BATCH,
    counts: HarvestCounts | None = None,
) -> HarvestCounts:
    """Harvest ``query`` into the index at ``index_dir`` (made when there is none), going
    on from where the last run of the same query stopped; a ``from_date`` other than the
    one that query was last given starts a new list from it. Pages are added once they
    hold ``batch`` records (1: each page as it comes), and at the end of the list.
    ``counts`` (made when not given) holds what the run did, also when it fails."""
    started = time.monotonic()
    state = load_states(index_dir).get(query.new_state().key) or query.new_state()
    counts = HarvestCounts() if counts is None else counts
    state.runs += 1
    asked_anew = bool(query.from_date) and query.from_date != state.from_date
    if asked_anew:
        state.from_date = query.from_date
        state.token = ""
    if state.token:
        counts.resumed = True
        url = oaipmh.resume_url(query.endpoint, state.token)
    else:
        url = _start_list(query, state, query.from_date if asked_anew else None)
    counts.next_start = (
        "from the saved resumption token"
        if state.token
        else f"from {state.list_from or 'the start'}"
    )
    number = 0
    pending: list[oaipmh.Page] = []
    while True:
        number += 1
        fetched = client.get(url, f"page {number}")
        if fetched.status != 200:
            raise HarvestError(f"{url}: page {number}: HTTP {fetched.status}")
        try:
            page = oaipmh.parse_page(fetched.body, url, number)
        except oaipmh.BadResumptionTokenError:
            if not (counts.resumed and number == 1):
                raise
            # The saved token has expired: the list is asked for anew, from where it began.
            counts.notes.append("the saved resumption token had expired: the list began anew")
            url = _start_list(query, state, state.list_from)
            number = 0
            counts.resumed = False
            continue
        counts.pages += 1
        counts.fetched += sum(not item.deleted for item in page.records)
        if page.list_size is not None:
            counts.expected = page.list_size
        pending.append(page)
        if not page.token or sum(len(p.records) for p in pending) >= batch:
            _add_pages(index_dir, query, pending, counts, embedder, lock_timeout)
            _remember(state, pending)
            save_state(index_dir, state)
            pending = []
            counts.next_start = (
                "from the saved resumption token"
                if state.token
                else f"from {state.next_from() or 'the start'}"
            )
        counts.seconds = time.monotonic() - started
        if progress:
            progress(counts)
        if not page.token:
            break
        url = oaipmh.resume_url(query.endpoint, page.token)
    counts.next_start = f"from {state.next_from()}" if state.next_from() else "from the start"
    counts.seconds = time.monotonic() - started
    return counts


def _remember(state: HarvestState, pages: list[oaipmh.Page]) -> None:
    """What the state keeps of pages just added: the last one's token (or, at the end of
    the list, where the next list starts), the datestamps covered, the counts."""
    for page in pages:
        for item in page.records:
            if item.datestamp:
                state.list_latest = max(state.list_latest, item.datestamp)
                state.earliest = min(state.earliest or item.datestamp, item.datestamp)
        state.token = page.token or ""
        if not page.token:
            state.latest = max(state.latest, state.list_latest)
            state.list_latest = ""
            state.list_from = ""
        state.pages += 1
        state.records += sum(not item.deleted for item in page.records)
        state.deleted += sum(item.deleted for item in page.records)
    state.last_run = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _start_list(query: OaiQuery, state: HarvestState, list_from: str | None = None) -> str:
    """The first request of a new list (from the last finished one's latest datestamp)."""
    state.list_from = state.next_from() if list_from is None else list_from
    state.list_latest = ""
    state.token = ""
    return oaipmh.list_records_url(
        query.endpoint,
        query.metadata_prefix,
        query.set_spec or None,
        state.list_from or None,
        query.until or None,
    )


def _add_pages(
    index_dir: Path,
    query: OaiQuery,
    pages: list[oaipmh.Page],
    counts: HarvestCounts,
    embedder: Embedder | None,
    lock_timeout: float,
) -> None:
    """Add the pages' records to the index and remove their deleted ones, in one update
    (an item listed twice counts as its last listing says)."""
    records: dict[str, Record] = {}
    gone: dict[str, str] = {}
    for item in (item for page in pages for item in page.records):
        records.pop(item.identifier, None)
        gone.pop(item.identifier, None)
        if item.deleted:
            arxiv_id = arxiv_id_of_header(item.identifier)
            if arxiv_id:
                gone[item.identifier] = f"arxiv:{arxiv_id}"
            continue
        record = record_of(item, query.metadata_prefix, f"{query.endpoint}:{item.identifier}")
        if record is None:
            counts.skipped += 1
        else:
            records[item.identifier] = record
    add_records(index_dir, list(records.values()), counts, embedder, lock_timeout, gone.values())


def add_records(
    index_dir: Path,
    records: list[Record],
    counts: HarvestCounts,
    embedder: Embedder | None,
    lock_timeout: float,
    gone: Iterable[str] = (),
) -> None:
    """Add ``records`` to the index (made when there is none) and remove the documents
    of the identity keys ``gone``, in one update, counting what each came to."""
    removed = list(gone)
    if not records and not removed:
        return
    if storage.current_generation(index_dir) is None:
        if not records:
            return
        summary = build_index(index_dir, records, lock_timeout=lock_timeout, workers=1)
        counts.new += summary.total
        return
    summary = update_index(
        index_dir,
        records,
        lock_timeout=lock_timeout,
        embedder=embedder,
        remove=removed,
    )
    counts.new += summary.indexed - summary.replaced
    counts.updated += summary.replaced - summary.unchanged
    counts.unchanged += summary.unchanged
    counts.deleted += summary.removed
