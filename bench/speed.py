"""Speed and memory of pubsearch, with SQLite FTS5 on the same records as the yardstick.

For each size (the first N records of the corpus), both engines index the same slice and
answer the same seeded mix of queries:

* indexing: pubsearch through its command line (``pubsearch index``: the product's reader,
  duplicate merging, worker processes, facet table), SQLite FTS5 (porter tokenizer) through
  the same reader, each in a process of its own whose peak memory (RSS summed over the
  process and its children, sampled) is reported;
* queries: single common word, rare word, 2-3 words, phrase, fielded, with a year range,
  with a subject filter; each returning the top 10 and, for the faceted run, author, year
  and subject counts over all matches (SQLite: GROUP BY, each facet without its own filter,
  as pubsearch counts them);
* update (largest size only): ``pubsearch index --update`` of 1,000 changed records, then a
  check that the saved facet table equals one read afresh from the updated index;
* semantic (``--semantic N``, default 10,000; 0 skips it; needs the semantic extra): an
  index of the first N records built with ``--no-vectors``, then ``pubsearch embed`` timed
  (records/s), the time to embed a query, and the same faceted query mix in lexical and
  hybrid mode, interleaved. ``--semantic-index DIR`` times the queries of an index already
  embedded (of the first N records), without building and embedding it again.

The indexes of the sizes are built with ``--no-vectors``: the build is measured alone.

Run from the repository root::

    .venv/bin/python bench/speed.py                       # 10k, 50k and all 102,289 records
    .venv/bin/python bench/speed.py --sizes 10000 --queries 200

Timings on a shared machine are noisy: latencies are over every query of the mix (after a
warm-up pass), and the machine's load average is printed with the table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"
UPDATE_RECORDS = 1_000
FACET_SIZE = 20

_WORD = re.compile(r"[a-z]{3,}")
_STOP = frozenset(
    "the and for with that this from are was were which these those into using based "
    "our their its can has have been not but also such than more most other both each "
    "between over under when where while show shows shown we via".split()
)


# -- the corpus slices ---------------------------------------------------------------------


def write_slice(data: Path, size: int, out: Path) -> int:
    """The first ``size`` lines of ``data`` as a gzip file (as the full corpus is stored)."""
    count = 0
    with (
        gzip.open(data, "rt", encoding="utf-8") as src,
        gzip.open(out, "wt", encoding="utf-8", compresslevel=6) as dst,
    ):
        for line in src:
            if count >= size:
                break
            dst.write(line)
            count += 1
    return count


def read_json(path: Path, limit: int | None = None) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if limit is not None and n >= limit:
                return
            yield json.loads(line)


# -- peak memory of a process tree ---------------------------------------------------------


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def _proc_kb(path: str, key: str) -> int:
    """The kB figure of ``key`` in a /proc file such as ``/proc/PID/status`` (0 when the
    process is gone)."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kb(pid: int) -> int:
    """``pid``'s resident set (VmRSS)."""
    return _proc_kb(f"/proc/{pid}/status", "VmRSS:")


def pss_anon_kb(pid: int) -> int:
    """``pid``'s anonymous memory, each page shared with another process (a forked
    child's inherited tables) counted as its share: /proc/PID/smaps_rollup's Pss_Anon.
    Pages of mapped files (the index read through the page cache) are not in it."""
    return _proc_kb(f"/proc/{pid}/smaps_rollup", "Pss_Anon:")


def tree_pids(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    found, pending = [], [pid]
    while pending:
        one = pending.pop()
        if one not in found:
            found.append(one)
            pending.extend(_children(one))
    return found


@dataclass
class Measured:
    """A command's run (:func:`run_measured`)."""

    wall: float
    # The largest RSS summed over the process tree: a page shared by a parent and its
    # forked child, or a page of a mapped index file, counts in every process holding it.
    peak_mb: float
    # The largest Pss_Anon summed over the tree: the memory the processes themselves hold,
    # each shared page once (what the machine must find for them, the page cache apart).
    anon_mb: float
    out: str


def run_measured(cmd: list[str], env: dict[str, str] | None = None) -> Measured:
    """Run ``cmd`` and measure its wall time and peak memory (see :class:`Measured`). The
    tree's RSS is sampled every 50 ms, its Pss_Anon (dearer to read) every 0.5 s."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = anon = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, anon
        tick = 0
        while not done.is_set():
            pids = tree_pids(proc.pid)
            peak = max(peak, sum(rss_kb(pid) for pid in pids))
            if tick % 10 == 0:
                anon = max(anon, sum(pss_anon_kb(pid) for pid in pids))
            tick += 1
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-3000:]}")
    return Measured(wall, peak / 1024, anon / 1024, out)


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# -- SQLite FTS5 -----------------------------------------------------------------------------


SQLITE_SCHEMA = """
CREATE VIRTUAL TABLE fts USING fts5(title, abstract, authors, subjects,
                                    tokenize = 'porter unicode61');
CREATE TABLE docs (id INTEGER PRIMARY KEY, record_id TEXT, title TEXT, year INTEGER);
CREATE TABLE doc_authors (doc INTEGER, author TEXT);
CREATE TABLE doc_subjects (doc INTEGER, subject TEXT);
"""
SQLITE_INDEXES = """
CREATE INDEX doc_authors_doc ON doc_authors (doc);
CREATE INDEX doc_subjects_doc ON doc_subjects (doc);
CREATE INDEX doc_subjects_subject ON doc_subjects (subject, doc);
CREATE INDEX docs_year ON docs (year);
"""


def sqlite_build(db: Path, source: Path) -> None:
    """Index ``source`` through pubsearch's reader into a new SQLite FTS5 database."""
    from pubsearch.ingest.readers import ReadReport, read_paths

    con = sqlite3.connect(db)
    con.executescript(SQLITE_SCHEMA)
    with con:
        for rowid, record in enumerate(read_paths([source], ReadReport()), start=1):
            con.execute(
                "INSERT INTO fts (rowid, title, abstract, authors, subjects) VALUES (?,?,?,?,?)",
                (
                    rowid,
                    record.title,
                    record.abstract,
                    "; ".join(record.authors),
                    " ".join(record.subjects),
                ),
            )
            con.execute(
                "INSERT INTO docs (id, record_id, title, year) VALUES (?,?,?,?)",
                (rowid, record.id, record.title, record.year),
            )
            con.executemany(
                "INSERT INTO doc_authors VALUES (?,?)", [(rowid, a) for a in record.authors]
            )
            con.executemany(
                "INSERT INTO doc_subjects VALUES (?,?)", [(rowid, s) for s in record.subjects]
            )
        con.executescript(SQLITE_INDEXES)
    con.execute("INSERT INTO fts (fts) VALUES ('optimize')")
    con.commit()
    con.close()


SQLITE_ORDER = {
    "relevance": "bm25(fts, 2.0, 1.0)",
    "newest": "d.year DESC, d.id DESC",
    "oldest": "d.year, d.id",
}


class SqliteSearcher:
    def __init__(self, db: Path) -> None:
        self.con = sqlite3.connect(db, check_same_thread=False)

    def search(self, q: Query, facets: bool) -> int:
        where, params = ["fts MATCH ?"], [q.fts]
        filters: dict[str, tuple[str, list[Any]]] = {}
        if q.years:
            filters["year"] = ("d.year BETWEEN ? AND ?", list(q.years))
        if q.subject:
            filters["subject"] = (
                "d.id IN (SELECT doc FROM doc_subjects WHERE subject = ?)",
                [q.subject],
            )
        base = "FROM fts JOIN docs d ON d.id = fts.rowid WHERE " + " AND ".join(where)

        def matching(skip: str | None) -> tuple[str, list[Any]]:
            sql, args = base, list(params)
            for name, (cond, cargs) in filters.items():
                if name != skip:
                    sql += " AND " + cond
                    args += cargs
            return sql, args

        sql, args = matching(None)
        order = SQLITE_ORDER[q.sort]
        self.con.execute(
            f"SELECT d.record_id, d.title {sql} ORDER BY {order} LIMIT 10", args
        ).fetchall()
        (total,) = self.con.execute(f"SELECT count(*) {sql}", args).fetchone()
        if facets:
            sql, args = matching("author")
            self.con.execute(
                f"SELECT a.author, count(*) AS n FROM doc_authors a WHERE a.doc IN "
                f"(SELECT d.id {sql}) GROUP BY a.author ORDER BY n DESC LIMIT {FACET_SIZE}",
                args,
            ).fetchall()
            sql, args = matching("year")
            self.con.execute(f"SELECT d.year, count(*) {sql} GROUP BY d.year", args).fetchall()
            sql, args = matching("subject")
            self.con.execute(
                f"SELECT s.subject, count(*) AS n FROM doc_subjects s WHERE s.doc IN "
                f"(SELECT d.id {sql}) GROUP BY s.subject ORDER BY n DESC LIMIT {FACET_SIZE}",
                args,
            ).fetchall()
        return int(total)


# -- the query mix ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    kind: str
    text: str  # pubsearch query text
    fts: str  # the same for FTS5
    years: tuple[int, int] | None = None
    subject: str | None = None
    sort: str = "relevance"  # or "newest", "oldest"


@dataclass
class Vocabulary:
    words: Counter[str] = field(default_factory=Counter)
    bigrams: Counter[tuple[str, str]] = field(default_factory=Counter)
    authors: Counter[str] = field(default_factory=Counter)
    subjects: Counter[str] = field(default_factory=Counter)
    years: Counter[int] = field(default_factory=Counter)


def vocabulary(data: Path, size: int) -> Vocabulary:
    return vocabulary_of(read_json(data, size))


def vocabulary_of(records: Iterable[dict[str, Any]]) -> Vocabulary:
    """Words, title bigrams, authors, subjects and years of records in the corpus's form
    (``title``, ``abstract``, ``authors`` and ``categories`` lists, ``year``)."""
    voc = Vocabulary()
    for rec in records:
        title = (rec.get("title") or "").lower()
        words = [w for w in _WORD.findall(title) if w not in _STOP]
        voc.words.update(set(words))
        voc.words.update(set(w for w in _WORD.findall((rec.get("abstract") or "").lower())))
        plain = _WORD.findall(title)
        voc.bigrams.update(
            (a, b)
            for a, b in zip(plain, plain[1:], strict=False)
            if a not in _STOP and b not in _STOP
        )
        voc.authors.update(rec.get("authors") or [])
        voc.subjects.update(rec.get("categories") or [])
        if rec.get("year"):
            voc.years[int(rec["year"])] += 1
    for stop in _STOP:
        voc.words.pop(stop, None)
    return voc


def query_mix(voc: Vocabulary, count: int, seed: int = 20260101) -> list[Query]:
    """A fixed, seeded mix of ``count`` queries in seven kinds."""
    rnd = random.Random(seed)
    ranked = [w for w, _ in voc.words.most_common()]
    common = ranked[:300]
    rare = [w for w, c in voc.words.items() if 3 <= c <= 10 and len(w) > 5]
    rare.sort()
    middle = ranked[300:3000]
    phrases = [b for b, c in voc.bigrams.most_common(400) if c >= 5]
    authors = [
        a for a, c in voc.authors.most_common(2000) if c >= 3 and re.fullmatch(r"[A-Za-z .\-]+", a)
    ]
    subjects = [s for s, _ in voc.subjects.most_common(25)]
    years = sorted(voc.years)

    def year_range() -> tuple[int, int]:
        lo = rnd.choice(years)
        return lo, min(lo + rnd.choice((0, 1)), years[-1])

    kinds: list[Callable[[], Query]] = [
        lambda: _words("common word", [rnd.choice(common)]),
        lambda: _words("rare word", [rnd.choice(rare)]),
        lambda: _words("2-3 words", rnd.sample(middle[:800], rnd.choice((2, 3)))),
        lambda: _phrase(rnd.choice(phrases)),
        lambda: _fielded(rnd, rnd.choice(common + middle[:300]), rnd.choice(authors)),
        lambda: _with(_words("+ year range", [rnd.choice(common)]), years=year_range()),
        lambda: _with(
            _words("+ subject", rnd.sample(middle[:500], rnd.choice((1, 2)))),
            subject=rnd.choice(subjects),
        ),
    ]
    return [kinds[i % len(kinds)]() for i in range(count)]


def _words(kind: str, words: list[str]) -> Query:
    return Query(kind, " ".join(words), " AND ".join(f'"{w}"' for w in words))


def _phrase(pair: tuple[str, str]) -> Query:
    text = " ".join(pair)
    return Query("phrase", f'"{text}"', f'"{text}"')


def _fielded(rnd: random.Random, word: str, author: str) -> Query:
    if rnd.random() < 0.5:
        return Query("fielded", f"title:{word}", f'title : "{word}"')
    return Query("fielded", f'author:"{author}"', f'authors : "{author}"')


def _with(q: Query, years: tuple[int, int] | None = None, subject: str | None = None) -> Query:
    return Query(q.kind, q.text, q.fts, years=years, subject=subject)


# -- measuring ---------------------------------------------------------------------------------


def percentiles(values: list[float]) -> tuple[float, float, float]:
    qs = statistics.quantiles(values, n=100, method="inclusive")
    return qs[49], qs[94], qs[98]


def time_queries(run: Callable[[Query], Any], queries: list[Query]) -> list[float]:
    out = []
    for q in queries:
        started = time.perf_counter()
        run(q)
        out.append((time.perf_counter() - started) * 1000)
    return out


def interleaved(
    ours: Callable[[Query], Any], theirs: Callable[[Query], Any], queries: list[Query]
) -> tuple[list[float], list[float]]:
    """Milliseconds of each query, ours and theirs, after a warm-up on the first 20 (it
    opens the searcher and loads the facet arrays); one query each in turn, so that both
    see the same load on the machine."""
    time_queries(ours, queries[:20])
    time_queries(theirs, queries[:20])
    mine: list[float] = []
    yard: list[float] = []
    for q in queries:
        mine += time_queries(ours, [q])
        yard += time_queries(theirs, [q])
    return mine, yard


def pubsearch_runner(
    index: Path, facets: bool, mode: str | None = None
) -> tuple[Any, Callable[[Query], int]]:
    from pubsearch.search.request import SearchRequest, YearRange
    from pubsearch.search.service import SearchService

    service = SearchService(index)

    def run(q: Query) -> int:
        request = SearchRequest(
            q=q.text,
            year=YearRange(*q.years) if q.years else None,
            subjects=(q.subject,) if q.subject else (),
            sort=q.sort,  # type: ignore[arg-type]
            facets=facets,
            facet_size=FACET_SIZE,
            mode=mode,  # type: ignore[arg-type]
        )
        return service.search(request).total

    return service, run


@dataclass
class SizeResult:
    size: int
    rows: list[tuple[str, float, float | None, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, ours: float, theirs: float | None, fmt: str = "{:,.1f}") -> None:
        self.rows.append((name, ours, theirs, fmt))


def bench_size(
    data: Path, size: int, nqueries: int, work: Path, update: bool, workers: int | None
) -> SizeResult:
    result = SizeResult(size)
    src = work / f"records-{size}.jsonl.gz"
    actual = write_slice(data, size, src) if size else 0
    result.size = actual
    exe = str(Path(sys.executable).parent / "pubsearch")
    index = work / f"index-{size}"
    db = work / f"fts-{size}.db"
    extra = ["--workers", str(workers)] if workers else []
    build = [exe, "index", "--index", str(index), "--no-vectors", *extra, str(src)]
    built = run_measured(build)
    wall, peak, out = built.wall, built.peak_mb, built.out
    print(f"  pubsearch index: {out.strip()}", file=sys.stderr)
    sqlite_built = run_measured([sys.executable, __file__, "--sqlite-build", str(db), str(src)])
    s_wall, s_peak = sqlite_built.wall, sqlite_built.peak_mb
    gen = index / (index / "CURRENT").read_text().strip()
    result.add("indexing, records/s", actual / wall, actual / s_wall, "{:,.0f}")
    result.add("indexing, wall time (s)", wall, s_wall)
    result.add("indexing, peak memory (MB)", peak, s_peak, "{:,.0f}")
    result.add(
        "indexing, peak own memory (MB; shared pages once)",
        built.anon_mb,
        sqlite_built.anon_mb,
        "{:,.0f}",
    )
    result.add("index size (MB)", dir_size(gen) / 1e6, db.stat().st_size / 1e6)

    queries = query_mix(vocabulary(data, actual), nqueries)
    sqlite = SqliteSearcher(db)
    for facets in (True, False):
        service, ours = pubsearch_runner(index, facets)

        def theirs(q: Query, facets: bool = facets) -> int:
            return sqlite.search(q, facets)

        mine, yard = interleaved(ours, theirs, queries)
        service.close()
        label = "top 10 + facets" if facets else "top 10, no facets"
        for name, a, b in zip(
            ("p50", "p95", "p99"), percentiles(mine), percentiles(yard), strict=True
        ):
            result.add(f"{label}, {name} (ms)", a, b)
        if facets:
            by_kind: dict[str, list[float]] = {}
            for q, t in zip(queries, mine, strict=True):
                by_kind.setdefault(q.kind, []).append(t)
            result.notes.append(
                "pubsearch faceted p50 by kind (ms): "
                + ", ".join(f"{k} {statistics.median(v):.0f}" for k, v in by_kind.items())
            )

    if update:
        seconds = bench_update(read_json(data, actual), actual, index, work, exe, revise)
        result.add("update of 1,000 changed records (s)", seconds, None)
    return result


def revise(rec: dict[str, Any]) -> None:
    """A record of the corpus changed as ``bench_update`` changes it: title, a new author
    (Ada Update) and a new subject (cs.ZZ)."""
    rec["title"] = rec["title"] + " (revised)"
    rec["authors"] = [*(rec.get("authors") or []), "Ada Update"]
    rec["categories"] = [*(rec.get("categories") or []), "cs.ZZ"]


def bench_update(
    records: Iterable[dict[str, Any]],
    size: int,
    index: Path,
    work: Path,
    exe: str,
    change: Callable[[dict[str, Any]], None],
) -> float:
    """Time ``pubsearch index --update`` of 1,000 of the first ``size`` records, each
    changed by ``change`` (which adds the author Ada Update); check the facet table."""
    rnd = random.Random(7)
    picked = set(rnd.sample(range(size), min(UPDATE_RECORDS, size)))
    changed = work / "changed.jsonl.gz"
    with gzip.open(changed, "wt", encoding="utf-8") as out:
        for n, rec in enumerate(records):
            if n >= size:
                break
            if n in picked:
                change(rec)
                out.write(json.dumps(rec) + "\n")
    started = time.perf_counter()
    subprocess.run(
        [exe, "index", "--update", "--index", str(index), str(changed)],
        check=True,
        capture_output=True,
    )
    seconds = time.perf_counter() - started
    check_facets(index, expected_new_author=len(picked))
    return seconds


def check_facets(index: Path, expected_new_author: int) -> None:
    """The saved facet table must equal one read from the index the plain way."""
    import numpy as np
    from whoosh import index as whoosh_index

    from pubsearch.index.facets import FacetTable

    gen = index / (index / "CURRENT").read_text().strip()
    ix = whoosh_index.open_dir(str(gen))
    with ix.reader() as reader:
        saved = FacetTable.load(gen, reader, ix.latest_generation())
        fresh = FacetTable.build(reader)
    assert saved is not None, "no saved facet table after the update"
    live = fresh.live
    assert np.array_equal(saved.live, live) and np.array_equal(saved.years, fresh.years)
    for name in ("authors", "subjects"):
        a, b = getattr(saved, name), getattr(fresh, name)
        ca, cb = a.count(live), b.count(live)
        got = {a.labels[i].casefold(): int(ca[i]) for i in np.flatnonzero(ca)}
        want = {b.labels[i].casefold(): int(cb[i]) for i in np.flatnonzero(cb)}
        assert got == want, f"{name} counts differ after the update"
    author_id = saved.authors.ids_by_key.get("ada update")
    assert author_id is not None and saved.authors.count(live)[author_id] == expected_new_author


# -- output ------------------------------------------------------------------------------------


def bench_semantic(
    data: Path,
    size: int,
    nqueries: int,
    work: Path,
    max_tokens: int | None = None,
    existing: Path | None = None,
) -> SizeResult:
    """Embedding rate, query embedding time, and hybrid against lexical latency; with
    ``existing`` (an index of the first ``size`` records, embedded), the latencies only."""
    from pubsearch.index.embedding import Embedder

    result = SizeResult(size)
    if existing is not None:
        from pubsearch.search.request import SearchRequest
        from pubsearch.search.service import SearchService

        index = existing
        service = SearchService(index)
        actual = service.search(SearchRequest()).total
        service.close()
    else:
        src = work / f"records-{size}.jsonl.gz"
        actual = write_slice(data, size, src)
        exe = str(Path(sys.executable).parent / "pubsearch")
        index = work / f"semantic-{size}"
        subprocess.run([exe, "index", "--index", str(index), "--no-vectors", str(src)], check=True)
        cut = ["--max-tokens", str(max_tokens)] if max_tokens else []
        embedded = run_measured([exe, "embed", "--index", str(index), *cut])
        wall, peak, out = embedded.wall, embedded.peak_mb, embedded.out
        print(f"  pubsearch embed: {out.strip()}", file=sys.stderr)
        result.add("pubsearch embed, records/s", actual / wall, None)
        result.add("pubsearch embed, peak memory (MB)", peak, None, "{:,.0f}")
        result.notes.append(
            f"At {actual / wall:.1f} records/s, the 102,289 arXiv records embed in "
            f"{102_289 / (actual / wall) / 60:.0f} minutes."
        )
    result.size = actual
    queries = query_mix(vocabulary(data, actual), nqueries)
    embedder = Embedder()
    embedder.embed(["warm up"])
    result.add(
        "query embedding, p50 (ms)",
        percentiles(time_queries(lambda q: embedder.embed([q.text]), queries))[0],
        None,
    )
    runners = {mode: pubsearch_runner(index, True, mode) for mode in ("lexical", "hybrid")}
    for _, run in runners.values():
        time_queries(run, queries[:20])
    times: dict[str, list[float]] = {mode: [] for mode in runners}
    for q in queries:  # interleaved: both modes see the same load
        for mode, (_, run) in runners.items():
            times[mode] += time_queries(run, [q])
    for service, _ in runners.values():
        service.close()
    for name, lex, hyb in zip(
        ("p50", "p95", "p99"),
        percentiles(times["lexical"]),
        percentiles(times["hybrid"]),
        strict=True,
    ):
        result.add(f"top 10 + facets, {name} (ms): hybrid | lexical", hyb, lex)
    return result


def markdown(results: list[SizeResult]) -> str:
    lines = []
    for res in results:
        lines.append(f"\n**{res.size:,} records**\n")
        lines.append("| measure | pubsearch | SQLite FTS5 | pubsearch / SQLite |")
        lines.append("|---|---:|---:|---:|")
        for name, ours, theirs, fmt in res.rows:
            ratio = f"{ours / theirs:.2f}" if theirs else "-"
            yardstick = fmt.format(theirs) if theirs is not None else "-"
            lines.append(f"| {name} | {fmt.format(ours)} | {yardstick} | {ratio} |")
        for note in res.notes:
            lines.append(f"\n{note}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="records.jsonl.gz")
    parser.add_argument("--sizes", default="10000,50000,102289", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=210, help="queries in the mix (>= 200)")
    parser.add_argument("--workers", type=int, default=None, help="pubsearch index workers")
    parser.add_argument("--workdir", type=Path, default=None, help="kept when given")
    parser.add_argument(
        "--semantic", type=int, default=10_000, help="records embedded for the semantic rows"
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="pubsearch embed --max-tokens for the semantic rows (default: the model's own)",
    )
    parser.add_argument(
        "--semantic-index",
        type=Path,
        default=None,
        help="an embedded index of the first --semantic records: time its queries only",
    )
    parser.add_argument("--sqlite-build", nargs=2, metavar=("DB", "SOURCE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sqlite_build:
        sqlite_build(Path(args.sqlite_build[0]), Path(args.sqlite_build[1]))
        return
    if args.queries < 200:
        parser.error("--queries must be at least 200")
    if args.semantic_index is not None and not args.semantic:
        parser.error("--semantic-index needs --semantic N (the records it was built from)")
    if args.semantic_index is not None and not (args.semantic_index / "CURRENT").is_file():
        parser.error(f"--semantic-index: no pubsearch index in {args.semantic_index}")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="pubsearch-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for size in sizes:
            print(f"{size:,} records ...", file=sys.stderr)
            results.append(
                bench_size(args.data, size, args.queries, work, size == max(sizes), args.workers)
            )
        if args.semantic:
            print(f"semantic, {args.semantic:,} records ...", file=sys.stderr)
            results.append(
                bench_semantic(
                    args.data,
                    args.semantic,
                    args.queries,
                    work,
                    args.max_tokens,
                    args.semantic_index,
                )
            )
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()
    print(markdown(results))
    print(
        f"\n{os.cpu_count()} CPUs; load average at the end {load[0]:.1f} / {load[1]:.1f} / "
        f"{load[2]:.1f} (1 / 5 / 15 min); {args.queries} queries per mix; Python "
        f"{sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}."
    )


if __name__ == "__main__":
    main()
