"""People in searches: author filters as names are written, and names in the search box."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pubsearch.indexing import build_index
from pubsearch.readers import ReadReport, read_paths
from pubsearch.request import SearchRequest
from pubsearch.searching import SearchService

DATA = Path(__file__).resolve().parent / "data"
PATEL_PAPERS = 2  # Vishal M. Patel's papers among the 300 arXiv records of the sample


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchService]:
    index_dir = tmp_path_factory.mktemp("sample-index")
    build_index(index_dir, read_paths([DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))
    service = SearchService(index_dir)
    yield service
    service.close()


@pytest.mark.parametrize(
    "typed",
    [
        "Vishal M. Patel",
        "Vishal Patel",
        "V. Patel",
        "V. M. Patel",
        "patel",
        "Patel, Vishal",
        "Patel V",
    ],
)
def test_an_author_filter_matches_names_as_people_write_them(
    sample: SearchService, typed: str
) -> None:
    results = sample.search(SearchRequest(authors=(typed,), facets=True))
    assert results.total == PATEL_PAPERS
    assert all("Vishal M. Patel" in hit.authors for hit in results.hits)
    assert results.authors_found == {typed: ("Vishal M. Patel",)}
    assert results.facets is not None
    selected = [v for v in results.facets["author"] if v.selected]
    assert [(v.value, v.count) for v in selected] == [("Vishal M. Patel", PATEL_PAPERS)]


def test_an_unknown_author_finds_nothing_and_stays_removable(sample: SearchService) -> None:
    results = sample.search(SearchRequest(authors=("Nobody Atall",), facets=True))
    assert results.total == 0
    assert results.authors_found == {"Nobody Atall": ()}
    assert results.facets is not None
    assert ("Nobody Atall", 0, True) in [
        (v.value, v.count, v.selected) for v in results.facets["author"]
    ]


def test_several_author_filters_are_or(sample: SearchService) -> None:
    one = sample.count(SearchRequest(authors=("Vishal Patel",)))
    other = sample.count(SearchRequest(authors=("Schilfgaarde",)))
    both = sample.count(SearchRequest(authors=("Vishal Patel", "Schilfgaarde")))
    assert one and other and both == one + other


@pytest.mark.parametrize("typed", ["Vishal Patel", "V. M. Patel", "Patel V", "vishal m patel"])
def test_a_name_in_the_search_box_finds_the_persons_papers_first(
    sample: SearchService, typed: str
) -> None:
    results = sample.search(SearchRequest(q=typed))
    assert results.total >= PATEL_PAPERS
    assert all("Vishal M. Patel" in hit.authors for hit in results.hits[:PATEL_PAPERS])


def test_a_name_with_topic_words_needs_both(sample: SearchService) -> None:
    results = sample.search(SearchRequest(q="Vishal Patel classification"))
    assert results.hits and "Vishal M. Patel" in results.hits[0].authors
    nothing = sample.search(SearchRequest(q="Vishal Patel zzzqqq"))
    assert nothing.total == 0


def test_topic_words_that_name_no_one_search_as_before(sample: SearchService) -> None:
    for q in ("graph neural network", "deep learning", "dark matter"):
        parsed_total = sample.count(SearchRequest(q=q))
        anded = sample.count(SearchRequest(q=" AND ".join(q.split())))
        assert parsed_total == anded


def test_a_one_off_search_scans_the_names_and_a_prepared_one_builds_their_table(
    sample: SearchService,
) -> None:
    """A process that searches once looks the names up in the saved table's text; a server
    (prepared) builds the table of surnames first; both find the same people and papers."""
    from pubsearch.names import ScannedNames

    index_dir = sample.index_dir
    for typed in ("Vishal Patel", "Patel V", "Jeong", "Wang graph"):
        one_off, server = SearchService(index_dir), SearchService(index_dir)
        try:
            server.prepare()
            asked = [
                SearchRequest(q=typed, facets=True),
                SearchRequest(authors=(typed,), facets=True),
            ]
            for request in asked:
                once, prepared = one_off.search(request), server.search(request)
                assert once.total == prepared.total
                assert [h.id for h in once.hits] == [h.id for h in prepared.hits]
                assert once.authors_found == prepared.authors_found
            gen, ready = one_off._current_generation(), server._current_generation()
            assert gen._names is None and isinstance(gen._scanned, ScannedNames)
            assert ready._names is not None and ready._scanned is None
        finally:
            one_off.close()
            server.close()


def test_a_service_that_keeps_asking_for_names_builds_their_table(
    sample: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scanning is for a few names: once the scans have cost the budget, the table of
    surnames is built, and the same people are found."""
    from pubsearch import generation, names

    service = SearchService(sample.index_dir)
    try:
        first = service.search(SearchRequest(authors=("Vishal Patel",)))
        gen = service._current_generation()
        assert gen._scanned is not None and gen._names is None
        monkeypatch.setattr(generation, "SCANNING_BUDGET", gen._scanned.seconds)
        again = service.search(SearchRequest(authors=("Vishal Patel",)))
        assert gen._names is not None and type(gen._names) is names.NameIndex
        assert gen._scanned is None
        assert [h.id for h in again.hits] == [h.id for h in first.hits]
        assert again.total == first.total == PATEL_PAPERS
    finally:
        service.close()
