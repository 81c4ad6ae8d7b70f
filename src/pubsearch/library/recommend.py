"""Recommendations for a tag: untagged records ranked by how much they look like the tagged
ones (bench/recommend.py measures them; docs/following.md has the figures).

arxiv-sanity-lite's method is the start: tf-idf of title and abstract (words and word
pairs, sublinear term frequencies, 20,000 features), and a linear SVM of the tag's records
against the rest, ranked by its margin. pubsearch's differs in two ways:

* the SVM is trained against a seeded sample of the other records (:data:`NEGATIVES`),
  not all of them, for speed (its fit is most of a list's time);
* where the index has sentence vectors, each record's likeness in meaning to the tag's
  records (the mean of its :data:`CLOSEST` highest cosine similarities to them: close to
  a few of them counts, not only to their average) is added to the SVM's margin, both
  standardised over the records ranked, with the weight :data:`MEANING_WEIGHT`.

Measured (bench/recommend.py, docs/following.md), this does not beat the baseline yet: the
sample costs recall on authors' tags, and meaning adds about 1 to 3 per cent.

No author name or subject code is a feature: only the words of titles and abstracts, and
their meaning.
"""

from __future__ import annotations

import warnings
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pubsearch.core import npzfiles
from pubsearch.core.errors import PubsearchError

FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

# arxiv-sanity-lite's tf-idf and SVM settings.
FEATURES = 20_000
MIN_DF = 5
MAX_DF = 0.1
SVM_C = 0.01
SMALL = 1_000
# Records the SVM learns the tag's records against (a seeded sample of the rest).
NEGATIVES = 20_000
# Meaning: the mean of a record's CLOSEST highest similarities to the tag's records,
# weighed against the SVM's margin (both standardised) by MEANING_WEIGHT.
CLOSEST = 3
MEANING_WEIGHT = 0.5
SEED = 37

# The token pattern arxiv-sanity-lite uses: words of letters, digits and underscores that
# start with a letter or underscore, two characters at least.
TOKEN_PATTERN = r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b"


@dataclass(frozen=True)
class Method:
    """How a tag's records are ranked: the SVM's negatives (None: every other record, as
    arxiv-sanity-lite) and the weight of meaning (0: the SVM alone)."""

    negatives: int | None = NEGATIVES
    meaning_weight: float = MEANING_WEIGHT
    closest: int = CLOSEST


BASELINE = Method(negatives=None, meaning_weight=0.0)
PUBSEARCH = Method()


def text_features(texts: Sequence[str]) -> Any:
    """The tf-idf matrix (scipy CSR, float32, rows L2-normed) of ``texts``, by row. The
    document frequency limits hold from :data:`SMALL` texts on (a smaller index keeps
    every word)."""
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfVectorizer

    small = len(texts) < SMALL
    vectorizer = TfidfVectorizer(
        strip_accents="unicode",
        lowercase=True,
        analyzer="word",
        stop_words="english",
        token_pattern=TOKEN_PATTERN,
        ngram_range=(1, 2),
        max_features=FEATURES,
        norm="l2",
        use_idf=True,
        smooth_idf=True,
        sublinear_tf=True,
        max_df=1.0 if small else MAX_DF,
        min_df=1 if small else MIN_DF,
        dtype=np.float32,
    )
    try:
        return vectorizer.fit_transform(texts).tocsr()
    except ValueError:  # not one word kept: no record is like another by its words
        return sparse.csr_matrix((len(texts), 1), dtype=np.float32)


def svm_margins(
    features: Any, tagged: IntArray, among: BoolArray, negatives: int | None
) -> FloatArray:
    """A linear SVM's margin of every record: the tagged against the others of ``among``
    (all of them, or a seeded sample of ``negatives``)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    others = np.flatnonzero(among)
    others = others[~np.isin(others, tagged)]
    if negatives is not None and len(others) > negatives:
        rng = np.random.default_rng(SEED)
        others = np.sort(rng.choice(others, negatives, replace=False))
    rows = np.concatenate([tagged, others])
    labels = np.zeros(len(rows), dtype=np.int8)
    labels[: len(tagged)] = 1
    svm = LinearSVC(class_weight="balanced", max_iter=10_000, tol=1e-6, C=SVM_C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(features[rows], labels)
    margins = features @ svm.coef_[0].astype(np.float32) + np.float32(svm.intercept_[0])
    return np.asarray(margins, dtype=np.float32).ravel()


def meaning_scores(
    similarities: Callable[[int], FloatArray], tagged: IntArray, size: int, closest: int
) -> FloatArray:
    """Each record's mean of its ``closest`` highest similarities to the tagged records
    (``similarities(doc)``: every record's cosine similarity to ``doc``, -1 without a
    vector)."""
    rows = [similarities(int(doc)) for doc in tagged]
    rows = [row for row in rows if row is not None]
    if not rows:
        return np.zeros(size, dtype=np.float32)
    sims = np.stack(rows)
    k = min(closest, len(rows))
    if k == len(rows):
        top = sims
    else:
        top = -np.partition(-sims, k - 1, axis=0)[:k]
    return np.asarray(top.mean(axis=0), dtype=np.float32)


def standardised(scores: FloatArray, among: BoolArray) -> FloatArray:
    values = scores[among]
    spread = float(values.std()) if len(values) else 0.0
    centre = float(values.mean()) if len(values) else 0.0
    return (scores - centre) / (spread or 1.0)


def scores(
    features: Any,
    tagged: IntArray,
    live: BoolArray,
    candidates: BoolArray,
    method: Method = PUBSEARCH,
    similarities: Callable[[int], FloatArray] | None = None,
) -> FloatArray:
    """Every record's likeness to the ``tagged`` records (higher: more alike), by
    ``method``; meaning is used where ``similarities`` is given. Standardised over the
    ``candidates`` (the records to rank)."""
    margins = svm_margins(features, tagged, live, method.negatives)
    combined = standardised(margins, candidates)
    if similarities is not None and method.meaning_weight > 0:
        meaning = meaning_scores(similarities, tagged, len(margins), method.closest)
        has = meaning > -1
        meaning = standardised(meaning, candidates & has)
        weight = np.float32(method.meaning_weight)
        combined = np.where(has, (1 - weight) * combined + weight * meaning, combined)
    return combined.astype(np.float32)


def ranked(values: FloatArray, candidates: BoolArray, count: int) -> list[tuple[float, int]]:
    """The ``count`` candidates of highest value, best first (ties: lower number)."""
    docs = np.flatnonzero(candidates)
    if not len(docs) or count <= 0:
        return []
    chosen = values[docs]
    if len(docs) > count:
        keep = np.argpartition(-chosen, count - 1)[:count]
        docs, chosen = docs[keep], chosen[keep]
    order = np.lexsort((docs, -chosen))
    return [(float(chosen[i]), int(docs[i])) for i in order]


def check_available() -> None:
    """Raise a PubsearchError saying how to install scikit-learn when it is missing."""
    try:
        import scipy  # noqa: F401
        import sklearn  # noqa: F401
    except ImportError:
        raise PubsearchError(
            "recommendations need scikit-learn and scipy: pip install 'pubsearch[recommend]'"
        ) from None


# -- the features of a generation, kept ---------------------------------------------------

CACHE_DIR = "library-cache"


def _cache_path(index_dir: Path, generation: str) -> Path:
    return index_dir / CACHE_DIR / f"{generation}.tfidf.npz"


def generation_features(index_dir: Path, generation: str, texts: Callable[[], list[str]]) -> Any:
    """The tf-idf matrix of ``generation``'s documents: read from the library's cache
    (``INDEX/library-cache``, mapped), else made of ``texts()`` and saved there (the other
    generations' files removed)."""
    from scipy import sparse

    path = _cache_path(index_dir, generation)
    try:
        data = npzfiles.load_arrays(path)
        shape = tuple(int(n) for n in data["shape"])
        return sparse.csr_matrix((data["data"], data["indices"], data["indptr"]), shape=shape)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        pass
    matrix = text_features(texts())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        npzfiles.save_arrays(
            path,
            {
                "data": matrix.data,
                "indices": matrix.indices,
                "indptr": matrix.indptr,
                "shape": np.asarray(matrix.shape, dtype=np.int64),
            },
        )
        for old in path.parent.glob("*.tfidf.npz"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only index: made again next time
    return matrix
