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


def test_a_one_off_search_reads_the_saved_names_and_finds_what_a_built_table_finds(
    sample: SearchService, tmp_path: Path
) -> None:
    """The build saves the name table; a process that searches once reads it, and finds
    the same people and papers as the table built afresh (a generation without one)."""
    import shutil

    from pubsearch.names import NAMES_FILE, NameIndex

    older = tmp_path / "older"
    shutil.copytree(sample.index_dir, older, ignore=shutil.ignore_patterns(".lock"))
    for saved in older.glob(f"gen-*/{NAMES_FILE}"):
        saved.unlink()
    for typed in ("Vishal Patel", "Patel V", "Jeong", "Wang graph", "Patel"):
        one_off, built = SearchService(sample.index_dir), SearchService(older)
        try:
            asked = [
                SearchRequest(q=typed, facets=True),
                SearchRequest(authors=(typed,), facets=True),
            ]
            for request in asked:
                once, again = one_off.search(request), built.search(request)
                assert once.total == again.total
                assert [h.id for h in once.hits] == [h.id for h in again.hits]
                assert once.authors_found == again.authors_found
            gen = one_off._current_generation()
            assert isinstance(gen._names, NameIndex)
            labels = gen.facets.authors.labels if gen.facets else []
            directory = sample.index_dir / gen.name
            assert NameIndex.load(directory, labels, gen.index.latest_generation())
        finally:
            one_off.close()
            built.close()
