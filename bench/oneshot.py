"""One-shot queries: the wall time of a whole `pubsearch query` process, start to exit.

A script, not a test. Each query runs ``--runs`` times, one after another, words only
(``PUBSEARCH_NO_VECTORS=1``, ``--mode lexical``); the table gives the median and the
fastest run. The queries are one with hits, one that finds nothing (it asks for a
spelling correction), a misspelt one (corrected) and a surname (the name table).

    .venv/bin/python bench/oneshot.py --index /tmp/arxiv-ix
    .venv/bin/python bench/oneshot.py --index /tmp/arxiv-ix --runs 9 --query "Hinton capsule"
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES = {
    "with hits": "gaussian splatting",
    "no hits": "qzxv wplk",
    "misspelt": "gravitaional wavs",
    "surname": "Spurek",
}


def run(binary: Path, index: Path, text: str) -> tuple[float, str]:
    """Seconds one `pubsearch query` took, and its first line of output."""
    env = {**os.environ, "PUBSEARCH_NO_VECTORS": "1"}
    command = [str(binary), "query", "--index", str(index), "--mode", "lexical", "--limit", "5"]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, "--", text], env=env, capture_output=True, text=True, check=False
    )
    took = time.perf_counter() - started
    if done.returncode not in (0,):
        sys.exit(f"pubsearch query {text!r} failed: {done.stderr.strip()}")
    return took, (done.stdout.splitlines() or [""])[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="an index directory")
    parser.add_argument("--runs", type=int, default=5, help="runs of each query")
    parser.add_argument(
        "--query", action="append", default=[], help="another query to time (repeatable)"
    )
    args = parser.parse_args()
    binary = Path(sys.executable).parent / "pubsearch"
    queries = {**QUERIES, **{f"--query {i + 1}": q for i, q in enumerate(args.query)}}
    print("| query | text | median s | fastest s | first line |")
    print("|---|---|---:|---:|---|")
    for kind, text in queries.items():
        run(binary, args.index, text)  # the page cache warm, as for a user's second query
        times = []
        first = ""
        for _ in range(args.runs):
            took, first = run(binary, args.index, text)
            times.append(took)
        print(
            f"| {kind} | `{text}` | {statistics.median(times):.2f} | {min(times):.2f} "
            f"| {first[:70]} |"
        )


if __name__ == "__main__":
    main()
