"""How fast ``pubsearch harvest openalex``, ``crossref`` and ``arxiv --query`` add records
from a local server.

Serves the first ``--size`` records of the arxiv-2024-2026 corpus in each service's shape
(the test suite's server, tests/api_server.py, on 127.0.0.1), each service's largest page
(OpenAlex 100 works, Crossref 1,000, the arXiv API ``--max-results`` 1,000 here), and runs
the command with ``--delay 0`` into a fresh index in another process: records/s of the
whole harvest (fetch, parse, an index update a batch), then the time of a second run of
the same command (since the latest date it saw).

Run from the repository root, alone on the machine::

    .venv/bin/python bench/harvest_api.py --size 10000
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"
sys.path.insert(0, str(REPO / "tests"))

from api_server import Works, serving  # noqa: E402

PAGES = {
    "openalex": ["openalex", "--per-page", "100"],
    "crossref": ["crossref", "--rows", "1000"],
    "arxiv": ["arxiv", "--query", "cat:*", "--max-results", "1000"],
}


def load(data: Path, size: int) -> list[dict[str, Any]]:
    objects = []
    with gzip.open(data, "rt", encoding="utf-8") as lines:
        for line in lines:
            objects.append(json.loads(line))
            if len(objects) >= size:
                break
    return objects


def run(command: list[str], url: str, index_dir: Path) -> tuple[float, str]:
    argv = [sys.executable, "-m", "pubsearch", "harvest", *command, "--endpoint", url]
    argv += ["--delay", "0", "--index", str(index_dir)]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--source", choices=sorted(PAGES), action="append")
    args = parser.parse_args()
    objects = load(args.data, args.size)
    for service in args.source or sorted(PAGES):
        works = Works(service, objects)
        with tempfile.TemporaryDirectory() as tmp, serving(works) as url:
            seconds, line = run(PAGES[service], url, Path(tmp) / "index")
            print(f"{service}: {line}")
            print(
                f"{service}: {len(objects):,} records in {seconds:.1f} s: "
                f"{len(objects) / seconds:,.0f} records/s"
            )
            seconds, line = run(PAGES[service], url, Path(tmp) / "index")
            print(f"{service}: {line}")
            print(f"{service}: the same command again: {seconds:.1f} s")


if __name__ == "__main__":
    main()
