"""Identifiers go straight to the record: arXiv ids and DOIs in the search box, in
``pubsearch show`` and the API, and every id of a paper merged from several sources."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pubsearch.indexing import build_index
from pubsearch.readers import ReadReport, read_paths
from pubsearch.searching import SearchService

# Two listings of one paper (one title and year, two arXiv ids, the second with a DOI),
# old-style ids, a record that cites another's id in its text, and one whose text holds
# numbers that are no ids.
RECORDS = [
    {
        "id": "2505.17997",
        "title": "Quantum Widgets at Scale",
        "abstract": "We build quantum widgets.",
        "year": 2025,
    },
    {
        "id": "2506.03038v2",
        "title": "Quantum widgets at scale",
        "abstract": "We build quantum widgets, many of them, at scale.",
        "year": 2025,
        "doi": "10.1103/PhysRevLett.123.456",
    },
    {"id": "hep-th/9901001", "title": "Strings of the old style", "abstract": "S.", "year": 1999},
    {"id": "math/0309136", "title": "Knots and links", "abstract": "Knots.", "year": 2003},
    {
        "id": "2503.18889",
        "title": "Transformers for protein design",
        "abstract": "A transformer designs proteins.",
        "year": 2025,
    },
    {
        "id": "2401.00001",
        "title": "Transformer memory",
        "abstract": "How a transformer remembers.",
        "year": 2024,
        "doi": "10.1038/nature14539",
    },
    {
        "id": "2402.00002",
        "title": "A 1.5 degree scenario for 2021",
        "abstract": "Warming of 1.5 degrees, as seen in 2021; this extends 2505.17997.",
        "year": 2024,
    },
]


def write_records(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def ids_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ids")
    source = write_records(folder / "records.jsonl", RECORDS)
    index_dir = folder / "index"
    build_index(index_dir, read_paths([source], ReadReport()))
    return index_dir


@pytest.fixture
def ids_service(ids_index: Path) -> Iterator[SearchService]:
    svc = SearchService(ids_index)
    yield svc
    svc.close()


def test_a_merged_paper_keeps_and_stores_every_id(ids_service: SearchService) -> None:
    record = ids_service.record("2505.17997")
    assert record.arxiv_ids == ("2505.17997", "2506.03038")
    assert record.dois == ("10.1103/physrevlett.123.456",)
    assert record.origins[0].endswith("records.jsonl:1")
    assert len(list(ids_service.iter_records())) == len(RECORDS) - 1
