"""The library's pages and changes through the real Flask app: a POST without its form
token is refused and changes nothing, a server bound beyond this machine asks for the
write token, and the tag's library and recommended pages are results pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from library_support import build

from pubsearch.library.follow import Library
from pubsearch.search.service import SearchService
from pubsearch.web import create_app


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return build(tmp_path / "ix")


def _app(index: Path, **config: object) -> Flask:
    return create_app(index, {"TESTING": True, **config})


def _token(client: FlaskClient, url: str = "/?q=graph") -> str:
    page = client.get(url)
    assert page.status_code == 200
    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', page.data.decode())
    assert found is not None
    return found.group(1)


def _state(index: Path) -> tuple[object, object]:
    library = Library(SearchService(index))
    return [f.saved.name for f in library.followed()], library.tags()


def test_changes_with_the_form_token_are_made(index: Path) -> None:
    client = _app(index).test_client()
    token = _token(client)
    follow = client.post(
        "/library/follow",
        data={"csrf": token, "name": "gnn", "q": "graph", "subject": "cs.LG"},
    )
    assert follow.status_code == 303 and follow.headers["Location"] == "/library"
    tag = client.post(
        "/library/tag",
        data={"csrf": token, "tag": "reading", "record": ["2503.00003"], "next": "/?q=graph"},
    )
    assert tag.status_code == 303 and tag.headers["Location"] == "/?q=graph"
    assert _state(index) == (["gnn"], [("reading", 1)])
    page = client.get("/library").data.decode()
    assert "gnn" in page and "0 new" in page and "reading" in page and "/follow/gnn.atom" in page
    # Elsewhere than a path of this site, "next" is not followed.
    away = client.post(
        "/library/tag",
        data={"csrf": token, "tag": "reading", "record": "2503.00006", "next": "//evil.example/"},
    )
    assert away.headers["Location"] == "/library/tag/reading"
    unfollow = client.post("/library/unfollow", data={"csrf": token, "name": "gnn"})
    assert unfollow.status_code == 303
    assert _state(index) == ([], [("reading", 2)])


@pytest.mark.parametrize(
    "data",
    [
        {"tag": "reading", "record": "2503.00003"},  # no token
        {"tag": "reading", "record": "2503.00003", "csrf": "0" * 64},  # a wrong one
    ],
)
def test_a_post_without_its_form_token_is_refused_and_changes_nothing(
    index: Path, data: dict[str, str]
) -> None:
    client = _app(index).test_client()
    _token(client)  # the visitor has the cookie
    refused = client.post("/library/tag", data=data)
    assert refused.status_code == 403
    assert b"token is missing or stale" in refused.data
    follow = client.post("/library/follow", data={**data, "name": "x", "q": "graph"})
    assert follow.status_code == 403
    assert _state(index) == ([], [])


def test_a_token_from_another_visitor_is_refused(index: Path) -> None:
    token = _token(_app(index).test_client())
    other = _app(index).test_client()
    _token(other)  # a cookie of its own
    refused = other.post("/library/tag", data={"csrf": token, "tag": "t", "record": "2503.00003"})
    assert refused.status_code == 403
    assert _state(index) == ([], [])


def test_bound_beyond_this_machine_changes_need_the_write_token(index: Path) -> None:
    closed = _app(index, BOUND_TO="0.0.0.0").test_client()
    token = _token(closed)
    refused = closed.post("/library/tag", data={"csrf": token, "tag": "t", "record": "2503.00003"})
    assert refused.status_code == 403 and b"PUBSEARCH_WRITE_TOKEN" in refused.data
    assert closed.get("/?q=graph").status_code == 200  # searching stays open
    guarded = _app(index, BOUND_TO="0.0.0.0", WRITE_TOKEN="s3cret").test_client()
    token = _token(guarded)
    assert b'name="write_token"' in guarded.get("/?q=graph").data
    data = {"csrf": token, "tag": "t", "record": "2503.00003"}
    assert guarded.post("/library/tag", data={**data, "write_token": "nope"}).status_code == 403
    assert _state(index) == ([], [])
    assert guarded.post("/library/tag", data={**data, "write_token": "s3cret"}).status_code == 303
    assert _state(index) == ([], [("t", 1)])


def test_a_tags_library_page_searches_facets_and_exports(index: Path) -> None:
    Library(SearchService(index)).tag("reading", ["2503.00001", "2503.00002", "2503.00003"])
    client = _app(index).test_client()
    page = client.get("/library/tag/reading").data.decode()
    assert page.count('class="hit"') == 3 and "Recommended for reading" in page
    assert page.count('class="hit"') == 3
    narrowed = client.get("/library/tag/reading?q=graph").data.decode()
    assert narrowed.count('class="hit"') == 1 and "2503.00003" in narrowed
    facets = client.get("/library/tag/reading?subject=cs.LG").data.decode()
    assert facets.count('class="hit"') == 1
    bib = client.get("/export.bib?tag=reading").data.decode()
    assert bib.count("@") == 3
    assert "/export.bib?tag=reading" in page


def test_the_recommended_page_lists_untagged_records(index: Path) -> None:
    Library(SearchService(index)).tag("reading", ["2503.00001", "2503.00004"])
    client = _app(index).test_client()
    page = client.get("/library/tag/reading/recommended?page_size=5").data.decode()
    assert page.count('class="hit"') == 5
    assert "2503.00001" not in re.findall(r'name="record" value="([^"]+)"', page)
    assert "Galaxy study" in page
    assert client.get("/library/tag/none/recommended").status_code == 400
