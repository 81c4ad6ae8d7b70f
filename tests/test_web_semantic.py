"""The mode switch on the page and ``mode=`` in the API, on an index with vectors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from pubsearch.web import SERVICE_KEY, create_app

pytestmark = pytest.mark.semantic

PARAPHRASE = "speeding up the education of enormous language networks on supercomputers"


@pytest.fixture
def vector_client(vector_index: Path) -> Iterator[FlaskClient]:
    app: Flask = create_app(vector_index, test_config={"TESTING": True})
    yield app.test_client()
    app.extensions[SERVICE_KEY].close()


def test_api_mode_and_counts(vector_client: FlaskClient) -> None:
    hybrid = vector_client.get("/api/search", query_string={"q": PARAPHRASE}).get_json()
    assert hybrid["mode"] == "hybrid"
    assert hybrid["word_total"] <= hybrid["total"]
    sem = vector_client.get(
        "/api/search", query_string={"q": PARAPHRASE, "mode": "semantic"}
    ).get_json()
    assert sem["mode"] == "semantic" and sem["word_total"] == 0
    assert all(hit["by_meaning"] and hit["why"] for hit in sem["hits"])
    lexical = vector_client.get(
        "/api/search", query_string={"q": PARAPHRASE, "mode": "lexical"}
    ).get_json()
    assert lexical["mode"] == "lexical" and lexical["total"] == lexical["word_total"]


def test_a_bad_mode_is_a_400_naming_it(vector_client: FlaskClient) -> None:
    response = vector_client.get("/api/search", query_string={"q": "x", "mode": "fuzzy"})
    assert response.status_code == 400
    assert response.get_json()["parameter"] == "mode"
    assert "hybrid, lexical, semantic" in response.get_json()["message"]


def test_meaning_asked_of_an_index_without_vectors_is_a_400(client: FlaskClient) -> None:
    response = client.get("/api/search", query_string={"q": "batch", "mode": "semantic"})
    assert response.status_code == 400
    assert "pubsearch embed" in response.get_json()["message"]


def test_the_page_offers_the_switch_and_says_why(vector_client: FlaskClient) -> None:
    page = vector_client.get("/", query_string={"q": PARAPHRASE, "page_size": "50"}).get_data(
        as_text=True
    )
    assert '<select id="mode" name="mode" data-default="hybrid">' in page
    assert '<option value="hybrid" selected>Words and meaning</option>' in page
    assert "Close in meaning:" in page
    sem = vector_client.get("/", query_string={"q": PARAPHRASE, "mode": "semantic"})
    assert '<option value="semantic" selected>Meaning only</option>' in sem.get_data(as_text=True)


def test_no_switch_where_the_index_has_no_vectors(client: FlaskClient) -> None:
    page = client.get("/", query_string={"q": "batch"}).get_data(as_text=True)
    assert 'name="mode"' not in page


def test_the_mode_survives_paging_links(vector_client: FlaskClient) -> None:
    page = vector_client.get(
        "/", query_string={"q": "training", "mode": "semantic", "page_size": "10"}
    ).get_data(as_text=True)
    assert "mode=semantic" in page
