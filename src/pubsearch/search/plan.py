"""A search request compiled once into what the steps after it run.

The service reads the request once (:meth:`pubsearch.search.service.SearchService._plan`):
the query's text compiled and matched (:class:`TextSearch`: the Whoosh query to rank with,
its matches, how it was read), the filters' documents, the mode and the similarities by
meaning, with the generation's facet table and field lengths. The steps that make the
page (scoring, the order by date or count, the page's hits) and count the facets take the
:class:`Plan`; none calls back into the service for what it needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
from whoosh import query as wq

from pubsearch.index.facets import BoolArray, FacetTable
from pubsearch.index.lengths import FieldLengths
from pubsearch.search.request import Mode, SearchRequest
from pubsearch.search.selection import Selection
from pubsearch.search.wellmatched import Split


@dataclass(frozen=True)
class TextSearch:
    """A query's text as searched: the Whoosh query to rank with (None: every record),
    the documents it matches, and how it was read."""

    query: wq.Query | None
    mask: BoolArray
    relaxed: bool = False
    words: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    all_words_total: int | None = None  # with relaxed: how many have every word
    split: Split | None = None  # with relaxed: which match it well, which loosely
    among: BoolArray | None = None  # with split: every match that passes the filters


@dataclass(frozen=True)
class Plan:
    """What a request's page and facets are made from, worked out once per request."""

    request: SearchRequest
    table: FacetTable  # the generation's
    lengths: FieldLengths  # the generation's, as this request's searcher reads them
    text: TextSearch
    chosen: Selection  # what the author and subject filters stand for
    filters: dict[str, BoolArray]  # each filter's documents
    matched: BoolArray  # the query's matches (by its words, its meaning or both)
    final: BoolArray  # of those, the ones that pass every filter: counted and listed
    allowed: BoolArray  # every record that passes the filters, matching or not
    mode: Mode = "lexical"
    # With meaning (hybrid, semantic): every document's similarity to the query, and the
    # records it matches by meaning.
    sims: npt.NDArray[np.float32] | None = None
    by_meaning: BoolArray | None = None

    @cached_property
    def total(self) -> int:
        """How many records the request finds."""
        return int(self.final.sum())
