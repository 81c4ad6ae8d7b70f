"""What a search asks for: the value objects shared by the command line, the page and the
search service, importable without the search engine (``pubsearch --help`` reads them)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pubsearch.core.errors import ParameterError

SortOrder = Literal["relevance", "newest", "oldest", "cited"]
# "cited" (most cited first) is for an index whose records have citation counts.
SORT_ORDERS: tuple[SortOrder, ...] = ("relevance", "newest", "oldest", "cited")
FACET_NAMES = ("author", "year", "subject")
# How results are found and ranked: by words and meaning, by words only, by meaning only
# (pubsearch.search.semantic). None: hybrid when the index has vectors, else lexical.
Mode = Literal["hybrid", "lexical", "semantic"]
MODES: tuple[Mode, ...] = ("hybrid", "lexical", "semantic")

MAX_PAGE_SIZE = 100
MAX_RESULT_DEPTH = 10_000  # page * page_size
DEFAULT_FACET_SIZE = 20


@dataclass(frozen=True)
class YearRange:
    """Inclusive range of years; either end may be open."""

    start: int | None
    end: int | None

    def __str__(self) -> str:
        if self.start == self.end and self.start is not None:
            return str(self.start)
        return f"{self.start or ''}..{self.end or ''}"


def parse_year(text: str, name: str = "year") -> YearRange:
    """``2021``, ``2019..2021``, ``2019..`` or ``..2021``; raises ParameterError otherwise."""
    text = text.strip()
    match = re.fullmatch(r"(\d{4})?(?:(\.\.)(\d{4})?)?", text)
    if not match or (match.group(1) is None and match.group(3) is None):
        raise ParameterError(
            name, f"expected a year like 2021 or a range like 2019..2021, got {text!r}"
        )
    start = int(match.group(1)) if match.group(1) else None
    end = start if match.group(2) is None else (int(match.group(3)) if match.group(3) else None)
    if start is not None and end is not None and start > end:
        raise ParameterError(name, f"range {text!r} ends before it starts")
    return YearRange(start, end)


@dataclass(frozen=True)
class SearchRequest:
    """Everything that decides a results page; the same parameters as the CLI and the URL."""

    q: str = ""
    authors: tuple[str, ...] = ()
    subjects: tuple[str, ...] = ()
    year: YearRange | None = None
    sort: SortOrder = "relevance"
    page: int = 1
    page_size: int = 10
    facets: bool = False
    facet_size: int = DEFAULT_FACET_SIZE
    # When nothing matches, search the spelling correction instead (Google's "Showing
    # results for"); False searches the text as it is.
    correct: bool = True
    # Hits with their text for reading: TeX as text, matched words marked (batch runs,
    # which need only ids and scores, go without).
    highlight: bool = True
    mode: Mode | None = None
    # Count and list, beside the records that match a relaxed query well, those that share
    # only some of its words (pubsearch.search.wellmatched).
    loose: bool = False
    # Only the records of this person (an id of `pubsearch author NAME`:
    # pubsearch.index.peopletable), whatever name they are written with.
    person: str | None = None

    def __post_init__(self) -> None:
        if self.mode is not None and self.mode not in MODES:
            raise ParameterError("mode", f"must be one of {', '.join(MODES)}")
        if self.sort not in SORT_ORDERS:
            raise ParameterError("sort", f"must be one of {', '.join(SORT_ORDERS)}")
        if self.page < 1:
            raise ParameterError("page", "must be a positive integer")
        if not 1 <= self.page_size <= MAX_PAGE_SIZE:
            raise ParameterError("page_size", f"must be between 1 and {MAX_PAGE_SIZE}")
        if self.page * self.page_size > MAX_RESULT_DEPTH:
            raise ParameterError(
                "page", f"results beyond the first {MAX_RESULT_DEPTH:,} are not served"
            )
        if not 1 <= self.facet_size <= 1000:
            raise ParameterError("facet_size", "must be between 1 and 1000")


def check_sort(request: SearchRequest, has_citations: bool) -> None:
    """Raise ParameterError for a "most cited" sort of an index without citation counts."""
    if request.sort == "cited" and not has_citations:
        raise ParameterError(
            "sort",
            "'cited' needs citation counts, and no record of this index has one "
            "(OpenAlex and Crossref records do)",
        )
