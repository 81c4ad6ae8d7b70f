"""RIS files: Zotero's, EndNote's and a publisher's records, both name orders, dates,
continued lines, and records that cannot be read."""

from __future__ import annotations

import pytest
from format_fixtures import FORMATS_DIR, assert_records_as_expected, read_fixture

from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.readers.ris import read_ris, ris_author, ris_date
from pubsearch.ingest.records import Record

NAME = "library.ris"


def read_text(text: str) -> tuple[list[Record], ReadReport]:
    report = ReadReport()
    return list(read_ris(text.splitlines(keepends=True), "mem.ris", report)), report


def test_every_exported_record_reads_field_by_field() -> None:
    records, _ = read_fixture(NAME)
    assert_records_as_expected(records, NAME)
    assert len(records) == 32


def test_the_awkward_records() -> None:
    records, report = read_fixture(NAME)
    chapter, unended = records[30:]
    assert chapter.title == "A Chapter Whose Names Come in Both Orders"
    assert chapter.authors == ("Christian S. Hardtke", "Edward Witten Jr.")
    assert chapter.abstract == (
        "The first line of a long abstract that carries on over a second line and a third."
    )
    assert (chapter.year, chapter.date) == (2019, None)  # 2019/02/30 is no day
    assert chapter.subjects == ("name order", "initials")
    assert chapter.source == "Book of Test Records"
    assert chapter.arxiv_id == "1902.00001"  # the second of two links on one UR line
    assert unended.title == "A Last Record Without Its End Tag"
    assert (unended.authors, unended.date) == (("Karolina Górnicka",), "2021-07-04")
    lines = (FORMATS_DIR / NAME).read_text(encoding="utf-8-sig").splitlines()
    untitled = lines.index("AU  - Nobody, Anna")  # the line after its TY line
    assert [str(p) for p in report.problems] == [
        f"{FORMATS_DIR / NAME}:{untitled}: "
        "RIS record has neither a title (TI, T1) nor an abstract; skipped"
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Hardtke, Christian S", "Christian S. Hardtke"),
        ("Hardtke, C. S.", "C. S. Hardtke"),
        ("Christian S Hardtke", "Christian S. Hardtke"),
        ("Witten, Edward, Jr.", "Edward Witten Jr."),
        ("The EXAMPLE Collaboration", "The EXAMPLE Collaboration"),
    ],
)
def test_names(name: str, expected: str) -> None:
    assert ris_author(name) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024/05/29/", (2024, "2024-05-29")),
        ("2024/05/29", (2024, "2024-05-29")),
        ("2024-05-29", (2024, "2024-05-29")),
        ("2024///", (2024, None)),
        ("2024/05", (2024, "2024-05")),  # a month
        ("2024/05//", (2024, "2024-05")),
        ("2024/13//", (2024, None)),
        ("2024", (2024, None)),
        ("Spring 2019", (2019, None)),
        ("", (None, None)),
    ],
)
def test_dates(value: str, expected: tuple[int | None, str | None]) -> None:
    assert ris_date(value) == expected


def test_a_record_without_er_is_ended_by_the_next_ty_and_lines_outside_records_are_ignored() -> (
    None
):
    records, report = read_text(
        "Provider: Test\nTY  - JOUR\nTI  - One\nTY  - JOUR\nT1  - Two\nER  - \nstray line\n"
    )
    assert [r.title for r in records] == ["One", "Two"]
    assert [r.origins for r in records] == [("mem.ris:2",), ("mem.ris:4",)]
    assert report.problems == []


def test_crlf_lines_and_a_byte_order_mark_read_alike() -> None:
    raw = (FORMATS_DIR / NAME).read_bytes()
    assert raw.startswith(b"\xef\xbb\xbfTY  - ") and b"\r\nTI  - " in raw
    records, _ = read_fixture(NAME)
    assert records[0].origins[0].endswith(":1") and records[1].title
    assert not any("\r" in r.abstract or "\r" in r.title for r in records)
