"""The JSON API: /api/search is `pubsearch query --format json --facets`, byte for byte
apart from the time taken."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient

from pubsearch.cli.main import main
from pubsearch.search import export
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService


def _without_time(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "took_ms"}


# (query string of the API, arguments of `pubsearch query`)
SAME_REQUESTS = [
    ("", []),
    ("q=batch+size", ["batch size"]),
    (
        "q=training&author=Yang+You&subject=cs.LG&subject=cs.DC&year=2019..2021"
        "&sort=newest&page=2&page_size=3",
        [
            "training",
            "--author",
            "Yang You",
            "--subject",
            "cs.LG",
            "--subject",
            "cs.DC",
            "--year",
            "2019..2021",
            "--sort",
            "newest",
            "--page",
            "2",
            "--limit",
            "3",
        ],
    ),
    (
        "q=title%3Adeep&sort=oldest&facet_size=1",
        ["title:deep", "--sort", "oldest", "--facet-size", "1"],
    ),
    ("q=batchh+sise", ["batchh sise"]),
    ("author=wei+lin&year=2022..", ["--author", "wei lin", "--year", "2022.."]),
]


@pytest.mark.parametrize(("query", "args"), SAME_REQUESTS)
def test_api_search_equals_cli_json(
    client: FlaskClient, seed_index: Path, query: str, args: list[str]
) -> None:
    response = client.get("/api/search?" + query)
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    result = CliRunner().invoke(
        main, ["query", *args, "--facets", "--format", "json", "--index", str(seed_index)]
    )
    assert result.exit_code == 0, result.output
    assert _without_time(response.get_json()) == _without_time(json.loads(result.output))


def test_facets_are_always_included(client: FlaskClient) -> None:
    data = client.get("/api/search?q=batch").get_json()
    assert set(data["facets"]) == {"author", "year", "subject"}
    assert set(data) == {
        "query",
        "filters",
        "sort",
        "mode",
        "sorts",
        "total",
        "word_total",
        "page",
        "page_size",
        "pages",
        "took_ms",
        "suggestion",
        "corrected_from",
        "relaxed",
        "relaxed_words",
        "all_words_total",
        "loose",
        "loose_total",
        "notices",
        "authors_found",
        "subjects_found",
        "hits",
        "facets",
    }


def test_record(client: FlaskClient, service: SearchService) -> None:
    record = service.record(service.search(SearchRequest(q="batch size")).hits[0].id)
    response = client.get(f"/api/records/{record.id}")
    assert response.status_code == 200
    assert response.get_json() == export.record_to_dict(record)


def test_unknown_record_is_a_json_404(client: FlaskClient) -> None:
    response = client.get("/api/records/nope")
    assert response.status_code == 404
    assert response.get_json() == {
        "status": 404,
        "error": "Not found",
        "message": "no record with id 'nope'",
    }


def test_related(client: FlaskClient, service: SearchService) -> None:
    record_id = service.search(SearchRequest(q="batch size")).hits[0].id
    data = client.get(f"/api/related/{record_id}?page_size=3").get_json()
    assert data["total"] > 0
    assert len(data["hits"]) == 3
    assert record_id not in {h["id"] for h in data["hits"]}
    assert "facets" in data
    assert client.get("/api/related/nope").status_code == 404


def test_identifiers_in_the_box_and_in_record_urls(tmp_path: Path) -> None:
    from pubsearch.web import SERVICE_KEY, create_app

    source = tmp_path / "records.jsonl"
    listings = [
        {"id": "2505.17997", "title": "Widgets", "abstract": "W.", "year": 2025},
        {"id": "2506.03038", "title": "Widgets", "abstract": "W.", "year": 2025, "doi": "10.1/A"},
        {"id": "2503.18889", "title": "Gadgets", "abstract": "G.", "year": 2025},
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in listings), encoding="utf-8")
    result = CliRunner().invoke(main, ["index", "--index", str(tmp_path / "ix"), str(source)])
    assert result.exit_code == 0, result.output
    app = create_app(tmp_path / "ix", test_config={"TESTING": True})
    try:
        client = app.test_client()
        data = client.get("/api/search?q=arXiv:2503.18889").get_json()
        assert [h["id"] for h in data["hits"]] == ["2503.18889"] and data["notices"] == []
        data = client.get("/api/search?q=2506.03038v2").get_json()
        assert [h["arxiv_ids"] for h in data["hits"]] == [["2505.17997", "2506.03038"]]
        data = client.get("/api/search?q=2505.99999").get_json()
        assert data["total"] == 0
        assert data["notices"] == ["No record in this index has the id arXiv:2505.99999."]
        page = client.get("/?q=2505.99999").get_data(as_text=True)
        assert "No record in this index has the id arXiv:2505.99999." in page
        assert client.get("/api/records/arXiv:2506.03038v1").get_json()["id"] == "2505.17997"
        assert client.get("/api/records/doi:10.1/a").get_json()["dois"] == ["10.1/a"]
        assert client.get("/api/records/2505.99999").status_code == 404
    finally:
        app.extensions[SERVICE_KEY].close()
