"""Saved searches and what is new in them, tags through every id a record answers to, and
a library that outlives rebuilds and updates: over real indexes on disk."""

from __future__ import annotations

import calendar
from pathlib import Path

import pytest
from library_support import build, first_records, record, update

from pubsearch.core.errors import ParameterError, RecordNotFoundError
from pubsearch.ingest.records import Record
from pubsearch.library.follow import Library
from pubsearch.library.store import LIBRARY_FILE
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService


def _library(index_dir: Path) -> Library:
    return Library(SearchService(index_dir))


def test_a_new_saved_search_has_nothing_new_until_records_come(tmp_path: Path) -> None:
    build(tmp_path)
    library = _library(tmp_path)
    assert library.follow("gnn", SearchRequest(q="graph neural"))
    [followed] = library.followed()
    assert followed.saved.name == "gnn" and followed.new == 0
    update(tmp_path, [record(101, "graph"), record(102, "galaxy"), record(103, "graph")])
    assert _library(tmp_path).followed()[0].new == 2
    [news] = _library(tmp_path).news("gnn")
    assert news.total == 2
    assert {hit.id for hit in news.hits} == {"2503.00101", "2503.00103"}
    # Then seen: nothing new until the next update.
    assert _library(tmp_path).news("gnn")[0].total == 0
    update(tmp_path, [record(104, "graph")])
    [later] = _library(tmp_path).news()
    assert [hit.id for hit in later.hits] == ["2503.00104"]


def test_news_is_newest_first_and_since_looks_back(tmp_path: Path) -> None:
    build(tmp_path)
    library = _library(tmp_path)
    library.follow("all-graph", SearchRequest(q="graph"))
    update(tmp_path, [record(201, "graph", "2025-03-01")])
    assert _library(tmp_path).followed()[0].new == 1  # the library reads each generation
    update(tmp_path, [record(202, "graph", "2025-02-01")])
    news = _library(tmp_path).news("all-graph")[0]
    assert [hit.id for hit in news.hits] == ["2503.00202", "2503.00201"]
    assert news.appeared[0] > news.appeared[1]
    # --since: the index as first read counts records by the day they were listed.
    since = float(calendar.timegm((2025, 3, 17, 0, 0, 0)))
    back = _library(tmp_path).news("all-graph", since=since)[0]
    old = {r.arxiv_id for r in first_records() if "Graph" in r.title and r.date >= "2025-03-17"}
    assert {hit.id for hit in back.hits} == old | {"2503.00201", "2503.00202"}


def test_a_filter_of_the_saved_search_applies_to_news(tmp_path: Path) -> None:
    build(tmp_path)
    library = _library(tmp_path)
    library.follow("lensing", SearchRequest(subjects=("astro-ph.CO",), q="lensing"))
    update(tmp_path, [record(301, "galaxy"), record(302, "graph")])
    assert [h.id for h in _library(tmp_path).news("lensing")[0].hits] == ["2503.00301"]


def test_a_bad_saved_search_is_refused_and_not_saved(tmp_path: Path) -> None:
    build(tmp_path)
    library = _library(tmp_path)
    with pytest.raises(ParameterError, match="mode"):
        library.follow("x", SearchRequest(q="graph", mode="semantic"))  # no vectors here
    with pytest.raises(ParameterError, match="no saved search"):
        library.news("missing")
    assert library.followed() == []


def test_the_library_survives_a_rebuild(tmp_path: Path) -> None:
    build(tmp_path)
    library = _library(tmp_path)
    library.follow("gnn", SearchRequest(q="graph"))
    library.tag("reading", ["2503.00001", "arXiv:2503.00002v2"])
    build(tmp_path, [*first_records(), record(401, "graph")])
    build(tmp_path, [*first_records(), record(401, "graph")])  # the first generation deleted
    assert (tmp_path / LIBRARY_FILE).exists()
    again = _library(tmp_path)
    assert [h.id for h in again.news("gnn")[0].hits] == ["2503.00401"]
    assert {h.id for h in again.tag_page("reading").hits} == {"2503.00001", "2503.00002"}


def test_tagging_an_unknown_id_tags_nothing(tmp_path: Path) -> None:
    build(tmp_path)
    library = _library(tmp_path)
    with pytest.raises(RecordNotFoundError, match="2503.09999"):
        library.tag("reading", ["2503.00001", "2503.09999"])
    assert library.tags() == []


def test_a_merged_record_keeps_the_tags_of_both(tmp_path: Path) -> None:
    doi_only = Record(
        title="A journal version of something else entirely",
        abstract="Journal text.",
        year=2025,
        date="2025-03-20",
        doi="10.1234/journal.5",
        source="test",
    )
    build(tmp_path, [*first_records(), doi_only])
    library = _library(tmp_path)
    library.tag("preprints", ["2503.00005"])
    library.tag("journal", ["10.1234/journal.5"])
    # A source now says the two are one paper: the update merges them.
    both = record(5, "galaxy", doi="10.1234/journal.5")
    update(tmp_path, [both])
    again = _library(tmp_path)
    preprints = again.tag_page("preprints")
    journal = again.tag_page("journal")
    assert preprints.total == journal.total == 1
    assert preprints.hits[0].id == journal.hits[0].id
    assert not preprints.missing and not journal.missing
    assert again.untag("journal", ["2503.00005"]) == 1  # by the other id
    assert again.tag_page("journal").total == 0
