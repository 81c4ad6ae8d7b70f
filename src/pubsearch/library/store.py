"""The library's one SQLite file beside the index (``INDEX/library.sqlite``): saved searches,
tags, and when each record first appeared in the index.

It lives in the index directory itself, not in a generation (``gen-*``): a build, an
``index --update`` and a harvest publish a new generation and delete old ones
(:mod:`pubsearch.index.storage`), and never touch the files beside them.

Several processes (two servers and a command) may write at once: the file is in WAL mode,
each change is one ``BEGIN IMMEDIATE`` transaction, and a writer waits for another's lock
(``busy_timeout``) instead of failing.

Tables:

* ``follows``: a saved search by name, its request as JSON (:class:`SavedSearch`), when it
  was made, and ``seen``: the appearance time up to which its records have been shown.
* ``tags``: (tag, record id) with every id the record answered to when tagged (its arXiv
  ids and DOIs), so that a record merged later with another keeps the tags of both.
* ``tag_digests``: per tag, the appearance time up to which its recommendations went out in
  a digest (``news --email``).
* ``settings``: the secret the page's form tokens are signed with.
* ``appeared``: each identity (record id, arXiv id, DOI) and when its record first
  appeared in the index; ``catalogued``: the generations already read into it.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from pubsearch.core.errors import ParameterError, PubsearchError
from pubsearch.search.request import MODES, SearchRequest, parse_year

LIBRARY_FILE = "library.sqlite"
# How long a writer waits for another's lock before it gives up, in ms.
BUSY_TIMEOUT_MS = 30_000
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS follows (
    name TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    created REAL NOT NULL,
    seen REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS tags (
    tag TEXT NOT NULL,
    record TEXT NOT NULL,
    ids TEXT NOT NULL,
    added REAL NOT NULL,
    PRIMARY KEY (tag, record)
);
CREATE TABLE IF NOT EXISTS appeared (
    key TEXT PRIMARY KEY,
    at REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tag_digests (
    tag TEXT PRIMARY KEY,
    seen REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS catalogued (
    generation TEXT PRIMARY KEY,
    at REAL NOT NULL
);
"""

# A saved search's or a tag's name: what a URL path and a command line carry plainly.
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
NAME_MAX = 64


class LibraryError(PubsearchError):
    """The library file cannot be read or written (named with its path)."""


def check_name(name: str, what: str) -> str:
    """``name`` if it is a usable name of a saved search or tag, else a ParameterError."""
    if not name or len(name) > NAME_MAX or not set(name) <= NAME_CHARS or name[0] == ".":
        raise ParameterError(
            what,
            f"{name!r} is not a name: use 1 to {NAME_MAX} letters, digits, '-', '_' or '.' "
            "(not first)",
        )
    return name


@dataclass(frozen=True)
class SavedSearch:
    """A saved search: its name, what it asks (text, filters, mode), when it was made and
    the appearance time up to which its records were shown (``seen``)."""

    name: str
    request: SearchRequest
    created: float
    seen: float


@dataclass(frozen=True)
class Tagged:
    """A record in a tag: the id it was tagged by and every id it answered to then."""

    tag: str
    record: str
    ids: tuple[str, ...]
    added: float


def request_to_json(request: SearchRequest) -> str:
    """What a saved search keeps of a request: text, filters, mode, loose."""
    data: dict[str, object] = {"q": request.q}
    if request.authors:
        data["authors"] = list(request.authors)
    if request.subjects:
        data["subjects"] = list(request.subjects)
    if request.year is not None:
        data["year"] = str(request.year)
    if request.mode is not None:
        data["mode"] = request.mode
    if request.loose:
        data["loose"] = True
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def request_from_json(text: str) -> SearchRequest:
    data = json.loads(text)
    mode = data.get("mode")
    return SearchRequest(
        q=str(data.get("q", "")),
        authors=tuple(data.get("authors", ())),
        subjects=tuple(data.get("subjects", ())),
        year=parse_year(data["year"]) if data.get("year") else None,
        mode=mode if mode in MODES else None,
        loose=bool(data.get("loose", False)),
    )


class Store:
    """The library file of one index directory. Each method is one transaction; a Store
    may be used by one thread at a time (make one per thread or process)."""

    def __init__(self, index_dir: Path) -> None:
        self.path = index_dir / LIBRARY_FILE
        try:
            index_dir.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None
            )
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise LibraryError(f"{self.path}: cannot use WAL mode (got {mode})")
            self._db.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:
            raise LibraryError(f"{self.path}: {exc}") from None
        self._create()

    def _create(self) -> None:
        try:
            with self._write() as db:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.Error as exc:
            raise LibraryError(f"{self.path}: {exc}") from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, its lock taken at the start (no upgrade to fail later)."""
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise LibraryError(f"{self.path}: {exc}") from None
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        else:
            try:
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise LibraryError(f"{self.path}: {exc}") from None

    def _read(self, sql: str, args: Iterable[object] = ()) -> list[tuple[object, ...]]:
        try:
            return self._db.execute(sql, tuple(args)).fetchall()
        except sqlite3.Error as exc:
            raise LibraryError(f"{self.path}: {exc}") from None

    # -- saved searches ----------------------------------------------------------------------

    def add_follow(self, name: str, request: SearchRequest, seen: float) -> bool:
        """Save ``request`` as ``name`` (replacing one of that name, whose ``seen`` it
        keeps); True when the name is new."""
        check_name(name, "NAME")
        with self._write() as db:
            row = db.execute("SELECT seen FROM follows WHERE name = ?", (name,)).fetchone()
            db.execute(
                "INSERT INTO follows (name, request, created, seen) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET request = excluded.request",
                (name, request_to_json(request), time.time(), seen),
            )
        return row is None

    def remove_follow(self, name: str) -> bool:
        with self._write() as db:
            return db.execute("DELETE FROM follows WHERE name = ?", (name,)).rowcount > 0

    def follows(self) -> list[SavedSearch]:
        rows = self._read("SELECT name, request, created, seen FROM follows ORDER BY name")
        return [
            SavedSearch(str(n), request_from_json(str(r)), float(c), float(s))  # type: ignore[arg-type]
            for n, r, c, s in rows
        ]

    def follow(self, name: str) -> SavedSearch | None:
        for saved in self.follows():
            if saved.name == name:
                return saved
        return None

    def mark_seen(self, name: str, seen: float) -> None:
        """Records of ``name`` that appeared up to ``seen`` have been shown (never goes back)."""
        with self._write() as db:
            db.execute("UPDATE follows SET seen = MAX(seen, ?) WHERE name = ?", (seen, name))

    # -- tags --------------------------------------------------------------------------------

    def add_tags(
        self, tag: str, records: Mapping[str, Iterable[str]], upto: float | None = None
    ) -> int:
        """Tag each record (its id -> every id it answers to); how many were not tagged yet.
        A new tag's digest starts from ``upto`` (the appearance time of the generation
        read; else from when it was first given)."""
        check_name(tag, "TAG")
        now = time.time()
        added = 0
        with self._write() as db:
            if upto is not None:
                db.execute(
                    "INSERT OR IGNORE INTO tag_digests (tag, seen) VALUES (?, ?)", (tag, upto)
                )
            for record, ids in records.items():
                joined = " ".join(dict.fromkeys([record, *ids]))
                known = db.execute(
                    "SELECT 1 FROM tags WHERE tag = ? AND record = ?", (tag, record)
                ).fetchone()
                db.execute(
                    "INSERT INTO tags (tag, record, ids, added) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (tag, record) DO UPDATE SET ids = excluded.ids",
                    (tag, record, joined, now),
                )
                added += known is None
        return added

    def remove_tags(self, tag: str, ids: Iterable[str]) -> int:
        """Untag every record that answers to any of ``ids``; how many were untagged."""
        wanted = set(ids)
        removed = 0
        with self._write() as db:
            rows = db.execute("SELECT record, ids FROM tags WHERE tag = ?", (tag,)).fetchall()
            for record, joined in rows:
                if wanted & set(str(joined).split()):
                    db.execute("DELETE FROM tags WHERE tag = ? AND record = ?", (tag, record))
                    removed += 1
        return removed

    def tagged(self, tag: str | None = None) -> list[Tagged]:
        """The tagged records (of one tag, or of all), oldest first."""
        sql = "SELECT tag, record, ids, added FROM tags"
        args: tuple[object, ...] = ()
        if tag is not None:
            sql, args = sql + " WHERE tag = ?", (tag,)
        rows = self._read(sql + " ORDER BY added, rowid", args)
        return [
            Tagged(str(t), str(r), tuple(str(i).split()), float(a))  # type: ignore[arg-type]
            for t, r, i, a in rows
        ]

    def last_tag(self) -> str | None:
        """The tag most recently given to a record."""
        rows = self._read("SELECT tag FROM tags ORDER BY added DESC, rowid DESC LIMIT 1")
        return str(rows[0][0]) if rows else None

    def tag_names(self) -> list[tuple[str, int]]:
        rows = self._read("SELECT tag, COUNT(*) FROM tags GROUP BY tag ORDER BY tag")
        return [(str(t), int(c)) for t, c in rows]  # type: ignore[call-overload]

    def tags_since(self) -> dict[str, float]:
        """Each tag's time its recommendations start from in a digest: up to where the last
        digest showed them, else when the tag was first given."""
        rows = self._read(
            "SELECT t.tag, COALESCE(d.seen, MIN(t.added)) FROM tags AS t "
            "LEFT JOIN tag_digests AS d ON d.tag = t.tag GROUP BY t.tag ORDER BY t.tag"
        )
        return {str(t): float(s) for t, s in rows}  # type: ignore[arg-type]

    def mark_tag_seen(self, tag: str, seen: float) -> None:
        """The recommendations of ``tag`` among records that appeared up to ``seen`` went
        out (never goes back)."""
        with self._write() as db:
            db.execute(
                "INSERT INTO tag_digests (tag, seen) VALUES (?, ?) "
                "ON CONFLICT (tag) DO UPDATE SET seen = MAX(seen, excluded.seen)",
                (tag, seen),
            )

    # -- settings ----------------------------------------------------------------------------

    def secret(self) -> str:
        """This library's random secret (made once; every process of a server reads the
        same): what the page's form tokens are signed with."""
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO settings (key, value) VALUES ('secret', ?)",
                (secrets.token_hex(32),),
            )
            row = db.execute("SELECT value FROM settings WHERE key = 'secret'").fetchone()
        return str(row[0])

    # -- when records appeared ---------------------------------------------------------------

    def catalogued(self, generation: str) -> float | None:
        """The time ``generation``'s new records appeared at, if it was read already."""
        rows = self._read("SELECT at FROM catalogued WHERE generation = ?", (generation,))
        return float(rows[0][0]) if rows else None  # type: ignore[arg-type]

    def catalog_time(self) -> float | None:
        """The latest generation's time read into the catalog (None: none yet)."""
        rows = self._read("SELECT MAX(at) FROM catalogued")
        value = rows[0][0] if rows else None
        return None if value is None else float(value)  # type: ignore[arg-type]

    def appeared(self) -> dict[str, float]:
        """Every identity the catalog knows and when its record appeared."""
        rows = self._read("SELECT key, at FROM appeared")
        return {str(k): float(a) for k, a in rows}  # type: ignore[arg-type]

    def catalogue(self, generation: str, at: float, appeared: Mapping[str, float]) -> None:
        """Record ``generation`` (published at ``at``) as read, with the identities it
        brought (those already known keep their time)."""
        with self._write() as db:
            db.executemany(
                "INSERT OR IGNORE INTO appeared (key, at) VALUES (?, ?)", appeared.items()
            )
            db.execute(
                "INSERT OR IGNORE INTO catalogued (generation, at) VALUES (?, ?)", (generation, at)
            )
