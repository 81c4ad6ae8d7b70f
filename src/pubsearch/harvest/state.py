"""What each harvest remembers beside the index: ``INDEX/harvests.json``.

One entry per source and query (the source, endpoint, metadata format, set, the
``until`` asked for, and an API's query; not the ``from``, which the entry moves on by
itself): the datestamp the next run starts from, the resumption token of a list left
unfinished (with the ``from`` that list was asked with, to ask it anew if the token has
expired), when it last ran, and what it fetched. The file is rewritten whole after every
page, through a temporary file renamed into place (and under a lock, so that two harvests
of one index keep each other's entries): a harvest killed at any moment leaves the last
page's state or the one before.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

STATE_FILE = "harvests.json"
_LOCK_FILE = ".harvests.lock"
_VERSION = 1


@dataclass
class HarvestState:
    """One saved harvest."""

    source: str
    endpoint: str
    metadata_prefix: str = ""
    set_spec: str = ""
    from_date: str = ""
    until: str = ""
    # The query of an API's list (OpenAlex's filter and search, Crossref's filter and
    # query, the arXiv API's search_query), as the key keeps it.
    query: str = ""
    # The list in progress: its next page's token (an API's cursor, or the arXiv API's
    # start), the ``from`` it was asked with, and the latest datestamp of its records so far.
    token: str = ""
    list_from: str = ""
    list_latest: str = ""
    # Where the next new list starts: the latest datestamp of a finished list.
    latest: str = ""
    # The earliest datestamp seen (what the harvests cover, with ``latest``).
    earliest: str = ""
    last_run: str = ""
    records: int = 0
    deleted: int = 0
    pages: int = 0
    runs: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        parts = [self.source, self.endpoint, self.metadata_prefix, self.set_spec, self.until]
        return harvest_key(*parts, *([self.query] if self.query else []))

    def next_from(self) -> str:
        """The ``from`` of a new list: the last one's latest datestamp, else the one asked."""
        return max(self.latest, self.from_date) if self.latest else self.from_date


def harvest_key(*parts: str) -> str:
    """The key of a source and query: its parts, ``|``-separated (empty ones too)."""
    return "|".join(parts)


def load_states(index_dir: Path) -> dict[str, HarvestState]:
    """Every saved harvest of the index, by key (none when there is no file)."""
    path = index_dir / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    known = {f.name for f in fields(HarvestState)}
    out: dict[str, HarvestState] = {}
    for entry in data.get("harvests", []):
        state = HarvestState(**{k: v for k, v in entry.items() if k in known})
        out[state.key] = state
    return out


def save_state(index_dir: Path, state: HarvestState) -> None:
    """Write ``state`` into the file, the other harvests' entries as they are there now."""
    index_dir.mkdir(parents=True, exist_ok=True)
    with _locked(index_dir):
        states = load_states(index_dir)
        states[state.key] = state
        payload = {
            "version": _VERSION,
            "harvests": [asdict(s) for s in sorted(states.values(), key=lambda s: s.key)],
        }
        path = index_dir / STATE_FILE
        temporary = path.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
        with open(temporary, "w", encoding="utf-8") as out:
            json.dump(payload, out, indent=1, ensure_ascii=False)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
        directory = os.open(index_dir, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


@contextmanager
def _locked(index_dir: Path) -> Iterator[None]:
    with open(index_dir / _LOCK_FILE, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
