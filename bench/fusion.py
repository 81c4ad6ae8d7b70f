"""How to fuse keyword and semantic rankings: a grid over the tuning collections.

For each collection (default: SciFact's train split and the classic collections; never
SciFact's test split, which is run once by bench/relevance.py after choosing), this indexes
the corpus with vectors (kept in ``--work`` so that a second run embeds nothing), takes
pubsearch's keyword ranking (``mode=lexical``, the first ``--depth`` hits with their scores)
and every record's similarity to the query, and scores fusions of the two with nDCG@10:

- ``mix W``: pubsearch.search.semantic.fuse, the min-max score mix with semantic weight W;
- ``rrf K``: reciprocal rank fusion, 1/(K + rank) summed over both lists;
- ``semantic``: the similarity alone.

It also prints, for the similarity floor (what counts as a match by meaning), the share of
judged-relevant records at or above each floor and the mean number of records above it.

    .venv/bin/python bench/fusion.py
    .venv/bin/python bench/fusion.py scifact:train --weights 0.3 0.45 0.6
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
from relevance import Collection, collection, measured, read_qrels

from pubsearch.cli import trec
from pubsearch.index.build import build_index
from pubsearch.index.embedding import Embedder
from pubsearch.index.storage import current_generation, open_index
from pubsearch.index.vectors import embed_index, generation_table
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search import semantic
from pubsearch.search.service import SearchService

TUNING = ["scifact:train", "cranfield", "npl", "adi"]
Run = dict[str, dict[str, float]]


def indexed(coll: Collection, work: Path, embedder: Embedder) -> Path:
    """The collection's index with vectors, built (and embedded) if not yet in ``work``."""
    index_dir = work / coll.directory.name
    if current_generation(index_dir) is None:
        build_index(index_dir, read_paths([coll.directory / "corpus.jsonl"], ReadReport()))
    summary = embed_index(index_dir, embedder)
    if summary.embedded:
        rate = summary.embedded / summary.seconds
        print(f"{coll.name}: embedded {summary.embedded:,} ({rate:.1f}/s)", file=sys.stderr)
    return index_dir


def component_runs(
    index_dir: Path, queries: list[trec.BatchQuery], embedder: Embedder, depth: int
) -> tuple[dict[str, semantic.Ranked], dict[str, np.ndarray], list[str]]:
    """Each query's keyword ranking (score, docnum), its similarities, and the ids."""
    live = current_generation(index_dir)
    assert live is not None
    table = generation_table(live)
    assert table is not None
    meaning = semantic.SemanticIndex.from_table(table)
    ix = open_index(live)
    with ix.searcher() as searcher:
        ids = [searcher.stored_fields(d)["id"] for d in range(searcher.doc_count_all())]
    ix.close()
    docnum = {record_id: n for n, record_id in enumerate(ids)}
    vectors = embedder.embed([q.text for q in queries])
    service = SearchService(index_dir)
    lexical: dict[str, semantic.Ranked] = {}
    sims: dict[str, np.ndarray] = {}
    try:
        for query, vector in zip(queries, vectors, strict=True):
            hits = trec.search_hits(service, query.text, depth, mode="lexical")
            lexical[query.id] = [(float(h.score or 0.0), docnum[h.id]) for h in hits]
            sims[query.id] = meaning.similarities(vector)
    finally:
        service.close()
    return lexical, sims, ids


def as_run(ranked: semantic.Ranked, ids: list[str], top: int = 100) -> dict[str, float]:
    return {ids[d]: score for score, d in ranked[:top]}


def rrf(lexical: semantic.Ranked, sem: semantic.Ranked, k: int) -> semantic.Ranked:
    scores: dict[int, float] = {}
    for ranked in (lexical, sem):
        for rank, (_, doc) in enumerate(ranked, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(((s, d) for d, s in scores.items()), key=lambda p: (-p[0], p[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collections", nargs="*", default=TUNING)
    parser.add_argument("--work", type=Path, default=Path("/tmp/pubsearch-fusion"))
    parser.add_argument("--depth", type=int, default=semantic.DEPTH)
    parser.add_argument(
        "--weights", type=float, nargs="*", default=[0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7]
    )
    parser.add_argument("--floors", type=float, nargs="*", default=[0.2, 0.3, 0.35, 0.4, 0.5])
    args = parser.parse_args()
    embedder = Embedder()
    rows: dict[str, dict[str, float]] = {}
    floors: dict[str, list[tuple[float, float, float]]] = {}
    for spec in args.collections:
        coll = collection(spec)
        qrels = read_qrels(coll.qrels)
        queries = [q for q in trec.read_queries(coll.queries) if q.id in qrels]
        index_dir = indexed(coll, args.work, embedder)
        lexical, sims, ids = component_runs(index_dir, queries, embedder, args.depth)
        semantic_top = {
            q: semantic.top(s, semantic.matches(s, -1.0), args.depth) for q, s in sims.items()
        }
        variants: dict[str, Run] = {
            "lexical": {q: as_run(r, ids) for q, r in lexical.items()},
            "semantic": {q: as_run(r, ids) for q, r in semantic_top.items()},
        }
        for weight in args.weights:
            variants[f"mix {weight:g}"] = {
                q: as_run(semantic.fuse(lexical[q], semantic_top[q], sims[q], weight), ids)
                for q in lexical
            }
        for k in (20, 60):
            variants[f"rrf {k}"] = {
                q: as_run(rrf(lexical[q], semantic_top[q], k), ids) for q in lexical
            }
        qids = [q.id for q in queries]
        rows[coll.name] = {
            name: measured(qrels, run, qids).means["nDCG@10"] for name, run in variants.items()
        }
        docnum = {record_id: n for n, record_id in enumerate(ids)}
        floors[coll.name] = []
        for floor in args.floors:
            share = statistics.fmean(
                float(sims[q][docnum[d]] >= floor)
                for q in qids
                for d, rel in qrels[q].items()
                if rel > 0 and d in docnum
            )
            above = statistics.fmean(float((sims[q] >= floor).sum()) for q in qids)
            floors[coll.name].append((floor, share, above))
        print(f"{coll.name}: done", file=sys.stderr)

    names = list(next(iter(rows.values())))
    print("| fusion | " + " | ".join(rows) + " | mean ratio to lexical |")
    print("|---" * (len(rows) + 2) + "|")
    for name in names:
        ratios = [rows[c][name] / rows[c]["lexical"] for c in rows if rows[c]["lexical"]]
        cells = " | ".join(f"{rows[c][name]:.4f}" for c in rows)
        print(f"| {name} | {cells} | {statistics.fmean(ratios):.3f} |")
    print()
    print(
        "| floor | " + " | ".join(f"{c}: relevant ≥ floor / records ≥ floor" for c in floors) + " |"
    )
    print("|---" * (len(floors) + 1) + "|")
    for i, floor in enumerate(args.floors):
        cells = " | ".join(f"{floors[c][i][1]:.1%} / {floors[c][i][2]:,.0f}" for c in floors)
        print(f"| {floor:g} | {cells} |")


if __name__ == "__main__":
    main()
