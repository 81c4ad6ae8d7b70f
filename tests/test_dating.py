"""Records dated by their submission when a listing gave them years later (dating.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pubsearch.index.build import build_index
from pubsearch.ingest.dating import dated_by_submission
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record
from pubsearch.search.request import SearchRequest, YearRange
from pubsearch.search.service import SearchService

SAMPLE = Path(__file__).resolve().parent / "data" / "arxiv-2024-2026.sample.jsonl"


@pytest.mark.parametrize(
    ("arxiv_id", "date", "dated"),
    [
        ("0705.1862", "2025-08-26", (2007, "2007-05", "2025-08-26")),
        ("hep-th/9901001", "2026-06-19", (1999, "1999-01", "2026-06-19")),
        ("2402.01555", "2025-10-24", (2024, "2024-02", "2025-10-24")),  # 20 months
        ("2410.22333", "2025-10-31", (2025, "2025-10-31", None)),  # 12 months: its own
        ("2505.17997", "2025-05-23", (2025, "2025-05-23", None)),
        ("2505.17997", "2025-04-30", (2025, "2025-04-30", None)),  # listed before its id
    ],
)
def test_a_listing_more_than_a_year_after_the_id_dates_by_the_id(
    arxiv_id: str, date: str, dated: tuple[int, str, str | None]
) -> None:
    record = Record(title="T", arxiv_id=arxiv_id, year=int(date[:4]), date=date)
    moved = dated_by_submission(record)
    assert (moved.year, moved.date, moved.listed) == dated
    assert moved.id == record.id


def test_records_without_an_arxiv_id_or_a_day_stay_as_they_are() -> None:
    for record in (
        Record(title="T", doi="10.1/x", year=2025, date="2025-08-26"),
        Record(title="T", arxiv_id="0705.1862", year=2025),
        Record(title="T", id="4983", year=2025, date="2025-08-26"),
    ):
        assert dated_by_submission(record) == record


def write(path: Path, objects: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def test_the_jsonl_reader_dates_listings_and_not_publications(tmp_path: Path) -> None:
    common = {"title": "Detection of CFIRB", "abstract": "A."}
    source = write(
        tmp_path / "r.jsonl",
        [
            {
                **common,
                "id": "0705.1862",
                "date": "2025-08-26",
                "year": 2025,
                "date_source": "listing_file_date",
            },
            {
                **common,
                "id": "0708.0254",
                "date": "2025-08-26",
                "year": 2025,
                "date_source": "published",
            },
            {**common, "id": "0709.0001", "update_date": "2019-03-01"},
            {**common, "id": "0710.0001", "published": "2019-03-01", "update_date": "2020-01-01"},
        ],
    )
    records = list(read_paths([source], ReadReport()))
    assert [(r.year, r.date, r.listed) for r in records] == [
        (2007, "2007-05", "2025-08-26"),
        (2025, "2025-08-26", None),
        (2007, "2007-09", "2019-03-01"),
        (2019, "2019-03-01", None),
    ]


def test_the_sample_of_the_corpus_has_its_old_papers_dated_by_submission(
    tmp_path: Path,
) -> None:
    records = list(read_paths([SAMPLE], ReadReport()))
    moved = {r.id: (r.year, r.date, r.listed) for r in records if r.listed}
    assert moved["0705.1862"] == (2007, "2007-05", "2025-08-26")
    assert moved["0708.0254"] == (2007, "2007-08", "2025-08-26")
    assert all(year < 2024 or listed[:4] != str(year) for year, _, listed in moved.values())
    build_index(tmp_path / "ix", iter(records))
    service = SearchService(tmp_path / "ix")
    try:
        shown = service.record("0705.1862")
        assert (shown.year, shown.date, shown.listed) == (2007, "2007-05", "2025-08-26")
        # The year facet and the oldest-first sort go by the submission.
        results = service.search(SearchRequest(facets=True, sort="oldest", page_size=2))
        assert [h.id for h in results.hits] == ["0705.1862", "0708.0254"]
        assert results.hits[0].listed == "2025-08-26"
        assert results.facets is not None
        years = {v.value: v.count for v in results.facets["year"]}
        assert years["2007"] == 2
        in_2007 = service.search(SearchRequest(year=YearRange(2007, 2007)))
        assert {h.id for h in in_2007.hits} == {"0705.1862", "0708.0254"}
    finally:
        service.close()
