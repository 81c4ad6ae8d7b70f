"""Atom feeds of a search, a saved search and a tag: valid Atom as feedparser reads it,
newest first, entry ids that stay the same across feeds and updates. Through the real
Flask app over a real index."""

from __future__ import annotations

from pathlib import Path

import feedparser
import pytest
from flask.testing import FlaskClient
from library_support import build, record, update

from pubsearch.library.feeds import entry_id
from pubsearch.library.follow import Library
from pubsearch.search.request import SearchRequest
from pubsearch.search.results import Hit
from pubsearch.search.service import SearchService
from pubsearch.web import create_app


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return build(tmp_path / "ix")


def _client(index: Path) -> FlaskClient:
    return create_app(index, {"TESTING": True}).test_client()


def _parse(client: FlaskClient, url: str) -> feedparser.FeedParserDict:
    response = client.get(url)
    assert response.status_code == 200, response.data
    assert response.mimetype == "application/atom+xml"
    parsed = feedparser.parse(response.data)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    return parsed


def test_a_search_feed_is_valid_atom_newest_first(index: Path) -> None:
    Library(SearchService(index)).views()  # the library reads the first generation
    update(index, [record(701, "graph", "2025-01-02")])
    feed = _parse(_client(index), "/search.atom?q=graph&subject=cs.LG")
    assert feed.feed.title == "pubsearch: 'graph', subject cs.LG"
    ids = [entry.id for entry in feed.entries]
    assert ids[0] == "https://arxiv.org/abs/2503.00701"  # the newest to appear, not by date
    assert len(ids) == len(set(ids)) == 11
    assert all(e.link.startswith("https://arxiv.org/abs/") for e in feed.entries)
    updated = [e.updated_parsed for e in feed.entries]
    assert updated == sorted(updated, reverse=True)
    first = feed.entries[0]
    assert first.title.startswith("Graph study number 701")
    assert [a.name for a in first.authors] == ["Author 701", "Ada Shared"]
    assert first.tags[0].term == "cs.LG"
    assert "message passing" in first.summary


def test_entry_ids_are_stable_across_feeds_and_updates(index: Path) -> None:
    client = _client(index)
    Library(SearchService(index)).follow("gnn", SearchRequest(q="graph"))
    before = {e.id for e in _parse(client, "/follow/gnn.atom").entries}
    update(index, [record(702, "graph")])
    after = _parse(client, "/follow/gnn.atom")
    assert before < {e.id for e in after.entries}
    assert after.entries[0].id == "https://arxiv.org/abs/2503.00702"
    assert {e.id for e in _parse(client, "/search.atom?q=graph").entries} == {
        e.id for e in after.entries
    }


def test_a_tag_feed_lists_its_records(index: Path) -> None:
    Library(SearchService(index)).tag("reading", ["2503.00003", "2503.00004"])
    feed = _parse(_client(index), "/tag/reading.atom")
    assert {e.id for e in feed.entries} == {
        "https://arxiv.org/abs/2503.00003",
        "https://arxiv.org/abs/2503.00004",
    }


def test_a_tags_recommended_feed_holds_the_new_records_most_like_it(index: Path) -> None:
    Library(SearchService(index)).tag("galaxies", ["2503.00001", "2503.00004", "2503.00007"])
    update(index, [record(703, "graph"), record(704, "galaxy")])
    feed = _parse(_client(index), "/tag/galaxies/recommended.atom")
    assert feed.feed.title == "pubsearch: recommended for galaxies"
    # The index's first records are dated March 2025: only the update's are this month's.
    assert [e.id for e in feed.entries] == [
        "https://arxiv.org/abs/2503.00704",
        "https://arxiv.org/abs/2503.00703",
    ]


def test_an_unknown_saved_search_or_bad_parameter_is_a_clear_error(index: Path) -> None:
    client = _client(index)
    missing = client.get("/follow/nope.atom")
    assert missing.status_code == 400 and b"nope" in missing.data
    bad = client.get("/search.atom?q=graph&year=20x")
    assert bad.status_code == 400 and b"year" in bad.data


def test_entry_ids_without_arxiv_id_use_the_doi_or_a_tag_uri() -> None:
    def hit(record_id: str, arxiv: tuple[str, ...], dois: tuple[str, ...]) -> Hit:
        return Hit(
            1, record_id, "T", "", (), 2025, (), "", None, None, "", "T", arxiv_ids=arxiv, dois=dois
        )

    assert (
        entry_id(hit("2401.1", ("2401.00001",), ("10.1/x",))) == "https://arxiv.org/abs/2401.00001"
    )
    assert entry_id(hit("10.1/x", (), ("10.1/x <y>",))) == "https://doi.org/10.1/x%20%3Cy%3E"
    assert entry_id(hit("h:ab/c", (), ())) == "tag:pubsearch.invalid,2026:record/h%3Aab%2Fc"
