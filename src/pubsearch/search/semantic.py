"""Ranking by meaning: a generation's vectors searched by similarity, and fused with the
keyword ranking.

In ``semantic`` mode a record matches when its vector's cosine similarity to the query's is
at least :data:`FLOOR`; in ``hybrid`` mode a record matches when its words do or its meaning
does. Filters apply to either, and ``total`` and the facets count those matches, so that
facet counts and filters work as they do for words. Ranking fuses the two lists by a
min-max score mix (:func:`fuse`): docs/ranking.md has the measurements behind
:data:`WEIGHT`, :data:`FLOOR` and :data:`DEPTH`.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from pubsearch.core import speedups
from pubsearch.index.vectors import VectorTable
from pubsearch.search.request import MODES, Mode

if TYPE_CHECKING:
    from pubsearch.index.embedding import Embedder

__all__ = ["MODES", "Mode", "SemanticIndex", "QueryVectors", "fuse", "matches", "top"]

# The cosine similarity a record needs to match a query by meaning.
FLOOR = 0.35
# Candidates taken from each ranking before they are fused.
DEPTH = 1000
# The semantic score's share of a hybrid score (the keyword score has the rest).
WEIGHT = 0.3
# The greatest of a query's int16 numbers (see SemanticIndex.similarities): about 1/32,000
# of a number's size, against 1/254 for the records' int8 codes.
QUERY_MAX = 16_383
# Rows turned into float32 at a time where the C code is not built.
_BLOCK = 4096
# Query vectors kept per process (paging through results asks for the same again).
KEPT_QUERY_VECTORS = 256
# onnxruntime threads the model runs a query's text with: one. A query is a few tokens
# (2 to 7 ms on one thread, no faster on two), and a session with a pool of threads takes
# half as long again to make (330 ms against 160 on 2 busy CPUs), what a one-shot hybrid
# query waits for; the vectors are the same, bit for bit (docs/performance.md).
QUERY_THREADS = 1

FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]
Ranked = list[tuple[float, int]]  # (score, document number), best first

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[$\\])")


@dataclass(frozen=True)
class SemanticIndex:
    """A generation's vectors ready to search: int8 rows by document number, each with its
    scale (0 for a document without a vector), as :mod:`pubsearch.index.vectors` stores them."""

    model: str
    codes: npt.NDArray[np.int8]
    scales: FloatArray
    present: BoolArray

    @classmethod
    def from_table(cls, table: VectorTable) -> SemanticIndex:
        codes = np.ascontiguousarray(table.codes)
        scales = np.ascontiguousarray(table.scales, dtype=np.float32)
        return cls(table.model, codes, scales, scales > 0)

    @property
    def count(self) -> int:
        return int(self.present.sum())

    def similarities(self, vector: FloatArray) -> FloatArray:
        """Every document's cosine similarity to ``vector`` (-1 for one without a vector).

        The rows are read as the int8 codes they are stored as (a quarter of float32's
        bytes), and the query is quantised to int16 (:func:`query_codes`): in C (where it
        is built) each row's product is an exact integer; numpy, in blocks of float32, gets
        the same within float32's rounding.
        """
        query, unit = query_codes(vector)
        sims = np.empty(len(self.scales), dtype=np.float32)
        compiled = speedups.active()
        if compiled is not None:
            compiled.int8_similarities(self.codes, self.scales, query, unit, sims)
        else:
            numbers = query.astype(np.float32)
            for start in range(0, len(sims), _BLOCK):
                rows = slice(start, start + _BLOCK)
                sims[rows] = self.codes[rows].astype(np.float32) @ numbers
            sims *= np.float32(unit)
            sims *= self.scales
        sims[~self.present] = -1.0
        return sims

    def vector(self, docnum: int) -> FloatArray | None:
        if not self.present[docnum]:
            return None
        row: FloatArray = self.codes[docnum].astype(np.float32) * self.scales[docnum]
        return row


def query_codes(vector: FloatArray) -> tuple[npt.NDArray[np.int16], float]:
    """``vector`` as int16 numbers of at most :data:`QUERY_MAX`, and the unit they count."""
    wide = np.asarray(vector, dtype=np.float64)
    peak = float(np.abs(wide).max()) if len(wide) else 0.0
    if peak == 0.0:
        return np.zeros(len(wide), dtype=np.int16), 0.0
    unit = peak / QUERY_MAX
    return np.rint(wide / unit).astype(np.int16), unit


def matches(sims: FloatArray, floor: float = FLOOR) -> BoolArray:
    """The documents that match by meaning."""
    return sims >= floor


def top(scores: FloatArray, allowed: BoolArray, k: int) -> Ranked:
    """The ``k`` allowed documents of highest score, best first (ties: lower number)."""
    docs = np.flatnonzero(allowed)
    if not len(docs) or k <= 0:
        return []
    values = scores[docs]
    if len(docs) > k:
        keep = np.argpartition(-values, k - 1)[:k]
        docs, values = docs[keep], values[keep]
    order = np.lexsort((docs, -values))
    return [(float(values[i]), int(docs[i])) for i in order]


def fuse(lexical: Ranked, semantic: Ranked, sims: FloatArray, weight: float = WEIGHT) -> Ranked:
    """One ranking of both lists' documents: ``weight`` times the similarity plus
    ``1 - weight`` times the keyword score, each scaled to 0..1 by the least and greatest of
    its own list (min-max). ``semantic`` is the nearest records (matching or not: it sets
    the scale); a keyword match outside it still has its similarity (scaled the same way,
    floored at 0); a record outside the keyword list has keyword score 0. Ties go to the
    lower document number."""
    if not semantic:
        return list(lexical)
    sem_low, sem_high = semantic[-1][0], semantic[0][0]
    sem_span = (sem_high - sem_low) or 1.0
    lex = np.array(lexical, dtype=np.float64).reshape(-1, 2)
    near = np.array([doc for _, doc in semantic], dtype=np.int64)
    lex_docs = lex[:, 1].astype(np.int64)
    # Sorted (what breaks ties), and without np.union1d, whose np.unique loads numpy.ma
    # (80 ms of a one-shot query).
    docs = np.fromiter(sorted({*lex_docs.tolist(), *near.tolist()}), dtype=np.int64)
    scores = np.zeros(len(docs), dtype=np.float64)
    if len(lex):
        lex_low, lex_high = lex[-1, 0], lex[0, 0]
        lex_span = (lex_high - lex_low) or 1.0
        scores[np.searchsorted(docs, lex_docs)] = (1.0 - weight) * (lex[:, 0] - lex_low) / lex_span
    closeness = (sims[docs].astype(np.float64) - sem_low) / sem_span
    scores += weight * np.maximum(closeness, 0.0)
    order = np.argsort(-scores, kind="stable")
    return list(zip(scores[order].tolist(), docs[order].tolist(), strict=True))


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (at ., ! or ? followed by a capital, digit or formula)."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


class QueryVectors:
    """The embedder, loaded when first needed, and the vectors of recent queries: of the
    model in the folder ``model``, else of PUBSEARCH_MODEL's, else the bundled one
    (pubsearch.index.embedding.sentence_model)."""

    def __init__(self, model: Path | None = None) -> None:
        self._model = model
        self._lock = threading.Lock()
        self._embedder: Embedder | None = None
        self._recent: OrderedDict[str, FloatArray] = OrderedDict()

    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                from pubsearch.index.embedding import Embedder, sentence_model

                self._embedder = Embedder(model=sentence_model(self._model), threads=QUERY_THREADS)
            return self._embedder

    def vector(self, text: str) -> FloatArray:
        with self._lock:
            found = self._recent.get(text)
            if found is not None:
                self._recent.move_to_end(text)
                return found
        vector: FloatArray = self.embedder().embed_queries([text])[0]
        with self._lock:
            self._recent[text] = vector
            while len(self._recent) > KEPT_QUERY_VECTORS:
                self._recent.popitem(last=False)
        return vector

    def closest_sentences(self, texts: list[str], query: str) -> list[str | None]:
        """For each text, its sentence closest in meaning to the query's words (None for no
        text). Chosen by the model's word vectors (Embedder.word_vectors), not by running
        it: a page of ten abstracts has some eighty sentences, which would take the model
        about half a second on two CPUs."""
        parts = [sentences(text) for text in texts]
        flat = [sentence for found in parts for sentence in found if len(found) > 1]
        out: list[str | None] = []
        if flat:
            embedder = self.embedder()
            scores = embedder.word_vectors(flat) @ embedder.word_vectors([query])[0]
        start = 0
        for found in parts:
            if len(found) <= 1:
                out.append(found[0] if found else None)
                continue
            best = int(np.argmax(scores[start : start + len(found)]))
            out.append(found[best])
            start += len(found)
        return out
