"""How fast ``pubsearch harvest arxiv`` adds records from a local OAI-PMH server.

Serves the first ``--size`` records of the arxiv-2024-2026 corpus in arXiv's ``arXiv``
metadata format, ``--page`` records a page (arXiv's own pages hold about 1,000), from the
test suite's server (tests/oai_server.py) on 127.0.0.1, and runs
``pubsearch harvest arxiv --delay 0`` into a fresh index in another process: records/s of
the whole harvest (fetch, parse, one index update a page), then the time of a second run
of the same command (from the latest datestamp), and of the whole list again (every
record comes back unchanged). ``--batch`` is passed on (1: an index update a page).

Run from the repository root, alone on the machine::

    .venv/bin/python bench/harvest.py --size 10000
"""

from __future__ import annotations

import argparse
import email.utils
import gzip
import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"
sys.path.insert(0, str(REPO / "tests"))

from oai_server import Repository, serving  # noqa: E402


def snapshot_object(line: dict[str, Any]) -> dict[str, Any]:
    """A corpus line in the arXiv snapshot's shape, which the server writes out."""
    day = datetime.strptime(line["date"], "%Y-%m-%d")
    parsed = []
    for name in line["authors"]:
        given, _, family = name.rpartition(" ")
        parsed.append([family, given, ""])
    return {
        "id": line["id"],
        "title": line["title"],
        "abstract": line["abstract"],
        "authors": ", ".join(line["authors"]),
        "authors_parsed": parsed,
        "categories": " ".join(line["categories"]),
        "versions": [{"version": "v1", "created": email.utils.format_datetime(day)}],
        "update_date": line["date"],
    }


def load(data: Path, size: int) -> list[dict[str, Any]]:
    objects = []
    with gzip.open(data, "rt", encoding="utf-8") as lines:
        for line in lines:
            objects.append(snapshot_object(json.loads(line)))
            if len(objects) >= size:
                break
    return objects


def run(url: str, index_dir: Path, *options: str) -> tuple[float, str]:
    argv = [sys.executable, "-m", "pubsearch", "harvest", "arxiv", "--endpoint", url]
    argv += ["--delay", "0", "--index", str(index_dir), *options]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--page", type=int, default=1_000)
    parser.add_argument("--batch", default="5000", help="harvest's --batch")
    args = parser.parse_args()
    objects = load(args.data, args.size)
    repository = Repository(objects=objects, page_size=args.page)
    with tempfile.TemporaryDirectory() as tmp, serving(repository) as url:
        seconds, line = run(url, Path(tmp) / "index")
        print(line)
        print(
            f"first run: {len(objects):,} records in {seconds:.1f} s: "
            f"{len(objects) / seconds:,.0f} records/s"
        )
        seconds, line = run(url, Path(tmp) / "index", "--batch", args.batch)
        print(line)
        print(f"second run (from the latest datestamp): {seconds:.1f} s")
        again = ("--batch", args.batch, "--from", "1990-01-01")
        seconds, line = run(url, Path(tmp) / "index", *again)
        print(line)
        print(f"the whole list again (all unchanged): {seconds:.1f} s")


if __name__ == "__main__":
    main()
