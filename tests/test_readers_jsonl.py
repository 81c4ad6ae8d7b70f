"""The generic JSON lines reader (and its JSON array form), and the shared field helpers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pubsearch.core.errors import ReadError
from pubsearch.ingest.readers.fields import split_authors
from pubsearch.ingest.readers.jsonl import read_jsonl
from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.records import Record, clean_text

DATA = Path(__file__).parent / "data"
CORPUS_SAMPLE = DATA / "arxiv-2024-2026.sample.jsonl"

# Made-up records in BEIR's corpus form ({"_id", "title", "text"}).
BEIR_LINES = [
    '{"_id": "4983", "title": "Tiny made-up paper one.", "text": "An abstract about nothing."}',
    '{"_id": "77", "title": "Tiny made-up paper two.", "text": "Another abstract.",'
    ' "metadata": {}}',
    '{"_id": 12, "title": "A numeric id.", "text": ""}',
]


def read_text(text: str, origin: str = "mem.jsonl") -> tuple[list[Record], ReadReport]:
    report = ReadReport()
    records = list(read_jsonl(text.splitlines(keepends=True), origin, report))
    return records, report


def read_objects(*objects: dict[str, Any]) -> list[Record]:
    records, report = read_text("\n".join(json.dumps(o) for o in objects))
    assert report.problems == []
    return records


def one(**fields: Any) -> Record:
    (record,) = read_objects(fields)
    return record


# -- the real corpus slice ---------------------------------------------------------------


def test_corpus_sample_reads_every_record() -> None:
    report = ReadReport()
    with CORPUS_SAMPLE.open(encoding="utf-8") as lines:
        records = list(read_jsonl(lines, "sample.jsonl", report))
    assert len(records) == 300
    assert report.problems == []
    raw = [json.loads(line) for line in CORPUS_SAMPLE.read_text(encoding="utf-8").splitlines()]
    for number, (record, obj) in enumerate(zip(records, raw, strict=True), start=1):
        year = int(record.date[:4]) if record.date else None
        assert record.arxiv_id == obj["id"]
        assert record.id == obj["id"]
        assert record.title == clean_text(obj["title"])
        # A paper listed years after its id's month is dated by that month (dating.py).
        assert (record.year, record.listed) in ((obj["year"], None), (year, obj["date"]))
        assert record.subjects == tuple(obj["categories"])
        assert len(record.authors) == len(obj["authors"])
        assert record.source == obj["source"]
        assert record.origins == (f"sample.jsonl:{number}",)


def test_corpus_sample_record_fields() -> None:
    with CORPUS_SAMPLE.open(encoding="utf-8") as lines:
        records = list(read_jsonl(lines, "sample.jsonl", ReadReport()))
    record = records[37]  # line 38 of the file
    assert record.id == "2403.00702"
    assert record.title == (
        "Simulating Molecular Single Vibronic Level Fluorescence Spectra with ab initio "
        "Hagedorn Wavepacket Dynamics"
    )
    assert record.abstract.startswith("We present a practical, ab initio time-dependent method")
    assert record.authors == ("Zhan Tong Zhang", "Jiří J. L. Vaníček")
    assert record.subjects == ("physics.chem-ph", "quant-ph")
    assert record.year == 2024
    assert record.url == "https://arxiv.org/abs/2403.00702"
    assert record.origins == ("sample.jsonl:38",)


# -- BEIR form: a non-arXiv id is the record's id ----------------------------------------


def test_beir_records_keep_their_own_ids() -> None:
    records, report = read_text("\n".join(BEIR_LINES))
    assert report.problems == []
    assert [r.id for r in records] == ["4983", "77", "12"]
    assert all(r.arxiv_id is None for r in records)
    assert records[0].title == "Tiny made-up paper one."
    assert records[0].abstract == "An abstract about nothing."
    assert records[2].abstract == ""


def test_non_arxiv_id_is_kept_exactly_even_with_an_arxiv_id_field() -> None:
    record = one(_id="W-42 x", arxiv_id="2101.00001v3", title="T")
    assert record.id == "W-42 x"
    assert record.arxiv_id == "2101.00001"


@pytest.mark.parametrize(
    ("raw", "arxiv_id"),
    [
        ("2101.00001", "2101.00001"),
        ("2101.00001v2", "2101.00001"),
        ("arXiv:2101.12345v11", "2101.12345"),
        ("0704.0001", "0704.0001"),
        ("hep-th/9901001", "hep-th/9901001"),
        ("hep-th/9901001v1", "hep-th/9901001"),
        ("math.CA/0611800", "math/0611800"),  # arXiv drops the subject class
        ("https://arxiv.org/abs/2101.00001v2", "2101.00001"),
    ],
)
def test_arxiv_ids_are_normalised(raw: str, arxiv_id: str) -> None:
    record = one(id=raw, title="T")
    assert record.arxiv_id == arxiv_id
    assert record.id == arxiv_id


@pytest.mark.parametrize("key", ["id", "_id", "arxiv_id"])
def test_every_id_key_can_hold_an_arxiv_id(key: str) -> None:
    assert one(**{key: "2101.00001v2", "title": "T"}).arxiv_id == "2101.00001"


def test_record_without_any_id_gets_a_derived_one() -> None:
    record = one(title="T", doi="https://doi.org/10.1000/XYZ")
    assert record.id == "doi:10.1000/xyz"


# -- fields ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "authors",
    [
        ["A. One", "B. Two", "C. Three"],
        "A. One, B. Two and C. Three",
        "A. One, B. Two, and C. Three",
        "A. One; B. Two & C. Three",
        [{"name": "A. One"}, {"name": "B. Two"}, {"name": "C. Three"}],
        [
            {"keyname": "One", "forenames": "A."},
            {"keyname": "Two", "forenames": "B."},
            {"keyname": "Three", "forenames": "C."},
        ],
        ["A.  One", "B. Two ", "C.~Three"],
    ],
)
def test_author_forms(authors: object) -> None:
    assert one(title="T", authors=authors).authors == ("A. One", "B. Two", "C. Three")


def test_authors_with_tex_accents_are_decoded() -> None:
    record = one(title="T", authors=r"C. Bal\'azs and Mikkel {\O}bro")
    assert record.authors == ("C. Balázs", "Mikkel Øbro")


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("A. One, B. Two and C. Three", ["A. One", "B. Two", "C. Three"]),
        ("Ileana Streinu and Louis Theran", ["Ileana Streinu", "Louis Theran"]),
        ("Ferdinand Anderson and Sandy Band", ["Ferdinand Anderson", "Sandy Band"]),
        ("John Smith, Jr., Mary Jones", ["John Smith Jr.", "Mary Jones"]),
        (
            "A. S. Mishchenko (1 and 2) and N. Nagaosa (1 and 3) ((1) CREST, Japan, (2) RRC)",
            ["A. S. Mishchenko", "N. Nagaosa"],
        ),
        ("The BABAR Collaboration, B. Aubert, et al", ["The BABAR Collaboration", "B. Aubert"]),
        ("F. Aharonian et al.", ["F. Aharonian"]),
        ("Paul Harvey, Nicholas\n  Chapman", ["Paul Harvey", "Nicholas Chapman"]),
        ("", []),
    ],
)
def test_split_authors(text: str, names: list[str]) -> None:
    assert split_authors(text) == names


def test_title_and_abstract_tex_accents_decoded_math_kept() -> None:
    record = one(title=r"Schr\"odinger bridges", abstract=r"On $\"a$ and K\"ahler.")
    assert record.title == "Schrödinger bridges"
    assert record.abstract == r"On $\"a$ and Kähler."


@pytest.mark.parametrize("key", ["abstract", "text", "summary"])
def test_abstract_keys(key: str) -> None:
    assert one(title="T", **{key: "the abstract"}).abstract == "the abstract"


@pytest.mark.parametrize(
    ("fields", "subjects"),
    [
        ({"categories": "cs.LG stat.ML"}, ("cs.LG", "stat.ML")),
        ({"categories": ["cs.LG", "stat.ML"]}, ("cs.LG", "stat.ML")),
        ({"subjects": ["Biology", "Medicine"]}, ("Biology", "Medicine")),
        ({"categories": ["cs.LG"], "primary_category": "cs.AI"}, ("cs.LG", "cs.AI")),
        ({"categories": ["cs.AI", "cs.LG"], "primary_category": "cs.AI"}, ("cs.AI", "cs.LG")),
    ],
)
def test_subjects(fields: dict[str, Any], subjects: tuple[str, ...]) -> None:
    assert one(title="T", **fields).subjects == subjects


@pytest.mark.parametrize(
    ("fields", "year"),
    [
        ({"year": 2021}, 2021),
        ({"year": "2021"}, 2021),
        ({"date": "2024-03-01"}, 2024),
        ({"published": "Mon, 2 Apr 2007 19:18:42 GMT"}, 2007),
        ({"update_date": "2008-11-26"}, 2008),
        ({"year": 2020, "date": "2024-03-01"}, 2020),
        ({"year": "n/a", "date": "2024-03-01"}, 2024),
        ({}, None),
    ],
)
def test_year(fields: dict[str, Any], year: int | None) -> None:
    assert one(title="T", **fields).year == year


@pytest.mark.parametrize(
    ("fields", "date"),
    [
        ({"date": "2024-03-01"}, "2024-03-01"),
        ({"year": 2024, "date": "2024-03-01"}, "2024-03-01"),
        ({"date": "2024-03-01T23:59:00Z"}, "2024-03-01"),
        ({"published": "Mon, 2 Apr 2007 19:18:42 GMT"}, "2007-04-02"),
        ({"update_date": "2008-11-26"}, "2008-11-26"),
        ({"date": "2024-03", "update_date": "2024-05-06"}, "2024-05-06"),
        ({"year": 2020, "date": "2024-03-01"}, None),  # contradicts the year
        ({"date": "2024-02-30"}, None),
        ({"date": "2024"}, None),
        ({"year": 2021}, None),
        ({}, None),
    ],
)
def test_date(fields: dict[str, Any], date: str | None) -> None:
    assert one(title="T", **fields).date == date


def test_doi_and_source() -> None:
    record = one(title="T", doi="10.1364/JOSAA.23.002578 10.1364/JOSAA.32.002407", source="S")
    assert record.doi == "10.1364/josaa.23.002578"
    assert record.source == "S"


# -- problems ----------------------------------------------------------------------------


def test_malformed_lines_are_reported_and_the_rest_read() -> None:
    text = "\n".join(
        [
            '{"id": "2101.00001", "title": "First"}',
            "",
            '{"id": "2101.00002", "title": "Broken",',
            "[1, 2]",
            '{"id": "2101.00003", "abstract": "no title"}',
            '{"id": "2101.00004", "title": "   "}',
            "   ",
            '{"id": "2101.00005", "title": "Last"}',
        ]
    )
    records, report = read_text(text, "f.jsonl")
    assert [r.title for r in records] == ["First", "", "Last"]  # untitled, with a text
    assert [r.origins for r in records] == [("f.jsonl:1",), ("f.jsonl:5",), ("f.jsonl:8",)]
    assert [p.where for p in report.problems] == ["f.jsonl:3", "f.jsonl:4", "f.jsonl:6"]
    assert "not valid JSON" in report.problems[0].message
    assert "not an object" in report.problems[1].message
    assert "neither a title nor an abstract" in report.problems[2].message


def test_wrongly_typed_field_is_reported_and_ignored() -> None:
    records, report = read_text('{"title": "T", "authors": 5, "abstract": ["x"]}')
    assert len(records) == 1
    assert records[0].authors == ()
    assert records[0].abstract == ""
    assert [p.where for p in report.problems] == ["mem.jsonl:1", "mem.jsonl:1"]
    assert any("'authors'" in p.message for p in report.problems)


def test_byte_order_mark_on_the_first_line() -> None:
    records, report = read_text('\ufeff{"title": "T"}\n')
    assert [r.title for r in records] == ["T"]
    assert report.problems == []


# -- JSON arrays -------------------------------------------------------------------------


def test_pretty_printed_array() -> None:
    objects = [{"id": "2101.00001", "title": "One"}, {"_id": "x", "title": "Two", "year": 2020}]
    text = json.dumps(objects, indent=2)
    records, report = read_text(text, "a.json")
    assert report.problems == []
    assert [r.title for r in records] == ["One", "Two"]
    assert [r.id for r in records] == ["2101.00001", "x"]
    # Each record's origin is the line its object starts on.
    lines = text.splitlines()
    assert lines[1].strip() == "{"
    assert records[0].origins == ("a.json:2",)
    assert lines[5].strip() == "{"
    assert records[1].origins == ("a.json:6",)


def test_one_line_array_and_non_object_elements() -> None:
    records, report = read_text('[{"title": "A"}, 3, {"title": "B"}, {"year": 2020}]')
    assert [r.title for r in records] == ["A", "B"]
    assert [(p.where, p.message) for p in report.problems] == [
        ("mem.jsonl:1", "array element is a JSON number"),
        ("mem.jsonl:1", "record has neither a title nor an abstract or text; skipped"),
    ]


def test_records_without_a_title_are_read_by_their_text() -> None:
    # As in BEIR collections (NPL): an empty title and the text.
    records, report = read_text(
        '{"_id": "1", "title": "", "text": "compact memories have flexible capacities a '
        'digital data storage system with capacity up to bits and random access is described"}\n'
        '{"_id": "2", "title": "", "text": "compact memories have flexible capacities."}\n'
    )
    assert report.problems == []
    assert [(r.id, r.title) for r in records] == [("1", ""), ("2", "")]
    assert records[0].display_title == (
        "compact memories have flexible capacities a digital data storage system with "
        "capacity \u2026"
    )
    assert records[1].display_title == "compact memories have flexible capacities"


def test_untitled_records_without_ids_are_told_apart_by_their_text() -> None:
    records, _ = read_text(
        '{"abstract": "First text.", "year": 2020}\n{"abstract": "Second text.", "year": 2020}\n'
    )
    assert len({r.id for r in records}) == 2
    assert all(r.id.startswith("a") for r in records)


def test_one_object_a_line_array() -> None:
    text = '[\n{"title": "A"},\n\n{"title": "B"}\n]\n'
    records, _ = read_text(text)
    assert [(r.title, r.origins) for r in records] == [
        ("A", ("mem.jsonl:2",)),
        ("B", ("mem.jsonl:4",)),
    ]


def test_truncated_array_raises_after_the_whole_elements() -> None:
    text = '[\n{"title": "A"},\n{"title": "B",\n'
    report = ReadReport()
    reader = read_jsonl(text.splitlines(keepends=True), "t.json", report)
    assert next(reader).title == "A"
    with pytest.raises(ReadError) as caught:
        next(reader)
    assert caught.value.where == "t.json:3"
    assert "ends early" in str(caught.value)


def test_syntax_error_in_array_names_its_line() -> None:
    text = '[\n  {"title": "A"},\n  {"title": "B" "x"},\n  {"title": "C"}\n]\n'
    with pytest.raises(ReadError) as caught:
        read_text(text, "s.json")
    assert caught.value.where == "s.json:3"
    assert "invalid JSON in array" in str(caught.value)


def test_pretty_printed_objects_one_after_another() -> None:
    one = json.dumps({"title": "One", "authors": [{"name": "A. One"}], "meta": {"x": 1}}, indent=2)
    two = json.dumps({"title": "Two"}, indent=4)
    broken = '{\n  "title": "Broken",\n  "year": ,\n}'
    records, report = read_text("\n".join([one, two, broken, "", one]) + "\n")
    assert [r.title for r in records] == ["One", "Two", "One"]
    assert [r.origins for r in records][:2] == [
        ("mem.jsonl:1",),
        (f"mem.jsonl:{one.count(chr(10)) + 2}",),
    ]
    start = one.count("\n") + two.count("\n") + 3
    assert [(p.where, p.message.split(" (")[0]) for p in report.problems] == [
        (f"mem.jsonl:{start + 2}", "not valid JSON")
    ]


def test_a_pretty_printed_object_cut_short_is_reported() -> None:
    records, report = read_text('{\n  "title": "Cut",\n  "authors": [\n')
    assert records == []
    assert [str(p) for p in report.problems] == [
        "mem.jsonl:1: JSON object ends early (no closing '}'); skipped"
    ]


def test_a_brace_alone_at_the_start_of_a_line_inside_an_object_is_read_on() -> None:
    text = '{\n"title": "Flat",\n"meta": {\n"x": 1\n}\n,"year": 2020\n}\n'
    records, report = read_text(text)
    assert [(r.title, r.year) for r in records] == [("Flat", 2020)]
    assert report.problems == []
