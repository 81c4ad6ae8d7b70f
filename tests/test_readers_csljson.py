"""CSL JSON: Zotero's, citation.js's and Pandoc's items; names, dates and keywords."""

from __future__ import annotations

import json
from typing import Any

import pytest
from format_fixtures import FORMATS_DIR, assert_records_as_expected, read_fixture

from pubsearch.ingest.readers.csljson import csl_author, looks_like_csljson, record_from_csl
from pubsearch.ingest.readers.fields import date_parts

NAME = "library.csl.json"


def test_every_exported_item_reads_field_by_field() -> None:
    records, _ = read_fixture(NAME)
    assert_records_as_expected(records, NAME)
    assert len(records) == 32


def test_the_awkward_items() -> None:
    records, report = read_fixture(NAME)
    names, strings = records[30:]
    assert names.authors == (
        "The EXAMPLE Collaboration",
        "Anna van der Berg",
        "Edward Witten Jr.",
        "Christian S. Hardtke",
    )
    assert (names.year, names.date) == (2019, "2019-07-04")  # from "raw"
    assert names.subjects == ("name parts", "literal names")
    assert names.source == "Letters in Test Science"
    assert (strings.year, strings.date, strings.authors) == (2020, "2020-07", ("Jörg Müller",))
    lines = (FORMATS_DIR / NAME).read_text(encoding="utf-8").splitlines()
    string_line = lines.index('\t"not an item",') + 1
    assert [(p.where, p.message) for p in report.problems] == [
        (f"{FORMATS_DIR / NAME}:{string_line}", "array element is a JSON string"),
        (
            f"{FORMATS_DIR / NAME}:{string_line + 1}",
            "CSL item has neither a title nor an abstract; skipped",
        ),
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ({"family": "Hardtke", "given": "Christian S"}, "Christian S. Hardtke"),
        (
            {"family": "Beethoven", "given": "Ludwig", "dropping-particle": "van"},
            "Ludwig van Beethoven",
        ),
        ({"literal": "World Health Organization"}, "World Health Organization"),
        ({"family": "Zhang"}, "Zhang"),
        ({}, ""),
    ],
)
def test_names(name: dict[str, str], expected: str) -> None:
    assert csl_author(name) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"date-parts": [[2024, 5, 29]]}, (2024, "2024-05-29")),
        ({"date-parts": [["2024", "5", "29"]]}, (2024, "2024-05-29")),
        ({"date-parts": [[2024, 2, 30]]}, (2024, None)),
        ({"date-parts": [[2024]]}, (2024, None)),
        ({"raw": "2024-05-29"}, (2024, "2024-05-29")),
        ({"literal": "Spring 2019"}, (2019, None)),
        ({"date-parts": [[]]}, (None, None)),
        ("2024", (None, None)),
    ],
)
def test_dates(value: Any, expected: tuple[int | None, str | None]) -> None:
    assert date_parts(value) == expected


def test_a_citation_count_pubsearch_exported_is_read_back() -> None:
    item = {"type": "article", "title": "T", "custom": {"cited_by_count": 17}}
    record = record_from_csl(item, "x:1")
    assert record is not None and record.cited_by == 17


def test_detected_by_its_keys_not_taken_for_generic_json() -> None:
    assert looks_like_csljson([json.dumps({"type": "article", "title": "T", "DOI": "10.1/x"})])
    assert looks_like_csljson(["[\n", "\t{\n", '\t\t"issued": {\n'])
    assert not looks_like_csljson([json.dumps({"title": "T", "doi": "10.1/x", "authors": []})])
