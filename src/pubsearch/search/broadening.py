"""When a search finds nothing: the nearest broader search that finds something.

Candidates are tried in order of how much of the request they give up: one filter or one
word, then two of them, and last any of the words, without filters. The first step that
finds anything wins; within a step, the candidate with most hits.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from pubsearch.search.compiler import bare_words
from pubsearch.search.request import SearchRequest

# Word-dropping is only tried for plain words (compiler.bare_words), and for few of them
# (each is a search).
MAX_WORDS_TO_DROP = 8
# Pairs of constraints are given up together only when there are few (each pair is a search).
MAX_CONSTRAINTS_FOR_PAIRS = 5


@dataclass(frozen=True)
class BroaderSearch:
    """A broader request, how many it finds, and what it gave up (``change``)."""

    request: SearchRequest
    total: int
    change: str


def _candidates(request: SearchRequest) -> Iterator[list[tuple[str, SearchRequest]]]:
    """Steps of broader requests, nearest first: each step gives up one more constraint (a
    filter or a word); the last resort is any of the words, without filters."""
    words = bare_words(request.q) or []
    droppable_words = words if 1 < len(words) <= MAX_WORDS_TO_DROP else []
    constraints: list[str] = []
    if request.authors:
        constraints.append("author")
    if request.subjects:
        constraints.append("subject")
    if request.year is not None:
        constraints.append("year")
    constraints += [f"word:{i}" for i in range(len(droppable_words))]

    most = 2 if len(constraints) <= MAX_CONSTRAINTS_FOR_PAIRS else 1
    for size in range(1, min(most, len(constraints)) + 1):
        step = []
        for dropped in itertools.combinations(constraints, size):
            kept_words = [w for i, w in enumerate(words) if f"word:{i}" not in dropped]
            if words and not kept_words:
                continue
            candidate = replace(
                request,
                q=" ".join(kept_words) if droppable_words else request.q,
                authors=() if "author" in dropped else request.authors,
                subjects=() if "subject" in dropped else request.subjects,
                year=None if "year" in dropped else request.year,
            )
            step.append((_describe(dropped, words), candidate))
        yield step
    if len(words) > 1:
        anywords = replace(request, q=" OR ".join(words), authors=(), subjects=(), year=None)
        filtered = anywords != replace(request, q=anywords.q)
        yield [("any of the words" + (", without filters" if filtered else ""), anywords)]


def _describe(dropped: tuple[str, ...], words: list[str]) -> str:
    parts = [f"\u201c{words[int(c[5:])]}\u201d" for c in dropped if c.startswith("word:")]
    parts += [f"the {c} filter" for c in dropped if not c.startswith("word:")]
    return "without " + " and ".join(parts)


def nearest_broader(
    count: Callable[[SearchRequest], int], request: SearchRequest
) -> BroaderSearch | None:
    """The nearest broader search with hits, or None. ``count`` is SearchService.count (or
    any function giving the number of hits of a request)."""
    for step in _candidates(request):
        best: BroaderSearch | None = None
        for change, candidate in step:
            candidate = replace(candidate, page=1)
            total = count(replace(candidate, page_size=1, facets=False))
            if total and (best is None or total > best.total):
                best = BroaderSearch(candidate, total, change)
        if best is not None:
            return best
    return None
