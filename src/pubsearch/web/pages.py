"""What a results page shows, as plain data: the templates only render it.

:func:`build_results_page` turns :class:`SearchResults` into facet groups (each value with its
count and the URL that ticks or unticks it), the year histogram, removable chips, pages,
and the links of each hit. Nothing here searches; everything here is a URL or a label.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from pubsearch.index.names import exact_name, quoted_name
from pubsearch.ingest.readable import readable
from pubsearch.ingest.records import Record
from pubsearch.ingest.subjects import arxiv_subject_name
from pubsearch.search.broadening import BroaderSearch
from pubsearch.search.highlighting import html_to_plain
from pubsearch.search.request import (
    DEFAULT_FACET_SIZE,
    MAX_PAGE_SIZE,
    MAX_RESULT_DEPTH,
    SORT_ORDERS,
    SearchRequest,
)
from pubsearch.search.results import FacetValue, Hit, SearchResults
from pubsearch.web import urls

SORT_LABELS = {
    "relevance": "Relevance",
    "newest": "Newest first",
    "oldest": "Oldest first",
    "cited": "Most cited",
}
# A related-papers page ranks by closeness to its record.
RELATED_SORT_LABELS = {**SORT_LABELS, "relevance": "Most similar"}
MODE_LABELS = {"hybrid": "Words and meaning", "lexical": "Words only", "semantic": "Meaning only"}
PAGE_SIZES = (10, 20, 50, MAX_PAGE_SIZE)
MAX_FACET_SIZE = 1000
HISTOGRAM_STEPS = 20  # bar heights are classes h0..h20 (the CSP allows no inline styles)
HISTOGRAM_MAX_GAP_FILL = 80  # years between the first and last shown as empty bars
PAGE_WINDOW = 2  # page links either side of the current page


@dataclass(frozen=True)
class Link:
    label: str
    url: str
    title: str = ""


@dataclass(frozen=True)
class Choice:
    """An option of a select (sort order, page size)."""

    value: str
    label: str
    selected: bool


@dataclass(frozen=True)
class FacetOption:
    value: str
    title: str  # the full name of a subject code; "" for authors
    count: int
    selected: bool
    url: str  # ticks the value, or unticks it when selected
    # What its checkbox sends: the value, or for a name selected by a name in quotes (a
    # hit's author link), that name in quotes, so that it stays that person only.
    param: str = ""
    # A name of several people: a link to each one's records (person=), with a hint; the
    # first PEOPLE_SHOWN (and the chosen one), and how many more the profile page lists.
    people: tuple[PersonOption, ...] = ()
    more_people: int = 0


@dataclass(frozen=True)
class PersonOption:
    hint: str
    count: int
    selected: bool
    url: str  # only this person's records, or (selected) the name's again


@dataclass(frozen=True)
class FacetGroup:
    name: str  # the parameter: author, subject
    title: str
    options: tuple[FacetOption, ...]
    more_url: str | None
    fewer_url: str | None
    filterable: bool  # long lists get a type-to-filter box

    @property
    def selected_count(self) -> int:
        return sum(1 for o in self.options if o.selected)


@dataclass(frozen=True)
class YearBar:
    year: int
    count: int
    selected: bool
    url: str | None  # None for a year without matches
    height: int  # 0..HISTOGRAM_STEPS
    show_label: bool


@dataclass(frozen=True)
class YearFacet:
    bars: tuple[YearBar, ...]
    selected: str  # the year parameter ("2019..2021"), "" when none
    clear_url: str | None


@dataclass(frozen=True)
class Chip:
    facet: str
    label: str
    title: str
    remove_url: str


@dataclass(frozen=True)
class SubjectTag:
    code: str  # the subject as recorded: an arXiv code, a keyword, an OpenAlex topic
    name: str  # an arXiv code's full name; "" for any other subject
    url: str


@dataclass(frozen=True)
class HitView:
    hit: Hit
    authors: tuple[Link, ...]
    subjects: tuple[SubjectTag, ...]
    source: Link
    related_url: str
    cited: str = ""  # "Cited by 12", where the record has a citation count


@dataclass(frozen=True)
class RecordHeader:
    """The record a related-papers page is about, as its header shows it."""

    title: str  # readable text (TeX written as text); the template escapes it
    authors: str
    year: int | None


@dataclass(frozen=True)
class PageLink:
    number: int | None  # None for a gap ("...")
    url: str
    current: bool


@dataclass(frozen=True)
class ExportLinks:
    links: tuple[Link, ...]
    note: str


@dataclass(frozen=True)
class ResultsPage:
    results: SearchResults
    path: str
    hits: tuple[HitView, ...]
    facets: tuple[FacetGroup, ...]
    years: YearFacet
    chips: tuple[Chip, ...]
    clear_url: str | None
    pages: tuple[PageLink, ...]
    first_url: str
    prev_url: str | None
    next_url: str | None
    sorts: tuple[Choice, ...]
    modes: tuple[Choice, ...]  # empty where the index has no vectors
    page_sizes: tuple[Choice, ...]
    export: ExportLinks
    suggestion_url: str | None
    original_url: str | None  # the text as typed, when results are of its correction
    broader: BroaderSearch | None
    broader_url: str | None
    related: RecordHeader | None = None  # on a related-papers page, its record
    # Shows the records that share only some of a relaxed query's words too, or (when they
    # are shown) only those that match it well; None when there are none.
    loose_url: str | None = None

    @property
    def request(self) -> SearchRequest:
        return self.results.request

    @property
    def first(self) -> int:
        return self.hits[0].hit.rank if self.hits else 0

    @property
    def last(self) -> int:
        return self.hits[-1].hit.rank if self.hits else 0

    @property
    def filtered(self) -> bool:
        return bool(self.chips)


def build_results_page(
    results: SearchResults,
    path: str,
    export_paths: Mapping[str, str],
    export_cap: int,
    related_url: Callable[[str], str],
    broader: BroaderSearch | None = None,
    extra_export_params: str = "",
    related: Record | None = None,
    author_url: Callable[[str, str], str] | None = None,
) -> ResultsPage:
    """Everything a results page at ``path`` shows, computed from ``results``.

    ``export_paths`` maps a format's label (BibTeX, CSV, JSON lines) to its export route;
    ``related_url`` gives the URL of a record's related-papers page; ``related`` is the
    record of a related-papers page; ``author_url`` the URL of an author's profile (a name
    and its person's id, "" when unknown), where an author's name links to.
    """
    req = results.request

    def url(r: SearchRequest) -> str:
        return urls.search_url(path, r)

    facets = results.facets or {}
    groups = (
        _facet_group(
            "author",
            "Authors",
            facets.get("author", ()),
            req,
            path,
            filterable=True,
            found=results.authors_found,
        ),
        _facet_group(
            "subject",
            "Subjects",
            facets.get("subject", ()),
            req,
            path,
            found=results.subjects_found,
        ),
    )
    return ResultsPage(
        results=results,
        path=path,
        hits=tuple(_hit_view(hit, req, path, related_url, author_url) for hit in results.hits),
        facets=groups,
        years=_year_facet(facets.get("year", ()), req, path),
        chips=_chips(req, path, results.authors_found, results.subjects_found)
        + _person_chip(results, path),
        clear_url=url(urls.without_filters(req)) if _has_filters(req) else None,
        pages=_pages(results, path),
        first_url=url(replace(req, page=1)),
        prev_url=url(replace(req, page=req.page - 1)) if req.page > 1 else None,
        next_url=url(replace(req, page=req.page + 1)) if req.page < _last_page(results) else None,
        sorts=_sorts(req, results.citations, related=related is not None),
        modes=_modes(results),
        page_sizes=tuple(
            Choice(str(n), str(n), n == req.page_size) for n in sorted({*PAGE_SIZES, req.page_size})
        ),
        export=_export_links(results, export_paths, export_cap, extra_export_params),
        suggestion_url=(
            url(replace(req, q=results.suggestion, page=1, correct=True))
            if results.suggestion
            else None
        ),
        original_url=(
            url(replace(req, q=results.corrected_from, page=1, correct=False))
            if results.corrected_from is not None
            else None
        ),
        broader=broader,
        broader_url=url(broader.request) if broader else None,
        related=_record_header(related) if related is not None else None,
        loose_url=url(replace(req, loose=not req.loose, page=1)) if results.loose_total else None,
    )


def _record_header(record: Record) -> RecordHeader:
    return RecordHeader(readable(record.display_title), ", ".join(record.authors), record.year)


def _sorts(req: SearchRequest, citations: bool, related: bool) -> tuple[Choice, ...]:
    """The sort orders to offer ("Most cited" only for an index with citation counts).
    A related-papers page ranks by closeness to its record ("Most similar"). Elsewhere,
    without query text there is nothing to rank by relevance: the list starts newest
    first, and the box says so."""
    offered = tuple(s for s in SORT_ORDERS if citations or s != "cited")
    if related:
        return tuple(Choice(s, RELATED_SORT_LABELS[s], s == req.sort) for s in offered)
    if req.q.strip() not in ("", "*"):
        return tuple(Choice(s, SORT_LABELS[s], s == req.sort) for s in offered)
    # "Newest first" keeps the default's value unless it was asked for by name: the form
    # then leaves it out of the URL, and text typed later is ranked by relevance.
    newest = "newest" if req.sort == "newest" else SearchRequest().sort
    return (
        Choice(newest, SORT_LABELS["newest"], req.sort not in ("oldest", "cited")),
        *(Choice(s, SORT_LABELS[s], s == req.sort) for s in offered if s in ("oldest", "cited")),
    )


def _modes(results: SearchResults) -> tuple[Choice, ...]:
    """How to match, offered where the index can match by meaning: hybrid (the default),
    words only, meaning only."""
    if not results.meaning_available:
        return ()
    chosen = results.request.mode or "hybrid"
    return tuple(Choice(m, MODE_LABELS[m], m == chosen) for m in MODE_LABELS)


def _has_filters(req: SearchRequest) -> bool:
    return bool(req.authors or req.subjects or req.year is not None)


def _person_request(req: SearchRequest, person: str, selected: bool) -> SearchRequest:
    """``req`` narrowed to ``person``'s records, or (``selected``) no longer."""
    return replace(req, person=None if selected else person, page=1)


def _facet_group(
    name: str,
    title: str,
    values: tuple[FacetValue, ...],
    req: SearchRequest,
    path: str,
    filterable: bool = False,
    found: Mapping[str, tuple[str, ...]] | None = None,
) -> FacetGroup:
    toggle = urls.toggle_author if name == "author" else urls.toggle_subject
    chosen = req.authors if name == "author" else req.subjects

    def toggled(value: FacetValue) -> SearchRequest:
        # A value selected by a filter typed otherwise ("Vishal Patel" for "Vishal M.
        # Patel", "astro-ph" for astro-ph.GA): unticking it removes that filter.
        typed = [t for t, values in (found or {}).items() if value.value in values]
        if value.selected and value.value not in chosen and typed:
            kept = tuple(v for v in chosen if v not in typed)
            if name == "author":
                return replace(req, authors=kept, page=1)
            return replace(req, subjects=kept, page=1)
        return toggle(req, value.value)

    def param(value: FacetValue) -> str:
        exact = name == "author" and any(
            quoted_name(t) is not None and value.value in names
            for t, names in (found or {}).items()
        )
        return exact_name(value.value) if value.selected and exact else value.value

    options = tuple(
        FacetOption(
            value=v.value,
            title=(arxiv_subject_name(v.value) or "") if name == "subject" else "",
            count=v.count,
            selected=v.selected,
            url=urls.search_url(path, toggled(v)),
            param=param(v),
            people=tuple(
                PersonOption(
                    p.hint or p.id,
                    p.count,
                    p.selected,
                    urls.search_url(path, _person_request(req, p.id, p.selected)),
                )
                for n, p in enumerate(v.people)
                if n < PEOPLE_SHOWN or p.selected
            ),
            more_people=sum(
                1 for n, p in enumerate(v.people) if n >= PEOPLE_SHOWN and not p.selected
            ),
        )
        for v in values
    )
    unselected = sum(1 for v in values if not v.selected)
    more = None
    if unselected >= req.facet_size and req.facet_size < MAX_FACET_SIZE:
        more = urls.search_url(
            path, replace(req, facet_size=min(MAX_FACET_SIZE, req.facet_size * 5))
        )
    fewer = None
    if req.facet_size > DEFAULT_FACET_SIZE:
        fewer = urls.search_url(path, replace(req, facet_size=DEFAULT_FACET_SIZE))
    return FacetGroup(name, title, options, more, fewer, filterable)


def _year_facet(values: tuple[FacetValue, ...], req: SearchRequest, path: str) -> YearFacet:
    counts = {int(v.value): v for v in values}
    years = sorted(counts)
    if years and years[-1] - years[0] <= HISTOGRAM_MAX_GAP_FILL:
        years = list(range(years[0], years[-1] + 1))
    peak = max((v.count for v in values), default=0)
    every = max(1, math.ceil(len(years) / 8))
    bars = []
    for i, year in enumerate(years):
        value = counts.get(year)
        count = value.count if value else 0
        height = math.ceil(count / peak * HISTOGRAM_STEPS) if peak and count else 0
        bars.append(
            YearBar(
                year=year,
                count=count,
                selected=bool(value and value.selected),
                url=urls.search_url(path, urls.toggle_year(req, year)) if count else None,
                height=height,
                show_label=i % every == 0 or i == len(years) - 1,
            )
        )
    clear = None
    if req.year is not None:
        clear = urls.search_url(path, replace(req, year=None, page=1))
    return YearFacet(tuple(bars), str(req.year) if req.year else "", clear)


def _chips(
    req: SearchRequest,
    path: str,
    authors: Mapping[str, tuple[str, ...]],
    subjects: Mapping[str, tuple[str, ...]],
) -> tuple[Chip, ...]:
    chips = [
        Chip(
            "Author",
            *_author_chip(a, authors.get(a)),
            urls.search_url(path, urls.toggle_author(req, a)),
        )
        for a in req.authors
    ]
    chips += [
        Chip(
            "Subject",
            *_subject_chip(s, subjects.get(s)),
            urls.search_url(path, urls.toggle_subject(req, s)),
        )
        for s in req.subjects
    ]
    if req.year is not None:
        chips.append(
            Chip("Year", str(req.year), "", urls.search_url(path, replace(req, year=None, page=1)))
        )
    return tuple(chips)


def _person_chip(results: SearchResults, path: str) -> tuple[Chip, ...]:
    """The chip of a ``person=`` filter: the person's name and hint where the author facet
    lists them, else their id."""
    req = results.request
    if req.person is None:
        return ()
    label = req.person
    for value in (results.facets or {}).get("author", ()):
        for person in value.people:
            if person.id == req.person:
                label = f"{value.value} ({person.hint})" if person.hint else value.value
    remove = urls.search_url(path, replace(req, person=None, page=1))
    return (Chip("Person", label, "Only this person's records", remove),)


def _author_chip(typed: str, names: tuple[str, ...] | None) -> tuple[str, str]:
    """An author filter's chip: its label and its tooltip, from the names it stands for:
    the one name as recorded, or what was typed with how many names it found. A name in
    quotes (a hit's author link) stands for that name only: the tooltip says so."""
    exact = "Only this name, as recorded" if quoted_name(typed) is not None else ""
    if names is None:
        return typed, exact
    if not names:
        return typed, "No author of this name in the index"
    if len(names) == 1:
        return names[0], exact
    shown = _listed(names)
    return f"{typed} ({len(names)} names)", f"{exact}: {shown}" if exact else shown


def _subject_chip(typed: str, subjects: tuple[str, ...] | None) -> tuple[str, str]:
    """A subject filter's chip: the one subject as recorded (its arXiv name as the
    tooltip), or what was typed with how many subjects it stands for."""
    if not subjects:
        return typed, arxiv_subject_name(typed) or ("" if subjects is None else "Not in the index")
    if len(subjects) == 1:
        return subjects[0], arxiv_subject_name(subjects[0]) or ""
    return f"{typed} ({len(subjects)} subjects)", _listed(subjects)


def _listed(values: tuple[str, ...]) -> str:
    """A chip's tooltip list: the first CHIP_VALUES values."""
    more = ", \u2026" if len(values) > CHIP_VALUES else ""
    return ", ".join(values[:CHIP_VALUES]) + more


# The people of an author facet's name listed under it (the rest: on its profile page).
PEOPLE_SHOWN = 8

# A chip's tooltip lists this many of the values its filter stands for.
CHIP_VALUES = 8


def _hit_view(
    hit: Hit,
    req: SearchRequest,
    path: str,
    related_url: Callable[[str], str],
    author_url: Callable[[str, str], str] | None = None,
) -> HitView:
    title = hit.title or html_to_plain(hit.title_html).removesuffix(" \u2026")
    source_url, source_label = urls.source_link(hit.url, title, hit.source)
    people = hit.people or ("",) * len(hit.authors)
    return HitView(
        hit=hit,
        authors=tuple(
            Link(a, author_url(a, person), f"{a}: profile and papers")
            if author_url is not None
            else Link(a, urls.search_url(path, urls.only_author(req, a)), f"Only papers by {a}")
            for a, person in zip(hit.authors, people, strict=True)
        ),
        subjects=tuple(
            SubjectTag(
                s, arxiv_subject_name(s) or "", urls.search_url(path, urls.add_subject(req, s))
            )
            for s in hit.subjects
        ),
        source=Link(source_label, source_url),
        related_url=related_url(hit.id),
        cited=f"Cited by {hit.cited_by:,}" if hit.cited_by is not None else "",
    )


def _last_page(results: SearchResults) -> int:
    size = results.request.page_size
    return max(1, min(results.pages, MAX_RESULT_DEPTH // size))


def _pages(results: SearchResults, path: str) -> tuple[PageLink, ...]:
    req = results.request
    last = _last_page(results)
    if last <= 1:
        return ()
    wanted = {1, last, *range(req.page - PAGE_WINDOW, req.page + PAGE_WINDOW + 1)}
    numbers = sorted(n for n in wanted if 1 <= n <= last)
    out: list[PageLink] = []
    previous = 0
    for n in numbers:
        if n - previous > 1:
            out.append(PageLink(None, "", False))
        out.append(PageLink(n, urls.search_url(path, replace(req, page=n)), n == req.page))
        previous = n
    return tuple(out)


def _export_links(
    results: SearchResults, paths: Mapping[str, str], cap: int, extra: str
) -> ExportLinks:
    # Every page is exported, so the page and its size are left out of the link.
    req = replace(
        results.request,
        page=1,
        page_size=SearchRequest.page_size,
        facet_size=DEFAULT_FACET_SIZE,
    )
    links = []
    for label, export_path in paths.items():
        href = urls.search_url(export_path, req)
        if extra:
            href += ("&" if "?" in href else "?") + extra
        links.append(Link(label, href))
    if results.total > cap:
        note = f"Exports hold the first {cap:,} of {results.total:,} results."
    else:
        note = f"Exports hold all {results.total:,} results (at most {cap:,})."
    return ExportLinks(tuple(links), note)
