"""Which matches of a relaxed query match it well: what ``total``, the pages and the facets
count.

A text of three or more bare words that fewer than
:data:`~pubsearch.search.compiler.MIN_STRICT_MATCHES` records have whole is searched with any of its
words (:class:`~pubsearch.search.compiler.TextQuery`). Ranked, that is right; counted, it is not: a
pasted abstract shares a word with nearly every record (95,962 of 102,284 arXiv records for
the median of 150 abstracts), and so would its facets.

A record of the relaxed reading **matches well** when it has every bare word, or when its
BM25 score for the bare words is at least :func:`threshold` of the query's weight: the sum of
the bare words' idfs times their boosts, which is what a record of average length having
each of them once scores. The threshold is :data:`SHARE` of that weight, and at least
:data:`WORDS` average words' worth (``WORDS / n`` of it, for ``n`` bare words): a four-word
query asks for some two words' worth, a pasted abstract for 15 % of its weight. Rarer words,
repeated words and words of the title reach it sooner, as they rank higher. Whether a record
matches well depends on the query and the record alone: not on the filters, nor on what
else the index holds.

The others match only loosely: they are counted apart and stay reachable
(``SearchRequest.loose``). The ranking does not change: every match that passes the filters
is ranked (the feedback from the best match among them, see :mod:`pubsearch.search.ranking`), and
those that match well are listed in that order. When no record matches well, every match
counts, so that a text never finds nothing for want of words.

Chosen with ``bench/loose.py`` on SciFact train, Cranfield, NPL and ADI (docs/ranking.md,
"Loose matches"): of the judged-relevant records in the first 100, 99.9, 99.5, 99.6 and
74.7 % match well, while the median count falls to 8.5, 28.6, 6.3 and 26.8 % of each corpus
(from 51, 72, 27 and 79 %); nDCG@10 is the same. A pasted abstract's median count falls
from 95,962 to 324 of 102,284, 3 to 6 words of a title from 37,240 to 2,967.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from whoosh import query as wq

from pubsearch.index.facets import BoolArray
from pubsearch.index.lengths import Lengths
from pubsearch.index.schema import DEFAULT_FIELD
from pubsearch.search.compiler import PHRASE_FIELDS, TextQuery
from pubsearch.search.topdocs import Scored, match_scores

# A record matches well from SHARE of the query's weight, and from WORDS average words' worth.
SHARE = 0.15
WORDS = 1.5

# Fields whose words weigh in the query's weight (a word, a quotation, a name's words).
_TEXT_FIELDS = frozenset({DEFAULT_FIELD, *PHRASE_FIELDS})

# Each stem's idf (0 for a word no record has), asked of many stems at once.
Idf = Callable[[list[str]], list[float]]


@dataclass(frozen=True)
class Split:
    """The matches of a relaxed reading: those that match it well, the rest (which match
    only loosely), and the relaxed query's scores when they were worked out here."""

    well: BoolArray
    rest: BoolArray
    scored: Scored | None = None

    def among(self, *masks: BoolArray) -> BoolArray:
        """Every match, well or loosely, in all of ``masks``: what ranks those listed."""
        return passing(self.well | self.rest, masks)


def ranked_among(split: Split | None, allowed: BoolArray) -> BoolArray | None:
    """The records that rank a relaxed query's results: every match, well or loosely, of
    those ``allowed`` (that pass the filters); None when nothing was split."""
    return None if split is None else split.among(allowed)


def passing(base: BoolArray, masks: Iterable[BoolArray]) -> BoolArray:
    """The records of ``base`` that are in every one of ``masks`` (a new array)."""
    out = base.copy()
    for mask in masks:
        out &= mask
    return out


def loose_total(
    split: Split | None, allowed: BoolArray, by_meaning: BoolArray | None = None
) -> int | None:
    """How many ``allowed`` records (those that pass the filters) match the relaxed
    reading only loosely, and not by meaning either; None when nothing was split."""
    if split is None:
        return None
    rest = split.rest & allowed
    if by_meaning is not None:
        rest &= ~by_meaning
    return int(rest.sum())


def threshold(parts: int) -> float:
    """The share of the query's weight a record needs to match well, for ``parts`` bare
    words (quotations and names count as one each)."""
    return max(SHARE, WORDS / parts) if parts else SHARE


def query_weight(parts: Sequence[wq.Query], idf: Idf) -> float:
    """Each part's idf (a quotation's or a name's, its words' summed) times its boost."""
    stems = [_stems(part) for part in parts]
    known = dict.fromkeys(stem for found in stems for stem in found)
    idfs = dict(zip(known, idf(list(known)), strict=True))
    return sum(
        float(part.boost) * sum(idfs[stem] for stem in found)
        for part, found in zip(parts, stems, strict=True)
    )


def split(
    searcher: Any,
    parsed: TextQuery,
    loose: BoolArray,
    strict: BoolArray,
    lengths: Lengths,
    idf: Idf,
) -> Split:
    """``loose`` (what ``parsed.relaxed`` matches) split into the records that match well
    and the rest; ``strict``: the records that have every word."""
    bare = list(parsed.bare)
    everything = Split(loose, np.zeros_like(loose))
    if not bare:
        return everything
    query = bare[0] if len(bare) == 1 else wq.Or(bare)
    scored = match_scores(searcher, query, loose.size, lengths)
    weight = query_weight(bare, idf)
    if scored is None or weight <= 0:
        return everything
    well = loose & ((scored[1] >= threshold(len(bare)) * weight) | strict)
    if not well.any():
        return everything
    # The scores rank the page too when the relaxed query is the bare words alone.
    return Split(well, loose & ~well, scored if parsed.relaxed == query else None)


def _stems(part: wq.Query) -> list[str]:
    if type(part) is wq.Term:
        return [part.text] if part.fieldname in _TEXT_FIELDS else []
    texts = (text for name, text in part.iter_all_terms() if name in _TEXT_FIELDS)
    return list(dict.fromkeys(t for t in texts if isinstance(t, str)))
