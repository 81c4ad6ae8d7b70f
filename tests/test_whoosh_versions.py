"""The fast paths know the index format of the Whoosh versions in
``w3version.KNOWN_WHOOSH_VERSIONS``. Any other Whoosh is written by Whoosh's own writer and
read through its public API, with one warning: the same records, the same results."""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pubsearch.codec import w3format, w3version, w3write
from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService

DATA = Path(__file__).resolve().parent / "data"

QUERIES = (
    "quantum",
    "neural network",
    '"neural network"',
    "learn*",
    "model AND NOT neural",
    "title:learning",
    "graph OR galaxy",
    "year:[2024 TO 2025] learning",
    "we propose a new method for learning representations of graphs with neural networks",
    "*",
)


def _records() -> list[Record]:
    return list(read_paths([DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))


def _pretend_unknown_whoosh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(w3version, "WHOOSH_VERSION", "3.99.0")
    monkeypatch.setattr(w3version, "_warned", False)


def _forbid_fast_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the fast writer was used")

    monkeypatch.setattr(w3write.PoolSegmentWriter, "__init__", refuse)


def _forbid_fast_readers(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a posting list was read below Whoosh's API")

    monkeypatch.setattr(w3format, "raw_list", refuse)
    monkeypatch.setattr(w3format, "w3_blocks", refuse)


def _contents(index_dir: Path) -> dict[str, Any]:
    """The index's records, and the results (totals, ids and scores, facets) of each
    query in each order."""
    service = SearchService(index_dir)
    try:
        found: dict[str, Any] = {
            "records": sorted(service.iter_records(), key=lambda r: r.id),
            "stats": replace(service.stats(), generation="", size_bytes=0),
        }
        for q in QUERIES:
            for sort in ("relevance", "newest", "oldest"):
                request = SearchRequest(q=q, sort=sort, page_size=25, facets=True)
                results = service.search(request)
                found[f"{sort}: {q}"] = (
                    results.total,
                    [(hit.id, hit.score, hit.snippet, hit.title_html) for hit in results.hits],
                    results.facets,
                    results.relaxed,
                )
        return found
    finally:
        service.close()


def _fast_built(tmp_path: Path) -> dict[str, Any]:
    build_index(tmp_path / "fast", _records())
    return _contents(tmp_path / "fast")


def test_the_installed_whoosh_is_a_known_one() -> None:
    """pyproject.toml pins whoosh3: a new pin needs its format checked (tests/test_bulk.py
    against Whoosh's own writer) and added to KNOWN_WHOOSH_VERSIONS."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert w3version.fast_paths()
    assert w3version.WHOOSH_VERSION in w3version.KNOWN_WHOOSH_VERSIONS


def test_whoosh_own_writer_writes_the_index_the_fast_writer_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built by Whoosh's own writer (forced: the fast writer refuses to start), the index
    has the same records, stored fields and results, read by the fast readers."""
    fast = _fast_built(tmp_path)
    with monkeypatch.context() as patched:
        _pretend_unknown_whoosh(patched)
        _forbid_fast_writer(patched)
        with pytest.warns(w3version.UnknownWhooshWarning):
            build_index(tmp_path / "plain", _records())
    assert w3version.fast_paths()
    plain = _contents(tmp_path / "plain")
    assert len(plain["records"]) > 100
    assert plain == fast


def test_an_unknown_whoosh_builds_and_searches_through_whoosh_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Whoosh version the fast paths do not know: Whoosh's own writer and the public
    API's readers, one warning for the build and the searches together, the same results
    as the fast paths give."""
    fast = _fast_built(tmp_path)
    _pretend_unknown_whoosh(monkeypatch)
    _forbid_fast_writer(monkeypatch)
    _forbid_fast_readers(monkeypatch)
    with pytest.warns(w3version.UnknownWhooshWarning) as caught:
        build_index(tmp_path / "plain", _records())
        plain = _contents(tmp_path / "plain")
        also = _contents(tmp_path / "fast")  # a fast-built index, read the slow way
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert "3.99.0" in str(caught[0].message)
    assert plain == fast
    assert also == fast
