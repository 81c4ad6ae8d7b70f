"""Relevance benchmark: pubsearch's ranking on a BEIR test collection (default: SciFact).

A script, not a test. It indexes the collection's ``corpus.jsonl`` into a temporary index
with pubsearch's own reader, analyzers and scoring, searches the queries of each split
exactly as ``pubsearch batch`` does (same module, same SearchService), writes TREC runs,
and prints nDCG@10, Recall@100 and MRR@10 computed by ir-measures (pytrec_eval underneath)
next to published BM25 figures.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/relevance.py                       # ../shared/data/scifact
    .venv/bin/python bench/relevance.py --split train         # what ranking was tuned on
    .venv/bin/python bench/relevance.py --data /path/to/beir/nfcorpus --index /tmp/nf-ix

Tune on ``train`` only; ``test`` is for reporting. The data is not part of the project
(SciFact is CC BY-NC): it is read where it lies.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import ir_measures
from ir_measures import RR, R, nDCG

from pubsearch import batch
from pubsearch.indexing import build_index
from pubsearch.readers import ReadReport, read_paths
from pubsearch.searching import SearchService

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "scifact"
MEASURES = {"nDCG@10": nDCG @ 10, "Recall@100": R @ 100, "MRR@10": RR @ 10}

# Published BM25 on SciFact's test split (nDCG@10 only).
PUBLISHED = [
    ("BM25, BEIR paper (Elasticsearch)", 0.665),
    ("BM25, Anserini multifield", 0.6647),
    ("BM25, Anserini, title and text as one field", 0.6789),
]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``query-id<TAB>corpus-id<TAB>score`` lines (a header line is skipped)."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            parts = line.rstrip("\n").split("\t")
            if number == 1 and not parts[-1].strip().lstrip("-").isdigit():
                continue
            if len(parts) < 3:
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return qrels


def build(data: Path, index_dir: Path) -> float:
    """Index ``data/corpus.jsonl`` as ``pubsearch index`` would; returns the seconds taken."""
    started = time.perf_counter()
    report = ReadReport()
    summary = build_index(index_dir, read_paths([data / "corpus.jsonl"], report))
    took = time.perf_counter() - started
    print(
        f"indexed {summary.indexed:,} records ({summary.duplicates_merged} merged, "
        f"{len(report.problems)} skipped) in {took:.1f} s",
        file=sys.stderr,
    )
    return took


def timed_run(
    service: SearchService, queries: list[batch.BatchQuery], hits: int, latencies: list[float]
) -> Iterator[str]:
    """``batch.run`` one query at a time, noting how long each took."""
    for query in queries:
        started = time.perf_counter()
        lines = list(batch.run(service, [query], hits=hits))
        latencies.append(time.perf_counter() - started)
        yield from lines


def evaluate(
    service: SearchService, data: Path, split: str, hits: int, runs: Path
) -> dict[str, float]:
    qrels = read_qrels(data / "qrels" / f"{split}.tsv")
    queries = [q for q in batch.read_queries(data / "queries.jsonl") if q.id in qrels]
    latencies: list[float] = []
    run_file = runs / f"pubsearch-{data.name}-{split}.run"
    with run_file.open("w", encoding="utf-8") as out:
        for line in timed_run(service, queries, hits, latencies):
            out.write(line + "\n")
    run = list(ir_measures.read_trec_run(str(run_file)))
    qrel_list = [
        ir_measures.Qrel(qid, doc, rel) for qid, docs in qrels.items() for doc, rel in docs.items()
    ]
    scores = ir_measures.calc_aggregate(list(MEASURES.values()), qrel_list, run)
    out_scores = {name: float(scores[measure]) for name, measure in MEASURES.items()}
    latencies.sort()
    out_scores["queries"] = len(queries)
    out_scores["p50 ms"] = statistics.median(latencies) * 1000
    out_scores["p95 ms"] = latencies[int(0.95 * (len(latencies) - 1))] * 1000
    print(f"{split}: run written to {run_file}", file=sys.stderr)
    return out_scores


def print_table(name: str, results: dict[str, dict[str, float]]) -> None:
    print(f"\n{name}: pubsearch vs published BM25\n")
    print(f"| system | split | queries | {' | '.join(MEASURES)} | p50 / p95 ms per query |")
    print("|---|---|---:|" + "---:|" * len(MEASURES) + "---:|")
    for split, scores in results.items():
        cells = " | ".join(f"{scores[m]:.4f}" for m in MEASURES)
        print(
            f"| pubsearch | {split} | {scores['queries']:.0f} | {cells} | "
            f"{scores['p50 ms']:.0f} / {scores['p95 ms']:.0f} |"
        )
    if name.lower() == "scifact":
        for system, ndcg in PUBLISHED:
            print(f"| {system} | test | 300 | {ndcg:.4f} | | | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="BEIR collection directory."
    )
    parser.add_argument(
        "--split",
        action="append",
        choices=["train", "dev", "test"],
        help="Split(s) to evaluate (repeatable). Default: train and test.",
    )
    parser.add_argument("--hits", type=int, default=batch.DEFAULT_HITS, help="Hits per query.")
    parser.add_argument(
        "--index", type=Path, help="Index directory to reuse (built there when missing)."
    )
    parser.add_argument("--runs", type=Path, help="Where to keep the run files. Default: temp.")
    args = parser.parse_args()

    data: Path = args.data
    if not (data / "corpus.jsonl").is_file() or not (data / "queries.jsonl").is_file():
        parser.error(f"{data} has no corpus.jsonl and queries.jsonl (a BEIR collection)")
    splits = args.split or [s for s in ("train", "test") if (data / "qrels" / f"{s}.tsv").exists()]
    with tempfile.TemporaryDirectory(prefix="pubsearch-relevance-") as tmp:
        index_dir = args.index or Path(tmp) / "index"
        if not (index_dir / "CURRENT").exists():
            build(data, index_dir)
        runs = args.runs or Path(tmp)
        runs.mkdir(parents=True, exist_ok=True)
        service = SearchService(index_dir)
        try:
            results = {split: evaluate(service, data, split, args.hits, runs) for split in splits}
        finally:
            service.close()
    print_table(data.name.replace("scifact", "SciFact"), results)


if __name__ == "__main__":
    main()
