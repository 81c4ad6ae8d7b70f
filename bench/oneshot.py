"""One-shot queries: the wall time of a whole `pubsearch query` process, start to exit.

A script, not a test. Each query of a set runs ``--runs`` times after one unmeasured run
(the page cache warm, as for a user's second query); a set's figure is the median of all
its runs. The sets: 36 typical queries (keywords, phrases, names, filters, fielded) searched
by their words (``--mode lexical``), the same sets' plain-word queries searched in the
default mode on an index with vectors (``--vector-index``: hybrid), queries that find
nothing (a spelling correction is looked for, then a broader search) and misspelt ones
(corrected). Beside them: ``pubsearch --version``; SQLite's FTS5 answering the plain-word
queries in a fresh ``python -c`` process each (``import sqlite3``, a MATCH ordered by rank,
the top 10), from a database of the same records built once (``--fts-db``); and
``pubsearch serve``'s time from start to its first answer (``--serve``).

``--compare BIN`` runs another ``pubsearch`` (another tree's, for "before") in turn with this
one, query by query, so that both see the same load. Bytecode is cached under /tmp (as an
installed package has its ``.pyc`` files, without writing into a source tree).

    .venv/bin/python bench/oneshot.py --index /tmp/arxiv-ix --vector-index /tmp/arxiv-vx \\
        --compare /work/main/.venv/bin/pubsearch --serve
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

DEFAULT_RECORDS = (
    Path(__file__).resolve().parents[1] / "../shared/data/arxiv-2024-2026/records.jsonl.gz"
)
PYCACHE = "/tmp/pubsearch-bench-pycache"

# Plain words (searched by meaning too where the index has vectors).
KEYWORDS = [
    "graph neural network",
    "gaussian splatting",
    "large language models reasoning",
    "dark matter halo",
    "quantum error correction",
    "diffusion models image generation",
    "reinforcement learning from human feedback",
    "protein structure prediction",
    "gravitational waves",
    "federated learning privacy",
    "topological insulators",
    "exoplanet atmospheres",
    "black hole accretion",
    "transformer attention",
    "superconductivity",
]
NAMES = ["Hinton", "Spurek", "Yann LeCun", "Bengio deep learning", "Witten"]
PHRASES = [
    '"neural radiance fields"',
    '"mixture of experts"',
    '"retrieval augmented generation"',
    '"dark energy" survey',
    '"graph neural networks" robustness',
]
# (text, options)
FILTERED = [
    ("transformer", ["--year", "2025"]),
    ("galaxies", ["--subject", "astro-ph"]),
    ("language models", ["--subject", "cs.CL", "--year", "2024"]),
    ('title:"deep learning"', []),
    ("author:Smith", []),
    ("neutrinos", ["--sort", "newest"]),
    ('"large language models"', ["--facets"]),
    ("quantum computing", ["--facets", "--year", "2025..2026"]),
    ("sequence model -lstm", []),
    ("abstract:benchmark AND title:vision", []),
    ("cosmology", ["--author", "Smith"]),
]
NO_HITS = ["qzxv wplk", "xkcdqq", "zzqv flurb", "plmokn ijbuhv", "wqxz trrvvk"]
MISSPELT = [
    "gravitaional wavs",
    "nueral netwrok",
    "quantun computng",
    "supercondutivity",
    "reinforcment lerning",
]


def typical() -> list[tuple[str, list[str]]]:
    return [(q, []) for q in KEYWORDS + NAMES + PHRASES] + FILTERED


def child_env(vectors: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("PYTHONPYCACHEPREFIX", PYCACHE)
    if vectors:
        env.pop("PUBSEARCH_NO_VECTORS", None)
    else:
        env["PUBSEARCH_NO_VECTORS"] = "1"
    return env


def timed(command: list[str], env: dict[str, str]) -> float:
    """Seconds ``command`` took, start to exit (it must succeed)."""
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed: {done.stderr.strip()[-400:]}")
    return took


def query_command(
    binary: str, index: Path, text: str, options: list[str], lexical: bool
) -> list[str]:
    mode = ["--mode", "lexical"] if lexical else []
    return [binary, "query", "--index", str(index), "--limit", "10", *mode, *options, "--", text]


def run_set(
    binaries: list[str],
    index: Path,
    queries: list[tuple[str, list[str]]],
    runs: int,
    lexical: bool,
) -> list[list[float]]:
    """Every run's seconds, per binary, the binaries in turn query by query."""
    env = child_env(vectors=not lexical)
    times: list[list[float]] = [[] for _ in binaries]
    for text, options in queries:
        for binary in binaries:  # warm: the page cache, the bytecode
            timed(query_command(binary, index, text, options, lexical), env)
        for _ in range(runs):
            for number, binary in enumerate(binaries):
                command = query_command(binary, index, text, options, lexical)
                times[number].append(timed(command, env))
    return times


# -- SQLite FTS5 ---------------------------------------------------------------------------


def build_fts(records: Path, db: Path) -> None:
    """An FTS5 table of the records' titles and abstracts (porter stemming), built once."""
    scratch = db.with_suffix(".building")
    scratch.unlink(missing_ok=True)
    con = sqlite3.connect(scratch)
    con.execute(
        "CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, title, abstract, "
        "tokenize='porter unicode61')"
    )
    with gzip.open(records, "rt", encoding="utf-8") as fh:
        rows = (
            (r.get("id", ""), r.get("title", ""), r.get("abstract", ""))
            for r in map(json.loads, fh)
        )
        con.executemany("INSERT INTO docs VALUES (?, ?, ?)", rows)
    con.commit()
    con.close()
    scratch.rename(db)


FTS_QUERY = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute("SELECT id, title FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 10",
                   (sys.argv[2],)).fetchall()
print(len(rows))
"""


def fts_text(text: str) -> str:
    """A query's words as FTS5 reads them: each word quoted, a phrase as a phrase."""
    out, phrase = [], text.startswith('"')
    if phrase:
        quoted, _, rest = text[1:].partition('"')
        out.append(f'"{quoted}"')
        text = rest
    out += [f'"{word}"' for word in text.split()]
    return " ".join(out)


# -- the server ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def first_answer(binary: str, index: Path, env: dict[str, str]) -> float:
    """Seconds from starting ``pubsearch serve`` to its first answer to a search."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/?q=graph+neural+network"
    started = time.perf_counter()
    server = subprocess.Popen(
        [binary, "serve", "--index", str(index), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its worker processes in a group of their own
    )
    try:
        while time.perf_counter() - started < 120:
            try:
                with urllib.request.urlopen(url, timeout=30) as answer:
                    if answer.status == 200:
                        return time.perf_counter() - started
            except OSError:
                time.sleep(0.02)
        sys.exit(f"{binary} serve did not answer within 120 s")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    return 0.0


# -- the table -----------------------------------------------------------------------------


def ms(values: list[float]) -> str:
    return f"{1000 * statistics.median(values):.0f}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="an index (words only)")
    parser.add_argument("--vector-index", type=Path, help="an index with vectors (hybrid)")
    parser.add_argument("--runs", type=int, default=3, help="measured runs of each query")
    parser.add_argument("--compare", help="another pubsearch to time in turn (before)")
    parser.add_argument("--binary", help="the pubsearch to time (default: this Python's)")
    parser.add_argument("--records", type=Path, default=DEFAULT_RECORDS)
    parser.add_argument("--fts-db", type=Path, default=Path("/tmp/pubsearch-fts5.db"))
    parser.add_argument("--serve", action="store_true", help="time serve's first answer")
    parser.add_argument("--serve-runs", type=int, default=3)
    args = parser.parse_args()
    this = args.binary or str(Path(sys.executable).parent / "pubsearch")
    binaries = [this] + ([args.compare] if args.compare else [])
    names = ["this"] + (["--compare"] if args.compare else [])
    rows: list[tuple[str, int, list[list[float]]]] = []

    sets = [
        ("typical, lexical", typical(), args.index, True),
        ("no hits", [(q, []) for q in NO_HITS], args.index, True),
        ("misspelt", [(q, []) for q in MISSPELT], args.index, True),
    ]
    if args.vector_index is not None:
        plain = [(q, []) for q in KEYWORDS + NAMES]
        sets.insert(1, ("plain words, hybrid", plain, args.vector_index, False))
        sets.append(("no hits, hybrid", [(q, []) for q in NO_HITS], args.vector_index, False))
        sets.append(("misspelt, hybrid", [(q, []) for q in MISSPELT], args.vector_index, False))
    for label, queries, index, lexical in sets:
        rows.append((label, len(queries), run_set(binaries, index, queries, args.runs, lexical)))
        print(f"{label}: done", file=sys.stderr)

    env = child_env(vectors=False)
    version: list[list[float]] = [[] for _ in binaries]
    for _ in range(max(5, args.runs * 3)):
        for number, binary in enumerate(binaries):
            version[number].append(timed([binary, "--version"], env))
    rows.append(("`pubsearch --version`", 1, version))

    if not args.fts_db.exists():
        print(f"building {args.fts_db} from {args.records}", file=sys.stderr)
        build_fts(args.records, args.fts_db)
    fts: list[float] = []
    for text in KEYWORDS + NAMES + PHRASES:
        command = [sys.executable, "-c", FTS_QUERY, str(args.fts_db), fts_text(text)]
        timed(command, env)
        fts += [timed(command, env) for _ in range(args.runs)]

    serve: list[list[float]] = [[] for _ in binaries]
    if args.serve:
        for _ in range(args.serve_runs):
            for number, binary in enumerate(binaries):
                serve[number].append(first_answer(binary, args.index, env))

    head = " | ".join(f"p50 ms ({n})" for n in names)
    print(f"| set | queries | {head} |")
    print("|---|---:|" + "---:|" * len(names))
    for label, count, times in rows:
        print(f"| {label} | {count} | " + " | ".join(ms(t) for t in times) + " |")
    print(
        f"| SQLite FTS5, one-shot `python -c` (plain words, phrases) | "
        f"{len(KEYWORDS + NAMES + PHRASES)} | {ms(fts)} |" + " |" * (len(names) - 1)
    )
    if args.serve:
        print(
            "| `pubsearch serve`: start to first answer | 1 | "
            + " | ".join(ms(t) for t in serve)
            + " |"
        )
    load = os.getloadavg()
    print(
        f"\n{args.runs} runs a query after a warm one; load average at the end "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; {os.cpu_count()} CPUs."
    )


if __name__ == "__main__":
    main()
