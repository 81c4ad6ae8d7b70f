"""When each record appeared in the index: the notion "new since you last looked" stands on.

The index keeps a record's date and the day arXiv listed it, not when it entered the index
(a harvest may bring a paper of 2019, or a replaced version keeps its old dates). So the
library notes it: the first time it reads a generation (``catalogued``), each record whose
ids it has never seen appeared when that generation went live (its name's stamp). The first
generation an index's library reads is the index as it was before anyone followed anything:
its records appeared when they were listed (else dated), at the latest the generation's
time, so that ``news --since 2026-11-01`` finds November's papers of a fresh index too.

A record answers to each of its ids (its own, every arXiv id and DOI); one that a merge
gave a new id keeps the time of the ids it had.
"""

from __future__ import annotations

import calendar

import numpy as np
import numpy.typing as npt

from pubsearch.library.store import Store
from pubsearch.search.corpus import Corpus

FloatArray = npt.NDArray[np.float64]


def day_time(day: int) -> float | None:
    """The start (UTC) of day YYYYMMDD, or None for 0 or a day that is not one."""
    if not day:
        return None
    year, month, date = day // 10000, day // 100 % 100, day % 100
    try:
        return float(calendar.timegm((year, month, max(date, 1), 0, 0, 0, 0, 0, 0)))
    except (ValueError, OverflowError):
        return None


def catalogue(store: Store, corpus: Corpus) -> float:
    """Note the records of ``corpus``'s generation that the store has not seen (once per
    generation; concurrent writers of the same generation agree: the first time stays);
    the time they appeared at.

    That time is the generation's, or just after the latest generation read before it when
    that is later (two generations published within the same second)."""
    done = store.catalogued(corpus.generation)
    if done is not None:
        return done
    known = store.appeared()
    before = store.catalog_time()
    first = not known and before is None
    published = corpus.published if before is None else max(corpus.published, before + 1e-3)
    new: dict[str, float] = {}
    for doc in np.flatnonzero(corpus.live).tolist():
        ids = corpus.answers_to(doc)
        times = [known[key] for key in ids if key in known]
        if times:
            at = min(times)
        elif first:
            listed = day_time(int(corpus.days[doc]))
            at = published if listed is None else min(listed, published)
        else:
            at = published
        for key in ids:
            if key not in known:
                new.setdefault(key, at)
    store.catalogue(corpus.generation, published, new)
    return store.catalogued(corpus.generation) or published


def appeared_times(store: Store, corpus: Corpus) -> tuple[FloatArray, float]:
    """When each document's record appeared (by document number; +inf for a deleted
    one), the generation catalogued first if it was not; and the generation's own time
    (no record of it appeared later)."""
    upto = catalogue(store, corpus)
    known = store.appeared()
    times = np.full(corpus.size, np.inf)
    for doc in np.flatnonzero(corpus.live).tolist():
        found = [known[key] for key in corpus.answers_to(doc) if key in known]
        times[doc] = min(found) if found else upto
    return times, upto
