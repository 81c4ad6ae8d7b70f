"""Identifiers go straight to the record: arXiv ids and DOIs in the search box, in
``pubsearch show`` and the API, and every id of a paper merged from several sources."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pubsearch.core.errors import RecordNotFoundError
from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search.request import SearchRequest
from pubsearch.search.results import SearchResults
from pubsearch.search.service import SearchService

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


def ids(results: SearchResults) -> list[str]:
    return [hit.id for hit in results.hits]


@pytest.mark.parametrize(
    "typed",
    [
        "2505.17997",
        "2505.17997v2",
        "arXiv:2505.17997",
        "arxiv:2505.17997v2",
        "https://arxiv.org/abs/2505.17997v1",
        "arxiv.org/pdf/2505.17997",
        # The paper's second listing and its DOI find it too.
        "2506.03038",
        "https://arxiv.org/pdf/2506.03038v2.pdf",
        "10.1103/PhysRevLett.123.456",
        "doi:10.1103/PhysRevLett.123.456",
        "https://doi.org/10.1103/PhysRevLett.123.456",
        "dx.doi.org/10.1103/physrevlett.123.456",
        "DOI: 10.1103/PhysRevLett.123.456",
        "  2505.17997.  ",
    ],
)
def test_an_identifier_in_the_box_finds_its_record_and_only_it(
    ids_service: SearchService, typed: str
) -> None:
    results = ids_service.search(SearchRequest(q=typed, facets=True))
    assert ids(results) == ["2505.17997"]
    assert results.total == 1
    assert results.notices == ()
    assert results.suggestion is None and results.corrected_from is None
    assert results.facets is not None and results.facets["year"][0].value == "2025"


@pytest.mark.parametrize(
    ("typed", "found"),
    [
        ("hep-th/9901001", "hep-th/9901001"),
        ("hep-th/9901001v2", "hep-th/9901001"),
        ("math.GT/0309136", "math/0309136"),
        ("arXiv:math/0309136", "math/0309136"),
        ("10.1038/nature14539", "2401.00001"),
    ],
)
def test_old_style_ids_and_dois_find_their_records(
    ids_service: SearchService, typed: str, found: str
) -> None:
    assert ids(ids_service.search(SearchRequest(q=typed))) == [found]


def test_several_identifiers_find_each_in_the_order_typed(ids_service: SearchService) -> None:
    results = ids_service.search(SearchRequest(q="2503.18889 hep-th/9901001, 2505.17997"))
    assert ids(results) == ["2503.18889", "hep-th/9901001", "2505.17997"]
    results = ids_service.search(SearchRequest(q="hep-th/9901001 2503.18889"))
    assert ids(results) == ["hep-th/9901001", "2503.18889"]


def test_an_identifier_beside_words_comes_first_and_the_words_find_more(
    ids_service: SearchService,
) -> None:
    results = ids_service.search(SearchRequest(q="2505.17997 transformer"))
    assert ids(results)[0] == "2505.17997"
    assert set(ids(results)[1:]) == {"2503.18889", "2401.00001"}
    results = ids_service.search(SearchRequest(q="2505.17997 OR transformer"))
    assert ids(results)[0] == "2505.17997"
    assert results.total == 3


def test_inside_explicit_syntax_an_identifier_is_a_term(ids_service: SearchService) -> None:
    assert ids(ids_service.search(SearchRequest(q="2503.18889 AND protein"))) == ["2503.18889"]
    assert ids(ids_service.search(SearchRequest(q="2505.17997 AND protein"))) == []
    assert ids(ids_service.search(SearchRequest(q="transformer NOT 2503.18889"))) == ["2401.00001"]
    # Words beside an identifier never narrow it; a NOT beside it applies to all.
    assert ids(ids_service.search(SearchRequest(q="2503.18889 -protein"))) == []


def test_an_identifier_no_record_has_finds_nothing_and_says_so(
    ids_service: SearchService,
) -> None:
    results = ids_service.search(SearchRequest(q="2505.99999"))
    assert results.total == 0
    assert results.notices == ("No record in this index has the id arXiv:2505.99999.",)
    results = ids_service.search(SearchRequest(q="2505.99999 10.1000/nothing 2505.17997"))
    assert ids(results) == ["2505.17997"]
    assert results.notices == (
        "No record in this index has the id arXiv:2505.99999.",
        "No record in this index has the id doi:10.1000/nothing.",
    )


def test_numbers_and_years_are_searched_as_words(ids_service: SearchService) -> None:
    for text in ("1.5", "2021", "1.5 degree 2021"):
        results = ids_service.search(SearchRequest(q=text))
        assert ids(results) == ["2402.00002"], text
        assert results.notices == ()
    # An id written into another record's text is found as a word with id: only.
    assert ids(ids_service.search(SearchRequest(q="abstract:2505.17997"))) == ["2402.00002"]


@pytest.mark.parametrize(
    "typed",
    [
        "2505.17997",
        "2505.17997v3",
        "arXiv:2506.03038",
        "https://arxiv.org/abs/2506.03038v1",
        "doi:10.1103/PhysRevLett.123.456",
        "https://doi.org/10.1103/physrevlett.123.456",
    ],
)
def test_a_record_is_found_by_any_of_its_ids_in_any_form(
    ids_service: SearchService, typed: str
) -> None:
    assert ids_service.record(typed).id == "2505.17997"


def test_an_id_no_record_has_is_the_one_line_error(ids_service: SearchService) -> None:
    for typed in ("2505.99999", "nope", "doi:10.1000/nothing"):
        with pytest.raises(RecordNotFoundError, match=f"no record with id '{typed}'"):
            ids_service.record(typed)
