"""CSL JSON export: records as Zotero, citation.js and Pandoc read them, and read back
the same."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from format_fixtures import EXPORT_RECORD, assert_round_trip

from pubsearch.ingest.records import Record
from pubsearch.search.export import record_to_csl, records_to_csljson

RECORD = replace(
    EXPORT_RECORD,
    subjects=("Computer Science - Computational Engineering, Finance, and Science", "cs.LG"),
)


def test_a_record_as_a_csl_item() -> None:
    item = record_to_csl(RECORD, "hardtke2024spin")
    assert item == {
        "id": "hardtke2024spin",
        "type": "article-journal",
        "title": "Spin & Charge",
        "author": [
            {"family": "Hardtke", "given": "Christian S."},
            {"family": "van der Berg", "given": "Anna"},
            {"family": "Witten", "given": "Edward", "suffix": "Jr."},
            {"literal": "The X Collaboration"},
        ],
        "issued": {"date-parts": [[2024, 5, 29]]},
        "abstract": "An abstract.",
        "container-title": "Letters in Test Science",
        "DOI": "10.5555/lts.2024.0001",
        "URL": "https://doi.org/10.5555/lts.2024.0001",
        "keyword": "Computer Science - Computational Engineering, Finance, and Science; cs.LG",
        "custom": {"cited_by_count": 12},
    }


def test_a_preprint_keeps_its_arxiv_number_and_a_year_alone_its_year() -> None:
    item = record_to_csl(Record(title="T", year=2021, arxiv_id="2101.00001"), "k")
    assert item["type"] == "article" and item["number"] == "arXiv:2101.00001"
    assert item["issued"] == {"date-parts": [[2021]]}


def test_the_file_is_one_json_array_with_unique_ids() -> None:
    items = json.loads(records_to_csljson([RECORD, RECORD, Record(title="Other")]))
    assert [i["id"] for i in items] == ["hardtke2024spin", "hardtke2024spina", "anonndother"]


def test_export_then_index_again_gives_the_same_records(
    formats_index: Path, tmp_path: Path
) -> None:
    assert_round_trip(formats_index, tmp_path, "all.json", records_to_csljson)


def test_tex_further_ids_and_a_month_survive_an_export_and_a_reindex(
    tex_index: Path, tmp_path: Path
) -> None:
    assert_round_trip(tex_index, tmp_path, "tex.json", records_to_csljson)
    record = Record(title="T", year=2007, date="2007-05", other_arxiv_ids=("2402.00021", "x"))
    item = record_to_csl(record, "k")
    assert item["issued"] == {"date-parts": [[2007, 5]]}
    assert (item["number"], item.get("note")) == ("arXiv:2402.00021", None)
