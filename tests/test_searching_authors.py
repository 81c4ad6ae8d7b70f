"""People in searches: author filters as names are written, and names in the search box."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_spelling import write_records

from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService

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

    from pubsearch.index.names import NAMES_FILE, NameIndex

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


# -- surnames in the search box, and names written two ways ----------------------------

# Real-looking names with ł, ø, ı, ß, æ, ö, ü; "Moon" is a surname and a word of astronomy.
PEOPLE_RECORDS = [
    *(
        {"title": f"Kernel methods for causal inference {i}", "authors": ["Bernhard Schölkopf"]}
        for i in range(3)
    ),
    {"title": "Causal representation learning", "authors": ["B. Schoelkopf", "Ana Ruiz"]},
    {"title": "Gaussian splatting for faces", "authors": ["Przemysław Spurek"]},
    {"title": "Gaussian splatting with few views", "authors": ["Przemyslaw Spurek"]},
    *({"title": f"Gaussian splatting at scale {i}", "authors": ["Ana Ruiz"]} for i in range(8)),
    {"title": "Document understanding", "authors": ["Łukasz Borchmann", "Ana Ruiz"]},
    {"title": "Layout models", "authors": ["Lukasz Borchmann"]},
    {"title": "Quantum dots", "authors": ["Kristine Sørensen", "Jonas Übler"]},
    {"title": "Spin chains", "authors": ["Kristine Soerensen"]},
    {"title": "Graph kernels", "authors": ["Mehmet Işık", "Hans Weiß"]},
    {"title": "Sparse coding", "authors": ["Seán O'Brien", "Henrik Bærentzen"]},
    {"title": "Tidal locking", "authors": ["Ji-Hoon Moon"]},
    *({"title": f"The moon and its craters {i}", "authors": ["Ana Ruiz"]} for i in range(4)),
    {"title": "On the Schölkopf kernel", "authors": ["Ana Ruiz"]},  # the name as a word
    # A rare word that is a surname: the texts that use it cite the person.
    *({"title": f"Disc galaxy models {i}", "authors": ["Lawrence M. Widrow"]} for i in range(2)),
    {"title": "Halos as in the models of Widrow", "authors": ["Ana Ruiz"]},
]


@pytest.fixture(scope="module")
def people(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchService]:
    folder = tmp_path_factory.mktemp("people")
    source = write_records(folder / "records.jsonl", PEOPLE_RECORDS)
    build_index(folder / "index", read_paths([source], ReadReport()))
    service = SearchService(folder / "index")
    yield service
    service.close()


def _first_authors(service: SearchService, text: str, count: int) -> list[tuple[str, ...]]:
    results = service.search(SearchRequest(q=text))
    return [hit.authors for hit in results.hits[:count]]


@pytest.mark.parametrize(
    ("typed", "total"),
    # The four papers, then the record naming him in its title: the text as typed (its
    # words are not spelled out: "Schoelkopf" is not "Schölkopf" in an abstract).
    [("Schölkopf", 5), ("Scholkopf", 5), ("Schoelkopf", 4), ("SCHOELKOPF", 4)],
)
def test_a_surname_alone_puts_its_peoples_papers_first(
    people: SearchService, typed: str, total: int
) -> None:
    results = people.search(SearchRequest(q=typed))
    assert results.total == total
    assert results.corrected_from is None and results.suggestion is None
    assert all("Ana Ruiz" != hit.authors[0] for hit in results.hits[:4])
    assert [hit.title for hit in results.hits[4:]] == ["On the Schölkopf kernel"][: total - 4]


@pytest.mark.parametrize(
    ("typed", "total"),
    [("O'Brien", 1), ("OBrien", 1), ("Übler", 1), ("Uebler", 1), ("Isik", 1), ("Weiss", 1)],
)
def test_surnames_with_their_letters_written_any_way(
    people: SearchService, typed: str, total: int
) -> None:
    results = people.search(SearchRequest(q=typed))
    assert results.total == total and results.corrected_from is None


def test_a_surname_that_few_texts_cite_is_the_persons(people: SearchService) -> None:
    """Widrow wrote two records and one record cites him: his papers first, then it."""
    results = people.search(SearchRequest(q="Widrow"))
    assert [hit.authors for hit in results.hits[:2]] == [("Lawrence M. Widrow",)] * 2
    assert results.total == 3


def test_a_surname_that_is_mostly_a_word_stays_a_word(people: SearchService) -> None:
    """Moon wrote one record, four use the word: "moon" finds the word's records first."""
    results = people.search(SearchRequest(q="moon"))
    assert results.total == 4
    assert all("moon" in hit.title.lower() for hit in results.hits)


def test_a_surname_with_topic_words_puts_its_papers_on_the_topic_first(
    people: SearchService,
) -> None:
    results = people.search(SearchRequest(q="Spurek gaussian splatting"))
    assert results.total == 10  # every paper on the topic
    assert all(hit.authors[0].startswith("Przemys") for hit in results.hits[:2])
    assert all(hit.authors == ("Ana Ruiz",) for hit in results.hits[2:])


@pytest.mark.parametrize(
    ("typed", "found"),
    [
        # One facet value each: the same name but for its marks, shown as first written.
        ("Lukasz Borchmann", {"Łukasz Borchmann"}),
        ("Przemyslaw Spurek", {"Przemysław Spurek"}),
        ("Schoelkopf", {"Bernhard Schölkopf", "B. Schoelkopf"}),
        ("Bernhard Schölkopf", {"Bernhard Schölkopf", "B. Schoelkopf"}),
        ("Soerensen", {"Kristine Sørensen", "Kristine Soerensen"}),
        ("Isik", {"Mehmet Işık"}),
    ],
)
def test_an_author_filter_finds_every_spelling(
    people: SearchService, typed: str, found: set[str]
) -> None:
    results = people.search(SearchRequest(authors=(typed,)))
    assert set(results.authors_found[typed]) == found
    for written in found:
        assert results.total == people.search(SearchRequest(authors=(written,))).total
