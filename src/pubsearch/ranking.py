"""How results are ordered by relevance: the scoring model every searcher uses.

BM25 with Lucene's idf, ``log(1 + (N - df + 0.5) / (df + 0.5))``, instead of Whoosh's
``log(N / (df + 1)) + 1``: Whoosh's extra ``+ 1`` gives common words too much weight in the
long, natural-language queries people paste (claims, titles, questions). Chosen on
SciFact's train queries with ``bench/relevance.py``; the figures are in README.
"""

from __future__ import annotations

import math
from typing import Any

from whoosh import scoring

# The usual BM25 constants; on SciFact's train queries K1 in 0.9..1.5 and B in 0.4..0.75
# were all within 0.003 nDCG@10 of each other, so the textbook values stay.
K1 = 1.2
B = 0.75


class LuceneBM25(scoring.BM25F):  # type: ignore[misc]  # whoosh is Any to mypy
    """Whoosh's per-field BM25 with Lucene's (always positive) idf."""

    def idf(self, searcher: Any, fieldname: str, text: str) -> float:
        docs = searcher.doc_count_all()
        df = searcher.doc_frequency(fieldname, text)
        return math.log(1.0 + (docs - df + 0.5) / (df + 0.5))


def weighting() -> scoring.WeightingModel:
    """The scoring model for a new searcher."""
    return LuceneBM25(B=B, K1=K1)
