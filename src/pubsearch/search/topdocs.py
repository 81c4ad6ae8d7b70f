"""The best-scoring documents of a query, scored with numpy instead of Whoosh's matchers.

To find the top 10, Whoosh's collector steps through every matching document and scores
it with a chain of Python calls; for a common word at 100k records that is 30,000
documents and most of a query's time. For the queries people mostly type (words joined
by AND, OR, NOT, in scorable text fields, ranked by BM25F) the score of every matching
document is a formula over arrays read in blocks from the posting lists:
``idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average length))`` per word,
times the word's boost, summed over the words a document matches. That is what this
module computes, with Whoosh's own idf, average lengths and parameters, so that the
scores are Whoosh's (up to the order of floating-point additions) and ties go to the
lower document number, as Whoosh orders them.

Phrases are scored as Whoosh scores them (the AND of their words, for the documents that
have the words in place), ``a AND NOT b`` as Whoosh does (1 for each NOT part), words of
fields without lengths (``subject:``, ``id:``) by their posting weight, and a prefix or
wildcard as the OR of the words it expands to (what Whoosh does on indexes of over 5,000
records), ``year:2021`` and year ranges as a constant 1 (Whoosh's constant-score query).
Any other query (fuzzy terms, ranges on text, another weighting model) returns None and is
left to Whoosh.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from whoosh import fields, scoring
from whoosh import query as wq

from pubsearch.codec import w3format
from pubsearch.core import speedups
from pubsearch.index.facets import BoolArray, IntArray
from pubsearch.index.lengths import Lengths
from pubsearch.index.postings import FloatArray, look_up_terms, postings_by_segment
from pubsearch.index.schema import WRITTEN_FIELDS
from pubsearch.search.masks import (
    DocumentSet,
    PatternPostings,
    numeric_terms,
    pattern_postings,
    phrase_docs,
    query_mask,
)

# Which documents a query matches, and each one's score.
Scored = tuple[BoolArray, FloatArray]


def top_documents(
    searcher: Any,
    query: wq.Query,
    allowed: BoolArray,
    count: int,
    lengths: Lengths,
    shown: BoolArray | None = None,
    scored: Scored | None = None,
) -> list[tuple[float, int]] | None:
    """The ``count`` best ``(score, docnum)`` among ``allowed`` documents, best first,
    or None when ``query`` is not one this module scores.

    ``shown``: of the allowed documents, the only ones listed. ``scored``: what
    :func:`match_scores` gives for ``query``, when already worked out. (The ranking with
    feedback from the best match, :func:`pubsearch.search.ranking.top_with_feedback`, takes
    the steps of this one apart: :func:`allowed_matches`, :func:`best_match`,
    :func:`with_likeness`, :func:`best_of`.)
    """
    found = allowed_matches(searcher, query, allowed, lengths, scored)
    if found is None:
        return None
    return best_of(*found, count, shown)


def best_of(
    candidates: IntArray, values: FloatArray, count: int, shown: BoolArray | None = None
) -> list[tuple[float, int]]:
    """The ``count`` best ``(score, docnum)`` of ``candidates`` scored ``values``, best
    first, ties to the lower document number; of those in ``shown`` only, when given."""
    if not len(candidates):
        return []
    if shown is not None:
        listed = shown[candidates]
        candidates, values = candidates[listed], values[listed]
    if len(candidates) > count:
        # Keep every candidate that scores at least the count-th best, ties included.
        threshold = np.partition(values, len(values) - count)[len(values) - count]
        keep = values >= threshold
        candidates, values = candidates[keep], values[keep]
    order = np.lexsort((candidates, -values))[:count]
    return [(float(values[i]), int(candidates[i])) for i in order]


def match_scores(searcher: Any, query: wq.Query, size: int, lengths: Lengths) -> Scored | None:
    """Which of ``size`` documents ``query`` matches, and each one's score (0 where it
    does not match), as :func:`top_documents` scores them; None when the query or the
    searcher's weighting model is not one this module scores."""
    weighting = searcher.weighting
    # BM25F and subclasses that change only the idf (ranking.LuceneBM25): the idf comes from
    # searcher.idf, which asks the weighting model.
    if not isinstance(weighting, scoring.BM25F) or weighting.use_final:
        return None
    return _scores(searcher, weighting, query, size, lengths)


def allowed_matches(
    searcher: Any,
    query: wq.Query,
    allowed: BoolArray,
    lengths: Lengths,
    scored: Scored | None = None,
) -> tuple[IntArray, FloatArray] | None:
    """The ``allowed`` documents ``query`` matches and their scores (``scored``, when
    given, else worked out), or None when the query or the searcher's weighting model is
    not one this module scores."""
    if scored is None:
        scored = match_scores(searcher, query, allowed.size, lengths)
    if scored is None:
        return None
    matched, scores = scored
    candidates = np.flatnonzero(matched & allowed)
    return candidates, scores[candidates]


def best_match(candidates: IntArray, values: FloatArray) -> int:
    """The document of ``candidates`` that scores best (of equals, the lowest number)."""
    return int(candidates[np.flatnonzero(values == values.max())[0]])


def with_likeness(
    searcher: Any,
    like: wq.Query,
    size: int,
    candidates: IntArray,
    values: FloatArray,
    lengths: Lengths,
    gain: float,
) -> FloatArray:
    """``values`` plus each candidate's score for ``like``, scaled so that the candidate
    that scores best for it gains ``gain``; ``values`` as they are when ``like`` is not a
    query this module scores, or no candidate matches it."""
    scored = _scores(searcher, searcher.weighting, like, size, lengths)
    if scored is None:
        return values
    likeness = scored[1][candidates]
    top_likeness = float(likeness.max())
    if top_likeness <= 0:
        return values
    return values + (gain / top_likeness) * likeness


def documents_by_year(
    searcher: Any,
    query: wq.Query | None,
    allowed: BoolArray,
    count: int,
    lengths: Lengths,
    years: IntArray,
    newest: bool,
    dates: IntArray | None = None,
) -> list[tuple[float, int]] | None:
    """The first ``count`` ``(score, docnum)`` among ``allowed`` documents matching
    ``query`` (every allowed document when it is None), newest or oldest first: by year,
    then by date (``dates``, YYYYMMDD, 0 for none: a document without one comes after the
    dated ones of its year), then the best score, then the lower document number.
    Documents without a year (``years`` 0) come last either way. None when ``query`` is
    not one this module scores."""
    if query is None:
        candidates = np.flatnonzero(allowed)
        values = np.zeros(len(candidates), dtype=np.float64)
    else:
        found = allowed_matches(searcher, query, allowed, lengths)
        if found is None:
            return None
        candidates, values = found
    if not len(candidates):
        return []
    year = years[candidates].astype(np.int64)
    missing = year <= 0
    # One key, smallest first: the year's rank (a year-less document after every year),
    # then the day's within it (a date-less document after the dated ones).
    day = np.zeros(len(candidates), dtype=np.int64)
    if dates is not None:
        day = dates[candidates].astype(np.int64) % 10_000  # MMDD
    day_rank = np.where(day > 0, -day if newest else day, 10_000)
    key = np.where(missing, np.iinfo(np.int32).max, -year if newest else year)
    key = key * 20_001 + day_rank
    if len(candidates) > count:
        threshold = np.partition(key, count - 1)[count - 1]
        keep = key <= threshold
        candidates, values, key = candidates[keep], values[keep], key[keep]
    order = np.lexsort((candidates, -values, key))[:count]
    return [(float(values[i]), int(candidates[i])) for i in order]


def documents_by_count(
    searcher: Any,
    query: wq.Query | None,
    matching: BoolArray,
    count: int,
    counts: IntArray,
    lengths: Lengths,
) -> list[tuple[float, int]]:
    """The first ``count`` ``(score, docnum)`` of the ``matching`` documents (those
    ``query`` matches, filters applied), the highest of ``counts`` (citation counts;
    negative for none) first, then the best score, then the lower document number: a
    document without a count comes after every counted one. When ``query`` is None, or
    not one this module scores, every score is 0. ``lengths``: the field lengths (a field's
    are asked for only when scoring)."""
    found = None if query is None else allowed_matches(searcher, query, matching, lengths)
    if found is None:
        candidates = np.flatnonzero(matching)
        values = np.zeros(len(candidates), dtype=np.float64)
    else:
        candidates, values = found
    if not len(candidates):
        return []
    key = -counts[candidates].astype(np.int64)
    if len(candidates) > count:
        threshold = np.partition(key, count - 1)[count - 1]
        keep = key <= threshold
        candidates, values, key = candidates[keep], values[keep], key[keep]
    order = np.lexsort((candidates, -values, key))[:count]
    return [(float(values[i]), int(candidates[i])) for i in order]


def _scores(
    searcher: Any, weighting: Any, q: wq.Query, size: int, lengths: Lengths
) -> tuple[BoolArray, FloatArray] | None:
    """(matched, score) arrays over all documents, or None if ``q`` is not supported."""
    kind = type(q)
    if kind is wq.NumericRange or (kind is wq.Term and isinstance(q.text, bytes)):
        # year:[2019 TO 2021] scores a constant 1 (Whoosh's constant-score query), year:2021
        # its posting weight, 1: either way the query's boost.
        if numeric_terms(searcher.reader(), q) is None:
            return None
        matched = query_mask(searcher, q, size)
        return matched, matched.astype(np.float64) * float(q.boost)
    if kind is wq.Term:
        return _term_scores(searcher, weighting, q, size, lengths)
    if kind is DocumentSet:
        # Given documents, scored by their matches of the set's scoring query.
        inner = _scores(searcher, weighting, q.scoring, size, lengths)
        if inner is None:
            return None
        matched = query_mask(searcher, q, size)
        scores = np.where(matched & inner[0], inner[1], 0.0)
        return matched, scores * q.boost if q.boost != 1.0 else scores
    if kind is wq.Every:
        # "*" and "title:*" score a constant, their boost (Whoosh's ListMatcher weight).
        matched = query_mask(searcher, q, size)
        return matched, matched.astype(np.float64) * float(q.boost)
    if kind is wq.And and any(type(sub) is wq.Not for sub in q.subqueries):
        # "a AND NOT b": Whoosh leaves out b's documents and scores each NOT part as its
        # inverse matcher's constant weight, 1.
        positive = [sub for sub in q.subqueries if type(sub) is not wq.Not]
        if not positive:
            return None
        scored = _scores(searcher, weighting, wq.And(positive), size, lengths)
        if scored is None:
            return None
        matched, total = scored
        negated = [sub for sub in q.subqueries if type(sub) is wq.Not]
        for sub in negated:
            matched = matched & ~query_mask(searcher, sub.query, size)
        total = total + float(len(negated))
        total[~matched] = 0.0
        return matched, total * q.boost if q.boost != 1.0 else total
    if kind in (wq.And, wq.Or) and q.subqueries:
        if kind is wq.Or and (q.minmatch or q.scale):
            return None
        return _joined_scores(searcher, weighting, q, size, lengths)
    if kind is wq.Phrase:
        # Whoosh scores a phrase as the AND of its words, for the documents that have
        # them next to each other.
        docs = phrase_docs(searcher, q)
        if docs is None:
            return None
        matched = np.zeros(size, dtype=np.bool_)
        matched[docs] = True
        total = np.zeros(size, dtype=np.float64)
        for word in q.words:
            part = _term_scores(searcher, weighting, wq.Term(q.fieldname, word), size, lengths)
            if part is None:
                return None
            total += part[1]
        total[~matched] = 0.0
        return matched, total * q.boost if q.boost != 1.0 else total
    if kind in (wq.Prefix, wq.Wildcard):
        return _pattern_scores(searcher, weighting, q, size, lengths)
    if kind is wq.AndMaybe:
        # Whoosh's score: the required part's, plus the optional part's where it matches.
        required = _scores(searcher, weighting, q.a, size, lengths)
        optional = _scores(searcher, weighting, q.b, size, lengths)
        if required is None or optional is None:
            return None
        matched = required[0]
        total = np.where(matched, required[1] + np.where(optional[0], optional[1], 0.0), 0.0)
        return matched, total * q.boost if q.boost != 1.0 else total
    if kind is wq.AndNot:
        scored = _scores(searcher, weighting, q.a, size, lengths)
        if scored is None:
            return None
        matched, total = scored
        matched = matched & ~query_mask(searcher, q.b, size)
        return matched, total * q.boost if q.boost != 1.0 else total
    return None


def _pattern_scores(
    searcher: Any, weighting: Any, q: wq.PatternQuery, size: int, lengths: Lengths
) -> tuple[BoolArray, FloatArray] | None:
    """A prefix or wildcard scored as Whoosh scores the OR of the words it expands to, over
    all their postings at once (a short prefix stands for thousands of words)."""
    found = pattern_postings(searcher.reader(), q)
    if found is None:
        return None
    matched = np.zeros(size, dtype=np.bool_)
    if not len(found.words):
        return matched, np.zeros(size, dtype=np.float64)
    fieldname = q.fieldname
    compiled = speedups.active()
    if (
        compiled is not None
        and searcher.schema[fieldname].scorable
        and found.ids.dtype == np.int64
        and found.weights.dtype == np.float64
        and found.word_of.dtype == np.int32
    ):
        idfs, norms, k1 = _pattern_weights(searcher, weighting, found, fieldname, lengths)
        if norms is None:
            return None
        scores = np.zeros(size, dtype=np.float64)
        # What the rest of this function does, each posting in one pass, in order: a run
        # of the arrays' postings, then a kept list, and so on.
        begin = 0
        for piece in (*found.kept, None):
            end = len(found.ids) if piece is None else piece.at
            compiled.add_word_scores(
                scores,
                matched,
                found.ids[begin:end],
                found.weights[begin:end],
                found.word_of[begin:end],
                idfs,
                norms,
                k1,
                q.boost,
            )
            if piece is not None:
                compiled.add_scores(
                    scores,
                    matched,
                    piece.offset,
                    piece.ids,
                    piece.weights,
                    norms,
                    float(idfs[piece.word]),
                    k1,
                    q.boost,
                )
            begin = end
        return matched, scores
    found = found.whole()
    matched[found.ids] = True
    if not searcher.schema[fieldname].scorable:
        # A field without lengths (subject:): Whoosh's score is the posting's weight.
        term = found.weights
    else:
        idfs, all_norms, k1 = _pattern_weights(searcher, weighting, found, fieldname, lengths)
        if all_norms is None:
            return None
        tfs = found.weights
        # scoring.bm25, operation for operation, for every posting of every word.
        term = idfs[found.word_of] * ((tfs * (k1 + 1)) / (tfs + all_norms[found.ids]))
    if q.boost != 1.0:
        term = term * q.boost
    scores = np.bincount(found.ids, weights=term, minlength=size).astype(np.float64, copy=False)
    return matched, scores


def _pattern_weights(
    searcher: Any, weighting: Any, found: PatternPostings, fieldname: str, lengths: Lengths
) -> tuple[FloatArray, FloatArray | None, float]:
    """A pattern's words' idfs, each document's length part of BM25 (None when the
    weighting model keeps no B for the field) and K1."""
    # Each word's document frequency is the length of its posting list.
    dfs = found.doc_frequencies()
    idf_array = getattr(weighting, "idf_array", None)
    if idf_array is not None:
        idfs = idf_array(searcher.doc_count_all(), dfs)
    else:
        idfs = np.array([searcher.idf(fieldname, w) for w in found.words], dtype=np.float64)
    b = w3format.bm25_b(weighting, searcher, fieldname, found.words[0])
    k1 = float(weighting.K1)
    if b is None:
        return idfs, None, k1
    # A field of words as written has the lengths of the field it was cut from (the same
    # words, unstemmed): that field's norms serve, rather than another array as large.
    measured = _WRITTEN_FROM.get(fieldname, fieldname)
    return idfs, _length_norms(searcher, lengths, measured, k1, b), k1


_WRITTEN_FROM = {written: source for source, written in WRITTEN_FIELDS.items()}


def _joined_scores(
    searcher: Any, weighting: Any, q: wq.And | wq.Or, size: int, lengths: Lengths
) -> tuple[BoolArray, FloatArray] | None:
    """An AND or OR scored as Whoosh scores it: the sum of its parts' scores, for the
    documents matching all of them or any. A word's postings are added where they fall
    (a query of many words does not make two whole arrays a word); the sums are the same
    as those of the parts' arrays added in order (a part adds 0 where it does not match)."""
    conjunction = type(q) is wq.And
    total = np.zeros(size, dtype=np.float64)
    matched = np.full(size, conjunction, dtype=np.bool_)
    hits = np.zeros(size, dtype=np.uint16) if conjunction else None
    seen: npt.NDArray[np.bool_] | npt.NDArray[np.uint16] = hits if hits is not None else matched
    words = 0
    look_up_terms(
        searcher.reader(),
        [(sub.fieldname, sub.text) for sub in q.subqueries if type(sub) is wq.Term],
    )
    for sub in q.subqueries:
        if type(sub) is wq.Term and isinstance(sub.text, str):  # (not year:2021's)
            if not _add_term(searcher, weighting, sub, lengths, total, seen):
                return None
            words += 1
            continue
        scored = _scores(searcher, weighting, sub, size, lengths)
        if scored is None:
            return None
        sub_matched, sub_scores = scored
        total += sub_scores
        if conjunction:
            matched &= sub_matched
        else:
            matched |= sub_matched
    if hits is not None:
        if words:
            matched &= hits == words
        total[~matched] = 0.0
    return matched, total * q.boost if q.boost != 1.0 else total


def _term_scores(
    searcher: Any, weighting: Any, q: wq.Term, size: int, lengths: Lengths
) -> tuple[BoolArray, FloatArray] | None:
    matched = np.zeros(size, dtype=np.bool_)
    scores = np.zeros(size, dtype=np.float64)
    if not _add_term(searcher, weighting, q, lengths, scores, matched):
        return None
    return matched, scores


def _add_term(
    searcher: Any,
    weighting: Any,
    q: wq.Term,
    lengths: Lengths,
    total: FloatArray,
    seen: npt.NDArray[np.bool_] | npt.NDArray[np.uint16],
) -> bool:
    """Add a word's score to ``total`` in each document of its posting list (deleted ones
    included), and mark those documents in ``seen`` (flags set, or counts raised); False,
    with nothing added, for a word this module does not score. The list is taken a piece
    at a time (:func:`~pubsearch.search.postings.postings_by_segment`)."""
    schema = searcher.schema
    fieldname, text = q.fieldname, q.text
    if (
        fieldname not in schema
        or not isinstance(schema[fieldname], (fields.TEXT, fields.KEYWORD, fields.ID))
        or not isinstance(text, str)
    ):
        return False
    scorable = schema[fieldname].scorable
    norms: FloatArray | None = None
    idf = k1 = 0.0
    counting = seen.dtype != np.bool_
    compiled = speedups.active()
    for offset, ids, tfs in postings_by_segment(searcher.reader(), fieldname, text):
        if not len(ids):
            continue
        if scorable and norms is None:
            b = w3format.bm25_b(weighting, searcher, fieldname, text)
            if b is None:
                return False  # (before anything is added: the first piece)
            idf, k1 = searcher.idf(fieldname, text), weighting.K1
            norms = _length_norms(searcher, lengths, fieldname, k1, b)
        if compiled is not None and ids.dtype == np.int64 and tfs.dtype == np.float64:
            # The same operations on each posting, in one pass (no arrays in between).
            compiled.add_scores(total, seen, offset, ids, tfs, norms, idf, k1, q.boost)
            continue
        if norms is None:
            # A field without lengths (subject:, id:): Whoosh's score is the posting's weight.
            term = tfs
        else:
            # scoring.bm25, operation for operation (the length part worked out per document).
            term = idf * ((tfs * (k1 + 1)) / (tfs + norms[offset:][ids]))
        if q.boost != 1.0:
            term = term * q.boost
        total[offset:][ids] += term  # (a document is once in a posting list)
        if counting:
            seen[offset:][ids] += 1
        else:
            seen[offset:][ids] = True
    return True


# Each document's length part of BM25 for a field (``K1 * ((1 - B) + B * fl / avgfl)``),
# for the last few (lengths, K1, B, average) asked: one array of the index's size each.
_NORMS: OrderedDict[tuple[int, float, float, float], tuple[FloatArray, FloatArray]] = OrderedDict()
_NORMS_KEPT = 4
_NORMS_LOCK = threading.Lock()


def prepare_norms(searcher: Any, lengths: Lengths, fieldnames: Sequence[str]) -> None:
    """Work out the length part of BM25 of each of ``fieldnames`` for ``searcher``'s
    weighting, as the first search scoring the field would (a server does this before it
    answers: at 1,000,000 records, reading a field's lengths and working out its part
    takes some 30 ms)."""
    weighting = searcher.weighting
    for fieldname in fieldnames:
        if fieldname not in searcher.schema or not searcher.schema[fieldname].scorable:
            continue
        b = w3format.bm25_b(weighting, searcher, fieldname, "")
        if b is not None:
            _length_norms(searcher, lengths, fieldname, float(weighting.K1), b)


def _length_norms(
    searcher: Any, lengths: Lengths, fieldname: str, k1: float, b: float
) -> FloatArray:
    fl = lengths(fieldname)
    avgfl = searcher.avg_field_length(fieldname) or 1
    key = (id(fl), k1, b, avgfl)
    with _NORMS_LOCK:
        held = _NORMS.get(key)
        if held is not None and held[0] is fl:
            _NORMS.move_to_end(key)
            return held[1]
    norms = k1 * ((1 - b) + b * fl / avgfl)
    norms.flags.writeable = False
    with _NORMS_LOCK:
        _NORMS[key] = (fl, norms)  # (holding fl: its id is not given to another array)
        while len(_NORMS) > _NORMS_KEPT:
            _NORMS.popitem(last=False)
    return norms
