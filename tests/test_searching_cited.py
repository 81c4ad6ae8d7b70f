"""Citation counts: merged, stored, sorted by ("most cited"), and absent from an index
whose records have none (or built before they were kept)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from whoosh import index as whoosh_index

from pubsearch.core.errors import ParameterError
from pubsearch.index import storage
from pubsearch.index.build import update_index
from pubsearch.index.documents import record_fields
from pubsearch.index.schema import build_schema
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService

FORMATS = Path(__file__).parent / "data" / "formats"


@pytest.fixture
def cited(formats_index: Path) -> Iterator[SearchService]:
    svc = SearchService(formats_index)
    yield svc
    svc.close()


def test_most_cited_first_and_records_without_a_count_last(cited: SearchService) -> None:
    results = cited.search(SearchRequest(sort="cited", page_size=60))
    rest = cited.search(SearchRequest(sort="cited", page_size=60, page=2))
    counts = [h.cited_by for h in results.hits + rest.hits]
    known = [c for c in counts if c is not None]
    assert results.citations and results.total == len(counts) > 60
    assert known == sorted(known, reverse=True) and known[0] > 100
    assert counts == known + [None] * (len(counts) - len(known))


def test_most_cited_among_matches_of_a_query_and_filters(cited: SearchService) -> None:
    everything = cited.search(SearchRequest(q="language models", page_size=100))
    by_count = cited.search(SearchRequest(q="language models", sort="cited", page_size=100))
    assert {h.id for h in by_count.hits} == {h.id for h in everything.hits}
    counts = [h.cited_by if h.cited_by is not None else -1 for h in by_count.hits]
    assert counts == sorted(counts, reverse=True)
    filtered = cited.search(SearchRequest(year=None, subjects=("Topic Modeling",), sort="cited"))
    assert filtered.total and all("Topic Modeling" in h.subjects for h in filtered.hits)


def test_the_same_paper_from_three_formats_is_one_record(cited: SearchService) -> None:
    record = cited.record("2602.08029")
    files = sorted({o.rsplit("/", 1)[1].split(":")[0] for o in record.origins})
    assert files == ["library.bib", "library.ris", "openalex-response.json", "openalex-works.jsonl"]
    # RIS lists five of the six authors; OpenAlex writes "Berthy T Feng": one of each.
    assert record.authors == (
        "Berthy T. Feng",
        "Andrew A. Chael",
        "David Bromley",
        "Aviad Levis",
        "William T. Freeman",
        "Katherine L. Bouman",
    )
    assert record.doi == "10.48550/arxiv.2602.08029" and record.cited_by == 0


def test_stats_count_the_records_with_a_count(cited: SearchService) -> None:
    stats = cited.stats()
    assert 0 < stats.cited < stats.records


def test_an_index_without_counts_refuses_the_sort(service: SearchService) -> None:
    assert not service.search(SearchRequest(q="batch")).citations
    with pytest.raises(ParameterError, match="no record of this index has one"):
        service.search(SearchRequest(q="batch", sort="cited"))


def _index_without_cited(index_dir: Path) -> None:
    """An index as the version before citation counts built it: no ``cited`` field."""
    old = build_schema()
    old.remove("cited")
    build_dir = storage.new_build_dir(index_dir)
    ix = whoosh_index.create_in(str(build_dir), old)
    writer = ix.writer()
    for record in read_paths([FORMATS / "library.bib"], ReadReport()):
        doc = record_fields(record)
        doc.pop("cited", None)
        writer.add_document(**doc)
    writer.commit()
    ix.close()
    storage.publish(index_dir, build_dir)


def test_an_index_built_before_counts_is_read_and_updated_without_them(tmp_path: Path) -> None:
    _index_without_cited(tmp_path)
    svc = SearchService(tmp_path)
    try:
        results = svc.search(SearchRequest(q="black hole"))
        assert results.total == 1 and not results.citations
        assert results.hits[0].cited_by is None
    finally:
        svc.close()
    works = list(read_paths([FORMATS / "openalex-works.jsonl"], ReadReport()))
    summary = update_index(tmp_path, works)
    # Every work has a count; two lines are one work (the same paper merged).
    assert all(w.cited_by is not None for w in works)
    assert summary.counts_dropped == summary.indexed == len(works) - 1
    svc = SearchService(tmp_path)
    try:
        assert svc.record("2602.08029").cited_by is None
        assert svc.stats().records == summary.total
    finally:
        svc.close()
