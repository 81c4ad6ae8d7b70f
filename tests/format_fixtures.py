"""The fixtures of tests/data/formats/ and what they should read as.

Each file is written in one tool's export shape (see tests/data/formats/README.md). Its
records made from arXiv records are listed, field by field, in file order, in
``tests/data/formats-expected.json``; the hand-written awkward entries that follow them
are checked by each format's tests.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record, normalize_doi
from pubsearch.search.export import record_to_dict

FORMATS_DIR = Path(__file__).parent / "data" / "formats"
CHECKED_FIELDS = (
    "title",
    "abstract",
    "authors",
    "year",
    "date",
    "subjects",
    "source",
    "arxiv_id",
    "doi",
    "cited_by",
)


@cache
def expected(name: str) -> tuple[dict[str, Any], ...]:
    """The records of ``name`` made from arXiv records, as ``formats-expected.json`` lists them."""
    listed = json.loads((FORMATS_DIR.parent / "formats-expected.json").read_text(encoding="utf-8"))
    return tuple(listed[name])


def read_fixture(name: str, fmt: str = "auto") -> tuple[list[Record], ReadReport]:
    report = ReadReport()
    return list(read_paths([FORMATS_DIR / name], report, fmt)), report


# Fields of the JSON export that the expected file does not compare: an id a reader makes
# up, a link it derives, and where the record was read.
NOT_COMPARED = ("id", "url", "origins")


def fields_of(record: Record) -> dict[str, Any]:
    """A record's fields as the JSON export gives them, but those in NOT_COMPARED."""
    fields = record_to_dict(record)
    for name in NOT_COMPARED:
        del fields[name]
    return fields


def assert_records_as_expected(records: list[Record], name: str) -> None:
    """The first records read from ``name`` are, field by field, those it should hold."""
    wanted = expected(name)
    assert len(records) >= len(wanted)
    for number, (record, want) in enumerate(zip(records, wanted, strict=False), start=1):
        want = {**want, "doi": normalize_doi(want["doi"])}
        got = fields_of(record)
        for field in CHECKED_FIELDS:
            assert got[field] == want[field], f"{name}, record {number}, {field}"


def assert_round_trip(index_dir: Path, tmp_path: Path, name: str, write: Any) -> None:
    """Export every record of ``index_dir`` with ``write`` (records -> text) to ``name``,
    index that file again, and check the records come back field by field."""
    from pubsearch.index.build import build_index
    from pubsearch.search.service import SearchService

    svc = SearchService(index_dir)
    try:
        records = sorted(svc.iter_records(), key=lambda r: r.id)
    finally:
        svc.close()
    exported = tmp_path / name
    exported.write_text(write(records), encoding="utf-8")
    again = tmp_path / "again"
    build_index(again, read_paths([exported], ReadReport()))
    svc = SearchService(again)
    try:
        back = {r.id: r for r in svc.iter_records()}
    finally:
        svc.close()
    assert len(back) == len(records)
    for record in records:
        other = back[record.id]
        for field in ("title", "abstract", "authors", "year", "date", "subjects", "source"):
            assert getattr(other, field) == getattr(record, field), (record.id, field)
        assert (other.dois, other.arxiv_ids, other.cited_by) == (
            record.dois,
            record.arxiv_ids,
            record.cited_by,
        ), record.id


# A record with each awkward part an export must carry: initials, particles, a suffix, a
# group author, an ampersand, a date, a DOI and a citation count.
EXPORT_RECORD = Record(
    title="Spin & Charge",
    abstract="An abstract.",
    authors=(
        "Christian S. Hardtke",
        "Anna van der Berg",
        "Edward Witten Jr.",
        "The X Collaboration",
    ),
    year=2024,
    date="2024-05-29",
    subjects=("Spectroscopy", "cs.LG"),
    source="Letters in Test Science",
    doi="10.5555/lts.2024.0001",
    cited_by=12,
)


# Records as arXiv's listings write them (JSON lines), with the TeX of titles and
# abstracts an export must carry, a paper listed twice (two arXiv ids, two DOIs), and one
# dated by the month of its submission: tex_index makes an index of them.
TEX_RECORDS: tuple[dict[str, Any], ...] = (
    {
        "id": "2401.00011",
        "title": "$\\Lambda$CDM and its tensions",
        "abstract": "We fit $\\Lambda$CDM & friends: 50\\% of {braces} stay, #1 a_b ~x^2, "
        "$\\sim 50\\%$, and costs of \\$5 are no math.",
        "authors": ["Anna Lambda"],
        "year": 2024,
        "categories": ["astro-ph.CO"],
    },
    {
        "id": "2401.00012",
        "title": "Superconductivity in La$_3$Ni$_2$O$_7$ films",
        "abstract": "MoTe$_{2-x}$ and \\emph{strained} La$_3$Ni$_2$O$_7$: $T_c \\approx 80$ K.",
        "authors": ["Bo Nickel"],
        "year": 2024,
        "categories": ["cond-mat.supr-con"],
    },
    {
        "id": "2401.00013",
        "title": "The Ly$\\alpha$ forest",
        "abstract": "Ly$\\alpha$ absorbers at $z > 2$ in {\\it all} sight lines.",
        "authors": ["Cy Alpha"],
        "year": 2024,
    },
    {
        "id": "2402.00021",
        "title": "Twice listed",
        "abstract": "One paper, two listings.",
        "year": 2024,
        "doi": "10.5555/lts.2024.0021",
    },
    {
        "id": "2402.00022v2",
        "title": "Twice Listed",
        "abstract": "One paper, two listings.",
        "year": 2024,
        "doi": "10.1103/PhysRevB.110.000022",
    },
    {
        "id": "0705.1862",
        "title": "Detection of CFIRB with AKARI/FIS Deep Observations",
        "abstract": "An old paper in a new listing.",
        "year": 2025,
        "date": "2025-08-26",
        "date_source": "listing_file_date",
    },
)


def build_tex_index(folder: Path) -> Path:
    """An index of :data:`TEX_RECORDS` in ``folder``."""
    from pubsearch.index.build import build_index

    source = folder / "tex.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in TEX_RECORDS), encoding="utf-8")
    build_index(folder / "index", read_paths([source], ReadReport()))
    return folder / "index"
