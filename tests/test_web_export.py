"""Export routes: every page of the current results as BibTeX, CSV or JSON lines, capped."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from pubsearch.web import SERVICE_KEY, create_app


@pytest.mark.parametrize(
    ("ext", "mimetype"),
    [("bib", "application/x-bibtex"), ("csv", "text/csv"), ("jsonl", "application/x-ndjson")],
)
def test_export_is_a_download_with_counts(client: FlaskClient, ext: str, mimetype: str) -> None:
    response = client.get(f"/export.{ext}?q=training&page=2&page_size=3")
    assert response.status_code == 200
    assert response.mimetype == mimetype
    assert response.headers["Content-Disposition"] == f'attachment; filename="pubsearch.{ext}"'
    total = int(response.headers["X-Total-Count"])
    assert total > 3
    assert response.headers["X-Export-Count"] == str(total)  # every page, not page 2
    assert response.headers["X-Export-Capped"] == "false"


def test_csv_and_jsonl_hold_every_hit_in_order(client: FlaskClient) -> None:
    rows = list(
        csv.DictReader(io.StringIO(client.get("/export.csv?sort=oldest").get_data(as_text=True)))
    )
    assert len(rows) == 36
    assert [int(r["rank"]) for r in rows] == list(range(1, 37))
    years = [int(r["year"]) for r in rows]
    assert years == sorted(years)
    lines = client.get("/export.jsonl?subject=cs.DC").get_data(as_text=True).splitlines()
    hits = [json.loads(line) for line in lines]
    assert len(hits) == 9
    assert all("cs.DC" in h["subjects"] for h in hits)


def test_bibtex_says_what_it_holds(client: FlaskClient) -> None:
    body = client.get("/export.bib?q=batch+size").get_data(as_text=True)
    assert body.startswith("% pubsearch export: 6 of 6 results for 'batch size'\n")
    assert "% search: /export.bib?q=batch+size\n" in body
    assert body.count("@misc{") == 6


def test_export_is_capped_and_says_so(seed_index: Path) -> None:
    app = create_app(seed_index, test_config={"EXPORT_CAP": 5})
    try:
        client = app.test_client()
        response = client.get("/export.bib")
        body = response.get_data(as_text=True)
        assert response.headers["X-Export-Capped"] == "true"
        assert response.headers["X-Export-Count"] == "5"
        assert response.headers["X-Total-Count"] == "36"
        assert body.startswith(
            "% pubsearch export: 5 of 36 results (capped at 5; narrow the search to export"
        )
        assert body.count("@misc{") == 5
        assert len(client.get("/export.jsonl").get_data(as_text=True).splitlines()) == 5
    finally:
        app.extensions[SERVICE_KEY].close()


def test_export_of_related_records(client: FlaskClient) -> None:
    related = client.get("/api/related/t808ee125210?page_size=100").get_json()
    lines = client.get("/export.jsonl?related=t808ee125210").get_data(as_text=True).splitlines()
    assert [json.loads(line)["id"] for line in lines] == [h["id"] for h in related["hits"]]
    assert client.get("/export.csv?related=nope").status_code == 404
