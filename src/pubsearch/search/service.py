"""The search service shared by the command line and the web page.

:class:`SearchService` turns a :class:`SearchRequest` into :class:`SearchResults`. It keeps
one Whoosh searcher per thread, reused while the index is unchanged and reopened when a
new generation is published, and one :class:`~pubsearch.index.facets.FacetTable` per generation.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
from whoosh import query as wq
from whoosh.searching import Results as WhooshResults
from whoosh.searching import Searcher

from pubsearch.codec import w3columns, w3version
from pubsearch.core.errors import IndexChangedError, ParameterError
from pubsearch.index import storage
from pubsearch.index.documents import record_from_stored
from pubsearch.index.facets import NO_COUNT, BoolArray, FacetTable
from pubsearch.index.schema import DEFAULT_FIELD, SCORED_FIELDS
from pubsearch.ingest.readable import readable
from pubsearch.ingest.records import Record
from pubsearch.search import profiles, ranking, semantic, wellmatched
from pubsearch.search.boxwords import BoxWords
from pubsearch.search.compiler import MIN_STRICT_MATCHES, bare_words, parse_text_query
from pubsearch.search.corpus import Corpus, generation_time, read_corpus
from pubsearch.search.generation import Generation, Snapshot, close_all
from pubsearch.search.highlighting import marked_words
from pubsearch.search.hits import HitMaker
from pubsearch.search.lookup import stored_record, with_unknown_noted
from pubsearch.search.masks import UnsupportedQuery, one_search, query_mask
from pubsearch.search.plan import Plan, TextSearch
from pubsearch.search.related import more_like, shared_words
from pubsearch.search.request import Mode, SearchRequest, check_sort
from pubsearch.search.results import Hit, IndexStats, SearchResults
from pubsearch.search.selection import Selection, facet_base, facet_counts, multi_facet, select
from pubsearch.search.topdocs import (
    documents_by_count,
    documents_by_year,
    prepare_norms,
    top_documents,
)

# A spelling correction is offered when a query finds fewer records than this, or finds
# them only with some of its words (and searched instead when it finds none).
FEW_RESULTS = 10
# Only these documents of this generation (a tag's records: pubsearch.library).
Within = tuple[str, BoolArray]
# How many of the closest records "related papers" shows.
RELATED_MAX = 50


def _matches_everything(query: wq.Query) -> bool:
    return type(query) is wq.Every and not query.fieldname


class SearchService:
    """Searches one index directory. Safe to share between threads.

    With ``prepare_in_background`` (a server), each generation the service opens has its
    author names and spelling words built by a thread of their own, so that no search of a
    new index pays for them."""

    def __init__(
        self, index_dir: Path, prepare_in_background: bool = False, model: Path | None = None
    ) -> None:
        self.index_dir = index_dir
        self.prepare_in_background = prepare_in_background
        self._lock = threading.Lock()
        self._generation: Generation | None = None
        self._local = threading.local()
        # Every searcher still open, whatever thread opened it: closed with the service
        # even when close() is never called (indexes are read through open files).
        self._open: set[Searcher] = set()
        weakref.finalize(self, close_all, self._open, self._lock)
        self._hits = HitMaker()
        self._queries = semantic.QueryVectors(model)  # (None: PUBSEARCH_MODEL or the bundled)

    # -- index and searcher lifecycle ------------------------------------------------------

    def _current_generation(self) -> Generation:
        live = storage.current_generation(self.index_dir)
        with self._lock:
            gen = self._generation
            if gen is None or live is None or gen.name != live.name:
                w3version.fast_paths()  # warns, once, of a Whoosh whose format it does not know
                name, index = storage.open_current(self.index_dir)
                gen = self._generation = Generation(name, index)
                if self.prepare_in_background:
                    threading.Thread(
                        target=self._prepare_generation,
                        args=(gen,),
                        name=f"prepare {name}",
                        daemon=True,
                    ).start()
            return gen

    def _prepare_generation(self, gen: Generation) -> None:
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

    def _build_tables(self, gen: Generation, searcher: Searcher) -> None:
        """``gen``'s facet table, author names, spelling words and the length part of the
        scores of its text fields, built if not yet; its vectors and the sentence model,
        where it has vectors."""
        table = self._facet_table(gen, searcher)
        table.prepare()
        gen.spelling(searcher, table, self.index_dir / gen.name)  # and the names
        prepare_norms(searcher, gen.field_lengths(searcher), SCORED_FIELDS)
        if self._offers_meaning(gen, searcher):
            self._queries.embedder()

    def _searcher(self) -> tuple[Generation, Searcher]:
        gen = self._current_generation()
        snap: Snapshot | None = getattr(self._local, "snapshot", None)
        if snap is None or snap.generation != gen.name:
            if snap is not None:
                self._close_searcher(snap.searcher)
            snap = Snapshot(gen.name, gen.index, gen.index.searcher(weighting=ranking.weighting()))
            w3columns.prepare_stored_fields(snap.searcher.reader())
            with self._lock:
                self._open.add(snap.searcher)
            self._local.snapshot = snap
        return gen, snap.searcher

    def _close_searcher(self, searcher: Searcher) -> None:
        with self._lock:
            self._open.discard(searcher)
        searcher.close()

    def _facet_table(self, gen: Generation, searcher: Searcher) -> FacetTable:
        with gen.lock:
            if gen.facets is None:
                # Saved by the build beside the index files; read from the index when the
                # generation has none (built by an older version).
                gen.facets = FacetTable.load(
                    self.index_dir / gen.name, searcher.reader(), gen.index.latest_generation()
                ) or FacetTable.build(searcher.reader())
            return gen.facets

    def prepare(self) -> None:
        """Open the current generation and build what the first searches of it would:
        its facet table, its author names and its spelling words (a server does this
        before it answers)."""
        gen, searcher = self._searcher()
        self._build_tables(gen, searcher)

    def close(self) -> None:
        snap: Snapshot | None = getattr(self._local, "snapshot", None)
        if snap is not None:
            self._close_searcher(snap.searcher)
            self._local.snapshot = None

    # -- searching -------------------------------------------------------------------------

    def search(self, request: SearchRequest, within: Within | None = None) -> SearchResults:
        """The results of ``request``; when nothing matches and a spelling correction
        does, the correction's (``corrected_from`` is then the text as typed)."""
        started = time.perf_counter()
        with one_search():
            results = self._search(request, within)
        found = results.total if results.word_total is None else results.word_total
        if found == 0 and results.suggestion and request.correct:
            with one_search():
                corrected = self._search(replace(request, q=results.suggestion), within)
            if corrected.total and (corrected.word_total is None or corrected.word_total):
                took = round((time.perf_counter() - started) * 1000, 2)
                return replace(corrected, corrected_from=request.q, took_ms=took)
        return results

    def _plan(
        self,
        gen: Generation,
        searcher: Searcher,
        request: SearchRequest,
        within: Within | None = None,
    ) -> Plan:
        """``request`` compiled once: its text query and readings, what its filters let
        through, its mode and similarities (see pubsearch.search.plan)."""
        table = self._facet_table(gen, searcher)
        check_sort(request, table.has_citations)
        text = self._text_query(searcher, request.q, table, gen, request.loose)
        chosen = select(gen, table, request, self.index_dir / gen.name)
        mode, sims = self._meaning_of(gen, searcher, request, text)
        matched = text.mask
        by_meaning: BoolArray | None = None
        if sims is not None:
            by_meaning = semantic.matches(sims) & table.live
            matched = by_meaning if mode == "semantic" else text.mask | by_meaning
        filters, final = self._filtered(matched, request, table, chosen)
        if within is not None:  # a set of records (a tag's): a filter no facet undoes
            if within[0] != gen.name:
                raise IndexChangedError(f"{self.index_dir} changed while it was read; try again")
            filters["within"] = within[1]
            final &= within[1]
        allowed = wellmatched.passing(table.live, filters.values())  # matching or not
        text = replace(text, among=wellmatched.ranked_among(text.split, allowed))
        return Plan(
            request,
            table,
            gen.field_lengths(searcher),
            text,
            chosen,
            filters,
            matched,
            final,
            allowed,
            mode,
            sims,
            by_meaning,
        )

    def _search(self, request: SearchRequest, within: Within | None = None) -> SearchResults:
        started = time.perf_counter()
        gen, searcher = self._searcher()
        plan = self._plan(gen, searcher, request, within)
        table, text, chosen, mode = plan.table, plan.text, plan.chosen, plan.mode
        total = plan.total
        word_total = None
        if plan.sims is not None:
            word_total = 0 if mode == "semantic" else int((plan.final & text.mask).sum())
            hits = self._meaning_page(searcher, plan)
        else:
            hits = self._page(searcher, plan)
        hits = self._with_people(gen, table, hits)
        facets = (
            facet_counts(request, table, plan.matched, plan.filters, chosen)
            if request.facets
            else None
        )
        if facets and facets.get("author"):
            people = gen.people_index(table, self.index_dir / gen.name)
            if people is not None:
                # A person chosen stays listed beside the others of the name.
                others = {k: v for k, v in plan.filters.items() if k != "person"}
                counted = facet_base(plan.matched, others, "author")
                facets["author"] = profiles.facet_people(
                    people, facets["author"], counted, request.person
                )
        if mode == "semantic":  # the words' reading says nothing about these results
            text = replace(text, relaxed=False, all_words_total=None, split=None)
        suggestion = None
        words_found = total if word_total is None else word_total
        if (
            mode != "semantic"
            and text.query is not None
            and (words_found < FEW_RESULTS or text.relaxed)
        ):
            suggestion = self._words(gen, searcher, table).suggestion(request.q)
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
            notices=text.notices + chosen.notices,
            authors_found=chosen.authors_found(table),
            subjects_found=chosen.subjects_found(table),
            mode=mode,
            word_total=word_total,
            meaning_available=self._offers_meaning(gen, searcher),
            citations=table.has_citations,
            loose_total=wellmatched.loose_total(text.split, plan.allowed, plan.by_meaning),
        )

    def _offers_meaning(self, gen: Generation, searcher: Searcher) -> bool:
        meaning = gen.meaning(self.index_dir / gen.name, searcher)
        if meaning is None:
            return False  # the sentence model's module is not even imported
        from pubsearch.index import embedding

        return embedding.available()

    def _meaning_of(
        self, gen: Generation, searcher: Searcher, request: SearchRequest, text: TextSearch
    ) -> tuple[Mode, semantic.FloatArray | None]:
        """The mode the request is searched in, and every document's similarity to the
        query (None in lexical mode). Hybrid is the default where the index has vectors and
        the model is installed; it applies to queries of plain words (explicit syntax asks
        for exactly what it says, so it is searched by its words)."""
        if request.mode == "lexical" or not request.q.strip():
            return "lexical", None
        meaning = gen.meaning(self.index_dir / gen.name, searcher)
        explicit = request.mode is not None
        if meaning is None:
            if explicit:
                raise ParameterError(
                    "mode", "this index has no vectors: add them with 'pubsearch embed'"
                )
            return "lexical", None
        from pubsearch.index import embedding

        if not embedding.available():
            if explicit:
                raise ParameterError("mode", embedding.unavailable_message())
            return "lexical", None
        mode: Mode = request.mode or "hybrid"
        if mode == "hybrid" and (text.query is None or bare_words(request.q) is None):
            return "lexical", None
        self._check_model(meaning.model)
        vector = self._queries.vector(request.q.strip())
        return mode, meaning.similarities(vector)

    def _check_model(self, made_by: str) -> None:
        """Refuse to compare a query's vector with vectors another model made."""
        from pubsearch.index.models import model_base

        ours = self._queries.embedder().model_id
        if model_base(made_by) != model_base(ours):
            raise ParameterError(
                "model",
                f"the vectors of {self.index_dir} were made by {model_base(made_by)}, not by "
                f"{model_base(ours)} (--model or PUBSEARCH_MODEL): search it with that model, "
                f"or make its vectors again with this one: pubsearch embed --index "
                f"{self.index_dir} --model DIR",
            )

    def _meaning_page(self, searcher: Searcher, plan: Plan) -> tuple[Hit, ...]:
        """A page of hybrid or semantic results (see pubsearch.search.semantic)."""
        request, text, final, sims = plan.request, plan.text, plan.final, plan.sims
        assert sims is not None  # (a plan with meaning)
        hybrid = plan.mode == "hybrid"
        first = (request.page - 1) * request.page_size
        if first >= plan.total:
            return ()
        need = first + request.page_size
        ranked: list[tuple[float, int]] | None
        if request.sort == "relevance":
            # The nearest records that pass the filters, matches or not, set the scale of
            # the similarities (see semantic.fuse); only matches are ranked.
            depth = max(semantic.DEPTH, need)
            ranked = semantic.top(sims, plan.allowed, depth)
            if hybrid and text.query is not None:
                words = final & text.mask if text.among is None else text.among
                lexical = self._top_by_words(searcher, plan, words, depth)
                ranked = semantic.fuse(lexical or [], ranked, sims)
            ranked = [(score, doc) for score, doc in ranked if final[doc]]
        else:
            ranked = self._ordered(searcher, plan, None, final, need)
        ranked = ranked or []
        hits = list(self._ranked_page(searcher, text.query, ranked, request))
        # Found by meaning (in hybrid mode: without the words): say why, with the sentence
        # of the abstract closest in meaning to the query.
        found = [i for i in range(len(hits)) if not (hybrid and text.mask[ranked[first + i][1]])]
        whys = [""] * len(found)
        if request.highlight and found:
            abstracts = [readable(hits[i].abstract) for i in found]
            closest = self._queries.closest_sentences(abstracts, request.q.strip())
            from html import escape

            whys = [escape(sentence or "") for sentence in closest]
        for i, why in zip(found, whys, strict=True):
            hits[i] = replace(hits[i], by_meaning=True, why=why, snippet=why or hits[i].snippet)
        return tuple(hits)

    def suggest(self, text: str) -> str | None:
        """``text`` with its misspelt words corrected, when the correction finds
        something (see pubsearch.index.spelling); None when there is nothing to correct."""
        gen, searcher = self._searcher()
        return self._words(gen, searcher, self._facet_table(gen, searcher)).suggestion(text)

    def count_word(self, word: str) -> int:
        """How many records have ``word`` (its stems) in their title or abstract."""
        gen, searcher = self._searcher()
        return self._words(gen, searcher, self._facet_table(gen, searcher)).count_word(word)

    def _words(self, gen: Generation, searcher: Searcher, table: FacetTable) -> BoxWords:
        return BoxWords(gen, searcher, table, self.index_dir / gen.name)

    def count(self, request: SearchRequest) -> int:
        """How many records match ``request``: no hits, facets or suggestion computed."""
        gen, searcher = self._searcher()
        table = self._facet_table(gen, searcher)
        text = self._text_query(searcher, request.q, table, gen, request.loose)
        chosen = select(gen, table, request, self.index_dir / gen.name)
        return int(self._filtered(text.mask, request, table, chosen)[1].sum())

    def _text_query(
        self, searcher: Searcher, text: str, table: FacetTable, gen: Generation, loose: bool = False
    ) -> TextSearch:
        """The query to rank with, the documents it matches, and whether it is the relaxed
        reading (any bare word may be missing): every word is required, unless that finds
        too few for a longer query (see compiler.TextQuery); of the relaxed reading's, those
        that match it well (see wellmatched.py), or with ``loose`` all."""

        words = self._words(gen, searcher, table)
        parsed = with_unknown_noted(words.parse(text), searcher.reader())  # ids no record has
        if parsed is None or parsed.strict is None or _matches_everything(parsed.strict):
            # "*", and text with nothing to search for, are the empty query: every
            # record, newest first.
            notices = parsed.notices if parsed is not None else ()
            return TextSearch(None, table.live.copy(), notices=notices)
        query = parsed.strict
        mask = self._query_mask(searcher, query, table)
        strict_total = int(mask.sum())
        if parsed.named is not None and strict_total < MIN_STRICT_MATCHES:
            # Surnames among other words: their people's papers first (pubsearch.search.boxwords).
            named = self._query_mask(searcher, parsed.named, table)
            if int(named.sum()) > strict_total:
                return TextSearch(parsed.named, named, False, parsed.words, parsed.notices)
        if parsed.relaxed is not None:
            query = parsed.choose(strict_total)
            if query is parsed.relaxed:
                found = self._query_mask(searcher, parsed.matching(query), table)
                lengths = gen.field_lengths(searcher)
                split = wellmatched.split(
                    searcher, parsed, found, mask, lengths, words.informativeness
                )
                mask = found if loose else split.well
                notices = parsed.notices
                return TextSearch(query, mask, True, parsed.words, notices, strict_total, split)
        return TextSearch(query, mask, False, parsed.words, parsed.notices)

    def _filtered(
        self,
        text_mask: BoolArray,
        request: SearchRequest,
        table: FacetTable,
        chosen: Selection,
    ) -> tuple[dict[str, BoolArray], BoolArray]:
        """Each filter's documents, and the documents matching the query and every filter."""
        filters = chosen.masks(request, table)
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

    def _top_by_words(
        self, searcher: Searcher, plan: Plan, allowed: BoolArray, count: int
    ) -> list[tuple[float, int]] | None:
        """The ``count`` best of ``allowed`` documents by the plan's query's words, scored
        with numpy over the matching documents (the same BM25F scores), instead of Whoosh
        stepping through every match; None for a query that module does not score. A
        relaxed reading is ranked with feedback from its best match (ranking.py) among all
        its matches (``text.among``: see wellmatched.py)."""
        text, lengths = plan.text, plan.lengths
        query = text.query
        assert query is not None  # (a plan with a query)
        among, split = text.among, text.split
        ranked_among = allowed if among is None else among
        shown = None if among is None else allowed
        scored = None if split is None else split.scored
        if text.relaxed:
            return ranking.top_with_feedback(
                searcher, query, ranked_among, count, lengths, shown=shown, scored=scored
            )
        return top_documents(searcher, query, ranked_among, count, lengths, shown, scored)

    def _ordered(
        self,
        searcher: Searcher,
        plan: Plan,
        query: wq.Query | None,
        allowed: BoolArray,
        count: int,
    ) -> list[tuple[float, int]] | None:
        """The first ``count`` allowed documents by date or by citation count (the
        request's sort), ties by score; None for a query that cannot be scored here."""
        request, table, lengths = plan.request, plan.table, plan.lengths
        if request.sort == "cited":
            return documents_by_count(searcher, query, allowed, count, table.cited, lengths)
        return documents_by_year(
            searcher,
            query,
            allowed,
            count,
            lengths,
            table.years,
            newest=request.sort != "oldest",
            dates=table.dates,
        )

    def _page(self, searcher: Searcher, plan: Plan) -> tuple[Hit, ...]:
        """The hits of the requested page."""
        request, query, final = plan.request, plan.text.query, plan.final
        first = (request.page - 1) * request.page_size
        if first >= plan.total:
            return ()
        if request.sort == "relevance" and query is not None:
            top = self._top_by_words(searcher, plan, final, first + request.page_size)
            if top is not None:
                ranked = WhooshResults(searcher, query, top_n=top)
                marks = marked_words(query)
                return tuple(
                    self._hits.make(ranked[i], i + 1, marks, request)
                    for i in range(first, len(top))
                )
        else:
            top = self._ordered(searcher, plan, query, final, first + request.page_size)
            if top is not None:
                ranked = WhooshResults(searcher, query or wq.Every(), top_n=top)
                year_marks = marked_words(query) if query is not None else None
                return tuple(
                    self._hits.make(ranked[i], i + 1, year_marks, request)
                    for i in range(first, len(top))
                )
        # Every query the compiler makes is scored here (masks.EXECUTED), with the
        # weighting every searcher of the service has (ranking.weighting).
        raise UnsupportedQuery(query if query is not None else wq.Every())

    # -- records and stats -----------------------------------------------------------------

    def record(self, record_id: str) -> Record:
        """The record of an id, or of any arXiv id or DOI it has (see pubsearch.search.lookup)."""
        _, searcher = self._searcher()
        return record_from_stored(stored_record(searcher, record_id))

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
            top_authors=multi_facet(table.authors, live, [], top),
            top_subjects=multi_facet(table.subjects, live, [], top),
            authors=int((table.authors.count(live) > 0).sum()),
            subjects=int((table.subjects.count(live) > 0).sum()),
            cited=int(((table.cited != NO_COUNT) & live).sum()),
        )

    # -- the library's views of a generation (pubsearch.library) -----------------------------

    def corpus(self) -> Corpus:
        """Every document of the live generation by number (read once per generation)."""
        return self._corpus(*self._searcher())

    def _corpus(
        self, gen: Generation, searcher: Searcher, texts: list[str] | None = None
    ) -> Corpus:
        with gen.lock:
            if gen.corpus is None or texts is not None:
                published = generation_time(gen.name, (self.index_dir / gen.name).stat().st_mtime)
                gen.corpus = read_corpus(searcher.reader(), gen.name, published, texts)
            return gen.corpus

    def texts(self) -> tuple[Corpus, list[str]]:
        """The live generation's documents and each one's title and abstract (a line
        apart; "" for a deleted document), by document number: read afresh, not kept."""
        texts: list[str] = []
        corpus = self._corpus(*self._searcher(), texts=texts)
        return corpus, texts

    def matching(self, request: SearchRequest) -> tuple[str, BoolArray]:
        """The generation searched and the documents ``request`` finds (its text, mode and
        filters), as a boolean array by document number."""
        gen, searcher = self._searcher()
        return gen.name, self._plan(gen, searcher, request).final

    def meaning(self) -> tuple[str, semantic.SemanticIndex | None]:
        """The live generation's name and its sentence vectors (None: it has none)."""
        gen, searcher = self._searcher()
        return gen.name, gen.meaning(self.index_dir / gen.name, searcher)

    def hits_of(
        self, generation: str, ranked: list[tuple[float, int]], request: SearchRequest
    ) -> tuple[Hit, ...]:
        """The requested page of ``ranked`` (score, document number of ``generation``), as
        hits; IndexChangedError when another generation is live now."""
        gen, searcher = self._searcher()
        if gen.name != generation:
            raise IndexChangedError(f"{self.index_dir} changed while it was read; try again")
        hits = self._ranked_page(searcher, None, ranked, request)
        return self._with_people(gen, self._facet_table(gen, searcher), hits)

    # -- people ----------------------------------------------------------------------------

    def _with_people(
        self, gen: Generation, table: FacetTable, hits: tuple[Hit, ...]
    ) -> tuple[Hit, ...]:
        """``hits`` with each author's person, where the generation has its people table
        saved (one an older build made has none until a profile is first asked for)."""
        if not hits:
            return hits
        people = gen.saved_people(table, self.index_dir / gen.name)
        if people is None:
            return hits
        return tuple(
            replace(hit, people=profiles.people_of_record(table, people, hit.doc, hit.authors))
            if hit.doc >= 0
            else hit
            for hit in hits
        )

    def author(self, name: str) -> profiles.AuthorProfiles:
        """The people the author name ``name`` stands for (pubsearch.search.profiles), most
        records first. Raises ParameterError when the index has no such author."""
        gen, searcher = self._searcher()
        table = self._facet_table(gen, searcher)
        directory = self.index_dir / gen.name
        people = gen.people(table, directory)
        numbers = profiles.people_numbers(name, table, gen.names(table, directory), people)
        if not numbers:
            raise ParameterError("NAME", f"no author {name!r} in the index")
        found = [profiles.profile(table, people, n, searcher.stored_fields) for n in numbers]
        found.sort(key=lambda person: (-len(person.records), person.id))
        return profiles.AuthorProfiles(name, tuple(found))

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
        lengths = gen.field_lengths(searcher)
        check_sort(request, table.has_citations)
        query, key_words = more_like(searcher, record_id)
        words = self._words(gen, searcher, table)
        read = parse_text_query(request.q, searcher.schema, subjects=words.subject)
        narrowing = read.strict if read is not None else None
        chosen = select(gen, table, request, self.index_dir / gen.name)
        filters = chosen.masks(request, table)
        allowed = table.live.copy()
        for mask in filters.values():
            allowed &= mask
        if narrowing is not None:
            allowed &= self._query_mask(searcher, narrowing, table)
            query = wq.And([query, narrowing])
        # By meaning where the record has a vector: the nearest records.
        meaning = (
            None if request.mode == "lexical" else gen.meaning(self.index_dir / gen.name, searcher)
        )
        docnum = searcher.document_number(id=record_id)
        vector = meaning.vector(docnum) if meaning is not None and docnum is not None else None
        mode: Mode
        if meaning is not None and vector is not None and docnum is not None:
            allowed[docnum] = False
            top = semantic.top(meaning.similarities(vector), allowed, RELATED_MAX)
            mode = "semantic"
        else:
            top = (
                top_documents(
                    searcher,
                    query,
                    allowed & self._query_mask(searcher, query, table),
                    RELATED_MAX,
                    lengths,
                )
                or []
            )
            mode = "lexical"
        # The closest only: a count of every record sharing a word with it means nothing.
        closest = np.zeros(table.size, dtype=np.bool_)
        closest[[d for _, d in top]] = True
        total = int(closest.sum())
        if mode == "semantic" and request.sort == "relevance":
            hits = self._ranked_page(searcher, query, top, request)
        else:
            # The related records as a plan's matches: the page steps as a search's do.
            plan = Plan(
                request,
                table,
                lengths,
                TextSearch(query, closest),
                chosen,
                filters,
                closest,
                closest,
                allowed,
                mode,
            )
            hits = self._page(searcher, plan)
        analyzer = searcher.schema[DEFAULT_FIELD].analyzer
        hits = tuple(replace(hit, shared=shared_words(analyzer, hit, key_words)) for hit in hits)
        hits = self._with_people(gen, table, hits)
        facets = facet_counts(request, table, closest, {}, chosen) if request.facets else None
        took = (time.perf_counter() - started) * 1000
        return SearchResults(
            request,
            total,
            hits,
            facets,
            round(took, 2),
            notices=chosen.notices,
            authors_found=chosen.authors_found(table),
            subjects_found=chosen.subjects_found(table),
            mode=mode,
            citations=table.has_citations,
        )

    def _ranked_page(
        self,
        searcher: Searcher,
        query: wq.Query | None,
        ranked: list[tuple[float, int]],
        request: SearchRequest,
    ) -> tuple[Hit, ...]:
        """The requested page of ``ranked`` (score, document number), best first."""
        first = (request.page - 1) * request.page_size
        ranked = ranked[: first + request.page_size]
        results = WhooshResults(searcher, query or wq.Every(), top_n=ranked)
        marks = marked_words(query) if query is not None else None
        return tuple(
            self._hits.make(results[i], i + 1, marks, request) for i in range(first, len(ranked))
        )
