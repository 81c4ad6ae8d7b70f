"""Loose matches: which matches of a relaxed query count, measured for candidate rules.

A script, not a test. A query of three or more bare words that fewer than 10 records have
whole is searched with any of its words (pubsearch.search.compiler);
pubsearch.search.wellmatched decides which of those matches match it *well*: what ``total``,
the pages and the facets describe.
This script scores that rule and the candidates it was chosen among, on each relaxed query:

* the development collections (SciFact train, Cranfield, NPL, ADI, as bench/relevance.py
  reads them; never SciFact's test split): of the judged-relevant records in the first 100
  of the ranking (all the matches ranked, as ``loose=1`` ranks them), the share a rule keeps;
  the median count of matches before (every match) and after; how many queries keep their
  first 10 records; nDCG@10 of the ranking cut to the rule's records, against the whole;
* the arXiv records of ``--data`` (an index of them in ``--arxiv-index``, built when
  missing): ``--samples`` abstracts pasted whole, and as many queries of 3 to 6 words of a
  title (seeded): whether the record itself is first and is kept, and the counts.

Each rule sees, per record, what the words' scoring gives (a record matches a rule or not
by the query and its own words alone): ``share`` is the BM25 score of the bare words over
the query's weight (their idfs times their boosts: what a record of average length having
each once scores), ``coverage`` the idf share of the query's words the record has, ``of
best`` the score over the best match's. ``n`` is how many bare words the query has. The
chosen rule's row is pubsearch's own code (wellmatched.split), not a copy of it.

    .venv/bin/pip install -e '.[bench]'
    PUBSEARCH_NO_VECTORS=1 .venv/bin/python bench/loose.py --work /tmp/pubsearch-loose
    PUBSEARCH_NO_VECTORS=1 .venv/bin/python bench/loose.py adi --no-arxiv
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from relevance import collection, measured, read_qrels

from pubsearch.cli import trec
from pubsearch.index.build import build_index
from pubsearch.index.lengths import field_lengths
from pubsearch.index.storage import current_generation, open_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search import ranking, wellmatched
from pubsearch.search.compiler import FUNCTION_WORDS, parse_text_query
from pubsearch.search.masks import query_mask
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService
from pubsearch.search.topdocs import match_scores

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"
TUNING = ["scifact:train", "cranfield", "npl", "adi"]
DEPTH = 100


@dataclass
class Relaxed:
    """One relaxed query: its matches (document numbers, ascending) and, for each, what
    the rules look at; the ranking of all the matches; the chosen rule's records."""

    docs: np.ndarray
    scores: np.ndarray
    share: np.ndarray
    coverage: np.ndarray
    of_best: np.ndarray
    parts: int
    ranking: list[int]
    chosen: np.ndarray  # over docs

    def without(self, doc: int) -> Relaxed:
        """The same query over an index without record ``doc`` (a text pasted from a paper
        the index does not hold): only the score of the best match changes."""
        keep = self.docs != doc
        scores = self.scores[keep]
        return Relaxed(
            docs=self.docs[keep],
            scores=scores,
            share=self.share[keep],
            coverage=self.coverage[keep],
            of_best=scores / scores.max(),
            parts=self.parts,
            ranking=[d for d in self.ranking if d != doc],
            chosen=self.chosen[keep],
        )


Rule = Callable[[Relaxed], np.ndarray]

RULES: dict[str, Rule] = {
    "every match (before)": lambda r: np.ones(len(r.docs), dtype=bool),
    "coverage >= 0.1": lambda r: r.coverage >= 0.1,
    "coverage >= 0.15": lambda r: r.coverage >= 0.15,
    "coverage >= 0.2": lambda r: r.coverage >= 0.2,
    "coverage >= max(0.1, 1.5/n)": lambda r: r.coverage >= max(0.1, 1.5 / r.parts),
    "score >= 0.2 of best": lambda r: r.of_best >= 0.2,
    "score >= 0.3 of best": lambda r: r.of_best >= 0.3,
    "share >= 0.15": lambda r: r.share >= 0.15,
    "share >= 0.2": lambda r: r.share >= 0.2,
    "share >= max(0.15, 1/n)": lambda r: r.share >= max(0.15, 1 / r.parts),
    "share >= max(0.125, 1.5/n)": lambda r: r.share >= max(0.125, 1.5 / r.parts),
    "share >= max(0.15, 2/n)": lambda r: r.share >= max(0.15, 2 / r.parts),
    "share >= max(0.2, 1.5/n)": lambda r: r.share >= max(0.2, 1.5 / r.parts),
    f"chosen: share >= max({wellmatched.SHARE}, {wellmatched.WORDS}/n), or every word": lambda r: (
        r.chosen
    ),
}


class Reader:
    """Reads queries as the search service does, over one open index."""

    def __init__(self, index_dir: Path) -> None:
        self.service = SearchService(index_dir)
        gen = current_generation(index_dir)
        assert gen is not None
        self.index = open_index(gen)
        from pubsearch.search import ranking as scoring

        self.searcher = self.index.searcher(weighting=scoring.weighting())
        reader = self.searcher.reader()
        self.size = reader.doc_count_all()
        self.live = np.array([not reader.is_deleted(d) for d in range(self.size)])
        self.ids = [self.searcher.stored_fields(d)["id"] for d in range(self.size)]
        self.number = {record_id: d for d, record_id in enumerate(self.ids)}
        self._lengths: dict[str, np.ndarray] = {}

    def lengths(self, fieldname: str) -> np.ndarray:
        if fieldname not in self._lengths:
            self._lengths[fieldname] = field_lengths(self.searcher.reader(), fieldname)
        return self._lengths[fieldname]

    def idf(self, stems: list[str]) -> list[float]:
        docs = self.searcher.doc_count_all()
        found = [self.searcher.doc_frequency("content", stem) for stem in stems]
        return [ranking.idf(docs, df) if df else 0.0 for df in found]

    def relaxed(self, text: str) -> Relaxed | None:
        """The query's matches and what the rules see of them; None when it is not relaxed."""
        parsed = parse_text_query(text, self.searcher.schema, self.idf)
        if parsed is None or parsed.strict is None or parsed.relaxed is None:
            return None
        strict = query_mask(self.searcher, parsed.strict, self.size) & self.live
        if parsed.choose(int(strict.sum())) is not parsed.relaxed:
            return None
        loose = query_mask(self.searcher, parsed.matching(parsed.relaxed), self.size) & self.live
        bare = list(parsed.bare)
        scored = match_scores(self.searcher, wq_or(bare), self.size, self.lengths)
        assert scored is not None
        weight = wellmatched.query_weight(bare, self.idf)
        covered = np.zeros(self.size)
        for part in bare:
            part_weight = wellmatched.query_weight([part], self.idf)
            covered += part_weight * query_mask(self.searcher, part, self.size)
        docs = np.flatnonzero(loose)
        scores = scored[1][docs]
        split = wellmatched.split(self.searcher, parsed, loose, strict, self.lengths, self.idf)
        hits = self.service.search(
            SearchRequest(q=text, page_size=DEPTH, highlight=False, loose=True, mode="lexical")
        ).hits
        return Relaxed(
            docs=docs,
            scores=scores,
            share=scores / weight,
            coverage=covered[docs] / weight,
            of_best=scores / scores.max(),
            parts=len(bare),
            ranking=[self.number[hit.id] for hit in hits],
            chosen=split.well[docs],
        )


def wq_or(parts: list[Any]) -> Any:
    from whoosh import query as wq

    return parts[0] if len(parts) == 1 else wq.Or(parts)


def kept(r: Relaxed, rule: Rule) -> set[int]:
    return set(r.docs[rule(r)].tolist())


def collections_table(specs: list[str], work: Path) -> None:
    """The rules on each development collection's relaxed queries."""
    results: dict[str, list[tuple[Relaxed, dict[int, int], str]]] = {}
    sizes: dict[str, int] = {}
    for spec in specs:
        coll = collection(spec)
        qrels = read_qrels(coll.qrels)
        index_dir = work / coll.directory.name
        if current_generation(index_dir) is None:
            build_index(index_dir, read_paths([coll.directory / "corpus.jsonl"], ReadReport()))
        reader = Reader(index_dir)
        sizes[coll.name] = int(reader.live.sum())
        rows = []
        started = time.perf_counter()
        for query in trec.read_queries(coll.queries):
            if query.id not in qrels:
                continue
            found = reader.relaxed(query.text)
            if found is None:
                continue
            judged = {
                reader.number[d]: g
                for d, g in qrels[query.id].items()
                if g > 0 and d in reader.number
            }
            rows.append((found, judged, query.id))
        results[coll.name] = rows
        print(
            f"{coll.name}: {len(rows)} relaxed queries ({time.perf_counter() - started:.0f} s)",
            file=sys.stderr,
        )
    names = list(results)
    print(
        "Of the judged-relevant records in the first 100: the share kept / median matches "
        "(share of the corpus) / queries whose first 10 are all kept / nDCG@10 of the cut "
        "ranking.\n"
    )
    print("| rule | pooled kept | " + " | ".join(names) + " |")
    print("|---|---:|" + "---|" * len(names))
    for name, rule in RULES.items():
        cells = []
        pooled = [0, 0]
        for coll_name in names:
            rows = results[coll_name]
            relevant = sum(1 for r, j, _ in rows for d in r.ranking if d in j)
            keeps = sum(1 for r, j, _ in rows for d in r.ranking if d in j and d in kept(r, rule))
            pooled[0] += keeps
            pooled[1] += relevant
            counts = [int(rule(r).sum()) for r, _, _ in rows]
            first_ten = sum(1 for r, _, _ in rows if set(r.ranking[:10]) <= kept(r, rule))
            qrels = {qid: {str(d): g for d, g in j.items()} for _, j, qid in rows}
            run = {
                qid: {str(d): float(DEPTH - i) for i, d in enumerate(cut(r, rule))}
                for r, _, qid in rows
            }
            ndcg = measured(qrels, run, [qid for _, _, qid in rows]).means["nDCG@10"]
            median = statistics.median(counts)
            cells.append(
                f"{keeps / max(relevant, 1):.1%} / {median:,.0f} ({median / sizes[coll_name]:.1%})"
                f" / {first_ten} of {len(rows)} / {ndcg:.4f}"
            )
        print(f"| {name} | {pooled[0] / max(pooled[1], 1):.1%} | " + " | ".join(cells) + " |")


def cut(r: Relaxed, rule: Rule) -> list[int]:
    """The ranking of the records a rule keeps (every match when it keeps none)."""
    chosen = kept(r, rule)
    return [d for d in r.ranking if d in chosen] if chosen else r.ranking


def arxiv_queries(data: Path, samples: int, seed: int) -> dict[str, list[tuple[str, str]]]:
    """(record id, query) pairs: abstracts pasted whole, and 3 to 6 words of a title."""
    with gzip.open(data, "rt", encoding="utf-8") as stream:
        records = [json.loads(line) for line in stream]
    rnd = random.Random(seed)
    abstracts: list[tuple[str, str]] = []
    titles: list[tuple[str, str]] = []
    for rec in rnd.sample(records, samples * 3):
        if len(abstracts) < samples and len(rec.get("abstract") or "") > 300:
            abstracts.append((rec["id"], rec["abstract"]))
        words = re.findall(r"[A-Za-z][A-Za-z-]{2,}", rec.get("title") or "")
        words = [w for w in words if w.lower() not in FUNCTION_WORDS]
        if len(words) >= 3 and len(titles) < samples * 2:
            chosen = sorted(rnd.sample(range(len(words)), rnd.randint(3, min(6, len(words)))))
            titles.append((rec["id"], " ".join(words[i] for i in chosen)))
    return {"pasted abstracts": abstracts, "3 to 6 words of a title": titles}


def arxiv_table(index_dir: Path, data: Path, samples: int, seed: int) -> None:
    if current_generation(index_dir) is None:
        print(f"building {index_dir} from {data} ...", file=sys.stderr)
        build_index(index_dir, read_paths([data], ReadReport()))
    reader = Reader(index_dir)
    size = int(reader.live.sum())
    for kind, queries in arxiv_queries(data, samples, seed).items():
        rows = []
        for record_id, text in queries:
            found = reader.relaxed(text)
            if found is not None:
                rows.append((found, reader.number[record_id]))
        first = sum(1 for r, own in rows if r.ranking[:1] == [own])
        print(
            f"\n{kind}: {len(rows)} of {len(queries)} relaxed, {size:,} records; the record "
            f"itself first in {first}. Per rule: the record kept / median matches / 90th "
            "percentile / median when the index does not hold the record itself.\n"
        )
        print("| rule | record kept | median | 90th percentile | median without the record |")
        print("|---|---:|---:|---:|---:|")
        for name, rule in RULES.items():
            counts = sorted(int(rule(r).sum()) for r, _ in rows)
            own = sum(1 for r, own in rows if own in kept(r, rule))
            median, tenth = statistics.median(counts), counts[int(0.9 * len(counts))]
            alone = statistics.median(int(rule(r.without(own)).sum()) for r, own in rows)
            print(f"| {name} | {own} of {len(rows)} | {median:,.0f} | {tenth:,} | {alone:,.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collections", nargs="*", default=TUNING, help="NAME[:SPLIT] or DIR")
    parser.add_argument("--work", type=Path, help="Keep the collections' indexes here.")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="arXiv records")
    parser.add_argument(
        "--arxiv-index",
        type=Path,
        default=Path("/tmp/pubsearch-loose-arxiv"),
        help="An index of --data (built when missing).",
    )
    parser.add_argument("--samples", type=int, default=150, help="Abstracts (and 2x titles).")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-arxiv", action="store_true", help="Only the collections.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pubsearch-loose-") as scratch:
        if args.collections:
            collections_table(args.collections, args.work or Path(scratch))
    if not args.no_arxiv:
        arxiv_table(args.arxiv_index, args.data, args.samples, args.seed)


if __name__ == "__main__":
    main()
