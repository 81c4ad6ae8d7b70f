"""Ranking quality: pubsearch beside a reference BM25 on test collections, in one run.

A script, not a test. For each collection it indexes ``corpus.jsonl`` with pubsearch's own
reader, analyzers and scoring, searches the judged queries exactly as ``pubsearch batch``
does (same module, same SearchService), and scores the runs with ir-measures (pytrec_eval
underneath): nDCG@10, Recall@100 and MRR@10. Beside it, in the same run and on the same
queries, bm25s ranks the same records with title and text as one field (Snowball stems,
English stop words) at its own default parameters (k1 1.5, b 0.75) and at Lucene's (k1
1.2, b 0.75); the ratio is pubsearch's nDCG@10 over the better of the two.

A collection is a directory with ``corpus.jsonl`` (``{"_id", "title", "text"}``), the
queries (``queries.jsonl`` as BEIR's, or ``queries.tsv``: ``id<TAB>text``) and the
judgments (``qrels.tsv``, or ``qrels/SPLIT.tsv``), named on the command line as
``DIR`` or ``DIR:SPLIT``. The default is SciFact's train and test splits and the three
classic collections of ``../shared/data``::

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/relevance.py                         # all five
    .venv/bin/python bench/relevance.py scifact:train cranfield npl adi  # tuning set
    .venv/bin/python bench/relevance.py /data/beir/nfcorpus:test
    .venv/bin/python bench/relevance.py --mode hybrid --work /tmp/pubsearch-fusion

With ``--mode hybrid`` or ``semantic`` each corpus is indexed with vectors (the semantic
extra; tens of records a second, so keep them with ``--work``: bench/fusion.py uses the
same layout).

Tune on the development collections and SciFact's train split; run SciFact's test split
once, after choosing. ``--save FILE`` keeps each query's nDCG@10; ``--compare FILE`` sets
this run beside a saved one with a paired randomization test per collection and over the
pooled queries (the decision rule: a change must win on the pooled queries and not lose on
any collection by more than noise). The data is read where it lies, never copied into the
project (SciFact is CC BY-NC; the classic collections state no licence).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import bm25s
import ir_measures
import Stemmer
from ir_measures import RR, R, nDCG

from pubsearch.cli import trec
from pubsearch.index.build import build_index
from pubsearch.index.storage import current_generation
from pubsearch.index.vectors import embed_index
from pubsearch.ingest.readers import ReadReport, read_paths

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
DEFAULT_COLLECTIONS = ["scifact:train", "scifact:test", "cranfield", "npl", "adi"]
MEASURES = {"nDCG@10": nDCG @ 10, "R@100": R @ 100, "MRR@10": RR @ 10}
HITS = 100
# bm25s's own defaults, and Lucene's BM25Similarity.
REFERENCES = {"bm25s": (1.5, 0.75), "bm25s-lucene": (1.2, 0.75)}
PERMUTATIONS = 10_000


@dataclass
class Collection:
    name: str
    directory: Path
    queries: Path
    qrels: Path


@dataclass
class Scores:
    """Each measure's mean, and each query's nDCG@10."""

    means: dict[str, float]
    per_query: dict[str, float]
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)


def collection(spec: str) -> Collection:
    """``NAME`` (scifact, cranfield, npl, adi: under ../shared/data), ``DIR``, or either
    with ``:SPLIT``."""
    where, _, split = spec.partition(":")
    directory = Path(where)
    if not directory.is_dir():
        directory = SHARED / where if (SHARED / where).is_dir() else SHARED / "classic" / where
    if not (directory / "corpus.jsonl").is_file():
        raise SystemExit(f"{spec}: no corpus.jsonl in {directory}")
    queries = directory / "queries.jsonl"
    if not queries.is_file():
        queries = directory / "queries.tsv"
    qrels = directory / "qrels" / f"{split}.tsv" if split else directory / "qrels.tsv"
    if not queries.is_file() or not qrels.is_file():
        raise SystemExit(f"{spec}: expected queries.jsonl or .tsv and {qrels.name} in {directory}")
    name = directory.name + (f":{split}" if split else "")
    return Collection(name, directory, queries, qrels)


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``query-id<TAB>corpus-id<TAB>score`` lines (a header line is skipped)."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or (number == 1 and not parts[-1].strip().lstrip("-").isdigit()):
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return qrels


def read_corpus(path: Path) -> tuple[list[str], list[str]]:
    """Ids and texts (title and text as one field) of a corpus, for the reference."""
    ids, texts = [], []
    with path.open(encoding="utf-8") as stream:
        for line in stream:
            doc = json.loads(line)
            ids.append(str(doc["_id"]))
            texts.append(f"{doc.get('title') or ''} {doc.get('text') or ''}")
    return ids, texts


def measured(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], queries: Iterable[str]
) -> Scores:
    """The measures of ``run`` (query -> doc -> score); a query without hits scores 0."""
    qrel_list = [
        ir_measures.Qrel(q, d, rel) for q, docs in qrels.items() for d, rel in docs.items()
    ]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    per_measure: dict[str, dict[str, float]] = {name: {} for name in MEASURES}
    names = {measure: name for name, measure in MEASURES.items()}
    for metric in ir_measures.iter_calc(list(MEASURES.values()), qrel_list, scored):
        per_measure[names[metric.measure]][metric.query_id] = float(metric.value)
    queries = list(queries)
    means = {
        name: statistics.fmean(values.get(q, 0.0) for q in queries)
        for name, values in per_measure.items()
    }
    return Scores(means, {q: per_measure["nDCG@10"].get(q, 0.0) for q in queries})


def pubsearch_scores(
    coll: Collection,
    index_dir: Path,
    queries: list[trec.BatchQuery],
    qrels: dict,
    mode: str = "lexical",
) -> Scores:
    run: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    runs = trec.run_in_processes(index_dir, queries, processes=2, hits=HITS, mode=mode)  # type: ignore[arg-type]
    for query_run in runs:
        if query_run.error:
            print(f"error: {query_run.error}", file=sys.stderr)
        for line in query_run.lines:
            qid, _, docid, _, score, _ = line.split(" ")
            run.setdefault(qid, {})[docid] = float(score)
    scores = measured(qrels, run, (q.id for q in queries))
    scores.seconds = time.perf_counter() - started
    return scores


def reference_scores(
    ids: list[str],
    tokens: object,
    queries: list[trec.BatchQuery],
    qrels: dict,
    k1: float,
    b: float,
) -> Scores:
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
    retriever.index(tokens, show_progress=False)
    run: dict[str, dict[str, float]] = {}
    texts = [q.text for q in queries]
    query_tokens = bm25s.tokenize(
        texts, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
    )
    for query, words in zip(queries, query_tokens, strict=True):
        if not words:
            continue
        docs, values = retriever.retrieve([words], k=min(HITS, len(ids)), show_progress=False)
        run[query.id] = {
            ids[d]: float(v) for d, v in zip(docs[0].tolist(), values[0].tolist(), strict=True)
        }
    return measured(qrels, run, (q.id for q in queries))


def randomization_p(differences: list[float], seed: int = 7) -> float:
    """Two-sided p-value of a paired sign-flip randomization test of the mean difference."""
    if not differences:
        return 1.0
    observed = abs(sum(differences))
    rng = random.Random(seed)
    at_least = sum(
        abs(sum(d if rng.random() < 0.5 else -d for d in differences)) >= observed - 1e-12
        for _ in range(PERMUTATIONS)
    )
    return (at_least + 1) / (PERMUTATIONS + 1)


def print_table(rows: list[tuple[Collection, int, Scores, dict[str, Scores]]]) -> None:
    """The table of the run; the reference columns only when the references ran."""
    refs = list(REFERENCES) if rows and rows[0][3] else []
    head = "| collection | queries | pubsearch nDCG@10 | R@100 | MRR@10 | "
    head += "".join(f"{r} nDCG@10 | " for r in refs) + ("ratio | " if refs else "")
    print(head + "s/query |")
    print("|---|---:|---:|---:|---:|" + "---:|" * (len(refs) + (1 if refs else 0)) + "---:|")
    ratios = []
    for coll, count, ours, theirs in rows:
        cells = f"| {coll.name} | {count} | {ours.means['nDCG@10']:.4f} "
        cells += f"| {ours.means['R@100']:.4f} | {ours.means['MRR@10']:.4f} | "
        if refs:
            best = max(theirs[r].means["nDCG@10"] for r in refs)
            ratio = ours.means["nDCG@10"] / best if best else float("nan")
            if not coll.name.endswith(":test"):
                ratios.append(ratio)
            cells += "".join(f"{theirs[r].means['nDCG@10']:.4f} | " for r in refs)
            cells += f"{ratio:.3f} | "
        print(cells + f"{ours.seconds / count:.3f} |")
    if ratios:
        print(
            "\nmean ratio over the collections other than test splits: "
            f"{statistics.fmean(ratios):.3f}"
        )


def print_comparison(
    rows: list[tuple[Collection, int, Scores, dict[str, Scores]]], saved: dict
) -> None:
    print("\n| collection | before | after | difference | better / worse | p (paired) |")
    print("|---|---:|---:|---:|---:|---:|")
    pooled: list[float] = []
    for coll, _, ours, _ in rows:
        before = saved.get(coll.name)
        if before is None:
            continue
        common = [q for q in ours.per_query if q in before]
        diffs = [ours.per_query[q] - before[q] for q in common]
        pooled += diffs
        print(
            f"| {coll.name} | {statistics.fmean(before[q] for q in common):.4f} "
            f"| {statistics.fmean(ours.per_query[q] for q in common):.4f} "
            f"| {statistics.fmean(diffs):+.4f} | {sum(d > 1e-9 for d in diffs)} / "
            f"{sum(d < -1e-9 for d in diffs)} | {randomization_p(diffs):.3f} |"
        )
    if pooled:
        print(
            f"| pooled | | | {statistics.fmean(pooled):+.4f} | {sum(d > 1e-9 for d in pooled)} / "
            f"{sum(d < -1e-9 for d in pooled)} | {randomization_p(pooled):.3f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "collections", nargs="*", default=DEFAULT_COLLECTIONS, help="NAME[:SPLIT] or DIR[:SPLIT]"
    )
    parser.add_argument("--save", type=Path, help="Write each query's nDCG@10 here (JSON).")
    parser.add_argument("--compare", type=Path, help="A file written by --save to compare with.")
    parser.add_argument("--no-reference", action="store_true", help="Skip the bm25s runs.")
    parser.add_argument(
        "--mode",
        choices=["lexical", "hybrid", "semantic"],
        default="lexical",
        help="pubsearch's mode; hybrid and semantic index each corpus with vectors.",
    )
    parser.add_argument(
        "--work",
        type=Path,
        help="Keep the indexes (and their vectors) here, reused by the next run with the "
        "same directory. Default: a temporary directory.",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="Cut each record's text to this many word pieces before embedding it "
        "(default: pubsearch's for a new index, embedding.RECORD_TOKENS).",
    )
    args = parser.parse_args()

    colls = [collection(spec) for spec in args.collections]
    rows = []
    embedder = None
    if args.mode != "lexical":
        from pubsearch.index.embedding import RECORD_TOKENS, Embedder

        # As pubsearch index cuts a new index's records (embedding.RECORD_TOKENS).
        embedder = Embedder(max_tokens=args.max_tokens or RECORD_TOKENS)
    with tempfile.TemporaryDirectory(prefix="pubsearch-relevance-") as scratch:
        tmp = args.work or Path(scratch)
        indexes: dict[Path, Path] = {}
        tokens_of: dict[Path, tuple[list[str], object]] = {}
        for coll in colls:
            qrels = read_qrels(coll.qrels)
            queries = [q for q in trec.read_queries(coll.queries) if q.id in qrels]
            if coll.directory not in indexes:
                index_dir = Path(tmp) / coll.directory.name
                if args.work is None or current_generation(index_dir) is None:
                    corpus = read_paths([coll.directory / "corpus.jsonl"], ReadReport())
                    build_index(index_dir, corpus)
                if embedder is not None:
                    embed_index(index_dir, embedder)
                indexes[coll.directory] = index_dir
            ours = pubsearch_scores(coll, indexes[coll.directory], queries, qrels, args.mode)
            theirs: dict[str, Scores] = {}
            if not args.no_reference:
                if coll.directory not in tokens_of:
                    ids, texts = read_corpus(coll.directory / "corpus.jsonl")
                    tokens = bm25s.tokenize(
                        texts,
                        stopwords="en",
                        stemmer=Stemmer.Stemmer("english"),
                        show_progress=False,
                    )
                    tokens_of[coll.directory] = (ids, tokens)
                ids, tokens = tokens_of[coll.directory]
                for name, (k1, b) in REFERENCES.items():
                    theirs[name] = reference_scores(ids, tokens, queries, qrels, k1, b)
            rows.append((coll, len(queries), ours, theirs))
            print(f"{coll.name}: nDCG@10 {ours.means['nDCG@10']:.4f}", file=sys.stderr)
    print_table(rows)
    if args.save:
        saved = {coll.name: ours.per_query for coll, _, ours, _ in rows}
        args.save.write_text(json.dumps(saved, indent=1), encoding="utf-8")
    if args.compare:
        print_comparison(rows, json.loads(args.compare.read_text(encoding="utf-8")))


if __name__ == "__main__":
    main()
