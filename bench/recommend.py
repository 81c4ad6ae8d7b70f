"""Recommendations per tag, against arxiv-sanity-lite's method, on the 102,289 arXiv records.

The question a tag's recommendations answer: of the papers that come after today, which
are like the ones I tagged? Measured so:

* **Authors.** Of the authors with 15 or more papers, those with at least 5 dated before
  the cut-off (2026-05-01) and 3 on or after it are drawn (seeded). Each one's papers
  before the cut-off are a tag; both methods rank every record dated on or after the
  cut-off (16,854); recall@50 and recall@100 are the shares of the author's later papers
  among the first 50 and 100. No author name reaches either method: their features are the
  title and abstract only (shared co-authors alone would find most of them, which would
  measure an author filter, not a recommender).
* **Subjects.** Of the arXiv subjects with 30 or more papers before the cut-off and 15 to
  2,000 after it (primary or not), SUBJECTS are drawn; 20 of each subject's earlier
  papers (drawn) are a tag, and the subject's later papers are what it should find. No
  subject code reaches either method.
* **Tuning.** The first DEV_AUTHORS authors and DEV_SUBJECTS subjects drawn tune pubsearch's
  method (the weight of the sentence vectors, the shape of their similarity); the figures
  are of the others alone.
* **Baseline.** arxiv-sanity-lite's method: tf-idf of title and abstract (words and word
  pairs, sublinear tf, max_df 0.1, min_df 5, 20,000 features), a linear SVM (C 0.01,
  balanced classes) of the tag's papers against every other record, ranked by its margin.
* **pubsearch.** pubsearch.library.recommend: the same SVM, over a sample of the other
  records (fast enough for a page), plus the records' similarity in meaning to the tag's
  papers (the sentence vectors pubsearch stores: all-MiniLM-L6-v2, 128 word pieces).
* **Paired test.** Each tag's recall@100 by both methods, a sign-flip permutation test of
  the mean difference (two-sided, 100,000 permutations, seeded) and Wilcoxon's signed-rank
  test (scipy, when installed).

Sentence vectors: only the records the measure needs (those after the cut-off and the
tags' papers, about 20,000) are embedded, once, and kept in ``--work`` (default
/tmp/pubsearch-recommend). The speed of a warm recommendation list (a tag of 20 papers
over the whole index) is timed with ``--index DIR``: an index of all the records (built
here without vectors when DIR has none; the SVM needs none).

Run from the repository root::

    .venv/bin/python bench/recommend.py
    .venv/bin/python bench/recommend.py --index /tmp/follow-arxiv
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"
CUT_OFF = "2026-05-01"
SEED = 37
AUTHORS = 160
DEV_AUTHORS = 60
SUBJECTS = 60
DEV_SUBJECTS = 20
SUBJECT_TAG = 20
PERMUTATIONS = 100_000
MAX_TOKENS = 128

FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Paper:
    id: str
    date: str
    title: str
    abstract: str
    authors: tuple[str, ...]
    subjects: tuple[str, ...]


@dataclass(frozen=True)
class Task:
    """A tag (documents of the corpus) and the later papers it should find."""

    kind: str  # "author" or "subject"
    name: str
    tagged: tuple[int, ...]
    wanted: frozenset[int]


def read_papers(path: Path) -> list[Paper]:
    papers = []
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        for line in stream:
            raw = json.loads(line)
            papers.append(
                Paper(
                    raw["id"],
                    str(raw.get("date") or ""),
                    raw.get("title") or "",
                    raw.get("abstract") or "",
                    tuple(raw.get("authors") or ()),
                    tuple(raw.get("categories") or ()),
                )
            )
    return papers


def author_tasks(papers: list[Paper], rnd: random.Random) -> list[Task]:
    counts = Counter(name for p in papers for name in p.authors)
    split: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for doc, paper in enumerate(papers):
        for name in paper.authors:
            if counts[name] >= 15:
                split[name][paper.date >= CUT_OFF].append(doc)
    eligible = sorted(
        n for n, (before, after) in split.items() if len(before) >= 5 and len(after) >= 3
    )
    chosen = rnd.sample(eligible, min(AUTHORS, len(eligible)))
    return [
        Task("author", name, tuple(split[name][0]), frozenset(split[name][1])) for name in chosen
    ]


def subject_tasks(papers: list[Paper], rnd: random.Random) -> list[Task]:
    split: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for doc, paper in enumerate(papers):
        for subject in paper.subjects:
            split[subject][paper.date >= CUT_OFF].append(doc)
    eligible = sorted(
        s for s, (before, after) in split.items() if len(before) >= 30 and 15 <= len(after) <= 2000
    )
    chosen = rnd.sample(eligible, min(SUBJECTS, len(eligible)))
    tasks = []
    for subject in chosen:
        before, after = split[subject]
        tasks.append(
            Task("subject", subject, tuple(rnd.sample(before, SUBJECT_TAG)), frozenset(after))
        )
    return tasks


def needed_vectors(papers: list[Paper], tasks: list[Task]) -> list[int]:
    docs = {d for d, p in enumerate(papers) if p.date >= CUT_OFF}
    for task in tasks:
        docs.update(task.tagged)
    return sorted(docs)


def vectors_for(papers: list[Paper], docs: list[int], work: Path) -> dict[int, FloatArray]:
    """The sentence vectors of ``docs``, made once and kept in ``work`` by arXiv id."""
    from pubsearch.index.embedding import Embedder, record_text

    path = work / f"vectors-{MAX_TOKENS}t.npz"
    known: dict[str, FloatArray] = {}
    if path.exists():
        with np.load(path) as data:
            known = dict(zip(data["ids"].tolist(), data["vectors"], strict=True))
    missing = [d for d in docs if papers[d].id not in known]
    if missing:
        embedder = Embedder(max_tokens=MAX_TOKENS)
        started = time.perf_counter()
        for start in range(0, len(missing), 512):
            part = missing[start : start + 512]
            texts = [record_text(papers[d].title, papers[d].abstract) for d in part]
            for doc, vector in zip(part, embedder.embed(texts), strict=True):
                known[papers[doc].id] = vector.astype(np.float32)
            done = start + len(part)
            rate = done / (time.perf_counter() - started)
            print(f"  embedded {done:,} of {len(missing):,} ({rate:.0f}/s)", file=sys.stderr)
            if done % 4096 < 512 or done == len(missing):
                work.mkdir(parents=True, exist_ok=True)
                ids = np.asarray(list(known))
                np.savez(path, ids=ids, vectors=np.stack([known[i] for i in ids.tolist()]))
    return {d: known[papers[d].id] for d in docs}


def _features(papers: list[Paper], work: Path) -> Any:
    """The tf-idf matrix of every paper (pubsearch.library.recommend's), kept in ``work``."""
    from scipy import sparse

    from pubsearch.library import recommend

    path = work / "tfidf.npz"
    if path.exists():
        return sparse.load_npz(path).tocsr()
    features = recommend.text_features([f"{p.title}\n{p.abstract}" for p in papers])
    work.mkdir(parents=True, exist_ok=True)
    sparse.save_npz(path, features)
    return features


def recall(ranked: Sequence[int], wanted: frozenset[int], k: int) -> float:
    return len(set(ranked[:k]) & wanted) / len(wanted)


def sign_flip_p(differences: Sequence[float], rounds: int = PERMUTATIONS) -> float:
    """Two-sided p of the mean difference under random sign flips (seeded)."""
    diffs = np.asarray(differences, dtype=np.float64)
    observed = abs(diffs.mean())
    rng = np.random.default_rng(SEED)
    extreme = 0
    for start in range(0, rounds, 10_000):
        size = min(10_000, rounds - start)
        signs = rng.choice((-1.0, 1.0), size=(size, len(diffs)))
        extreme += int((np.abs((signs * diffs).mean(axis=1)) >= observed - 1e-12).sum())
    return (extreme + 1) / (rounds + 1)


def wilcoxon_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    try:
        from scipy.stats import wilcoxon
    except ImportError:
        return None
    if all(x == y for x, y in zip(a, b, strict=True)):
        return 1.0
    return float(wilcoxon(a, b, zero_method="zsplit").pvalue)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--work", type=Path, default=Path("/tmp/pubsearch-recommend"))
    parser.add_argument("--index", type=Path, help="time a warm list over this index too")
    parser.add_argument("--embed-only", action="store_true", help="make the vectors, stop")
    args = parser.parse_args(argv)
    papers = read_papers(args.data)
    rnd = random.Random(SEED)
    authors = author_tasks(papers, rnd)
    subjects = subject_tasks(papers, rnd)
    print(f"{len(papers):,} records; cut-off {CUT_OFF}; ", end="")
    print(f"{len(authors)} authors, {len(subjects)} subjects")
    docs = needed_vectors(papers, authors + subjects)
    vectors = vectors_for(papers, docs, args.work)
    if args.embed_only:
        return
    run(papers, authors, subjects, vectors, args)


GRID_WEIGHTS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
GRID_CLOSEST = (1, 3, 5, 10_000)  # 10,000: the mean over every tagged paper


@dataclass
class Prepared:
    """What each task's rankings are made of: the SVMs' margins, kept for the grid."""

    baseline: dict[str, FloatArray]
    sampled: dict[str, FloatArray]


def _key(task: Task) -> str:
    return f"{task.kind}:{task.name}"


def run(
    papers: list[Paper],
    authors: list[Task],
    subjects: list[Task],
    vectors: dict[int, FloatArray],
    args: argparse.Namespace,
) -> None:
    from pubsearch.library import recommend

    started = time.perf_counter()
    features = _features(papers, args.work)
    print(
        f"tf-idf of {len(papers):,} records: {features.shape[1]:,} features, "
        f"{time.perf_counter() - started:.0f} s"
    )
    size = len(papers)
    live = np.ones(size, dtype=np.bool_)
    candidates = np.asarray([p.date >= CUT_OFF for p in papers])
    matrix = np.zeros((size, 384), dtype=np.float32)
    present = np.zeros(size, dtype=np.bool_)
    for doc, vector in vectors.items():
        matrix[doc] = vector
        present[doc] = True

    # Meaning is needed of the candidates only: every other record's is left at -1.
    rows = np.flatnonzero(candidates & present)
    ranked_rows = matrix[rows]

    def all_similarities(tagged: npt.NDArray[np.int64]) -> FloatArray:
        """Each tagged paper's similarities (a row each) to every record, -1 but for the
        candidates with a vector."""
        sims = np.full((len(tagged), size), -1.0, dtype=np.float32)
        sims[:, rows] = matrix[tagged] @ ranked_rows.T
        return sims

    tasks = authors + subjects
    prepared = Prepared({}, {})
    meaning: dict[tuple[str, int], FloatArray] = {}
    # Each tag's scores, of the candidates only, kept in --work: a run with other fusion
    # settings does not train the SVMs again.
    among = np.flatnonzero(candidates)
    kept_path = args.work / f"scores-{SEED}-{len(tasks)}-{recommend.NEGATIVES}.npz"
    kept: dict[str, FloatArray] = {}
    if kept_path.exists():
        with np.load(kept_path) as data:
            kept = {name: data[name] for name in data.files}

    def full(part: FloatArray, fill: float) -> FloatArray:
        whole = np.full(size, fill, dtype=np.float32)
        whole[among] = part
        return whole

    started = time.perf_counter()
    for number, task in enumerate(tasks, start=1):
        key = _key(task)
        if f"b|{key}" in kept:
            prepared.baseline[key] = full(kept[f"b|{key}"], 0.0)
            prepared.sampled[key] = full(kept[f"s|{key}"], 0.0)
            for closest in GRID_CLOSEST:
                meaning[(key, closest)] = full(kept[f"m{closest}|{key}"], -1.0)
            continue
        tagged = np.asarray(task.tagged, dtype=np.int64)
        prepared.baseline[_key(task)] = recommend.svm_margins(features, tagged, live, None)
        prepared.sampled[_key(task)] = recommend.svm_margins(
            features, tagged, live, recommend.NEGATIVES
        )
        table = all_similarities(tagged)
        order = {int(doc): row for row, doc in enumerate(tagged)}
        for closest in GRID_CLOSEST:
            meaning[(_key(task), closest)] = recommend.meaning_scores(
                lambda doc, t=table, o=order: t[o[doc]], tagged, size, closest
            )
        kept[f"b|{key}"] = prepared.baseline[key][among]
        kept[f"s|{key}"] = prepared.sampled[key][among]
        for closest in GRID_CLOSEST:
            kept[f"m{closest}|{key}"] = meaning[(key, closest)][among]
        if number % 20 == 0:
            print(
                f"  {number} of {len(tasks)} tags ({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
            )
    if not kept_path.exists():
        np.savez(kept_path, **kept)

    def ranking(task: Task, weight: float, closest: int, sampled: bool = True) -> list[int]:
        margins = (prepared.sampled if sampled else prepared.baseline)[_key(task)]
        combined = recommend.standardised(margins, candidates)
        if weight > 0:
            sims = meaning[(_key(task), closest)]
            has = sims > -1
            combined = np.where(
                has,
                (1 - weight) * combined + weight * recommend.standardised(sims, candidates & has),
                combined,
            )
        return [doc for _, doc in recommend.ranked(combined, candidates, 100)]

    def mean_recall(chosen: list[Task], rank: Callable[[Task], list[int]], k: int) -> float:
        return statistics.fmean(recall(rank(t), t.wanted, k) for t in chosen)

    dev = authors[:DEV_AUTHORS] + subjects[:DEV_SUBJECTS]
    print(f"\ntuning on {DEV_AUTHORS} authors and {DEV_SUBJECTS} subjects (recall@100):")
    best = (-1.0, 0.0, 0)
    for closest in GRID_CLOSEST:
        row = []
        for weight in GRID_WEIGHTS:

            def rank(task: Task, w: float = weight, c: int = closest) -> list[int]:
                return ranking(task, w, c)

            value = statistics.fmean(
                [
                    mean_recall(authors[:DEV_AUTHORS], rank, 100),
                    mean_recall(subjects[:DEV_SUBJECTS], rank, 100),
                ]
            )
            row.append(f"{value:.4f}")
            best = max(best, (value, weight, closest))
        print(
            f"  closest {closest:>5}: "
            + "  ".join(f"w{w}={v}" for w, v in zip(GRID_WEIGHTS, row, strict=True))
        )
    _, weight, closest = best
    print(
        f"best on these: weight {weight}, closest {closest}; measured below with what "
        f"library.recommend ships ({recommend.MEANING_WEIGHT}, {recommend.CLOSEST})"
    )
    weight, closest = recommend.MEANING_WEIGHT, recommend.CLOSEST
    del dev

    print(f"\nmeasured on the others (weight {weight}, closest {closest}):")
    print(f"{'tags':<28}{'method':<26}{'R@50':>8}{'R@100':>8}")
    for label, chosen in (
        (f"{len(authors) - DEV_AUTHORS} authors", authors[DEV_AUTHORS:]),
        (f"{len(subjects) - DEV_SUBJECTS} subjects", subjects[DEV_SUBJECTS:]),
    ):
        methods: dict[str, Callable[[Task], list[int]]] = {
            "baseline (arxiv-sanity)": lambda t: ranking(t, 0.0, 1, sampled=False),
            "pubsearch, words only": lambda t: ranking(t, 0.0, 1),
            "pubsearch": lambda t: ranking(t, weight, closest),
        }
        per: dict[str, list[float]] = {}
        for name, rank in methods.items():
            r50 = [recall(rank(t), t.wanted, 50) for t in chosen]
            per[name] = [recall(rank(t), t.wanted, 100) for t in chosen]
            print(
                f"{label:<28}{name:<26}{statistics.fmean(r50):>8.4f}"
                f"{statistics.fmean(per[name]):>8.4f}"
            )
        base, ours = per["baseline (arxiv-sanity)"], per["pubsearch"]
        diffs = [b - a for a, b in zip(base, ours, strict=True)]
        wins = sum(d > 0 for d in diffs)
        losses = sum(d < 0 for d in diffs)
        ratio = statistics.fmean(ours) / statistics.fmean(base)
        wilcoxon = wilcoxon_p(base, ours)
        print(
            f"{'':<28}R@100 ratio {ratio:.3f}; better {wins}, worse {losses}, "
            f"same {len(diffs) - wins - losses}; sign-flip p {sign_flip_p(diffs):.2g}"
            + (f"; Wilcoxon p {wilcoxon:.2g}" if wilcoxon is not None else "")
        )
    if args.index is not None:
        time_warm(args.index, papers)


def time_warm(index_dir: Path, papers: list[Paper]) -> None:
    """A tag of 20 papers over the whole index: its recommendation list, cold then warm
    (the service's and the library's: what a server keeps); then the part of meaning alone
    (20 rows of similarities over every record), on vectors of the index's shape when the
    index has none."""
    from pubsearch.index import storage
    from pubsearch.library import recommend
    from pubsearch.library.follow import Library
    from pubsearch.search import semantic
    from pubsearch.search.service import SearchService

    if storage.current_generation(index_dir) is None:
        raise SystemExit(f"{index_dir}: no index (pubsearch index --no-vectors ... first)")
    library = Library(SearchService(index_dir))
    rnd = random.Random(SEED)
    ids = [p.id for p in rnd.sample(papers, 20)]
    library.tag("bench-speed", ids)
    try:
        print()
        for label in ("cold", "warm", "warm", "warm"):
            started = time.perf_counter()
            found = library.recommend("bench-speed", page_size=10)
            took = time.perf_counter() - started
            how = "words and meaning" if found.meaning else "words"
            print(
                f"recommend, a tag of {found.tagged} over {found.among:,} records, by {how} "
                f"({label}): {took:.3f} s"
            )
        _, meaning = library.service.meaning()
        if meaning is None:
            size = library.views().corpus.size
            rng = np.random.default_rng(SEED)
            codes = rng.integers(-127, 128, size=(size, 384), dtype=np.int8)
            scales = np.full(size, 1 / (127 * 8), dtype=np.float32)
            meaning = semantic.SemanticIndex("random", codes, scales, scales > 0)
            print("(the index has no vectors: meaning timed on random ones of its shape)")
        tagged = np.arange(0, 20 * 997, 997, dtype=np.int64)

        def similarities(doc: int) -> FloatArray:
            assert meaning is not None
            vector = meaning.vector(doc)
            assert vector is not None
            return meaning.similarities(vector)

        for _ in range(3):
            started = time.perf_counter()
            recommend.meaning_scores(
                similarities, tagged, meaning.codes.shape[0], recommend.CLOSEST
            )
            took = time.perf_counter() - started
        print(
            f"  + meaning of 20 tagged over {meaning.codes.shape[0]:,} records (warm): {took:.3f} s"
        )
    finally:
        library.untag("bench-speed", ids)


if __name__ == "__main__":
    main()
