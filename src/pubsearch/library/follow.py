"""The library of one index: saved searches and what is new in them, tags and the records
they hold. Shared by the command line and the page, over the one search service; the
SQLite file (:mod:`pubsearch.library.store`) is opened per call, so that one Library may
serve several threads."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pubsearch.core.errors import IndexChangedError, ParameterError, RecordNotFoundError
from pubsearch.library import catalog
from pubsearch.library import recommend as likeness
from pubsearch.library.store import SavedSearch, Store, Tagged, check_name
from pubsearch.search.corpus import Corpus
from pubsearch.search.request import SearchRequest
from pubsearch.search.results import Hit, SearchResults
from pubsearch.search.service import SearchService

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
Ranked = list[tuple[float, int]]
# Tries of a step that a new generation interrupted.
TRIES = 3


@dataclass(frozen=True)
class NewRecords:
    """A page of records (newest first) that appeared after ``since`` and match a search."""

    name: str | None  # the saved search's, None for a search not saved
    request: SearchRequest
    total: int
    hits: tuple[Hit, ...]
    since: float
    appeared: tuple[float, ...]  # each hit's appearance time
    # The appearance time up to which the index was read (what ``seen`` becomes).
    upto: float


@dataclass(frozen=True)
class Followed:
    saved: SavedSearch
    new: int  # records that appeared since it was last looked at


@dataclass(frozen=True)
class TagPage:
    """A page of a tag's records (most recently tagged first) and those not in the index."""

    tag: str
    total: int
    hits: tuple[Hit, ...]
    missing: tuple[Tagged, ...]


@dataclass(frozen=True)
class Recommended:
    """A page of a tag's recommendations: untagged records, most alike first."""

    tag: str
    total: int  # the records ranked (untagged, new enough)
    hits: tuple[Hit, ...]
    among: int  # records in the index
    tagged: int  # the tag's records in the index
    meaning: bool  # sentence vectors were used (the index has them)


@dataclass(frozen=True)
class TagNews:
    """A tag's recommendations among the records that appeared after ``since`` (up to
    ``upto``, the generation read), for the digest."""

    found: Recommended
    since: float
    upto: float


@dataclass
class _Views:
    """What the library keeps of one generation."""

    corpus: Corpus
    appeared: FloatArray
    upto: float  # no record of the generation appeared later
    by_id: dict[str, int]


class Library:
    """The saved searches and tags of the index ``service`` searches."""

    def __init__(self, service: SearchService) -> None:
        self.service = service
        self.index_dir: Path = service.index_dir
        self._lock = threading.Lock()
        self._views: _Views | None = None
        self._features: tuple[str, Any, likeness.FloatArray] | None = None

    def store(self) -> Store:
        return Store(self.index_dir)

    def views(self) -> _Views:
        """The live generation's documents, when each appeared, and its ids' documents."""
        corpus = self.service.corpus()
        with self._lock:
            views = self._views
            if views is None or views.corpus.generation != corpus.generation:
                with self.store() as store:
                    appeared, upto = catalog.appeared_times(store, corpus)
                by_id: dict[str, int] = {}
                for doc in np.flatnonzero(corpus.live).tolist():
                    for key in corpus.answers_to(doc):
                        by_id.setdefault(key, doc)
                views = self._views = _Views(corpus, appeared, upto, by_id)
            return views

    # -- saved searches --------------------------------------------------------------------

    def follow(self, name: str, request: SearchRequest) -> bool:
        """Save ``request`` as ``name`` (its records so far count as seen); True if new."""
        check_name(name, "NAME")
        self.service.matching(request)  # a request the service refuses is not saved
        views = self.views()
        with self.store() as store:
            return store.add_follow(name, request, views.upto)  # it keeps text, filters, mode

    def unfollow(self, name: str) -> bool:
        with self.store() as store:
            return store.remove_follow(name)

    def saved(self, name: str) -> SavedSearch:
        with self.store() as store:
            saved = store.follow(name)
        if saved is None:
            raise ParameterError("NAME", f"no saved search is called {name!r} (follow list)")
        return saved

    def followed(self) -> list[Followed]:
        """Every saved search with its count of new records."""
        with self.store() as store:
            saved = store.follows()
        return [Followed(s, self.new_records(s.request, s.seen, page_size=1).total) for s in saved]

    def news(
        self,
        name: str | None = None,
        since: float | None = None,
        page_size: int = 100,
        mark: bool = True,
    ) -> list[NewRecords]:
        """The new records of one saved search (or of each), newest first: those that
        appeared after it was last looked at, or at ``since`` and after. Each search is
        then marked seen up to what was read (with ``mark``; else by :meth:`mark_seen`,
        once they were delivered)."""
        with self.store() as store:
            chosen = [self.saved(name)] if name is not None else store.follows()
        found = []
        for saved in chosen:
            after = saved.seen if since is None else math.nextafter(since, -math.inf)
            news = self.new_records(saved.request, after, page_size=page_size, name=saved.name)
            found.append(news)
        if mark:
            self.mark_seen(found)
        return found

    def mark_seen(self, found: Iterable[NewRecords]) -> None:
        """The saved searches of ``found`` seen up to what was read for them."""
        with self.store() as store:
            for news in found:
                if news.name is not None:
                    store.mark_seen(news.name, news.upto)

    def new_records(
        self,
        request: SearchRequest,
        since: float,
        page: int = 1,
        page_size: int = 100,
        name: str | None = None,
    ) -> NewRecords:
        """The records ``request`` finds that appeared after ``since``, newest first."""
        for _ in range(TRIES):
            views = self.views()
            generation, matched = self.service.matching(replace(request, page=1, facets=False))
            if generation != views.corpus.generation:
                continue
            new = matched & (views.appeared > since)
            ranked = newest_first(views, new)
            shown = replace(request, page=page, page_size=page_size, facets=False)
            try:
                hits = self.service.hits_of(generation, ranked, shown)
            except IndexChangedError:
                continue
            first = (page - 1) * page_size
            times = tuple(float(views.appeared[d]) for _, d in ranked[first : first + len(hits)])
            return NewRecords(name, request, len(ranked), hits, since, times, views.upto)
        raise IndexChangedError(f"{self.index_dir} kept changing while it was read; try again")

    # -- tags ------------------------------------------------------------------------------

    def tag(self, tag: str, ids: Iterable[str]) -> int:
        """Tag the records of ``ids`` (any id each answers to); how many were new to it."""
        check_name(tag, "TAG")
        views = self.views()  # the generation read into the catalog: what comes later is new
        records = {}
        for typed in ids:
            record = self.service.record(typed)  # RecordNotFoundError names the id
            records[record.id] = (*record.arxiv_ids, *record.dois)
        with self.store() as store:
            return store.add_tags(tag, records, views.upto)

    def untag(self, tag: str, ids: Iterable[str]) -> int:
        """Untag the records of ``ids``: every id each answers to, or the id as typed for a
        record no longer in the index."""
        wanted: set[str] = set()
        for typed in ids:
            wanted.add(typed)
            try:
                record = self.service.record(typed)
            except RecordNotFoundError:
                continue
            wanted.update((record.id, *record.arxiv_ids, *record.dois))
        with self.store() as store:
            return store.remove_tags(tag, wanted)

    def last_tag(self) -> str | None:
        with self.store() as store:
            return store.last_tag()

    def tags(self) -> list[tuple[str, int]]:
        with self.store() as store:
            return store.tag_names()

    def tagged_docs(self, tag: str) -> tuple[Corpus, BoolArray, list[Tagged]]:
        """The documents of the live generation tagged ``tag`` (through any id each answers
        to), and the tagged records that none answers to."""
        views = self.views()
        with self.store() as store:
            tagged = store.tagged(tag)
        docs = np.zeros(views.corpus.size, dtype=np.bool_)
        missing = []
        for item in tagged:
            found = [views.by_id[key] for key in item.ids if key in views.by_id]
            if found:
                docs[found] = True
            else:
                missing.append(item)
        return views.corpus, docs, missing

    def search_tag(self, tag: str, request: SearchRequest) -> SearchResults:
        """``request`` searched among the records tagged ``tag`` (its library page)."""
        for _ in range(TRIES):
            corpus, docs, _missing = self.tagged_docs(tag)
            try:
                return self.service.search(request, within=(corpus.generation, docs))
            except IndexChangedError:
                continue
        raise IndexChangedError(f"{self.index_dir} kept changing while it was read; try again")

    def tag_page(self, tag: str, page: int = 1, page_size: int = 100) -> TagPage:
        for _ in range(TRIES):
            corpus, docs, missing = self.tagged_docs(tag)
            views = self.views()
            ranked = newest_first(views, docs)
            request = SearchRequest(page=page, page_size=page_size)
            try:
                hits = self.service.hits_of(corpus.generation, ranked, request)
            except IndexChangedError:
                continue
            return TagPage(tag, len(ranked), hits, tuple(missing))
        raise IndexChangedError(f"{self.index_dir} kept changing while it was read; try again")

    # -- recommendations -------------------------------------------------------------------

    def _text_features(self, corpus: Corpus) -> tuple[Any, likeness.FloatArray]:
        """The generation's tf-idf matrix and the mean of its live records' rows."""
        with self._lock:
            kept = self._features
        if kept is not None and kept[0] == corpus.generation:
            return kept[1], kept[2]

        def texts() -> list[str]:
            read, texts = self.service.texts()
            if read.generation != corpus.generation:
                raise IndexChangedError(f"{self.index_dir} changed while it was read; try again")
            return texts

        features = likeness.generation_features(self.index_dir, corpus.generation, texts)
        common = likeness.column_means(features, corpus.live)
        with self._lock:
            self._features = (corpus.generation, features, common)
        return features, common

    def prepare_recommendations(self) -> int:
        """Make (and keep) the live generation's word table now, when any tag needs it:
        the first recommendation list of a generation would otherwise. The number of
        records in it (0: no tag, nothing made)."""
        if not self.tags():
            return 0
        likeness.check_available()
        corpus = self.views().corpus
        features, _common = self._text_features(corpus)
        return int(features.shape[0])

    def recommend(
        self, tag: str, since: float | None = None, page: int = 1, page_size: int = 10
    ) -> Recommended:
        """Untagged records ranked by their likeness to the records tagged ``tag``
        (pubsearch.library.recommend); with ``since``, only those that appeared then or
        later."""
        likeness.check_available()
        for _ in range(TRIES):
            corpus, docs, _missing = self.tagged_docs(tag)
            if not docs.any():
                raise ParameterError("TAG", f"no record in the index is tagged {tag!r}")
            views = self.views()
            candidates = corpus.live & ~docs
            if since is not None:
                candidates &= views.appeared >= since
            features, common = self._text_features(corpus)
            generation, meaning = self.service.meaning()
            if generation != corpus.generation:
                continue
            tagged = np.flatnonzero(docs)
            values = likeness.scores(
                features, tagged, common, candidates, meaning=meaning, pool=corpus.live
            )
            top = likeness.ranked(values, candidates, page * page_size)
            request = SearchRequest(page=page, page_size=page_size)
            try:
                hits = self.service.hits_of(corpus.generation, top, request)
            except IndexChangedError:
                continue
            total = int(candidates.sum())
            among = int(corpus.live.sum())
            return Recommended(tag, total, hits, among, len(tagged), meaning is not None)
        raise IndexChangedError(f"{self.index_dir} kept changing while it was read; try again")

    def tag_news(self, since: float | None = None, page_size: int = 10) -> list[TagNews]:
        """Each tag's recommendations among the records that appeared since its last digest
        (else since the tag was first given; or at ``since`` and after). A tag none of
        whose records is in the index is left out. Marked by :meth:`mark_tags_seen`."""
        likeness.check_available()
        with self.store() as store:
            starts = store.tags_since()
        found = []
        for tag, start in starts.items():
            after = start if since is None else math.nextafter(since, -math.inf)
            upto = self.views().upto
            try:
                page = self.recommend(
                    tag, since=math.nextafter(after, math.inf), page_size=page_size
                )
            except ParameterError:
                continue  # none of its records is in the index now
            found.append(TagNews(page, after, upto))
        return found

    def mark_tags_seen(self, found: Iterable[TagNews]) -> None:
        with self.store() as store:
            for news in found:
                store.mark_tag_seen(news.found.tag, news.upto)


def newest_first(views: _Views, docs: BoolArray) -> Ranked:
    """``docs`` by appearance, newest first, then by day listed, then by number (the later
    written first)."""
    chosen = np.flatnonzero(docs)
    if not len(chosen):
        return []
    appeared = views.appeared[chosen]
    order = np.lexsort((-chosen, -views.corpus.days[chosen], -appeared))
    return [(float(appeared[i]), int(chosen[i])) for i in order]
