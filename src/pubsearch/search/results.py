"""What a search returns: :class:`SearchResults`, a page of :class:`Hit` and the facets'
:class:`FacetValue`; and :class:`IndexStats`, what an index holds. Plain data, shared by
the command line, the web page and the exports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pubsearch.search.request import SearchRequest

# A relaxed query's words are listed in its note up to this many.
RELAXED_WORDS_LISTED = 8
# A longer query is shown (in a heading, a title, a line of text output) by its first
# SHOWN_WORDS words, at most SHOWN_CHARS characters of them (a pasted abstract).
SHOWN_WORDS = 10
SHOWN_CHARS = 80


def shortened(text: str) -> str:
    """``text`` as a label: whole when short, else its first words, "…" and how many words
    it has (``Large-batch training is … (177 words)``). Only what is shown: the search box
    and the JSON keep the whole text."""
    words = text.split()
    if len(words) <= SHOWN_WORDS and len(text) <= SHOWN_CHARS:
        return text
    shown = " ".join(words[:SHOWN_WORDS])
    if len(shown) > SHOWN_CHARS:
        cut = shown[:SHOWN_CHARS]
        shown = cut.rsplit(" ", 1)[0] if " " in cut else cut
    count = f"{len(words):,} words" if len(words) > 1 else f"{len(text):,} characters"
    return f"{shown} \u2026 ({count})"


@dataclass(frozen=True)
class Hit:
    """One record in a results page. ``snippet`` and ``title_html`` are HTML: the record's
    text escaped, matched words in ``<mark>``."""

    rank: int
    id: str
    title: str
    abstract: str
    authors: tuple[str, ...]
    year: int | None
    subjects: tuple[str, ...]
    source: str
    url: str | None
    score: float | None  # None when not ranked by relevance
    snippet: str
    title_html: str  # for an untitled record, its first words (records.title_from_text)
    untitled: bool = False
    date: str | None = None  # YYYY-MM-DD where the source gives the day; YYYY-MM: a month
    abstract_html: str = ""  # the whole abstract, as snippet and title_html are made
    shared: tuple[str, ...] = ()  # a related record: the key words it shares
    # Found by meaning, not by its words: ``why`` is the sentence of its abstract closest
    # in meaning to the query (HTML, escaped).
    by_meaning: bool = False
    why: str = ""
    cited_by: int | None = None  # how many works cite it, where the source counts them
    # Every arXiv id and DOI of the record (its own first), and the day of the listing it
    # was read from when it is dated by its submission (Record.listed).
    arxiv_ids: tuple[str, ...] = ()
    dois: tuple[str, ...] = ()
    listed: str | None = None
    # The person (pubsearch.search.profiles) of each author, "" where unknown; and the
    # record's document number in the generation searched (-1: not known).
    people: tuple[str, ...] = ()
    doc: int = -1


@dataclass(frozen=True)
class FacetValue:
    value: str
    count: int
    selected: bool
    # An author name of several people among the records counted: each of them, most
    # records first (pubsearch.search.profiles.facet_people).
    people: tuple[PersonValue, ...] = ()


@dataclass(frozen=True)
class PersonValue:
    """One person of an author facet's name: the id ``person=`` takes, a few words that
    tell them from the name's others (a subject, or a co-author), their records counted."""

    id: str
    hint: str
    count: int
    selected: bool = False


@dataclass(frozen=True)
class SearchResults:
    request: SearchRequest
    total: int
    hits: tuple[Hit, ...]
    facets: dict[str, tuple[FacetValue, ...]] | None
    took_ms: float
    suggestion: str | None = None
    # The bare words were relaxed: fewer than compiler.MIN_STRICT_MATCHES records have
    # them all (``all_words_total``), so the records with most of them are shown;
    # ``words`` are those words as typed.
    relaxed: bool = False
    words: tuple[str, ...] = ()
    all_words_total: int | None = None
    # What of the query text was read as plain words, or left out, and why.
    notices: tuple[str, ...] = ()
    # The recorded names each author filter stands for (pubsearch.index.names).
    authors_found: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The recorded subjects each subject filter stands for (pubsearch.search.subjectmatch).
    subjects_found: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Nothing matched the text as typed: these are the results of its spelling correction
    # (request.q), and this is what was typed.
    corrected_from: str | None = None
    # How the results were found: "lexical", "hybrid" or "semantic" (pubsearch.search.semantic).
    mode: str = "lexical"
    # Of ``total``, how many match by their words (None: all of them, lexical mode).
    word_total: int | None = None
    # The index has vectors and the model is installed: hybrid and semantic can be asked.
    meaning_available: bool = False
    # The index has citation counts: "cited" (most cited first) is a sort it offers.
    citations: bool = False
    # Of the records that pass the filters, how many match the relaxed words only loosely
    # (pubsearch.search.wellmatched): in ``total`` with request.loose, else left out; None when
    # the words were not relaxed.
    loose_total: int | None = None

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.request.page_size))

    @property
    def relaxed_note(self) -> str | None:
        """One sentence saying that the bare words were relaxed, or None."""
        if not self.relaxed:
            return None
        words = self.words
        if len(words) <= RELAXED_WORDS_LISTED:
            which = "all of: " + ", ".join(words)
        else:
            which = f"all {len(words):,} words"
        if self.all_words_total:
            have = f"Only {self.all_words_total:,} " + (
                "record has" if self.all_words_total == 1 else "records have"
            )
        else:
            have = "No record has"
        return f"{have} {which}; showing records with most of them."

    @property
    def loose_note(self) -> str | None:
        """One sentence saying how many more records share only some of the relaxed words
        (or, with request.loose, that they are shown too); None when there are none."""
        more = self.loose_total
        if not more:
            return None
        if self.request.loose:
            records = "record that shares" if more == 1 else "records that share"
            return f"Including {more:,} {records} only some of the words."
        records = "record shares" if more == 1 else "records share"
        return f"{more:,} more {records} some of the words."

    @property
    def query_shown(self) -> str:
        """The query text as a label (see :func:`shortened`)."""
        return shortened(self.request.q)


@dataclass(frozen=True)
class IndexStats:
    records: int
    generation: str
    size_bytes: int
    years: dict[int, int]
    top_authors: tuple[FacetValue, ...]
    top_subjects: tuple[FacetValue, ...]
    authors: int
    subjects: int
    cited: int = 0  # records with a citation count
