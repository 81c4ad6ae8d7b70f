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
  method (Rocchio's weight of the mean record, the weight of meaning); the figures are of
  the others alone.
* **Baseline.** arxiv-sanity-lite's method: tf-idf of title and abstract (words and word
  pairs, sublinear tf, max_df 0.1, min_df 5, the 20,000 most frequent), a linear SVM
  (scikit-learn's LinearSVC, C 0.01, balanced classes) of the tag's papers against every
  other record, ranked by its margin.
* **pubsearch.** pubsearch.library.recommend: tf-idf with every word and pair of two
  records or more, ranked by Rocchio's classifier (the tag's centre less the mean record)
  and each record's cosine with the tagged record nearest to it, joined by the records'
  likeness in meaning to the tag's papers (the sentence vectors pubsearch stores:
  all-MiniLM-L6-v2, 128 word pieces), and (since 7 December 2026) the margins of a linear
  SVM of the tag's papers against 5,000 other records drawn at random, by words and by
  meaning.
* **Fresh authors** (``--fresh N``): N other eligible authors (drawn with seed 38, none of
  the 160), measured with the settings shipped and nothing else: a held-out set that no
  choice was made on (until the nearest record's weight was tuned on them, below).
* **The nearest record** (``--tune-nearest``): the weight of a record's likeness to the
  tagged record nearest to it by words, and meaning's weight, on a grid over the 160
  authors, 300 fresh ones (seed 38) and the 20 tuning subjects; no baseline is needed.
* **The tag against the rest** (``--tune-contrast``): the weights of the SVM's margins by
  words and by meaning, on a grid over the 60 tuning authors and the 20 tuning subjects,
  each subject drawn three times (its tag of 20 earlier papers drawn again with seeds 101
  and 102: 60 subject tags), as shares of the baseline's recall@100.
* **Held out** (``--holdout N``): N authors drawn with seed 39, none of the 160 nor of the
  300 fresh ones, and the 40 reported subjects, measured once with the settings shipped.
* **Paired test.** Each tag's recall@100 by both methods, a sign-flip permutation test of
  the mean difference (two-sided, 100,000 permutations, seeded) and Wilcoxon's signed-rank
  test (scipy, when installed).

Sentence vectors: only the records the measure needs (those after the cut-off and the
tags' papers, about 20,000) are embedded, once, and kept in ``--work`` (default
/tmp/pubsearch-recommend). The speed of a warm recommendation list (a tag of 20 papers
over the whole index) is timed with ``--index DIR``: an index of all the records (built
here without vectors when DIR has none; words need none).

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
FRESH = 300  # the fresh authors' draw (seed 38) that --holdout and --tune-nearest leave out

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


def author_tasks(
    papers: list[Paper],
    rnd: random.Random,
    count: int = AUTHORS,
    exclude: frozenset[str] = frozenset(),
) -> list[Task]:
    """``count`` eligible authors drawn by ``rnd`` (none of ``exclude``), each a task."""
    counts = Counter(name for p in papers for name in p.authors)
    split: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for doc, paper in enumerate(papers):
        for name in paper.authors:
            if counts[name] >= 15:
                split[name][paper.date >= CUT_OFF].append(doc)
    eligible = sorted(
        n
        for n, (before, after) in split.items()
        if len(before) >= 5 and len(after) >= 3 and n not in exclude
    )
    chosen = rnd.sample(eligible, min(count, len(eligible)))
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


def _features(papers: list[Paper], work: Path, name: str, **settings: Any) -> Any:
    """A tf-idf matrix of every paper (pubsearch.library.recommend's, with ``settings``),
    kept in ``work``."""
    from scipy import sparse

    from pubsearch.library import recommend

    path = work / f"tfidf-{name}.npz"
    if path.exists():
        return sparse.load_npz(path).tocsr()
    texts = [f"{p.title}\n{p.abstract}" for p in papers]
    features = recommend.text_features(texts, **settings)
    work.mkdir(parents=True, exist_ok=True)
    sparse.save_npz(path, features)
    return features


def svm_margins(features: Any, tagged: npt.NDArray[np.int64]) -> FloatArray:
    """arxiv-sanity-lite's ranking: a linear SVM's margin of every record, the tagged
    against all the others."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    labels = np.zeros(features.shape[0], dtype=np.int8)
    labels[tagged] = 1
    svm = LinearSVC(class_weight="balanced", max_iter=10_000, tol=1e-6, C=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(features, labels)
    margins = features @ svm.coef_[0].astype(np.float32) + np.float32(svm.intercept_[0])
    return np.asarray(margins, dtype=np.float32).ravel()


class MatrixMeaning:
    """pubsearch.library.recommend.Meaning over the bench's float vectors."""

    def __init__(self, matrix: FloatArray, present: npt.NDArray[np.bool_]) -> None:
        self.matrix = matrix
        self._present = present

    @classmethod
    def of(cls, vectors: dict[int, FloatArray], size: int) -> MatrixMeaning:
        """The ``vectors`` of some of ``size`` records (by document number)."""
        matrix = np.zeros((size, 384), dtype=np.float32)
        present = np.zeros(size, dtype=np.bool_)
        for doc, vector in vectors.items():
            matrix[doc] = vector
            present[doc] = True
        return cls(matrix, present)

    @property
    def present(self) -> npt.NDArray[np.bool_]:
        return self._present

    def vector(self, docnum: int) -> FloatArray | None:
        return self.matrix[docnum] if self._present[docnum] else None

    def similarities(self, vector: FloatArray) -> FloatArray:
        sims = np.asarray(self.matrix @ vector, dtype=np.float32)
        sims[~self._present] = -1.0
        return sims


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
    parser.add_argument(
        "--fresh",
        type=int,
        metavar="N",
        help="measure only, on N other authors drawn anew (seed 38, none of the 160): a "
        "held-out set no choice was made on",
    )
    parser.add_argument(
        "--holdout",
        type=int,
        metavar="N",
        help="measure only, on N authors drawn with seed 39 (none of the 160 nor of the 300 "
        "fresh ones), and on the 40 reported subjects",
    )
    parser.add_argument(
        "--tune-contrast",
        action="store_true",
        help="the grid of the SVM's weights (the tag against the rest, by words and by "
        "meaning), on the 60 tuning authors and the 20 tuning subjects, each drawn three times",
    )
    parser.add_argument(
        "--tune-nearest",
        action="store_true",
        help="the grid of the nearest record's weight and meaning's, on the 160 authors, "
        "300 fresh ones and the 20 tuning subjects",
    )
    args = parser.parse_args(argv)
    papers = read_papers(args.data)
    rnd = random.Random(SEED)
    authors = author_tasks(papers, rnd)
    subjects = subject_tasks(papers, rnd)
    drawn = frozenset(t.name for t in authors)
    count = args.fresh or (FRESH if args.holdout or args.tune_nearest else 0)
    fresh = author_tasks(papers, random.Random(SEED + 1), count, exclude=drawn) if count else []
    held: list[Task] = []
    if args.holdout:
        seen = drawn | frozenset(t.name for t in fresh)
        held = author_tasks(papers, random.Random(SEED + 2), args.holdout, exclude=seen)
    print(f"{len(papers):,} records; cut-off {CUT_OFF}; ", end="")
    print(
        f"{len(authors)} authors, {len(subjects)} subjects, {len(fresh)} fresh authors, "
        f"{len(held)} held out"
    )
    redrawn: list[Task] = []
    if args.tune_contrast:
        redrawn = redrawn_subjects(papers, subjects[:DEV_SUBJECTS], REDRAW_SEEDS)
    docs = needed_vectors(papers, authors + subjects + fresh + held + redrawn)
    vectors = vectors_for(papers, docs, args.work)
    if args.embed_only:
        return
    if args.tune_contrast:
        chosen = subjects[:DEV_SUBJECTS] + redrawn
        tune_contrast(papers, authors[:DEV_AUTHORS], chosen, vectors, args.work)
        return
    if args.tune_nearest:
        tune_nearest(papers, authors + fresh, subjects[:DEV_SUBJECTS], vectors, args.work)
        return
    if held:
        run(papers, authors, subjects, vectors, args, held, subjects[DEV_SUBJECTS:])
        return
    run(papers, authors, subjects, vectors, args, fresh)


GRID_COMMON = (0.0, 0.5, 1.0, 2.0)
GRID_WEIGHTS = (0.0, 0.2, 0.3, 0.4, 0.5)


def _key(task: Task) -> str:
    return f"{task.kind}:{task.name}"


def baseline_margins(
    tasks: Sequence[Task], baseline_features: Any, among: npt.NDArray[np.int64], work: Path
) -> dict[str, FloatArray]:
    """The baseline's SVM margins of the candidates (``among``) for each task, by
    :func:`_key`: kept in ``work`` (the slow part), made for the tasks not kept yet."""
    kept_path = work / f"baseline-{SEED}.npz"
    kept: dict[str, FloatArray] = {}
    if kept_path.exists():
        with np.load(kept_path) as data:
            kept = {name: data[name] for name in data.files}
    started = time.perf_counter()
    for number, task in enumerate(tasks, start=1):
        if _key(task) not in kept:
            tagged = np.asarray(task.tagged, dtype=np.int64)
            kept[_key(task)] = svm_margins(baseline_features, tagged)[among]
        if number % 20 == 0:
            print(
                f"  baseline: {number} of {len(tasks)} tags "
                f"({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
            )
    np.savez(kept_path, **kept)
    return kept


def run(
    papers: list[Paper],
    authors: list[Task],
    subjects: list[Task],
    vectors: dict[int, FloatArray],
    args: argparse.Namespace,
    fresh: list[Task],
    fresh_subjects: Sequence[Task] = (),
) -> None:
    """With ``fresh`` tasks, measure on them alone (and on ``fresh_subjects``); else tune
    on the first authors and subjects and measure on the others."""
    from pubsearch.library import recommend

    started = time.perf_counter()
    baseline_features = _features(papers, args.work, "20k", vocabulary=20_000, min_df=5)
    features = _features(papers, args.work, "all")
    print(
        f"tf-idf of {len(papers):,} records: {baseline_features.shape[1]:,} features "
        f"(baseline), {features.shape[1]:,} (pubsearch), {time.perf_counter() - started:.0f} s"
    )
    size = len(papers)
    candidates = np.asarray([p.date >= CUT_OFF for p in papers])
    among = np.flatnonzero(candidates)
    meaning = MatrixMeaning.of(vectors, size)
    common = recommend.column_means(features, np.ones(size, dtype=np.bool_))
    tasks = [*fresh, *fresh_subjects] if fresh else authors + subjects

    kept = baseline_margins(tasks, baseline_features, among, args.work)

    def top(values: FloatArray) -> list[int]:
        return [doc for _, doc in recommend.ranked(values, candidates, 100)]

    def baseline(task: Task) -> list[int]:
        values = np.zeros(size, dtype=np.float32)
        values[among] = kept[_key(task)]
        return top(values)

    def ours(task: Task, method: recommend.Method) -> list[int]:
        tagged = np.asarray(task.tagged, dtype=np.int64)
        return top(recommend.scores(features, tagged, common, candidates, method, meaning))

    def mean_recall(chosen: list[Task], rank: Callable[[Task], list[int]], k: int) -> float:
        return statistics.fmean(recall(rank(t), t.wanted, k) for t in chosen)

    shipped = recommend.PUBSEARCH

    def measure(label: str, chosen: list[Task]) -> None:
        methods: dict[str, Callable[[Task], list[int]]] = {
            "baseline (arxiv-sanity)": baseline,
            "pubsearch until 5 Dec.": lambda t: ours(t, until_5_december()),
            "pubsearch until 7 Dec.": lambda t: ours(t, until_7_december()),
            "pubsearch, words only": lambda t: ours(t, recommend.WORDS_ONLY),
            "pubsearch": lambda t: ours(t, shipped),
        }
        per: dict[str, list[float]] = {}
        for name, rank in methods.items():
            ranked = [rank(t) for t in chosen]
            r50 = [recall(r, t.wanted, 50) for r, t in zip(ranked, chosen, strict=True)]
            per[name] = [recall(r, t.wanted, 100) for r, t in zip(ranked, chosen, strict=True)]
            print(
                f"{label:<28}{name:<26}{statistics.fmean(r50):>8.4f}"
                f"{statistics.fmean(per[name]):>8.4f}"
            )
        base = per["baseline (arxiv-sanity)"]
        names = ("pubsearch until 5 Dec.", "pubsearch until 7 Dec.", "pubsearch, words only")
        for name in (*names, "pubsearch"):
            diffs = [b - a for a, b in zip(base, per[name], strict=True)]
            wins = sum(d > 0 for d in diffs)
            losses = sum(d < 0 for d in diffs)
            ratio = statistics.fmean(per[name]) / statistics.fmean(base)
            wilcoxon = wilcoxon_p(base, per[name])
            print(
                f"{'':<28}{name}: R@100 ratio {ratio:.3f}; better {wins}, worse {losses}, "
                f"same {len(diffs) - wins - losses}; sign-flip p {sign_flip_p(diffs):.2g}"
                + (f"; Wilcoxon p {wilcoxon:.2g}" if wilcoxon is not None else "")
            )

    if fresh:
        seed = SEED + 2 if fresh_subjects else SEED + 1
        print(f"\nmeasured on {len(fresh)} authors (seed {seed}), shipped settings:")
        print(f"{'tags':<28}{'method':<26}{'R@50':>8}{'R@100':>8}")
        measure(f"{len(fresh)} authors, seed {seed}", fresh)
        if fresh_subjects:
            measure(f"{len(fresh_subjects)} subjects", list(fresh_subjects))
    else:
        tune(authors, subjects, mean_recall, baseline, ours)
        print("\nmeasured on the others:")
        print(f"{'tags':<28}{'method':<26}{'R@50':>8}{'R@100':>8}")
        measure(f"{len(authors) - DEV_AUTHORS} authors", authors[DEV_AUTHORS:])
        measure(f"{len(subjects) - DEV_SUBJECTS} subjects", subjects[DEV_SUBJECTS:])
    if args.index is not None:
        time_warm(args.index, papers)


def until_5_december() -> Any:
    """The method shipped until 5 December 2026: the tag's centre by words (no nearest
    record), meaning 0.3."""
    from pubsearch.library import recommend

    return recommend.Method(
        meaning_weight=0.3, nearest_weight=0.0, contrast_weight=0.0, meaning_contrast_weight=0.0
    )


def until_7_december() -> Any:
    """The method shipped until 7 December 2026: the tag's centre and its nearest record by
    words, meaning 0.4, no SVM of the tag against the rest."""
    from pubsearch.library import recommend

    return recommend.Method(contrast_weight=0.0, meaning_contrast_weight=0.0)


REDRAW_SEEDS = (101, 102)
GRID_CONTRAST = (0.0, 0.5, 1.0)
GRID_MEANING_CONTRAST = (0.0, 0.25, 0.5)


def redrawn_subjects(
    papers: list[Paper], tasks: Sequence[Task], seeds: Sequence[int]
) -> list[Task]:
    """Each subject task again with other earlier papers as its tag (20 drawn with each of
    ``seeds``): more tuning tags of the same subjects, named ``SUBJECT#SEED``."""
    again = []
    for seed in seeds:
        rnd = random.Random(seed)
        for task in tasks:
            before = [
                d for d, p in enumerate(papers) if task.name in p.subjects and p.date < CUT_OFF
            ]
            tagged = tuple(rnd.sample(before, SUBJECT_TAG))
            again.append(Task("subject", f"{task.name}#{seed}", tagged, task.wanted))
    return again


def tune_contrast(
    papers: list[Paper],
    authors: list[Task],
    subjects: list[Task],
    vectors: dict[int, FloatArray],
    work: Path,
) -> None:
    """Recall@100 on a grid of the weights of the tag against the rest (by words, by
    meaning), as shares of the baseline's, on ``authors`` and ``subjects``."""
    from pubsearch.library import recommend

    features = _features(papers, work, "all")
    baseline_features = _features(papers, work, "20k", vocabulary=20_000, min_df=5)
    size = len(papers)
    candidates = np.asarray([p.date >= CUT_OFF for p in papers])
    among = np.flatnonzero(candidates)
    meaning = MatrixMeaning.of(vectors, size)
    common = recommend.column_means(features, np.ones(size, dtype=np.bool_))
    kept = baseline_margins(authors + subjects, baseline_features, among, work)
    grid = [(a, b) for a in GRID_CONTRAST for b in GRID_MEANING_CONTRAST]
    hits: dict[tuple[float, float], tuple[list[float], list[float]]] = {
        point: ([], []) for point in grid
    }
    base: tuple[list[float], list[float]] = ([], [])
    every = recommend.Method(contrast_weight=1.0, meaning_contrast_weight=1.0)
    for side, chosen in enumerate((authors, subjects)):
        for task in chosen:
            values = np.zeros(size, dtype=np.float32)
            values[among] = kept[_key(task)]
            ranked = [doc for _, doc in recommend.ranked(values, candidates, 100)]
            base[side].append(recall(ranked, task.wanted, 100))
            tagged = np.asarray(task.tagged, dtype=np.int64)
            parts = recommend.score_parts(features, tagged, common, candidates, every, meaning)
            for a, b in grid:
                method = recommend.Method(contrast_weight=a, meaning_contrast_weight=b)
                values = recommend.combined(parts, method)
                ranked = [doc for _, doc in recommend.ranked(values, candidates, 100)]
                hits[(a, b)][side].append(recall(ranked, task.wanted, 100))
    base_a, base_s = statistics.fmean(base[0]), statistics.fmean(base[1])
    print(
        f"\nrecall@100 on {len(authors)} authors and {len(subjects)} subject tags, as shares "
        f"of the baseline's ({base_a:.4f}, {base_s:.4f}):"
    )
    for (a, b), (found_a, found_s) in hits.items():
        print(
            f"  words {a}, meaning {b}: authors {statistics.fmean(found_a) / base_a:.3f}, "
            f"subjects {statistics.fmean(found_s) / base_s:.3f}"
        )


def tune_nearest(
    papers: list[Paper],
    authors: list[Task],
    subjects: list[Task],
    vectors: dict[int, FloatArray],
    work: Path,
) -> None:
    """Recall@100 on a grid of the nearest record's weight and meaning's, as shares of the
    method until 5 December (nearest 0, meaning 0.3), on ``authors`` and ``subjects``."""
    from pubsearch.library import recommend

    features = _features(papers, work, "all")
    size = len(papers)
    candidates = np.asarray([p.date >= CUT_OFF for p in papers])
    meaning = MatrixMeaning.of(vectors, size)
    common = recommend.column_means(features, np.ones(size, dtype=np.bool_))
    grid = [(b, c) for b in (0.0, 0.2, 0.35, 0.5, 0.65) for c in (0.2, 0.3, 0.4)]
    hits: dict[tuple[float, float], tuple[list[float], list[float]]] = {
        point: ([], []) for point in grid
    }
    # every part made but the tag against the rest (not part of this grid)
    every = recommend.Method(
        meaning_weight=1.0, nearest_weight=1.0, contrast_weight=0.0, meaning_contrast_weight=0.0
    )
    for side, chosen in enumerate((authors, subjects)):
        for task in chosen:
            tagged = np.asarray(task.tagged, dtype=np.int64)
            parts = recommend.score_parts(features, tagged, common, candidates, every, meaning)
            for b, c in grid:
                method = recommend.Method(
                    meaning_weight=c,
                    nearest_weight=b,
                    contrast_weight=0.0,
                    meaning_contrast_weight=0.0,
                )
                values = recommend.combined(parts, method)
                ranked = [doc for _, doc in recommend.ranked(values, candidates, 100)]
                hits[(b, c)][side].append(recall(ranked, task.wanted, 100))
    found = {point: (statistics.fmean(a), statistics.fmean(s)) for point, (a, s) in hits.items()}
    base_a, base_s = found[(0.0, 0.3)]
    print(
        f"\nrecall@100 on {len(authors)} authors and {len(subjects)} subjects, as shares of "
        f"nearest 0, meaning 0.3 ({base_a:.4f}, {base_s:.4f}):"
    )
    for (b, c), (a, s) in found.items():
        print(f"  nearest {b}, meaning {c}: authors {a / base_a:.3f}, subjects {s / base_s:.3f}")


def tune(
    authors: list[Task],
    subjects: list[Task],
    mean_recall: Callable[[list[Task], Callable[[Task], list[int]], int], float],
    baseline: Callable[[Task], list[int]],
    ours: Callable[[Task, Any], list[int]],
) -> None:
    """The grid of settings on the tuning tags, as shares of the baseline's recall@100."""
    from pubsearch.library import recommend

    dev_authors, dev_subjects = authors[:DEV_AUTHORS], subjects[:DEV_SUBJECTS]
    base_a = mean_recall(dev_authors, baseline, 100)
    base_s = mean_recall(dev_subjects, baseline, 100)
    print(
        f"\ntuning on {DEV_AUTHORS} authors and {DEV_SUBJECTS} subjects: recall@100 as a "
        f"share of the baseline's ({base_a:.4f}, {base_s:.4f}), authors / subjects / mean"
    )
    for weight_common in GRID_COMMON:
        cells = []
        for weight in GRID_WEIGHTS:
            method = recommend.Method(common=weight_common, meaning_weight=weight)

            def rank(task: Task, m: recommend.Method = method) -> list[int]:
                return ours(task, m)

            a = mean_recall(dev_authors, rank, 100) / base_a
            b = mean_recall(dev_subjects, rank, 100) / base_s
            cells.append(f"w{weight}: {a:.3f}/{b:.3f}/{(a + b) / 2:.3f}")
        print(f"  common {weight_common}: " + "  ".join(cells))
    shipped = recommend.PUBSEARCH
    print(f"shipped: common {shipped.common}, meaning weight {shipped.meaning_weight}")


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
        candidates = np.ones(meaning.codes.shape[0], dtype=np.bool_)
        candidates[tagged] = False
        for _ in range(3):
            started = time.perf_counter()
            recommend.meaning_scores(meaning, tagged, candidates)
            took = time.perf_counter() - started
        print(
            f"  + meaning of 20 tagged over {meaning.codes.shape[0]:,} records (warm): {took:.3f} s"
        )
        pool = np.ones(meaning.codes.shape[0], dtype=np.bool_)
        for _ in range(3):
            started = time.perf_counter()
            recommend.meaning_contrast_scores(meaning, tagged, pool, candidates)
            took = time.perf_counter() - started
        print(f"  + the tag against the rest in meaning (warm): {took:.3f} s")
    finally:
        library.untag("bench-speed", ids)


if __name__ == "__main__":
    main()
