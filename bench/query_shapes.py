"""Query shapes: the slowest kinds of query, each timed the first time it is asked.

A script, not a test. Every search an engine answers fast on average hides a few shapes
that are slow: a match-all, a two-letter prefix that stands for thousands of words, a
phrase of the commonest words, an exclusion alone, a 64-word OR, the deepest page a
request may ask for, a pasted abstract, each sort order. Each shape here is searched in a
process of its own that has opened the index and answered one unrelated query (so the
index's opening is not counted, but nothing the shape reads is cached) and, as a server
does before it answers, built its generation's spelling words and author names
(``SearchService.prepare``; ``--cold`` leaves them to the first query that needs them, as a
one-off ``pubsearch query`` does), through the same
SearchService as the page, with facets counted as the page counts them; then again
``--repeat`` times warm. The table gives each shape's matches, its first time, and the
median and worst of the warm ones; the last line is the worst first time of all.

    .venv/bin/python bench/query_shapes.py                       # builds /tmp/pubsearch-shapes
    .venv/bin/python bench/query_shapes.py --index /tmp/arxiv-ix --repeat 9
    .venv/bin/python bench/query_shapes.py --only phrase          # shapes whose name has it

The index is built from ``--data`` (the 102,289 arXiv records by default) when the
directory holds none.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"
TARGET_MS = 300

COMMON = (
    "the of and in to a is we for that on with this by as are be an from our which at "
    "can it these its has or not have was such their than also been both based between "
    "using into more other show new two only over results method model data"
).split()


def shapes(pasted: str) -> list[tuple[str, str, dict[str, object]]]:
    """(name, query text, other request parameters) of every shape."""
    deepest = {"page": 100, "page_size": 100}
    return [
        ("match-all", "*", {}),
        ("match-all, oldest first", "*", {"sort": "oldest"}),
        ("match-all, deepest page", "*", {**deepest, "sort": "newest"}),
        ("word AND match-all", "learning AND *", {}),
        ("word, no match-all", "learning -*", {}),
        ("field has a value: title", "title:*", {}),
        ("field has a value: subject", "subject:*", {}),
        ("field has a value: author", "author:*", {}),
        ("NOT only: common word", "-the", {}),
        ("NOT only: NOT word", "NOT learning", {}),
        ("prefix, 2 letters: co*", "co*", {}),
        ("prefix, 2 letters: re*", "re*", {}),
        ("prefix, 2 letters: th*", "th*", {}),
        ("prefix, 2 letters: in*", "in*", {}),
        ("prefix in a field: ti:de*", "ti:de*", {}),
        ("wildcard: ne?ral*", "ne?ral*", {}),
        ("wildcard: c*on", "co*on", {}),
        ("leading wildcard (a word)", "*ing", {}),
        ("phrase: of the", '"of the"', {}),
        ("phrase: in the", '"in the"', {}),
        ("phrase: one of the most", '"one of the most"', {}),
        ("phrase: on the other hand", '"on the other hand"', {}),
        ("phrase with slop: the of~3", '"the of"~3', {}),
        ("OR of 64 common words", " OR ".join(COMMON[:64]), {}),
        ("64 common words side by side", " ".join(COMMON[:64]), {}),
        ("pasted abstract", pasted, {}),
        ("common word: relevance", "the", {}),
        ("common word: newest", "the", {"sort": "newest"}),
        ("common word: oldest", "the", {"sort": "oldest"}),
        ("deepest page: relevance", "the", deepest),
        ("deepest page: newest", "the", {**deepest, "sort": "newest"}),
        ("deepest page: oldest", "the", {**deepest, "sort": "oldest"}),
        ("deepest page: pasted", pasted, deepest),
        ("fields and filters", "author:wang cat:cs.* year:2020..2025 learning", {}),
        ("relaxed words and a field", "author:li graph neural network medical imaging", {}),
    ]


# Run in a process of its own: open, warm up with another query, time each shape given
# (a JSON list of [text, params]) the first time and ``repeat`` times more.
CHILD = r"""
import json, sys, time
from pathlib import Path
from typing import Any
from pubsearch.search.service import SearchService
from pubsearch.search.request import SearchRequest
index, asked, repeat = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
prepare = sys.argv[4] == "1"
service = SearchService(Path(index))
if prepare:
    service.prepare()
service.search(SearchRequest(q="warm up", facets=True))
for text, params in asked:
    times = []
    total = None
    for _ in range(1 + repeat):
        started = time.perf_counter()
        total = service.search(SearchRequest(q=text, facets=True, **params)).total
        times.append((time.perf_counter() - started) * 1000)
    print(json.dumps({"total": total, "times": times}), flush=True)
"""


def run_shapes(
    index: Path, asked: list[tuple[str, dict[str, object]]], repeat: int, prepare: bool
) -> list[dict[str, Any]]:
    """Search each (text, params) of ``asked`` in one new process, in order: for each, the
    number of matches (``total``) and the milliseconds of each run (``times``)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(index),
            json.dumps(asked),
            str(repeat),
            "1" if prepare else "0",
        ],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    return [json.loads(line) for line in out.stdout.splitlines()]


def pasted_abstract(data: Path) -> str:
    """About 5,000 characters of real abstracts, as a user pastes a long text."""
    text = ""
    with gzip.open(data, "rt", encoding="utf-8") as stream:
        for line in stream:
            text += " " + json.loads(line)["abstract"]
            if len(text) > 5_000:
                return text.strip()
    return text.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="corpus to index")
    parser.add_argument(
        "--index", type=Path, default=Path("/tmp/pubsearch-shapes"), help="built when empty"
    )
    parser.add_argument("--repeat", type=int, default=5, help="warm runs after the first")
    parser.add_argument("--only", help="only the shapes whose name contains this")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="skip SearchService.prepare (as a one-off CLI query: the first query that "
        "needs spelling or author names builds them)",
    )
    args = parser.parse_args()

    binary = Path(sys.executable).parent / "pubsearch"
    if not (args.index / "CURRENT").exists():
        print(f"building {args.index} from {args.data} ...", file=sys.stderr)
        subprocess.run(
            [str(binary), "index", "--index", str(args.index), str(args.data)], check=True
        )
    records = subprocess.run(
        [str(binary), "stats", "--index", str(args.index), "--format", "json"],
        check=True,
        capture_output=True,
        text=True,
    )
    count = json.loads(records.stdout)["records"]
    pasted = pasted_abstract(args.data)
    how = "not prepared" if args.cold else "prepared as a server prepares"
    print(
        f"{count:,} records in {args.index}; each process {how}; "
        f"load average {os.getloadavg()[0]:.2f}\n"
    )
    print("| shape | matches | first ms | warm median ms | warm max ms |")
    print("|---|---:|---:|---:|---:|")
    worst = ("", 0.0)
    for name, text, params in shapes(pasted):
        if args.only and args.only not in name:
            continue
        (result,) = run_shapes(args.index, [(text, params)], args.repeat, not args.cold)
        first, warm = result["times"][0], result["times"][1:] or result["times"]
        print(
            f"| {name} | {result['total']:,} | {first:.0f} | {statistics.median(warm):.0f} "
            f"| {max(warm):.0f} |",
            flush=True,
        )
        if first > worst[1]:
            worst = (name, first)
    verdict = "under" if worst[1] < TARGET_MS else "OVER"
    print(f"\nworst first time: {worst[1]:.0f} ms ({worst[0]}), {verdict} {TARGET_MS} ms")


if __name__ == "__main__":
    main()
