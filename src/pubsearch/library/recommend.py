"""Recommendations for a tag: untagged records ranked by how much they look like the tagged
ones (bench/recommend.py measures them against arxiv-sanity-lite's; docs/following.md has
the figures).

* **Words.** tf-idf of title and abstract (words and word pairs, sublinear term
  frequencies, the pubsearch.library cache keeps it per generation), with **every** word and
  pair found in two records or more (and in at most a tenth of them). arxiv-sanity-lite
  keeps the 20,000 most frequent; the rare ones it drops (a method's name, a dataset, an
  instrument, a pair of words a group writes again and again) are what tells one group's
  papers from its field's: on the tuning tags they alone lift recall@100 by 16 to 19 per
  cent for authors' tags. A record's words score is its product with the tag's centre
  (the mean of the tagged records' rows) less :data:`COMMON` times the mean of all records'
  (Rocchio's classifier): what is typical of the tag, not of every paper; joined, with the
  weight :data:`NEAREST_WEIGHT`, by its cosine with the tagged record nearest to it (one
  line of work of several). These need no training: a few sparse products.
* **Meaning**, where the index has sentence vectors: the mean of a record's likeness to the
  tag's centre in meaning and to the tagged record nearest to it (one theme or several),
  each standardised over the records ranked, joins the standardised words score with the
  weight :data:`MEANING_WEIGHT`.
* **The tag against the rest.** A linear SVM (scikit-learn's ``LinearSVC``) of the tagged
  records against :data:`NEGATIVES` other records drawn at random (seeded, so a list is
  the same each time), once by words and once by meaning: it learns what tells the tag
  from its neighbours, which the centre cannot (a field's 20 papers against the fields
  beside it). Each margin, standardised, is added with its weight
  (:data:`CONTRAST_WEIGHT`, :data:`MEANING_CONTRAST_WEIGHT`). Fitted against a sample, not
  every record (which took seconds by words over 100,000 records), each takes a few tenths
  of a second.

No author name or subject code is a feature: only the words of titles and abstracts, and
their meaning.
"""

from __future__ import annotations

import warnings
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from pubsearch.core import npzfiles
from pubsearch.core.errors import PubsearchError

FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

# Words and word pairs in at least MIN_DF records and at most MAX_DF of them, from SMALL
# records on (a smaller index keeps every word).
MIN_DF = 2
MAX_DF = 0.1
SMALL = 1_000
# Rocchio's weight of the mean of all records, the weight of a record's likeness to the
# nearest tagged record by words beside it, and the weight of meaning against words
# (tuned on bench/recommend.py's tuning tags; docs/following.md).
COMMON = 1.0
NEAREST_WEIGHT = 0.2
MEANING_WEIGHT = 0.4
# The tag against the rest: a linear SVM of the tagged records against NEGATIVES others
# (drawn with CONTRAST_SEED), its C by words and by meaning, and its margins' weights
# (bench/recommend.py's tuning tags; docs/following.md).
NEGATIVES = 5_000
CONTRAST_SEED = 35
WORDS_C = 0.01
MEANING_C = 0.1
CONTRAST_WEIGHT = 0.5
MEANING_CONTRAST_WEIGHT = 0.5
# The tagged records a record's nearest is looked for among (a larger tag: as many, spread
# over it): its cost grows with them (0.15 s for 20 over 102,289 records, 0.7 s for 160).
MAX_NEAREST = 160

# arxiv-sanity-lite's token pattern: words of letters, digits and underscores that start
# with a letter or underscore, two characters at least.
TOKEN_PATTERN = r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b"


class Meaning(Protocol):
    """The records' sentence vectors (pubsearch.search.semantic.SemanticIndex is one)."""

    @property
    def present(self) -> BoolArray: ...

    def vector(self, docnum: int) -> FloatArray | None: ...

    def similarities(self, vector: FloatArray) -> FloatArray: ...


@dataclass(frozen=True)
class Method:
    """How a tag's records are ranked: Rocchio's weight of the mean of all records, the
    weight of the nearest tagged record by words (0: the tag's centre alone), the weight
    of meaning (0: words alone), and the weights of the tag against the rest by words and
    by meaning (0: not fitted)."""

    common: float = COMMON
    meaning_weight: float = MEANING_WEIGHT
    nearest_weight: float = NEAREST_WEIGHT
    contrast_weight: float = CONTRAST_WEIGHT
    meaning_contrast_weight: float = MEANING_CONTRAST_WEIGHT


PUBSEARCH = Method()
WORDS_ONLY = Method(meaning_weight=0.0, meaning_contrast_weight=0.0)


def text_features(texts: Sequence[str], vocabulary: int | None = None, min_df: int = MIN_DF) -> Any:
    """The tf-idf matrix (scipy CSR, float32, rows L2-normed) of ``texts``, by row: words
    and word pairs, every one kept (or the ``vocabulary`` most frequent, as
    arxiv-sanity-lite's 20,000) in ``min_df`` records or more and at most :data:`MAX_DF`
    of them, from :data:`SMALL` texts on."""
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
        max_features=vocabulary,
        norm="l2",
        use_idf=True,
        smooth_idf=True,
        sublinear_tf=True,
        max_df=1.0 if small else MAX_DF,
        min_df=1 if small else min_df,
        dtype=np.float32,
    )
    try:
        return vectorizer.fit_transform(texts).tocsr()
    except ValueError:  # not one word kept: no record is like another by its words
        return sparse.csr_matrix((len(texts), 1), dtype=np.float32)


def column_means(features: Any, rows: BoolArray | IntArray) -> FloatArray:
    """The mean of ``features``' rows ``rows`` (a mask or numbers), dense."""
    chosen = features[np.flatnonzero(rows) if rows.dtype == np.bool_ else rows]
    if chosen.shape[0] == 0:
        return np.zeros(features.shape[1], dtype=np.float32)
    return np.asarray(chosen.mean(axis=0), dtype=np.float32).ravel()


def word_scores(
    features: Any, tagged: IntArray, common: FloatArray, weight: float = COMMON
) -> FloatArray:
    """Each record's product with the tagged records' centre less ``weight`` times
    ``common`` (the mean of all records' rows: :func:`column_means`)."""
    direction = column_means(features, tagged) - np.float32(weight) * common
    return np.asarray(features @ direction, dtype=np.float32).ravel()


def nearest_scores(features: Any, tagged: IntArray) -> FloatArray:
    """Each record's cosine by words with the tagged record most like it: an author's
    next paper often continues one earlier line of work, which the tag's centre blurs."""
    if not len(tagged):
        return np.zeros(features.shape[0], dtype=np.float32)
    if len(tagged) > MAX_NEAREST:
        ordered = np.unique(tagged)
        tagged = ordered[np.linspace(0, len(ordered) - 1, MAX_NEAREST).round().astype(np.int64)]
    products = features @ features[tagged].T  # rows L2-normed: cosines, sparse
    return np.asarray(products.max(axis=1).toarray(), dtype=np.float32).ravel()


def meaning_scores(meaning: Meaning, tagged: IntArray, candidates: BoolArray) -> FloatArray:
    """Each record's likeness in meaning to the tag: the mean of its similarity to the
    tagged records' centre and to the nearest of them, each standardised over the
    ``candidates`` with a vector; nan for a record without one (or when no tagged record
    has one)."""
    size = len(meaning.present)
    vectors = [v for doc in tagged if (v := meaning.vector(int(doc))) is not None]
    if not vectors:
        return np.full(size, np.nan, dtype=np.float32)
    centre = meaning.similarities(np.mean(vectors, axis=0).astype(np.float32))
    nearest = meaning.similarities(vectors[0])
    for vector in vectors[1:]:
        np.maximum(nearest, meaning.similarities(vector), out=nearest)
    among = candidates & meaning.present
    both = (standardised(centre, among) + standardised(nearest, among)) / 2
    return np.where(meaning.present, both, np.nan).astype(np.float32)


def contrast_sample(pool: BoolArray, tagged: IntArray, count: int = NEGATIVES) -> IntArray:
    """At most ``count`` records of ``pool`` that are not ``tagged``, drawn at random with
    :data:`CONTRAST_SEED` (the same draw for the same records), in order."""
    others = np.flatnonzero(pool)
    others = others[~np.isin(others, tagged)]
    if len(others) > count:
        rng = np.random.default_rng(CONTRAST_SEED)
        others = np.sort(rng.choice(others, size=count, replace=False))
    return others.astype(np.int64)


def svm_direction(rows: Any, positives: int, c: float) -> FloatArray | None:
    """The weights of a linear SVM (balanced classes) of ``rows``' first ``positives``
    against the rest; None when either side is empty. Rows of more columns than there are
    rows (words) are fitted in the dual, the others (sentence vectors) in the primal, with
    a looser tolerance: the same direction (cosine 1.000000 on 60 real tags) in 0.20 s
    rather than 0.27 (median)."""
    if positives <= 0 or positives >= rows.shape[0]:
        return None
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    labels = np.zeros(rows.shape[0], dtype=np.int8)
    labels[:positives] = 1
    dual = rows.shape[1] > rows.shape[0]
    svm = LinearSVC(
        C=c,
        class_weight="balanced",
        dual=dual,
        tol=1e-4 if dual else 1e-2,
        max_iter=2_000,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(rows, labels)
    return np.asarray(svm.coef_[0], dtype=np.float32)


def contrast_scores(features: Any, tagged: IntArray, pool: BoolArray) -> FloatArray:
    """Each record's margin by words in a linear SVM of the ``tagged`` records against a
    sample of the others in ``pool`` (:func:`contrast_sample`); zeros when there are none."""
    negatives = contrast_sample(pool, tagged)
    rows = features[np.concatenate([np.asarray(tagged, dtype=np.int64), negatives])]
    direction = svm_direction(rows, len(tagged), WORDS_C)
    if direction is None:
        return np.zeros(features.shape[0], dtype=np.float32)
    return np.asarray(features @ direction, dtype=np.float32).ravel()


def meaning_contrast_scores(
    meaning: Meaning, tagged: IntArray, pool: BoolArray, candidates: BoolArray
) -> FloatArray:
    """Each record's margin in meaning in a linear SVM of the ``tagged`` records with a
    vector against a sample of the others in ``pool`` with one, standardised over the
    ``candidates`` with a vector; nan for a record without one (or when a side is empty)."""
    present = meaning.present
    size = len(present)
    positives = [v for doc in tagged if (v := meaning.vector(int(doc))) is not None]
    negatives = [
        v
        for doc in contrast_sample(pool & present, tagged)
        if (v := meaning.vector(int(doc))) is not None
    ]
    if not positives or not negatives:
        return np.full(size, np.nan, dtype=np.float32)
    direction = svm_direction(np.stack(positives + negatives), len(positives), MEANING_C)
    if direction is None:
        return np.full(size, np.nan, dtype=np.float32)
    margins = meaning.similarities(direction)
    among = candidates & present
    return np.where(present, standardised(margins, among), np.nan).astype(np.float32)


def standardised(scores: FloatArray, among: BoolArray) -> FloatArray:
    values = scores[among]
    spread = float(values.std()) if len(values) else 0.0
    centre = float(values.mean()) if len(values) else 0.0
    return ((scores - centre) / (spread or 1.0)).astype(np.float32)


@dataclass(frozen=True)
class Parts:
    """A tag's scores of every record, each standardised over the candidates: by the tag's
    centre in words, by the nearest tagged record in words (None: not asked for), by
    meaning (None: no vectors; nan for a record without one), and by the tag against the
    rest in words and in meaning (None: not asked for, or no vectors; nan as meaning's)."""

    words: FloatArray
    nearest: FloatArray | None
    meaning: FloatArray | None
    contrast: FloatArray | None = None
    meaning_contrast: FloatArray | None = None


def score_parts(
    features: Any,
    tagged: IntArray,
    common: FloatArray,
    candidates: BoolArray,
    method: Method = PUBSEARCH,
    meaning: Meaning | None = None,
    pool: BoolArray | None = None,
) -> Parts:
    """The parts :func:`combined` mixes, those ``method`` weighs (Rocchio's weight of the
    mean record is ``method.common``); the tag against the rest is fitted against a
    sample of ``pool`` (default: every record). The two SVMs are fitted in a thread of
    their own while the other parts are made (liblinear and scipy's products let go of the
    interpreter's lock: on 2 CPUs a list then takes little longer than without them)."""
    if pool is None:
        pool = np.ones(features.shape[0], dtype=np.bool_)
    with ThreadPoolExecutor(max_workers=1) as beside:
        contrast = meaning_contrast = None
        if method.contrast_weight > 0:
            contrast = beside.submit(contrast_scores, features, tagged, pool)
        if meaning is not None and method.meaning_contrast_weight > 0:
            meaning_contrast = beside.submit(
                meaning_contrast_scores, meaning, tagged, pool, candidates
            )
        words = standardised(word_scores(features, tagged, common, method.common), candidates)
        near = None
        if method.nearest_weight > 0:
            near = standardised(nearest_scores(features, tagged), candidates)
        alike = None
        if meaning is not None and method.meaning_weight > 0:
            alike = meaning_scores(meaning, tagged, candidates)
        return Parts(
            words,
            near,
            alike,
            standardised(contrast.result(), candidates) if contrast is not None else None,
            meaning_contrast.result() if meaning_contrast is not None else None,
        )


def combined(parts: Parts, method: Method = PUBSEARCH) -> FloatArray:
    """``parts`` mixed by ``method``'s weights: the nearest record's share of the words
    score, then meaning's share, where a record has a vector; then the tag against the
    rest added with its weights (in meaning, where a record has a vector)."""
    words = parts.words
    if parts.nearest is not None and method.nearest_weight > 0:
        share = np.float32(method.nearest_weight)
        words = ((1 - share) * words + share * parts.nearest).astype(np.float32)
    mixed = words
    if parts.meaning is not None and method.meaning_weight > 0:
        weight = np.float32(method.meaning_weight)
        both = (1 - weight) * words + weight * parts.meaning
        mixed = np.where(np.isnan(parts.meaning), words, both).astype(np.float32)
    if parts.contrast is not None and method.contrast_weight > 0:
        mixed = (mixed + np.float32(method.contrast_weight) * parts.contrast).astype(np.float32)
    if parts.meaning_contrast is not None and method.meaning_contrast_weight > 0:
        extra = np.nan_to_num(parts.meaning_contrast, nan=0.0)
        weight = np.float32(method.meaning_contrast_weight)
        mixed = (mixed + weight * extra).astype(np.float32)
    return mixed


def scores(
    features: Any,
    tagged: IntArray,
    common: FloatArray,
    candidates: BoolArray,
    method: Method = PUBSEARCH,
    meaning: Meaning | None = None,
    pool: BoolArray | None = None,
) -> FloatArray:
    """Every record's likeness to the ``tagged`` records (higher: more alike), by
    ``method``, from parts standardised over the ``candidates`` (the records to rank);
    meaning joins in where ``meaning`` is given and a record has a vector. ``common``: the
    mean of all records' feature rows (:func:`column_means`, kept per generation by the
    caller); ``pool``: the records the tag is told from (default: every record)."""
    parts = score_parts(features, tagged, common, candidates, method, meaning, pool)
    return combined(parts, method)


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
# The version of the features' settings, in the cache file's name: a matrix made with other
# settings (an earlier pubsearch's) is made again, not read.
FEATURES_VERSION = 2


def _cache_path(index_dir: Path, generation: str) -> Path:
    return index_dir / CACHE_DIR / f"{generation}.tfidf-{FEATURES_VERSION}.npz"


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
        for old in path.parent.glob("*.tfidf*.npz"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only index: made again next time
    return matrix
