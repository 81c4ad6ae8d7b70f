"""bench/synth.py, the growth benchmark's generator: seeded, unique ids, the snapshot
format pubsearch's own reader indexes, and the fitted statistics kept at a small N."""

from __future__ import annotations

import importlib.util
import json
import statistics
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import normalize_arxiv_id
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService

BENCH = Path(__file__).resolve().parent.parent / "bench"
SAMPLE = Path(__file__).resolve().parent / "data" / "arxiv-2024-2026.sample.jsonl"
SNAPSHOT_KEYS = {
    "id",
    "submitter",
    "authors",
    "title",
    "comments",
    "journal-ref",
    "doi",
    "report-no",
    "categories",
    "license",
    "abstract",
    "versions",
    "update_date",
    "authors_parsed",
}


def _load_synth() -> ModuleType:
    spec = importlib.util.spec_from_file_location("synth", BENCH / "synth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["synth"] = module
    spec.loader.exec_module(module)
    return module


synth = _load_synth()


@pytest.fixture(scope="module")
def model() -> dict[str, Any]:
    loaded: dict[str, Any] = synth.load_model()
    return loaded


@pytest.fixture(scope="module")
def records(model: dict[str, Any]) -> list[dict[str, Any]]:
    return list(synth.Generator(model).records(4_000))


def test_the_same_seed_gives_the_same_records_and_a_larger_run_begins_with_a_smaller(
    model: dict[str, Any], records: list[dict[str, Any]]
) -> None:
    again = list(synth.Generator(model).records(synth.BATCH + 10))
    assert again == records[: synth.BATCH + 10]
    other = list(synth.Generator(model, seed=1).records(10))
    assert [r["title"] for r in other] != [r["title"] for r in records[:10]]


def test_ids_are_unique_arxiv_ids(records: list[dict[str, Any]]) -> None:
    ids = [r["id"] for r in records]
    assert len(set(ids)) == len(ids)
    assert all(normalize_arxiv_id(i) == i for i in ids)
    assert any("/" in i for i in ids) and any("." in i for i in ids)  # both styles


def test_records_have_the_snapshot_fields(records: list[dict[str, Any]]) -> None:
    for r in records:
        assert set(r) == SNAPSHOT_KEYS
        assert r["title"] and isinstance(r["categories"], str) and r["categories"]
        assert r["versions"][0]["version"] == "v1"
        assert all(len(parts) == 3 for parts in r["authors_parsed"])
        assert r["update_date"] >= "1991-01-01"
    years = Counter(int(r["versions"][0]["created"].split()[3]) for r in records)
    assert min(years) < 2000 and max(years) >= 2025
    assert years[2025] > years[2000] > years[1993]  # arXiv grew


def test_pubsearch_indexes_them_with_its_arxiv_reader(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    data = tmp_path / "snapshot.json"
    data.write_text("".join(json.dumps(r) + "\n" for r in records[:500]), encoding="utf-8")
    report = ReadReport()
    summary = build_index(tmp_path / "index", read_paths([data], report, fmt="arxiv"), workers=1)
    assert not report.problems
    assert summary.indexed + summary.duplicates_merged == 500
    service = SearchService(tmp_path / "index")
    try:
        first = records[0]
        found = service.search(SearchRequest(q=f'"{first["title"]}"', facets=True))
        assert first["id"] in [hit.id for hit in found.hits]
        assert found.facets["subject"]
    finally:
        service.close()


def _words_and_tokens(records: list[dict[str, Any]]) -> tuple[Counter[str], int]:
    counts: Counter[str] = Counter()
    for r in records:
        counts.update(w.lower() for w in synth.tokens(r["title"] + " " + r["abstract"]))
    return counts, counts.total()


def test_vocabulary_grows_as_the_real_one_does(
    model: dict[str, Any], records: list[dict[str, Any]]
) -> None:
    # The real records' distinct words after 1,000 and 4,000 records (kept in the model),
    # and Heaps' law fitted on them at 10k to 102k, extrapolated to the synthetic tokens.
    small = model["heaps"]["small"]
    for n, _, real in small:
        counts, total = _words_and_tokens(records[:n])
        assert abs(len(counts) / real - 1) < 0.15, (n, len(counts), real)
    counts, total = _words_and_tokens(records)
    expected = model["heaps"]["K"] * total ** model["heaps"]["beta"]
    assert abs(len(counts) / expected - 1) < 0.15, (len(counts), expected)
    # The words past the real top words recur: not all of them are hapaxes.
    counts, _ = _words_and_tokens(records)
    real = {w.lower() for w, _, _ in model["words"]}
    invented = [c for w, c in counts.items() if w not in real]
    assert invented and sum(c >= 2 for c in invented) / len(invented) > 0.3


def test_authors_and_lengths_follow_the_model(
    model: dict[str, Any], records: list[dict[str, Any]]
) -> None:
    for n, _, real in model["author_heaps"]["small"]:
        names = {(last, first) for r in records[:n] for last, first, _ in r["authors_parsed"]}
        assert abs(len(names) / real - 1) < 0.2, (n, len(names), real)
    slots = [a for r in records for a in r["authors_parsed"]]
    productive = Counter((last, first) for last, first, _ in slots).most_common(1)[0][1]
    assert productive >= 10  # Zipf-like: some people write many papers

    def mean(table: list[list[int]]) -> float:
        return sum(v * c for v, c in table) / sum(c for _, c in table)

    title = statistics.mean(len(synth.tokens(r["title"])) for r in records)
    assert abs(title / mean(model["title_words"]) - 1) < 0.1
    per_paper = statistics.mean(len(r["authors_parsed"]) for r in records)
    assert abs(per_paper / mean(model["authors_per_paper"]) - 1) < 0.35  # a long tail


def test_the_model_can_be_fitted_from_the_committed_sample() -> None:
    fitted = synth.calibrate(synth.fit(SAMPLE, points=(100, 200, 300)))
    assert fitted["records"] == 300
    assert [p[0] for p in fitted["heaps"]["points"]] == [100, 200, 300]
    assert 0.3 < fitted["heaps"]["beta"] < 0.9
    made = list(synth.Generator(fitted).records(50))
    assert len({r["id"] for r in made}) == 50
