"""Growth: how each of pubsearch's costs grows with the number of records, SQLite beside it.

A script, not a test. For each size N (default 100k, 300k and 1M synthetic records in
arXiv's snapshot format from ``bench/synth.py``; ``--full`` adds 2.7M, the size of arXiv's
own snapshot), on this machine, one markdown table row:

* the build: ``pubsearch index --format arxiv FILE`` (the plain command: reader, duplicate
  merging, worker processes), its wall time, records/s, CPU a record (the process and its
  workers), peak RSS (summed over the process tree, sampled) and peak own memory (the
  tree's anonymous pages, each shared one counted once: Pss_Anon), the index's size on disk;
* a new process opening the index and answering a first faceted query, and its RSS then;
* faceted queries: the seeded mix of ``bench/speed.py`` (words, rare words, 2-3 words,
  phrases, fielded, year ranges, subjects) with one query in six sorted by date, top 10 and
  author, year and subject counts over all matches; p50, p95, p99;
* the worst first time of ``bench/query_shapes.py``'s 35 shapes, all in one new process
  prepared as a server is (the shape script gives each its own process);
* ``pubsearch index --update`` of 1,000 changed records (the facet table then checked);
* ``pubsearch serve`` (2 processes of 4 threads) after 2,000 requests of
  ``bench/load.py``'s mix from 8 clients: its RSS (both processes; their own memory and
  the index files' pages they map, each counted in each process that maps it) and its
  proportional set (the pages shared by the two counted once between them);
* SQLite FTS5 in the same run: build time and size, and the same faceted queries (GROUP BY).

Data and indexes go under ``--work`` (default /tmp/pubsearch-growth); the synthetic files are kept
for the next run, the indexes removed after each size unless ``--keep``::

    .venv/bin/python bench/growth.py                          # 100k, 300k, 1M
    .venv/bin/python bench/growth.py --sizes 20000 --real     # a quick check, and the real records
    .venv/bin/python bench/growth.py --sizes 2700000          # all of arXiv, once
    .venv/bin/python bench/growth.py --sizes 1000000 --reuse  # queries again, on a kept index
    .venv/bin/python bench/growth.py --sizes 2700000 --no-sqlite --keep

``--real`` adds a row for the 102,289 real arXiv records (the corpus's own format), built
with the same plain command: the rate a user sees.
"""

from __future__ import annotations

import argparse
import compileall
import dataclasses
import gzip
import json
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import load
import query_shapes
import speed
import synth

DEFAULT_WORK = Path("/tmp/pubsearch-growth")
FULL_SIZE = 2_700_000
SUMMARY = re.compile(r"indexed ([\d,]+) records; ([\d,]+) duplicates merged;.*; ([\d,]+) in ")
VOCABULARY_RECORDS = 100_000  # the query mix comes from the first records: the same at every N
LOAD_REQUESTS = 2_000

FIRST_QUERY = r"""
import json, sys, time
from pathlib import Path
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
before = rss()
started = time.perf_counter()
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService
service = SearchService(Path(sys.argv[1]))
total = service.search(SearchRequest(q=sys.argv[2], facets=True)).total
first = time.perf_counter() - started
after = rss()
started = time.perf_counter()
service.prepare()
print(json.dumps({"first_ms": first * 1000, "total": total, "rss_mb": after,
                  "growth_mb": after - before, "prepare_s": time.perf_counter() - started,
                  "prepared_rss_mb": rss()}))
"""


@dataclasses.dataclass
class Row:
    label: str
    records: int
    figures: dict[str, float] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)


COLUMNS = (
    ("build s", "build_s", "{:,.0f}"),
    ("records/s", "rate", "{:,.0f}"),
    ("CPU ms/record", "cpu_ms", "{:.2f}"),
    ("build peak RSS MB", "peak_mb", "{:,.0f}"),
    ("build peak own MB (shared pages once)", "anon_mb", "{:,.0f}"),
    ("index MB", "index_mb", "{:,.0f}"),
    ("bytes/record", "bytes_per_record", "{:,.0f}"),
    ("open + first query ms", "first_ms", "{:,.0f}"),
    ("RSS after first query MB", "first_rss_mb", "{:,.0f}"),
    ("faceted p50 / p95 / p99 ms", "p", "{:.0f} / {:.0f} / {:.0f}"),
    ("worst shape ms", "worst_ms", "{:,.0f}"),
    ("update 1,000 s", "update_s", "{:.1f}"),
    (
        "server RSS MB after 2,000 requests (own / mapped index)",
        "sm",
        "{:,.0f} ({:,.0f} / {:,.0f})",
    ),
    ("server PSS MB (shared pages counted once)", "server_pss_mb", "{:,.0f}"),
    ("SQLite build s (records/s)", "sq", "{:,.0f} ({:,.0f})"),
    ("SQLite MB", "sqlite_mb", "{:,.0f}"),
    ("SQLite faceted p50 / p95 / p99 ms", "sp", "{:.0f} / {:.0f} / {:.0f}"),
)
GROUPS = {
    "p": ("p50", "p95", "p99"),
    "sp": ("sqlite_p50", "sqlite_p95", "sqlite_p99"),
    "sq": ("sqlite_s", "sqlite_rate"),
    "sm": ("server_mb", "server_anon_mb", "server_file_mb"),
}


def header() -> str:
    names = ["records", *(name for name, _, _ in COLUMNS)]
    return "| " + " | ".join(names) + " |\n|---|" + "---:|" * len(COLUMNS)


def markdown_row(row: Row) -> str:
    cells = [row.label]
    for _, key, fmt in COLUMNS:
        keys = GROUPS.get(key, (key,))
        values = [row.figures.get(k) for k in keys]
        cells.append(fmt.format(*values) if None not in values else "-")
    return "| " + " | ".join(cells) + " |"


# -- the records ------------------------------------------------------------------------------


def synthetic(work: Path, size: int, seed: int) -> Path:
    """The synthetic file of ``size`` records (made once, then kept under ``work``)."""
    path = work / f"synth-{size}-{seed}.json.gz"
    if not path.exists():
        started = time.perf_counter()
        partial = path.with_name(path.name + ".part")
        with gzip.open(partial, "wt", encoding="utf-8", compresslevel=1) as out:
            synth.write_records(synth.load_model(), size, out, seed)
        partial.rename(path)
        print(f"  made {path} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return path


def corpus_form(obj: dict[str, Any]) -> dict[str, Any]:
    """A snapshot object in the corpus's form, as ``speed.vocabulary_of`` reads records."""
    created = (obj.get("versions") or [{}])[0].get("created", "")
    year = created.split()[3] if created.count(" ") >= 4 else None
    return {
        "title": obj["title"],
        "abstract": obj["abstract"],
        "authors": [f"{first} {last}".strip() for last, first, *_ in obj["authors_parsed"]],
        "categories": obj["categories"].split(),
        "year": int(year) if year else None,
    }


def records_of(path: Path, snapshot: bool) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            yield corpus_form(obj) if snapshot else obj


def revise_snapshot(obj: dict[str, Any]) -> None:
    """``speed.revise`` for a snapshot object: a new title, author Ada Update, subject cs.ZZ."""
    obj["title"] += " (revised)"
    obj["authors_parsed"] = [*obj["authors_parsed"], ["Update", "Ada", ""]]
    obj["categories"] += " cs.ZZ"


def raw_records(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            yield json.loads(line)


# -- measuring one size -------------------------------------------------------------------------


def compile_package() -> None:
    """Byte-compile pubsearch's modules, as a process that has run once leaves them: where
    PYTHONDONTWRITEBYTECODE is set (it is on the machines this was measured on), each new
    process would otherwise compile them before its first query."""
    import pubsearch

    compileall.compile_dir(Path(pubsearch.__file__).parent, quiet=1)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(label: str, data: Path, snapshot: bool, args: argparse.Namespace) -> Row:
    work: Path = args.work
    exe = str(Path(sys.executable).parent / "pubsearch")
    index = work / f"index-{label}"
    db = work / f"fts-{label}.db"
    if args.reuse and (index / "CURRENT").exists() and (db.exists() or args.no_sqlite):
        # The query side again, on the index and database a --keep run left (their build
        # columns stay empty).
        count = int(label) if label.isdigit() else sum(1 for _ in records_of(data, snapshot))
        row = Row(label, count)
        row.notes.append("index and SQLite database of an earlier run: queries only")
        return measure_queries(row, index, db, data, snapshot, args)
    shutil.rmtree(index, ignore_errors=True)
    db.unlink(missing_ok=True)  # (with --no-sqlite, no earlier run's database is used)
    fmt = ["--format", "arxiv"] if snapshot else []
    cpu = children_cpu()
    build = [exe, "index", "--index", str(index), "--no-vectors", *fmt, str(data)]
    built = speed.run_measured(build)
    wall, peak, out = built.wall, built.peak_mb, built.out
    cpu = children_cpu() - cpu
    print(f"  pubsearch index: {out.strip()}", file=sys.stderr)
    found = SUMMARY.search(out)
    assert found, out
    new, merged, indexed = (int(n.replace(",", "")) for n in found.groups())
    read = new + merged
    row = Row(label, read)
    gen = index / (index / "CURRENT").read_text().strip()
    size = speed.dir_size(gen)
    row.figures.update(
        build_s=wall,
        rate=read / wall,
        cpu_ms=1000 * cpu / read,
        peak_mb=peak,
        anon_mb=built.anon_mb,
        index_mb=size / 1e6,
        bytes_per_record=size / indexed,
    )
    if not args.no_sqlite:
        sqlite_built = speed.run_measured(
            [sys.executable, speed.__file__, "--sqlite-build", str(db), str(data)]
        )
        s_wall, s_peak = sqlite_built.wall, sqlite_built.peak_mb
        row.figures.update(
            sqlite_s=s_wall, sqlite_rate=read / s_wall, sqlite_mb=db.stat().st_size / 1e6
        )
        row.notes.append(f"SQLite build peak {s_peak:,.0f} MB")
    measure_queries(row, index, db, data, snapshot, args)
    if not args.keep:
        shutil.rmtree(index, ignore_errors=True)
        db.unlink(missing_ok=True)
    return row


def measure_queries(
    row: Row, index: Path, db: Path, data: Path, snapshot: bool, args: argparse.Namespace
) -> Row:
    """The query side of a row: first query, faceted mix beside SQLite, query shapes, an
    update and a server's memory under load."""
    exe = str(Path(sys.executable).parent / "pubsearch")
    read = row.records
    voc = speed.vocabulary_of(islice(records_of(data, snapshot), VOCABULARY_RECORDS))
    queries = speed.query_mix(voc, args.queries)
    queries = [
        dataclasses.replace(q, sort=("newest", "oldest")[i // 6 % 2]) if i % 6 == 5 else q
        for i, q in enumerate(queries)
    ]
    first = json.loads(
        subprocess.run(
            [sys.executable, "-c", FIRST_QUERY, str(index), queries[0].text],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    row.figures.update(first_ms=first["first_ms"], first_rss_mb=first["rss_mb"])
    row.notes.append(
        f"first query process grew {first['growth_mb']:,.0f} MB; prepare() "
        f"{first['prepare_s']:.1f} s, then {first['prepared_rss_mb']:,.0f} MB"
    )

    service, ours = speed.pubsearch_runner(index, True)
    if db.exists():
        sqlite = speed.SqliteSearcher(db)
        mine, yard = speed.interleaved(ours, lambda q: sqlite.search(q, True), queries)
        sqlite.con.close()
        for name, b in zip(("p50", "p95", "p99"), speed.percentiles(yard), strict=True):
            row.figures[f"sqlite_{name}"] = b
    else:  # --no-sqlite
        speed.time_queries(ours, queries[:20])
        mine = speed.time_queries(ours, queries)
    service.close()
    for name, a in zip(("p50", "p95", "p99"), speed.percentiles(mine), strict=True):
        row.figures[name] = a

    pasted = query_shapes.pasted_abstract(data)
    named = query_shapes.shapes(pasted)
    results = query_shapes.run_shapes(index, [(t, p) for _, t, p in named], 0, True)
    worst = max(zip(named, results, strict=True), key=lambda pair: pair[1]["times"][0])
    row.figures["worst_ms"] = worst[1]["times"][0]
    row.notes.append(f"worst shape: {worst[0][0]}")

    records = raw_records(data) if snapshot else speed.read_json(data)
    change = revise_snapshot if snapshot else speed.revise
    row.figures["update_s"] = speed.bench_update(records, read, index, args.work, exe, change)

    run = load.run_load(
        index,
        clients=8,
        requests=LOAD_REQUESTS,
        threads=4,
        processes=2,
        seed=20261129,
        max_seconds=900,
    )
    lat = run.tally.latencies
    row.figures.update(
        server_mb=run.rss_end,
        server_anon_mb=run.anon_end,
        server_file_mb=run.file_end,
        server_pss_mb=run.pss_end,
    )
    row.notes.append(
        f"server: {len(lat):,} requests, {len(lat) / run.wall:.1f}/s, p50 "
        f"{load.pct(lat, 0.5):.0f} ms, p95 {load.pct(lat, 0.95):.0f} ms, "
        f"{len(run.tally.errors)} errors; RSS {run.rss_start:,.0f} MB after warm-up, "
        f"peak {max(run.samples or [run.rss_start]):,.0f} MB"
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,300000,1000000", help="comma-separated N")
    parser.add_argument("--full", action="store_true", help=f"add {FULL_SIZE:,} records")
    parser.add_argument(
        "--real",
        nargs="?",
        const=speed.DEFAULT_DATA,
        type=Path,
        metavar="DATA",
        help="add a row for real records (default the 102,289 arXiv records)",
    )
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="data and indexes")
    parser.add_argument("--seed", type=int, default=synth.SEED, help="synthetic records' seed")
    parser.add_argument("--queries", type=int, default=210, help="faceted queries a size")
    parser.add_argument("--keep", action="store_true", help="keep the indexes and databases")
    parser.add_argument(
        "--no-sqlite",
        action="store_true",
        help="leave SQLite out (for 2.7M, where its build alone takes some 20 minutes)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure only the queries, on the indexes and databases --keep left",
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.full:
        sizes.append(FULL_SIZE)
    jobs: list[tuple[str, Path | int]] = [("real", args.real)] if args.real else []
    jobs += [(f"{n:,}", n) for n in sizes]
    compile_package()
    print(header(), flush=True)
    rows = []
    for label, source in jobs:
        print(f"{label} ...", file=sys.stderr)
        snapshot = isinstance(source, int)
        data = synthetic(args.work, source, args.seed) if isinstance(source, int) else source
        row = measure(label.replace(",", ""), data, snapshot, args)
        row.label = f"{row.records:,}" + (" (real)" if label == "real" else "")
        rows.append(row)
        print(markdown_row(row), flush=True)
        print(f"  {row.label}: " + "; ".join(row.notes), file=sys.stderr, flush=True)
    print()
    for row in rows:
        print(f"- {row.label}: " + "; ".join(row.notes))
    loadavg = os.getloadavg()
    print(
        f"\n{os.cpu_count()} CPUs; load average at the end {loadavg[0]:.1f} / {loadavg[1]:.1f} / "
        f"{loadavg[2]:.1f}; {args.queries} faceted queries a size; Python "
        f"{sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}; seed {args.seed}."
    )


if __name__ == "__main__":
    main()
