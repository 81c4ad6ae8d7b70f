"""How results are ordered by relevance: the scoring model every searcher uses.

BM25 with Lucene's idf, ``log(1 + (N - df + 0.5) / (df + 0.5))``, instead of Whoosh's
``log(N / (df + 1)) + 1``: Whoosh's extra ``+ 1`` gives common words too much weight in the
long, natural-language queries people paste (claims, titles, questions). Chosen on
SciFact's train queries with ``bench/relevance.py``; the figures are in README.

Pasted sentences (queries searched with any of their words, see :mod:`pubsearch.search.compiler`)
also get feedback from their best match: the best match is taken as relevant, and every
other match gains up to :data:`FEEDBACK_WEIGHT` times the best score for how much of the
best match's text it shares (its :data:`FEEDBACK_TERMS` heaviest words, by BM25 weight in
it, scored again with BM25). Records about what the best match is about move up; records
that share only the sentence's generic words ("associated", "increase") move down. The best
match stays first; which records match, and so the count and the facets, do not change.
On SciFact's train queries: nDCG@10 0.7082 -> 0.7164, gaining in both halves of the
queries at every weight from 0.5 to 3 and every size from 30 terms to all.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh import query as wq
from whoosh import scoring

from pubsearch.index.facets import BoolArray
from pubsearch.index.lengths import Lengths
from pubsearch.index.postings import doc_frequencies, doc_frequency
from pubsearch.index.schema import DEFAULT_FIELD, content_text
from pubsearch.search import topdocs

# The usual BM25 constants; on SciFact's train queries K1 in 0.9..1.5 and B in 0.4..0.75
# were all within 0.003 nDCG@10 of each other, so the textbook values stay.
K1 = 1.2
B = 0.75
# Feedback from the best match (see the module's doc).
FEEDBACK_WEIGHT = 1.5
FEEDBACK_TERMS = 40


class LuceneBM25(scoring.BM25F):  # type: ignore[misc]  # whoosh is Any to mypy
    """Whoosh's per-field BM25 with Lucene's (always positive) idf."""

    def idf(self, searcher: Any, fieldname: str, text: str) -> float:
        return idf(searcher.doc_count_all(), doc_frequency(searcher.reader(), fieldname, text))

    def idf_array(self, docs: int, dfs: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """:meth:`idf` of many words at once, from their document frequencies (the words
        of a prefix: thousands, where each look-up of a frequency costs a read)."""
        return np.log(1.0 + (docs - dfs + 0.5) / (dfs + 0.5))


def idf(docs: int, df: int) -> float:
    """Lucene's idf of a word in ``df`` of ``docs`` documents."""
    return math.log(1.0 + (docs - df + 0.5) / (df + 0.5))


def weighting() -> scoring.WeightingModel:
    """The scoring model for a new searcher."""
    return LuceneBM25(B=B, K1=K1)


def feedback_query(searcher: Any, docnum: int, length: float) -> wq.Query | None:
    """The :data:`FEEDBACK_TERMS` words that weigh most in document ``docnum`` (whose
    ``content`` is ``length`` words long), each boosted by its BM25 weight there, as one
    OR query on ``content``; None when the document has no words."""
    stored = searcher.stored_fields(docnum)
    text = content_text(stored.get("title") or "", stored.get("abstract") or "")
    counts = Counter(searcher.schema[DEFAULT_FIELD].analyzer.words(text))
    if not counts:
        return None
    avg = searcher.avg_field_length(DEFAULT_FIELD) or 1.0
    norm = K1 * (1 - B + B * length / avg)
    docs = searcher.doc_count_all()
    dfs = doc_frequencies(searcher.reader(), DEFAULT_FIELD, list(counts))
    weights = {
        word: idf(docs, df) * tf * (K1 + 1) / (tf + norm)
        for (word, tf), df in zip(counts.items(), dfs, strict=True)
    }
    heaviest = sorted(weights, key=lambda w: (-weights[w], w))[:FEEDBACK_TERMS]
    return wq.Or([wq.Term(DEFAULT_FIELD, word, boost=weights[word]) for word in heaviest])


def top_with_feedback(
    searcher: Any,
    query: wq.Query,
    allowed: BoolArray,
    count: int,
    lengths: Lengths,
    weight: float | None = None,
    shown: BoolArray | None = None,
    scored: topdocs.Scored | None = None,
) -> list[tuple[float, int]] | None:
    """The ``count`` best ``(score, docnum)`` among ``allowed`` documents by ``query`` with
    feedback from its best match (see the module's doc), best first; None when ``query``
    is not one :mod:`pubsearch.search.topdocs` scores.

    The best match is taken as relevant and every match gains ``weight`` (by default
    :data:`FEEDBACK_WEIGHT`) times the best score, scaled by how well it matches
    :func:`feedback_query` of the best match relative to the match that matches it best.
    ``shown``: of the allowed documents, the only ones listed; every allowed document still
    counts for the feedback, so that listing fewer changes the order of none. ``scored``:
    what :func:`~pubsearch.search.topdocs.match_scores` gives for ``query``, when already
    worked out."""
    found = topdocs.allowed_matches(searcher, query, allowed, lengths, scored)
    if found is None:
        return None
    candidates, values = found
    weight = FEEDBACK_WEIGHT if weight is None else weight
    if weight and len(candidates) > 1:
        best_value = float(values.max())
        if best_value > 0:
            best = topdocs.best_match(candidates, values)
            like = feedback_query(searcher, best, float(lengths(DEFAULT_FIELD)[best]))
            if like is not None:
                gain = weight * best_value
                values = topdocs.with_likeness(
                    searcher, like, allowed.size, candidates, values, lengths, gain
                )
    return topdocs.best_of(candidates, values, count, shown)
