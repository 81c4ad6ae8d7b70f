"""Crossref works: one work's API response, a search response's items, JSON lines; JATS
abstracts, names, dates and citation counts."""

from __future__ import annotations

import json
from pathlib import Path

from format_fixtures import FORMATS_DIR, assert_records_as_expected, fields_of, read_fixture

from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.readers.crossref import jats_text, record_from_work


def test_a_search_response_reads_item_by_item() -> None:
    records, report = read_fixture("crossref-works.json")
    assert_records_as_expected(records, "crossref-works.json")
    assert len(records) == 24 and report.problems == []


def test_a_single_work_response() -> None:
    records, report = read_fixture("crossref-work.json")
    assert_records_as_expected(records, "crossref-work.json")
    assert len(records) == 1 and report.problems == []


def test_json_lines_of_works_and_the_awkward_ones() -> None:
    records, report = read_fixture("crossref-works.jsonl")
    assert_records_as_expected(records, "crossref-works.jsonl")
    chemistry, created = records[5:]
    assert chemistry.title == "Spin and Charge in H2O & D2O"
    assert chemistry.abstract == "Water <and> heavy water, with emphasis."
    assert chemistry.authors == (
        "The EXAMPLE Collaboration",
        "Edward Witten Jr.",
        "Christian S. Hardtke",
    )
    assert (chemistry.year, chemistry.date, chemistry.cited_by) == (2023, "2023-06", 41)
    assert chemistry.subjects == ("Physical and Theoretical Chemistry", "Spectroscopy")
    assert chemistry.source == "Transactions on Placeholder Research"
    assert (created.year, created.date, created.cited_by) == (2022, "2022-01-15", None)
    assert [str(p) for p in report.problems] == [
        f"{FORMATS_DIR / 'crossref-works.jsonl'}:8: "
        "Crossref work has neither a title nor an abstract; skipped"
    ]


def test_jats_abstracts_lose_their_tags_and_headings() -> None:
    assert jats_text(
        "<jats:title>Abstract</jats:title><jats:p>A &amp; B.</jats:p><jats:p>C.</jats:p>"
    ).split() == [
        "A",
        "&",
        "B.",
        "C.",
    ]


def test_an_arxiv_doi_gives_the_arxiv_id() -> None:
    record = record_from_work({"title": ["T"], "DOI": "10.48550/arXiv.2401.00001"}, "x:1")
    assert record is not None and record.arxiv_id == "2401.00001"


def test_a_response_pretty_printed_by_jq_reads_the_same(tmp_path: Path) -> None:
    compact, _ = read_fixture("crossref-works.json")
    response = json.loads((FORMATS_DIR / "crossref-works.json").read_text(encoding="utf-8"))
    pretty = tmp_path / "works.json"
    pretty.write_text(json.dumps(response, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    report = ReadReport()
    records = list(read_paths([pretty], report))
    assert report.problems == []
    assert [fields_of(r) for r in records] == [fields_of(r) for r in compact]
