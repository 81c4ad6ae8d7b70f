"""The search service shared by the command line and the web page.

:class:`SearchService` turns a :class:`SearchRequest` into :class:`SearchResults`. It keeps
one Whoosh searcher per thread, reused while the index is unchanged and reopened when a
new generation is published, and one :class:`~pubsearch.facets.FacetTable` per generation.
"""

from __future__ import annotations

import html
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from whoosh import highlight, sorting
from whoosh import query as wq
from whoosh.index import Index
from whoosh.searching import Hit as WhooshHit
from whoosh.searching import Results as WhooshResults
from whoosh.searching import Searcher

from pubsearch import ranking, storage
from pubsearch.documents import record_from_stored
from pubsearch.errors import RecordNotFoundError
from pubsearch.facets import NO_COUNT, BoolArray, FacetTable, MultiValued
from pubsearch.highlighting import (
    SNIPPET_CHARS,
    MarkFormatter,
    highlight_field,
    lead,
    marked_to_html,
    marked_words,
    written_words,
)
from pubsearch.masks import DocumentSet, FloatArray, query_mask
from pubsearch.names import NameIndex
from pubsearch.querying import (
    SPELLING_FIELDS,
    parse_query,
    parse_text_query,
    query_words,
)
from pubsearch.readable import readable
from pubsearch.records import Record, fold
from pubsearch.request import SearchRequest, check_sort
from pubsearch.results import FacetValue, Hit, IndexStats, SearchResults
from pubsearch.schema import DEFAULT_FIELD
from pubsearch.segments import w3format
from pubsearch.spelling import Spelling, worth_correcting
from pubsearch.topdocs import documents_by_count, documents_by_year, field_lengths, top_documents

# How much a paper by the people a name in the search box names gains: times the BM25
# score of the name's words in its author field.
NAME_BOOST = 2.0
# Document frequencies kept per generation before they are forgotten (about 100 bytes each).
MAX_KEPT_FREQUENCIES = 200_000
# A spelling correction is offered when a query finds fewer records than this, or finds
# them only with some of its words (and searched instead when it finds none).
FEW_RESULTS = 10
# More-like-this: (field, weight, key terms taken from it) for related records, and how
# many of the closest are shown.
RELATED_FIELDS = (("title", 2.0, 6), ("abstract", 1.0, 12))
RELATED_MAX = 50


@dataclass(frozen=True)
class _TextSearch:
    """A query's text as searched: the Whoosh query to rank with (None: every record),
    the documents it matches, and how it was read."""

    query: wq.Query | None
    mask: BoolArray
    relaxed: bool = False
    words: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    all_words_total: int | None = None  # with relaxed: how many have every word


def _matches_everything(query: wq.Query) -> bool:
    return type(query) is wq.Every and not query.fieldname


# The letters of a word as typed, without punctuation around it, for spelling.
_WORD_CORE = re.compile(r"[^\W_](?:[\w'\-]*[^\W_])?")


@dataclass
class _Snapshot:
    """A searcher on one generation, owned by one thread."""

    generation: str
    index: Index
    searcher: Searcher


@dataclass
class _Generation:
    name: str
    index: Index
    facets: FacetTable | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Words' document frequencies in the combined field, as long texts ask for them (each
    # costs a look-up in every segment).
    frequencies: dict[str, int] = field(default_factory=dict)
    _names: NameIndex | None = None
    _spelling: Spelling | None = None
    # Each table has a lock of its own: building one (about a second at 100,000 records)
    # holds up no search but those that need it.
    _names_lock: threading.Lock = field(default_factory=threading.Lock)
    _spelling_lock: threading.Lock = field(default_factory=threading.Lock)

    def spelling(self, searcher: Searcher) -> Spelling:
        """The correctly spelt words of this generation: its titles' words (built when
        first asked; docs/performance.md says what that costs)."""
        with self._spelling_lock:
            if self._spelling is None:
                title = searcher.schema[SPELLING_FIELDS[0]]
                field = title.spelling_fieldname(SPELLING_FIELDS[0])
                reader = searcher.reader()
                words = (
                    (w.decode("utf-8") if isinstance(w, bytes) else w)
                    for w in (
                        reader.lexicon(field) if field in reader.indexed_field_names() else ()
                    )
                )
                self._spelling = Spelling(words)
            return self._spelling

    def names(self, table: FacetTable) -> NameIndex:
        """The author names of this generation, found by surname (built when first
        asked)."""
        with self._names_lock:
            if self._names is None:
                self._names = NameIndex(table.authors.labels)
            return self._names

    def doc_frequency(self, searcher: Searcher, stem: str) -> int:
        found = self.frequencies.get(stem)
        if found is None:
            found = self.frequencies[stem] = int(searcher.doc_frequency(DEFAULT_FIELD, stem))
            if len(self.frequencies) > MAX_KEPT_FREQUENCIES:
                self.frequencies.clear()
        return found


class SearchService:
    """Searches one index directory. Safe to share between threads.

    With ``prepare_in_background`` (a server), each generation the service opens has its
    author names and spelling words built by a thread of their own, so that no search of a
    new index pays for them."""

    def __init__(self, index_dir: Path, prepare_in_background: bool = False) -> None:
        self.index_dir = index_dir
        self.prepare_in_background = prepare_in_background
        self._lock = threading.Lock()
        self._generation: _Generation | None = None
        self._local = threading.local()
        self._field_lengths: weakref.WeakKeyDictionary[Searcher, dict[str, FloatArray]] = (
            weakref.WeakKeyDictionary()
        )
        # Every searcher still open, whatever thread opened it: closed with the service
        # even when close() is never called (indexes are read through open files).
        self._open: set[Searcher] = set()
        weakref.finalize(self, _close_all, self._open, self._lock)
        self._snippets = highlight.Highlighter(
            fragmenter=highlight.ContextFragmenter(maxchars=SNIPPET_CHARS, surround=40),
            formatter=MarkFormatter(),
        )
        self._whole = highlight.Highlighter(
            fragmenter=highlight.WholeFragmenter(), formatter=MarkFormatter()
        )

    # -- index and searcher lifecycle ------------------------------------------------------

    def _current_generation(self) -> _Generation:
        live = storage.current_generation(self.index_dir)
        with self._lock:
            gen = self._generation
            if gen is None or live is None or gen.name != live.name:
                w3format.fast_paths()  # warns, once, of a Whoosh whose format it does not know
                name, index = storage.open_current(self.index_dir)
                gen = self._generation = _Generation(name, index)
                if self.prepare_in_background:
                    threading.Thread(
                        target=self._prepare_generation,
                        args=(gen,),
                        name=f"prepare {name}",
                        daemon=True,
                    ).start()
            return gen

    def _prepare_generation(self, gen: _Generation) -> None:
        """Build ``gen``'s tables with a searcher of this thread's own."""
        try:
            searcher = gen.index.searcher(weighting=ranking.weighting())
        except Exception:  # noqa: BLE001 - the searches that need the tables report it
            return
        try:
            self._build_tables(gen, searcher)
        except Exception:  # noqa: BLE001 - left for the searches that need them to build
            pass
        finally:
            searcher.close()

    def _build_tables(self, gen: _Generation, searcher: Searcher) -> None:
        """``gen``'s facet table, author names and spelling words, built if not yet."""
        gen.names(self._facet_table(gen, searcher))
        gen.spelling(searcher)

    def _searcher(self) -> tuple[_Generation, Searcher]:
        gen = self._current_generation()
        snap: _Snapshot | None = getattr(self._local, "snapshot", None)
        if snap is None or snap.generation != gen.name:
            if snap is not None:
                self._close_searcher(snap.searcher)
            snap = _Snapshot(gen.name, gen.index, gen.index.searcher(weighting=ranking.weighting()))
            with self._lock:
                self._open.add(snap.searcher)
            self._local.snapshot = snap
        return gen, snap.searcher

    def _close_searcher(self, searcher: Searcher) -> None:
        with self._lock:
            self._open.discard(searcher)
        searcher.close()

    def _facet_table(self, gen: _Generation, searcher: Searcher) -> FacetTable:
        with gen.lock:
            if gen.facets is None:
                # Saved by the build beside the index files; read from the index when the
                # generation has none (built by an older version).
                gen.facets = FacetTable.load(
                    self.index_dir / gen.name, searcher.reader(), gen.index.latest_generation()
                ) or FacetTable.build(searcher.reader())
            return gen.facets

    def _lengths(self, searcher: Searcher) -> Callable[[str], FloatArray]:
        """Field lengths of ``searcher``'s documents, read once per searcher and field."""
        with self._lock:
            cache = self._field_lengths.setdefault(searcher, {})

        def lengths(fieldname: str) -> FloatArray:
            if fieldname not in cache:
                cache[fieldname] = field_lengths(searcher.reader(), fieldname)
            return cache[fieldname]

        return lengths

    def prepare(self) -> None:
        """Open the current generation and build what the first searches of it would:
        its facet table, its author names and its spelling words (a server does this
        before it answers)."""
        gen, searcher = self._searcher()
        self._build_tables(gen, searcher)

    def close(self) -> None:
        snap: _Snapshot | None = getattr(self._local, "snapshot", None)
        if snap is not None:
            self._close_searcher(snap.searcher)
            self._local.snapshot = None

    # -- searching -------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchResults:
        """The results of ``request``; when nothing matches and a spelling correction
        does, the correction's (``corrected_from`` is then the text as typed)."""
        started = time.perf_counter()
        results = self._search(request)
        if results.total == 0 and results.suggestion and request.correct:
            corrected = self._search(replace(request, q=results.suggestion))
            if corrected.total:
                took = round((time.perf_counter() - started) * 1000, 2)
                return replace(corrected, corrected_from=request.q, took_ms=took)
        return results

    def _search(self, request: SearchRequest) -> SearchResults:
        started = time.perf_counter()
        gen, searcher = self._searcher()
        table = self._facet_table(gen, searcher)
        check_sort(request, table.has_citations)
        text = self._text_query(searcher, request.q, table, gen)
        people = self._people(gen, table, request.authors)
        filters, final = self._filtered(text.mask, request, table, people)
        total = int(final.sum())

        hits = self._page(searcher, text.query, request, final, filters, total, table, text.relaxed)
        facets = (
            self._facets(request, table, text.mask, filters, people) if request.facets else None
        )
        suggestion = None
        if text.query is not None and (total < FEW_RESULTS or text.relaxed):
            suggestion = self._suggest(searcher, request.q, table, gen)
        took = (time.perf_counter() - started) * 1000
        return SearchResults(
            request,
            total,
            hits,
            facets,
            round(took, 2),
            suggestion,
            relaxed=text.relaxed,
            words=text.words if text.relaxed else (),
            all_words_total=text.all_words_total,
            notices=text.notices,
            authors_found=_names_found(people, table),
            citations=table.has_citations,
        )

    def suggest(self, text: str) -> str | None:
        """``text`` with its misspelt words corrected, when the correction finds
        something (see pubsearch.spelling); None when there is nothing to correct."""
        gen, searcher = self._searcher()
        return self._suggest(searcher, text, self._facet_table(gen, searcher), gen)

    def count_word(self, word: str) -> int:
        """How many records have ``word`` (its stems) in their title or abstract."""
        gen, searcher = self._searcher()
        stems = searcher.schema[DEFAULT_FIELD].process_text(word, mode="query")
        return min((gen.doc_frequency(searcher, stem) for stem in stems), default=0)

    def count(self, request: SearchRequest) -> int:
        """How many records match ``request``: no hits, facets or suggestion computed."""
        gen, searcher = self._searcher()
        table = self._facet_table(gen, searcher)
        text = self._text_query(searcher, request.q, table, gen)
        people = self._people(gen, table, request.authors)
        return int(self._filtered(text.mask, request, table, people)[1].sum())

    def _text_query(
        self, searcher: Searcher, text: str, table: FacetTable, gen: _Generation
    ) -> _TextSearch:
        """The query to rank with, the documents it matches, and whether it is the relaxed
        reading (any bare word may be missing): every word is required, unless that finds
        too few for a longer query (see querying.TextQuery)."""

        gen = self._current_generation()

        def informativeness(stem: str) -> float:
            df = gen.doc_frequency(searcher, stem)
            return ranking.idf(searcher.doc_count_all(), df) if df else 0.0

        def names(typed: str) -> wq.Query | None:
            ids = gen.names(table).find(typed)
            if not ids:
                return None
            stems = searcher.schema["author"].process_text(typed, mode="query")
            scoring = wq.Or([wq.Term("author", stem) for stem in stems])
            docs = np.flatnonzero(table.authors.docs_with_ids(ids))
            return DocumentSet(docs, scoring, boost=NAME_BOOST)

        parsed = parse_text_query(text, searcher.schema, informativeness, names)
        if parsed is None or parsed.strict is None or _matches_everything(parsed.strict):
            # "*", and text with nothing to search for, are the empty query: every
            # record, newest first.
            notices = parsed.notices if parsed is not None else ()
            return _TextSearch(None, table.live.copy(), notices=notices)
        query = parsed.strict
        mask = self._query_mask(searcher, query, table)
        if parsed.relaxed is not None:
            strict_total = int(mask.sum())
            query = parsed.choose(strict_total)
            if query is parsed.relaxed:
                mask = self._query_mask(searcher, parsed.matching(query), table)
                return _TextSearch(query, mask, True, parsed.words, parsed.notices, strict_total)
        return _TextSearch(query, mask, False, parsed.words, parsed.notices)

    def _people(
        self, gen: _Generation, table: FacetTable, typed: tuple[str, ...]
    ) -> dict[str, list[int]]:
        """The authors (ids) each author filter stands for (see pubsearch.names)."""
        if not typed:
            return {}
        index = gen.names(table)
        return {name: index.find(name) for name in typed}

    def _filtered(
        self,
        text_mask: BoolArray,
        request: SearchRequest,
        table: FacetTable,
        people: dict[str, list[int]],
    ) -> tuple[dict[str, BoolArray], BoolArray]:
        """Each filter's documents, and the documents matching the query and every filter."""
        filters = self._filter_masks(request, table, people)
        final = text_mask.copy()
        for mask in filters.values():
            final &= mask
        return filters, final

    def _query_mask(
        self, searcher: Searcher, query: wq.Query | None, table: FacetTable
    ) -> BoolArray:
        if query is None:
            return table.live.copy()
        return query_mask(searcher, query, table.size) & table.live

    def _filter_masks(
        self, request: SearchRequest, table: FacetTable, people: dict[str, list[int]]
    ) -> dict[str, BoolArray]:
        masks: dict[str, BoolArray] = {}
        if request.authors:
            masks["author"] = table.authors.docs_with_ids(_people_ids(people))
        if request.subjects:
            masks["subject"] = table.subjects.docs_with_any([fold(s) for s in request.subjects])
        if request.year is not None:
            masks["year"] = table.year_mask(request.year.start, request.year.end)
        return masks

    def _page(
        self,
        searcher: Searcher,
        query: wq.Query | None,
        request: SearchRequest,
        final: BoolArray,
        filters: dict[str, BoolArray],
        total: int,
        table: FacetTable,
        sentence: bool = False,
    ) -> tuple[Hit, ...]:
        """The hits of the requested page. ``sentence``: the query is the relaxed reading
        of a longer text, ranked with feedback from its best match (see ranking.py)."""
        first = (request.page - 1) * request.page_size
        if first >= total:
            return ()
        if request.sort == "relevance" and query is not None:
            # Plain word queries: scored with numpy over the matching documents (the same
            # BM25F scores), instead of Whoosh stepping through every match.
            lengths = self._lengths(searcher)

            def feedback(docnum: int) -> wq.Query | None:
                length = float(lengths(DEFAULT_FIELD)[docnum])
                return ranking.feedback_query(searcher, docnum, length)

            top = top_documents(
                searcher,
                query,
                final,
                first + request.page_size,
                lengths,
                feedback if sentence else None,
                ranking.FEEDBACK_WEIGHT,
            )
            if top is not None:
                ranked = WhooshResults(searcher, query, top_n=top)
                marks = marked_words(query)
                return tuple(
                    self._hit(ranked[i], i + 1, marks, request) for i in range(first, len(top))
                )
        else:
            # By year, or by citation count: the same scores, ordered with numpy.
            if request.sort == "cited":
                top = documents_by_count(
                    searcher, query, final, first + request.page_size, table.cited, self._lengths
                )
            else:
                top = documents_by_year(
                    searcher,
                    query,
                    final,
                    first + request.page_size,
                    self._lengths(searcher),
                    table.years,
                    newest=request.sort != "oldest",
                    dates=table.dates,
                )
            if top is not None:
                ranked = WhooshResults(searcher, query or wq.Every(), top_n=top)
                year_marks = marked_words(query) if query is not None else None
                return tuple(
                    self._hit(ranked[i], i + 1, year_marks, request) for i in range(first, len(top))
                )
        # Anything else (fuzzy terms, another weighting model): Whoosh's own collector.
        allowed = set(np.flatnonzero(final).tolist()) if filters else None
        sortedby: Any = None
        if request.sort == "newest" or (request.sort == "relevance" and query is None):
            sortedby = [sorting.FieldFacet("year", reverse=True), sorting.ScoreFacet()]
        elif request.sort == "oldest":
            sortedby = [sorting.FieldFacet("year"), sorting.ScoreFacet()]
        results = searcher.search(
            query if query is not None else wq.Every(),
            limit=first + request.page_size,
            filter=allowed,
            sortedby=sortedby,
        )
        page_marks = marked_words(query) if query is not None else None
        hits = []
        for offset, whoosh_hit in enumerate(results[first : first + request.page_size]):
            hits.append(self._hit(whoosh_hit, first + offset + 1, page_marks, request))
        return tuple(hits)

    def _hit(
        self,
        hit: WhooshHit,
        rank: int,
        marks: dict[str, frozenset[str]] | None,
        request: SearchRequest,
    ) -> Hit:
        record = record_from_stored(hit.fields())
        if not request.highlight:
            title_html = html.escape(record.display_title)
            snippet = abstract_html = ""
        else:
            # What the page shows: TeX written as text, matched words marked in it.
            title = readable(record.display_title)
            abstract = readable(record.abstract)
            title_html = snippet = abstract_html = ""
            if marks is not None:
                snippet = highlight_field(
                    self._snippets, hit, "abstract", marks["abstract"], 2, abstract
                )
                title_field = "title" if record.title else "abstract"
                title_html = marked_to_html(
                    highlight_field(self._whole, hit, title_field, marks[title_field], 1, title)
                )
                abstract_html = marked_to_html(
                    highlight_field(self._whole, hit, "abstract", marks["abstract"], 1, abstract)
                )
            snippet = marked_to_html(snippet) if snippet else html.escape(lead(abstract))
            title_html = title_html or html.escape(title)
            abstract_html = abstract_html or html.escape(abstract)
        return Hit(
            rank=rank,
            id=record.id,
            title=record.title,
            abstract=record.abstract,
            authors=record.authors,
            year=record.year,
            subjects=record.subjects,
            source=record.source,
            url=record.url,
            score=round(float(hit.score), 4) if isinstance(hit.score, (int, float)) else None,
            snippet=snippet,
            title_html=title_html,
            untitled=not record.title,
            date=record.date,
            cited_by=record.cited_by,
            abstract_html=abstract_html,
        )

    def _facets(
        self,
        request: SearchRequest,
        table: FacetTable,
        text_mask: BoolArray,
        filters: dict[str, BoolArray],
        people: dict[str, list[int]],
    ) -> dict[str, tuple[FacetValue, ...]]:
        """Disjunctive counts: each facet counted with every filter but its own applied."""

        def base_for(name: str) -> BoolArray:
            mask = text_mask.copy()
            for other, fmask in filters.items():
                if other != name:
                    mask &= fmask
            return mask

        size = request.facet_size
        out: dict[str, tuple[FacetValue, ...]] = {}
        out["author"] = _multi_facet(
            table.authors,
            base_for("author"),
            _people_ids(people),
            size,
            unknown=[typed for typed, found in people.items() if not found],
        )
        years = table.count_years(base_for("year"))
        yr = request.year
        out["year"] = tuple(
            FacetValue(
                str(y),
                c,
                yr is not None
                and (yr.start is None or y >= yr.start)
                and (yr.end is None or y <= yr.end),
            )
            for y, c in sorted(years.items(), reverse=True)
        )
        subjects = table.subjects
        out["subject"] = _multi_facet(
            subjects,
            base_for("subject"),
            [
                subjects.ids_by_key[k]
                for k in map(fold, request.subjects)
                if k in subjects.ids_by_key
            ],
            size,
            unknown=[s for s in request.subjects if fold(s) not in subjects.ids_by_key],
        )
        return out

    def _suggest(
        self, searcher: Searcher, text: str, table: FacetTable, gen: _Generation
    ) -> str | None:
        """The query with its misspelt words corrected (see pubsearch.spelling), when that
        query finds something; None otherwise."""
        words = []
        for word in query_words(text):
            core = _WORD_CORE.search(text, word.start, word.end)
            if core is not None:
                # "title:" read as a word is corrected as a whole: "tie", not "tie:".
                end = word.end if text[core.end() : word.end] == ":" else core.end()
                words.append((core.start(), end, core.group()))
        if not worth_correcting(words):
            return None  # before the table is built: pasted text never needs it
        corrections = gen.spelling(searcher).corrections(words, self.count_word)
        if not corrections:
            return None
        corrected = text
        for fix in reversed(corrections):
            corrected = corrected[: fix.start] + fix.word + corrected[fix.end :]
        fixed = parse_text_query(corrected, searcher.schema)
        if fixed is None or fixed.strict is None:
            return None
        if not self._query_mask(searcher, fixed.strict, table).any():
            return None
        return corrected

    # -- records and stats -----------------------------------------------------------------

    def record(self, record_id: str) -> Record:
        _, searcher = self._searcher()
        stored = searcher.document(id=record_id)
        if stored is None:
            raise RecordNotFoundError(f"no record with id {record_id!r}")
        return record_from_stored(stored)

    def iter_records(self) -> Iterator[Record]:
        _, searcher = self._searcher()
        for stored in searcher.reader().all_stored_fields():
            yield record_from_stored(stored)

    def stats(self, top: int = 10) -> IndexStats:
        gen, searcher = self._searcher()
        table = self._facet_table(gen, searcher)
        live = table.live
        size = sum(p.stat().st_size for p in (self.index_dir / gen.name).iterdir() if p.is_file())
        return IndexStats(
            records=int(live.sum()),
            generation=gen.name,
            size_bytes=size,
            years=dict(sorted(table.count_years(live).items())),
            top_authors=_multi_facet(table.authors, live, [], top),
            top_subjects=_multi_facet(table.subjects, live, [], top),
            authors=int((table.authors.count(live) > 0).sum()),
            subjects=int((table.subjects.count(live) > 0).sum()),
            cited=int(((table.cited != NO_COUNT) & live).sum()),
        )

    # -- related records -------------------------------------------------------------------

    def related(self, record_id: str, request: SearchRequest) -> SearchResults:
        """The :data:`RELATED_MAX` records most like ``record_id`` (fewer when fewer share
        anything with it), filtered, sorted and paged like a search; each hit says which
        key words of the record it shares (``Hit.shared``).

        "Like" is Whoosh's more-like-this: the key terms of the record's title and abstract,
        searched for in the same fields of every other record. ``request.q``, when given,
        narrows the related records further. Raises RecordNotFoundError for an unknown id.
        """
        started = time.perf_counter()
        gen, searcher = self._searcher()
        table = self._facet_table(gen, searcher)
        check_sort(request, table.has_citations)
        query, key_words = self._more_like_query(searcher, record_id)
        narrowing = parse_query(request.q, searcher.schema)
        if narrowing is not None:
            query = wq.And([query, narrowing])

        people = self._people(gen, table, request.authors)
        filters = self._filter_masks(request, table, people)
        matching = self._query_mask(searcher, query, table)
        for mask in filters.values():
            matching &= mask
        # The closest only: a count of every record sharing a word with it means nothing.
        closest = np.zeros(table.size, dtype=np.bool_)
        top = top_documents(searcher, query, matching, RELATED_MAX, self._lengths(searcher))
        if top is not None:
            closest[[docnum for _, docnum in top]] = True
        total = int(closest.sum())

        hits = self._page(searcher, query, request, closest, filters, total, table)
        analyzer = searcher.schema[DEFAULT_FIELD].analyzer
        hits = tuple(replace(hit, shared=_shared_words(analyzer, hit, key_words)) for hit in hits)
        facets = self._facets(request, table, closest, {}, people) if request.facets else None
        took = (time.perf_counter() - started) * 1000
        return SearchResults(
            request,
            total,
            hits,
            facets,
            round(took, 2),
            authors_found=_names_found(people, table),
            citations=table.has_citations,
        )

    def _more_like_query(
        self, searcher: Searcher, record_id: str
    ) -> tuple[wq.Query, dict[str, str]]:
        """The query of the records like ``record_id``, and its key words (stem -> the
        word as the record writes it)."""
        stored = searcher.document(id=record_id)
        if stored is None:
            raise RecordNotFoundError(f"no record with id {record_id!r}")
        terms: list[wq.Query] = []
        words: dict[str, str] = {}
        for fieldname, boost, numterms in RELATED_FIELDS:
            text = stored.get(fieldname) or ""
            if not text:
                continue
            key_terms = searcher.key_terms_from_text(fieldname, text, numterms=numterms * 2)
            # Short and numeric terms ("al", "2018") say little about what a paper is about.
            kept = [(w, s) for w, s in key_terms if len(w) > 2 and not w.isdigit()]
            written = written_words(searcher.schema[fieldname].analyzer, readable(text))
            for word, weight in kept[:numterms]:
                terms.append(wq.Term(fieldname, word, boost=float(weight) * boost))
                words.setdefault(word, written.get(word, word))
        if not terms:
            return wq.NullQuery, {}
        return wq.AndNot(wq.Or(terms), wq.Term("id", record_id)), words


def _close_all(searchers: set[Searcher], lock: threading.Lock) -> None:
    with lock:
        left = list(searchers)
        searchers.clear()
    for searcher in left:
        searcher.close()


def _people_ids(people: dict[str, list[int]]) -> list[int]:
    """Every author id the author filters stand for, in order."""
    return sorted({i for found in people.values() for i in found})


def _names_found(people: dict[str, list[int]], table: FacetTable) -> dict[str, tuple[str, ...]]:
    """Each author filter as typed -> the names as recorded that it stands for."""
    return {typed: tuple(table.authors.labels[i] for i in ids) for typed, ids in people.items()}


def _multi_facet(
    values: MultiValued,
    docs: BoolArray,
    selected_ids: list[int],
    size: int,
    unknown: list[str] | None = None,
) -> tuple[FacetValue, ...]:
    """The ``size`` values with most ``docs``, and every selected one; selected values the
    index does not know (``unknown``) show too, with no documents, so they can be removed."""
    counts = values.count(docs)
    order = np.flatnonzero(counts)
    # Highest count first, then by label; only the top `size`, plus every selected value.
    if len(order) > size:
        top = order[np.argpartition(-counts[order], size - 1)[:size]]
    else:
        top = order
    chosen = set(top.tolist()) | set(selected_ids)
    ranked = sorted(chosen, key=lambda v: (-int(counts[v]), values.labels[v].casefold()))
    selected = set(selected_ids)
    out = [FacetValue(values.labels[v], int(counts[v]), v in selected) for v in ranked]
    out += [FacetValue(value, 0, True) for value in unknown or ()]
    return tuple(out)


def _shared_words(analyzer: Any, hit: Hit, key_words: dict[str, str]) -> tuple[str, ...]:
    """The key words (``key_words``: term -> word) that ``hit``'s title or abstract has,
    in the order of the key words."""
    have = set(analyzer.words(f"{hit.title}\n{hit.abstract}"))
    return tuple(word for term, word in key_words.items() if term in have)
