"""Related records: Whoosh's more-like-this over title and abstract, as a normal search."""

from __future__ import annotations

from pathlib import Path

import pytest

from pubsearch.core.errors import RecordNotFoundError
from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import RELATED_MAX, SearchService


def _id_of(service: SearchService, title: str) -> str:
    hits = service.search(SearchRequest(q=f'title:"{title}"')).hits
    assert hits, title
    return hits[0].id


def test_related_records_share_key_terms_and_exclude_the_record(service: SearchService) -> None:
    record_id = _id_of(service, "The Limit of the Batch Size")
    results = service.related(record_id, SearchRequest(facets=True))
    ids = [h.id for h in results.hits]
    assert record_id not in ids
    assert results.total > 0
    top_titles = [h.title for h in results.hits[:3]]
    assert all("batch" in t.lower() for t in top_titles), top_titles
    # Ranked by similarity, and the shared words are highlighted.
    scores = [h.score for h in results.hits]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert "<mark>" in results.hits[0].title_html
    assert results.facets is not None


def test_related_records_take_filters_sort_and_pages(service: SearchService) -> None:
    record_id = _id_of(service, "The Limit of the Batch Size")
    everything = service.related(record_id, SearchRequest(page_size=100))
    lg = service.related(record_id, SearchRequest(subjects=("cs.LG",), page_size=100))
    assert 0 < lg.total < everything.total
    assert all("cs.LG" in h.subjects for h in lg.hits)
    newest = service.related(record_id, SearchRequest(sort="newest", page_size=100))
    years = [h.year or 0 for h in newest.hits]
    assert years == sorted(years, reverse=True)
    second = service.related(record_id, SearchRequest(page=2, page_size=2))
    assert [h.id for h in second.hits] == [h.id for h in everything.hits[2:4]]


def test_query_text_narrows_related_records(service: SearchService) -> None:
    record_id = _id_of(service, "The Limit of the Batch Size")
    narrowed = service.related(record_id, SearchRequest(q="lstm"))
    assert narrowed.total >= 1
    assert all("lstm" in (h.title + h.abstract).lower() for h in narrowed.hits)


def test_unknown_record(service: SearchService) -> None:
    with pytest.raises(RecordNotFoundError):
        service.related("no-such-id", SearchRequest())


def test_only_the_closest_are_shown_each_with_the_words_it_shares(tmp_path: Path) -> None:
    sample = Path(__file__).resolve().parent / "data" / "arxiv-2024-2026.sample.jsonl"
    build_index(tmp_path, read_paths([sample], ReadReport()))
    service = SearchService(tmp_path)
    try:
        record = next(r for r in service.iter_records() if "Diffusion" in r.title)
        every = service.count(SearchRequest(q=" OR ".join(record.title.split()[:6])))
        results = service.related(record.id, SearchRequest(page_size=100, facets=True))
        assert results.total == len(results.hits) <= RELATED_MAX < every
        assert results.facets is not None
        assert sum(v.count for v in results.facets["year"]) == results.total
        for hit in results.hits:
            assert hit.shared
            text = (hit.title + " " + hit.abstract).lower()
            assert all(word.lower()[:4] in text for word in hit.shared), hit.shared
    finally:
        service.close()
