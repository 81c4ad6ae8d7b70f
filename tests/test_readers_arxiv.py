"""The arXiv metadata snapshot reader, and merging its records with generic JSON ones."""

from __future__ import annotations

import json
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import pytest

from pubsearch.ingest.readers.arxiv_snapshot import read_arxiv_snapshot
from pubsearch.ingest.readers.jsonl import read_jsonl
from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.records import Record, merge_records

DATA = Path(__file__).parent / "data"
SNAPSHOT_SAMPLE = DATA / "arxiv-snapshot.sample.json"


def raw_objects() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SNAPSHOT_SAMPLE.read_text(encoding="utf-8").splitlines()]


def read_sample() -> tuple[list[Record], ReadReport]:
    report = ReadReport()
    with SNAPSHOT_SAMPLE.open(encoding="utf-8") as lines:
        return list(read_arxiv_snapshot(lines, "snap.json", report)), report


def read_objects(*objects: dict[str, Any]) -> tuple[list[Record], ReadReport]:
    report = ReadReport()
    lines = [json.dumps(o) + "\n" for o in objects]
    return list(read_arxiv_snapshot(lines, "snap.json", report)), report


def snapshot_object(**changes: Any) -> dict[str, Any]:
    """The first sample record, with some fields changed (a value of None drops one)."""
    obj = raw_objects()[0]
    obj.update(changes)
    return {k: v for k, v in obj.items() if v is not None}


# -- the real sample ---------------------------------------------------------------------


def test_sample_reads_every_record() -> None:
    records, report = read_sample()
    assert len(records) == 50
    assert report.problems == []
    for number, (record, obj) in enumerate(zip(records, raw_objects(), strict=True), start=1):
        assert record.arxiv_id == obj["id"]
        assert record.subjects == tuple(obj["categories"].split())
        assert record.year == parsedate_to_datetime(obj["versions"][0]["created"]).year
        assert len(record.authors) == len(obj["authors_parsed"])
        assert record.source == "arXiv"
        assert record.origins == (f"snap.json:{number}",)
        assert "\\" not in "".join(record.authors)


def test_first_sample_record() -> None:
    record = read_sample()[0][0]
    assert record.id == "0704.0001"
    assert record.title == (
        "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"
    )
    assert record.abstract.startswith("A fully differential calculation in perturbative")
    assert record.authors == ("C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C.-P. Yuan")
    # The first version is of 2007; update_date (2008-11-26) is not the year.
    assert record.year == 2007
    assert record.doi == "10.1103/physrevd.76.013009"
    assert record.subjects == ("hep-ph",)


@pytest.mark.parametrize(
    ("index", "authors"),
    [
        (1, ("Ileana Streinu", "Louis Theran")),
        (27, ("Péter E. Frenkel",)),
        (31, ("A. Esteban-Pretel", "R. Tomàs", "J. W. F. Valle")),
        (48, ("Mikkel Øbro",)),
    ],
)
def test_sample_author_names(index: int, authors: tuple[str, ...]) -> None:
    assert read_sample()[0][index].authors == authors


def test_suffix_from_authors_parsed() -> None:
    record = read_sample()[0][8]
    assert record.id == "0704.0009"
    assert "Neal J. Evans II" in record.authors


def test_authors_string_gives_the_same_names_as_authors_parsed() -> None:
    parsed, _ = read_sample()
    without = [dict(obj, authors_parsed=[]) for obj in raw_objects()]
    from_strings, report = read_objects(*without)
    assert report.problems == []
    assert [r.authors for r in from_strings] == [r.authors for r in parsed]


def test_tex_in_title_and_abstract_is_decoded() -> None:
    (record,), _ = read_objects(
        snapshot_object(title=r"Gr\"obner bases", abstract=r"Koll\'ar's $(k,\ell)$ theorem")
    )
    assert record.title == "Gröbner bases"
    assert record.abstract == r"Kollár's $(k,\ell)$ theorem"


# -- fields ------------------------------------------------------------------------------


def test_year_is_that_of_version_one_whatever_the_order() -> None:
    versions = [
        {"version": "v2", "created": "Tue, 24 Jul 2009 20:10:27 GMT"},
        {"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"},
    ]
    (record,), _ = read_objects(snapshot_object(versions=versions))
    assert record.year == 2007


def test_versions_with_odd_labels_sort_last() -> None:
    versions = [
        {"version": "v²", "created": "Tue, 24 Jul 2009 20:10:27 GMT"},
        {"version": 2, "created": "Wed, 25 Jul 2012 20:10:27 GMT"},
        {"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"},
    ]
    (record,), _ = read_objects(snapshot_object(versions=versions))
    assert record.year == 2007


def test_year_falls_back_to_update_date() -> None:
    (record,), _ = read_objects(snapshot_object(versions=None, update_date="2007-11-26"))
    assert record.year == 2007
    assert (record.date, record.listed) == ("2007-11-26", None)


def test_an_update_date_years_after_the_id_dates_by_the_id() -> None:
    # 0704.0001 was given in April 2007; its last update, in November 2008, is no date of it.
    (record,), _ = read_objects(snapshot_object(versions=None))
    assert (record.year, record.date, record.listed) == (2007, "2007-04", "2008-11-26")


def test_date_is_the_day_of_version_one() -> None:
    versions = [
        {"version": "v2", "created": "Tue, 24 Jul 2009 20:10:27 GMT"},
        {"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"},
    ]
    (record,), _ = read_objects(snapshot_object(versions=versions))
    assert (record.year, record.date) == (2007, "2007-04-02")


@pytest.mark.parametrize(
    ("raw", "arxiv_id"),
    [
        ("0704.0001v2", "0704.0001"),
        ("hep-th/9901001", "hep-th/9901001"),
        ("2101.00001", "2101.00001"),
    ],
)
def test_id_without_version(raw: str, arxiv_id: str) -> None:
    (record,), _ = read_objects(snapshot_object(id=raw))
    assert record.id == arxiv_id


def test_several_dois_keep_the_first() -> None:
    (record,), _ = read_objects(snapshot_object(doi="10.1016/j.a.2007.01.034 10.1016/j.a.2015"))
    assert record.doi == "10.1016/j.a.2007.01.034"


def test_bad_records_are_reported_and_skipped() -> None:
    lines = [
        json.dumps(snapshot_object(id="0704.0001")) + "\n",
        json.dumps(snapshot_object(id="not an id")) + "\n",
        json.dumps(snapshot_object(id="0704.0003", title=" ", abstract="")) + "\n",
        "{oops\n",
        json.dumps(snapshot_object(id="0704.0005")) + "\n",
    ]
    report = ReadReport()
    records = list(read_arxiv_snapshot(lines, "s.json", report))
    assert [r.id for r in records] == ["0704.0001", "0704.0005"]
    assert [p.where for p in report.problems] == ["s.json:2", "s.json:3", "s.json:4"]
    assert "no arXiv id" in report.problems[0].message
    assert "neither a title nor an abstract" in report.problems[1].message
    assert "not valid JSON" in report.problems[2].message


def test_a_record_without_a_title_is_read_by_its_abstract() -> None:
    (record,), report = read_objects(snapshot_object(title="", abstract="We find a thing."))
    assert report.problems == [] and record.title == ""
    assert record.display_title == "We find a thing"


# -- the same paper from two sources merges into one record ------------------------------


def test_snapshot_and_jsonl_records_of_one_paper_merge() -> None:
    snapshot, _ = read_sample()
    generic = {
        "id": "0704.0001v2",
        "title": "Calculation of prompt diphoton production cross sections at Tevatron and "
        "LHC energies",
        "authors": r"C. Bal\'azs, E.L. Berger and A. Newcomer",
        "categories": "hep-ph hep-ex",
        "year": 2007,
    }
    report = ReadReport()
    from_jsonl = list(read_jsonl([json.dumps(generic)], "other.jsonl", report))
    assert report.problems == []

    merged, duplicates = merge_records([snapshot[0], *from_jsonl, snapshot[1]])
    assert duplicates == 1
    assert [r.id for r in merged] == ["0704.0001", "0704.0002"]
    paper = merged[0]
    assert paper.authors == (
        "C. Balázs",
        "E. L. Berger",
        "P. M. Nadolsky",
        "C.-P. Yuan",
        "A. Newcomer",
    )
    assert paper.subjects == ("hep-ph", "hep-ex")
    assert paper.origins == ("snap.json:1", "other.jsonl:1")


def test_tex_and_unicode_author_spellings_merge_into_one_author() -> None:
    common = {"id": "2101.00001", "title": "A paper"}
    report = ReadReport()
    lines = [
        json.dumps({**common, "authors": [r"C. Bal\'azs", "E. One"]}),
        json.dumps({**common, "id": "arXiv:2101.00001v3", "authors": ["C.  Balázs", "F. Two"]}),
    ]
    records = list(read_jsonl(lines, "x.jsonl", report))
    merged, duplicates = merge_records(records)
    assert duplicates == 1
    assert merged[0].authors == ("C. Balázs", "E. One", "F. Two")
