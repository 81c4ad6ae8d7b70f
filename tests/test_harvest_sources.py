"""One paper from several sources is one record: harvests of the arXiv API and of
OpenAlex into one index merge by the arXiv DOI (10.48550/arXiv.ID is the arXiv id), and
the record answers to both."""

from __future__ import annotations

from pathlib import Path

import pytest
from api_server import Works, sample_objects, serving
from harvest_support import harvest, indexed

from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUBSEARCH_HARVEST_BACKOFF", "0")
    monkeypatch.delenv("OPENALEX_API_KEY", raising=False)


def test_the_same_papers_from_arxiv_and_openalex_are_one_record_each(tmp_path: Path) -> None:
    index_dir = tmp_path / "ix"
    objects = sample_objects(20)
    with serving(Works("arxiv", objects)) as arxiv:
        done = harvest(["arxiv", "--query", "cat:cs.LG"], index_dir, arxiv)
        assert done.exit_code == 0, done.output
    assert len(indexed(index_dir)) == 20
    with serving(Works("openalex", objects[5:])) as openalex:
        done = harvest(["openalex"], index_dir, openalex, "--per-page", "10")
        assert done.exit_code == 0, done.output
    assert "0 new, 15 updated" in done.output
    documents = indexed(index_dir)
    assert len(documents) == 20  # the 15 OpenAlex works merged into their arXiv records
    for obj in objects[5:]:
        origins = documents[obj["id"]]["origins"]
        assert any("arxiv.org/abs/" in o for o in origins), origins
        assert any("openalex.org/W" in o for o in origins), origins
        assert documents[obj["id"]]["cited"] is not None  # OpenAlex's count kept
    service = SearchService(index_dir)
    try:
        for obj in objects[5:8]:
            by_arxiv = service.record(obj["id"])
            by_doi = service.record(f"10.48550/arXiv.{obj['id']}")
            assert by_arxiv.id == by_doi.id
            assert service.search(SearchRequest(q=f'"{obj["title"]}"')).total >= 1
    finally:
        service.close()
