"""Bad input gets a 400 with a message (on the page or in JSON), never a 500; unknown
things are 404; a missing index is a 503."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask.testing import FlaskClient
from markupsafe import escape

from pubsearch.web import SERVICE_KEY, create_app

BAD = [
    ("page=0", "page", "page: must be a positive integer"),
    ("page=-3", "page", "page: must be a positive integer"),
    ("page=x", "page", "page: must be a whole number, got 'x'"),
    ("page_size=10000", "page_size", "page_size: must be between 1 and 100"),
    ("page_size=0", "page_size", "page_size: must be between 1 and 100"),
    ("page=500&page_size=100", "page", "page: results beyond the first 10,000 are not served"),
    ("facet_size=0", "facet_size", "facet_size: must be between 1 and 1000"),
    ("year=abc", "year", "year: expected a year like 2021 or a range like 2019..2021, got 'abc'"),
    ("year=2021..2019", "year", "year: range '2021..2019' ends before it starts"),
    ("sort=best", "sort", "sort: must be one of relevance, newest, oldest"),
    ("q=a&q=b", "q", "q: may be given only once"),
    ("q=title%3A%5Ba+TO+c%5D", None, "ranges work on year only"),
    ("q=year%3A%5B2020+TO", None, "the range after year: is not closed"),
    ("q=year%3Aabc", None, "year:abc is not a year"),
    ("q=" + "x" * 20_001, None, "query is 20,001 characters long; at most 20,000 are allowed"),
]


@pytest.mark.parametrize(("query", "parameter", "message"), BAD)
def test_bad_parameter_is_a_400_on_the_page(
    client: FlaskClient, query: str, parameter: str | None, message: str
) -> None:
    response = client.get("/?" + query)
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert str(escape(message)) in page
    assert 'role="alert"' in page
    assert '<details class="syntax" open>' in page  # the syntax help is opened


@pytest.mark.parametrize(("query", "parameter", "message"), BAD)
def test_bad_parameter_is_a_400_in_json(
    client: FlaskClient, query: str, parameter: str | None, message: str
) -> None:
    for path in ("/api/search", "/api/related/t808ee125210"):
        response = client.get(f"{path}?{query}")
        assert response.status_code == 400, path
        data = response.get_json()
        assert data["status"] == 400
        assert data["error"] == "Bad request"
        assert message in data["message"]
        assert data.get("parameter") == parameter


@pytest.mark.parametrize(("query", "parameter", "message"), BAD)
def test_bad_parameter_is_a_400_for_exports(
    client: FlaskClient, query: str, parameter: str | None, message: str
) -> None:
    # Exports read every page, but the parameters are checked the same way.
    for ext in ("bib", "csv", "jsonl"):
        response = client.get(f"/export.{ext}?{query}")
        assert response.status_code == 400
        assert str(escape(message)) in response.get_data(as_text=True)


@pytest.mark.parametrize("q", ["(-)x", "(-)[]", "<script>", ">= 5", "(<x)", "*", "-"])
def test_operator_soup_is_searched_as_words_not_a_500(client: FlaskClient, q: str) -> None:
    assert client.get("/", query_string={"q": q}).status_code in (200, 400)
    assert client.get("/api/search", query_string={"q": q}).status_code in (200, 400)


def test_the_query_stays_in_the_search_box_to_be_fixed(client: FlaskClient) -> None:
    page = client.get("/?q=foo%3Abar+%3Cb%3E").get_data(as_text=True)
    assert 'value="foo:bar &lt;b&gt;"' in page


@pytest.mark.parametrize("path", ["/nowhere", "/related/nope", "/export.pdf"])
def test_unknown_page_is_a_404_page(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "Not found" in response.get_data(as_text=True)


@pytest.mark.parametrize("path", ["/api/nowhere", "/api/records/nope", "/api/related/nope"])
def test_unknown_api_path_is_a_json_404(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.get_json()["status"] == 404


def test_other_methods_are_refused(client: FlaskClient) -> None:
    response = client.post("/api/search", data={"q": "x"})
    assert response.status_code == 405
    assert response.get_json()["status"] == 405
    assert "GET" in response.headers["Allow"]
    assert client.post("/").status_code == 405


def test_request_bodies_are_limited(client: FlaskClient) -> None:
    assert client.application.config["MAX_CONTENT_LENGTH"] == 16 * 1024
    assert client.post("/", data="x" * 20_000).status_code in (405, 413)


def test_missing_index_is_a_503_with_a_clear_message(tmp_path: Path) -> None:
    app = create_app(tmp_path / "no-index")
    try:
        client = app.test_client()
        page = client.get("/?q=batch")
        assert page.status_code == 503
        body = page.get_data(as_text=True)
        assert "no index at" in body and "pubsearch index" in body
        api = client.get("/api/search")
        assert api.status_code == 503
        assert api.get_json()["message"].startswith("no index at")
    finally:
        app.extensions[SERVICE_KEY].close()


def test_no_catch_all_error_handler(client: FlaskClient) -> None:
    handlers = client.application.error_handler_spec[None][None]
    assert Exception not in handlers
    assert BaseException not in handlers
