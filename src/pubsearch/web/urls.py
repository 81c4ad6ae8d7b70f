"""URLs of search states: every state of the page is a plain GET query string.

A link changes one thing about the current :class:`SearchRequest` (a facet value ticked or
unticked, another page, a filter removed) and is written out by :func:`search_url` with the
parameter names of the CLI. Changing what is searched for always goes back to page 1.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import quote_plus, urlencode

from pubsearch.index.names import exact_name
from pubsearch.ingest.records import fold
from pubsearch.search.request import SearchRequest, YearRange
from pubsearch.web.params import params_from_request


def search_url(path: str, request: SearchRequest) -> str:
    """``path`` with the query string of ``request`` (defaults left out)."""
    query = urlencode(params_from_request(request))
    return f"{path}?{query}" if query else path


def toggled(values: tuple[str, ...], value: str) -> tuple[str, ...]:
    """``values`` without ``value`` if it is there (case- and accent-insensitively), else with."""
    key = fold(value)
    kept = tuple(v for v in values if fold(v) != key)
    return kept if len(kept) != len(values) else (*values, value)


def with_value(values: tuple[str, ...], value: str) -> tuple[str, ...]:
    """``values`` with ``value`` added unless it is already there."""
    key = fold(value)
    return values if any(fold(v) == key for v in values) else (*values, value)


def toggle_author(request: SearchRequest, name: str) -> SearchRequest:
    return replace(request, authors=toggled(request.authors, name), page=1)


def toggle_subject(request: SearchRequest, code: str) -> SearchRequest:
    return replace(request, subjects=toggled(request.subjects, code), page=1)


def only_author(request: SearchRequest, name: str) -> SearchRequest:
    """Only the papers of the person recorded as ``name``: the author filters replaced by
    that name in quotes, which stands for it and its other spellings only
    (:func:`pubsearch.index.names.quoted_name`), not for every name the name rule would find."""
    return replace(request, authors=(exact_name(name),), page=1)


def add_subject(request: SearchRequest, code: str) -> SearchRequest:
    return replace(request, subjects=with_value(request.subjects, code), page=1)


def toggle_year(request: SearchRequest, year: int) -> SearchRequest:
    """Just ``year``; or no year filter when ``year`` alone is what is selected."""
    chosen = YearRange(year, year)
    return replace(request, year=None if request.year == chosen else chosen, page=1)


def without_filters(request: SearchRequest) -> SearchRequest:
    return replace(request, authors=(), subjects=(), year=None, page=1)


def source_link(url: str | None, title: str, source: str) -> tuple[str, str]:
    """Where a record comes from, as ``(url, label)``: its arXiv abstract page (or DOI) when
    known, else a search for its title."""
    if url:
        return url, "arXiv" if "arxiv.org/" in url else "DOI"
    if "arxiv" in source.lower():
        return (
            f"https://arxiv.org/search/?query={quote_plus(title)}&searchtype=title",
            "Find on arXiv",
        )
    return f"https://scholar.google.com/scholar?q={quote_plus(title)}", "Find on Google Scholar"
