"""A harvest of a web API's list, page after page: OpenAlex's and Crossref's ``/works``
(cursor paging) and the arXiv API's query (``start`` paging, newest first).

Each source says how to ask for a page of its list from a position (a cursor, ``*`` at
first; a start, ``0`` at first) and since a date (the latest date the harvests of the same
query saw: a filter OpenAlex and Crossref are asked with, the date the arXiv API's newest
first list is read down to), and reads a page into records with their dates and the
position of the next page. The run is the OAI-PMH run's (:mod:`pubsearch.harvest.run`):
pages added a batch at a time through the index's update path, then the next position
saved, so that a run stopped anywhere goes on from the page after the last one added, and
the same command run again asks only since the latest date it saw.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pubsearch.core.config import LOCK_TIMEOUT_SECONDS
from pubsearch.core.errors import HarvestError
from pubsearch.harvest.http import PoliteClient
from pubsearch.harvest.run import DEFAULT_BATCH, HarvestCounts, Progress, add_records
from pubsearch.harvest.state import HarvestState, load_states, save_state
from pubsearch.ingest.records import Record

if TYPE_CHECKING:
    from pubsearch.index.embedding import Embedder

# Answers to a saved position that the service no longer knows (a cursor expires): the
# list is asked for anew from the date it began at.
_STALE_POSITION = (400, 404, 410)


@dataclass(frozen=True)
class Item:
    """One record of a page: its key in the source, its date (what the next run goes on
    from), and the record (None when it has neither title nor abstract)."""

    key: str
    stamp: str
    record: Record | None


@dataclass(frozen=True)
class ApiPage:
    items: tuple[Item, ...]
    # The position of the next page; None at the end of the list.
    next: str | None
    # How many records the list has, where the service says.
    total: int | None


class PagedSource(Protocol):
    """What a harvest needs of a service's list."""

    # The position of a list's first page: "*" (a cursor) or "0" (a start).
    first: str
    # True when the list comes newest first and ends at the first page with nothing newer
    # than the last harvest's latest date (the arXiv API).
    newest_first: bool

    def new_state(self) -> HarvestState: ...

    def url(self, since: str, position: str) -> str: ...

    def shown(self, url: str) -> str:
        """``url`` as messages show it (without a key)."""
        ...

    def parse(self, body: bytes, url: str, number: int, position: str) -> ApiPage: ...

    def refusal(self, body: bytes) -> str:
        """What an error answer's body says, in a few words ("" when nothing useful)."""
        ...


@dataclass
class _Batch:
    pages: list[ApiPage]
    next: str | None


def harvest_paged(
    index_dir: Path,
    source: PagedSource,
    client: PoliteClient,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    lock_timeout: float = LOCK_TIMEOUT_SECONDS,
    batch: int = DEFAULT_BATCH,
    counts: HarvestCounts | None = None,
    from_date: str = "",
) -> HarvestCounts:
    """Harvest ``source``'s list into the index at ``index_dir``, going on from where the
    last run of the same query stopped (its saved position, else since the latest date it
    saw); a ``from_date`` other than the one the query was last given starts a new list
    since it. ``counts`` (made when not given) holds what the run did, also when it fails."""
    started = time.monotonic()
    template = source.new_state()
    state = load_states(index_dir).get(template.key) or template
    counts = HarvestCounts() if counts is None else counts
    state.runs += 1
    if from_date and from_date != state.from_date:
        state.from_date = from_date
        state.token = ""
        state.list_latest = ""
        state.list_from = from_date
        since = from_date
    elif state.token:
        counts.resumed = True
        since = state.list_from
    else:
        since = state.list_from = state.next_from()
    position = state.token or source.first
    counts.next_start = _next_start(state, since)
    number = 0
    pending: list[ApiPage] = []
    while True:
        number += 1
        url = source.url(since, position)
        shown = source.shown(url)
        fetched = client.get(url, f"page {number}", shown=shown)
        if fetched.status in _STALE_POSITION and counts.resumed and number == 1:
            counts.notes.append(
                f"the saved position was refused (HTTP {fetched.status}): the list began anew"
            )
            counts.resumed = False
            state.token = ""
            position = source.first
            number = 0
            continue
        if fetched.status != 200:
            said = source.refusal(fetched.body)
            raise HarvestError(
                f"{shown}: page {number}: HTTP {fetched.status}" + (f" ({said})" if said else "")
            )
        page = source.parse(fetched.body, shown, number, position)
        next_position = page.next
        if source.newest_first and since and not any(i.stamp > since for i in page.items):
            next_position = None  # nothing newer than the last harvest: the list is read
        counts.pages += 1
        counts.fetched += len(page.items)
        if page.total is not None:
            counts.expected = page.total
        pending.append(page)
        held = sum(len(p.items) for p in pending)
        if next_position is None or held >= batch:
            _add(index_dir, pending, counts, embedder, lock_timeout)
            _remember(state, pending, next_position)
            save_state(index_dir, state)
            counts.next_start = _next_start(state, since)
            pending = []
        counts.seconds = time.monotonic() - started
        if progress:
            progress(counts)
        if next_position is None:
            break
        position = next_position
    counts.seconds = time.monotonic() - started
    return counts


def _next_start(state: HarvestState, since: str) -> str:
    if state.token:
        return "from the saved position of the list"
    start = state.next_from() if not state.list_from else since
    return f"since {start}" if start else "from the start"


def _add(
    index_dir: Path,
    pages: list[ApiPage],
    counts: HarvestCounts,
    embedder: Embedder | None,
    lock_timeout: float,
) -> None:
    """The pages' records added in one update (an item listed twice: its last listing)."""
    records: dict[str, Record] = {}
    for item in (item for page in pages for item in page.items):
        records.pop(item.key, None)
        if item.record is None:
            counts.skipped += 1
        else:
            records[item.key] = item.record
    add_records(index_dir, list(records.values()), counts, embedder, lock_timeout)


def _remember(state: HarvestState, pages: list[ApiPage], next_position: str | None) -> None:
    """What the state keeps of pages just added: the next page's position (or, at the end
    of the list, the latest date the next list starts from), the dates covered, counts."""
    for page in pages:
        for item in page.items:
            if item.stamp:
                state.list_latest = max(state.list_latest, item.stamp)
                state.earliest = min(state.earliest or item.stamp, item.stamp)
        state.pages += 1
        state.records += len(page.items)
    state.token = next_position or ""
    if next_position is None:
        state.latest = max(state.latest, state.list_latest)
        state.list_latest = ""
        state.list_from = ""
    state.last_run = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
