"""Spelling: how often a misspelt query's suggestion is the query as meant, and how fast.

A script, not a test. From real titles of the corpus (seeded), it takes runs of two to
four words of at least four letters, as a person would type them, and misspells them the
four ways people do (a letter left out, two swapped, one replaced, one added): once for
the one-typo set, twice for the two-typo set (in the same word or two). A misspelling that
happens to be a word of the index is drawn again (no checker that looks at single words
can see it). Each query goes to ``SearchService.suggest``, as the page asks for it; the
suggestion is right when it is the query as meant.

    .venv/bin/python bench/spelling.py                       # index in /tmp/pubsearch-shapes
    .venv/bin/python bench/spelling.py --index /tmp/arxiv-ix --queries 400
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pubsearch.search.service import SearchService

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"
LETTERS = "abcdefghijklmnopqrstuvwxyz"
_WORD = re.compile(r"[a-z]{4,}")


def titles(data: Path, count: int) -> list[str]:
    found = []
    with gzip.open(data, "rt", encoding="utf-8") as stream:
        for line in stream:
            found.append(json.loads(line)["title"])
            if len(found) >= count:
                break
    return found


def typo(word: str, rng: random.Random) -> str:
    at = rng.randrange(1, len(word))  # not the first letter: people rarely miss it
    kind = rng.choice(["delete", "transpose", "substitute", "insert"])
    if kind == "delete":
        return word[:at] + word[at + 1 :]
    if kind == "transpose" and at < len(word) - 1:
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    if kind == "insert":
        return word[:at] + rng.choice(LETTERS) + word[at:]
    return word[:at] + rng.choice(LETTERS.replace(word[at], "")) + word[at + 1 :]


def queries(
    service: SearchService, corpus_titles: list[str], count: int, typos: int, seed: int
) -> list[tuple[str, str]]:
    """(meant, typed) pairs."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    while len(out) < count:
        words = [w for w in _WORD.findall(rng.choice(corpus_titles).lower())]
        if len(words) < 2:
            continue
        size = rng.randint(2, min(4, len(words)))
        start = rng.randrange(len(words) - size + 1)
        meant = words[start : start + size]
        typed = list(meant)
        for _ in range(typos):
            at = rng.randrange(len(typed))
            for _attempt in range(20):
                candidate = typo(typed[at], rng)
                if candidate != typed[at] and not service.count_word(candidate):
                    typed[at] = candidate
                    break
        if typed != meant:
            out.append((" ".join(meant), " ".join(typed)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="corpus to index")
    parser.add_argument("--index", type=Path, default=Path("/tmp/pubsearch-shapes"))
    parser.add_argument("--queries", type=int, default=250, help="queries per set")
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    if not (args.index / "CURRENT").exists():
        binary = Path(sys.executable).parent / "pubsearch"
        subprocess.run(
            [str(binary), "index", "--index", str(args.index), str(args.data)], check=True
        )
    service = SearchService(args.index)
    started = time.perf_counter()
    service.prepare()
    print(f"spelling words and author names ready in {time.perf_counter() - started:.1f} s")
    corpus_titles = titles(args.data, 20_000)
    print(
        "| typos | queries | suggestion is the query meant | other suggestion | none "
        "| p50 ms | p95 ms |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for typos in (1, 2):
        pairs = queries(service, corpus_titles, args.queries, typos, args.seed + typos)
        right = other = 0
        times = []
        for meant, typed in pairs:
            begun = time.perf_counter()
            suggestion = service.suggest(typed)
            times.append((time.perf_counter() - begun) * 1000)
            if suggestion == meant:
                right += 1
            elif suggestion is not None:
                other += 1
        times.sort()
        n = len(pairs)
        print(
            f"| {typos} | {n} | {right / n:.1%} | {other / n:.1%} | {(n - right - other) / n:.1%} "
            f"| {statistics.median(times):.1f} | {times[int(0.95 * (n - 1))]:.1f} |"
        )
    service.close()


if __name__ == "__main__":
    main()
