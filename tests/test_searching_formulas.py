"""Formulas and symbols are found however they are typed: in TeX as the source writes them,
plainly, with Unicode sub- and superscripts, Greek as a letter or a name; marked where the
page shows them (pubsearch.ingest.textforms, through the analyzers and the query compiler)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService

# Each written as arXiv abstracts write them, once or more per form.
RECORDS = {
    "f1": "Pressure-induced superconductivity in La$_3$Ni$_2$O$_7$ single crystals.",
    "f2": "Thin films of La$_{3}$Ni$_{2}$O$_{7-\\delta}$ grown by PLD.",
    "f3": "We model La3Ni2O7 under strain.",
    "f4": "ARPES of $\\mathrm{La_3Ni_2O_7}$ and its bilayer bands.",
    "f5": "Monolayer MoS$_2$ transistors; MoS$_{2}$ flakes.",
    "f6": "Excitons in MoS2 and WSe2 heterostructures.",
    "c1": "Tensions in the $\\Lambda$CDM model of cosmology.",
    "c2": "Beyond $Λ$CDM: dynamical dark energy.",
    "c3": "A test of Lambda-CDM with weak lensing.",
    "c4": "Is base \\LambdaCDM enough for the Hubble tension?",
    "c5": "Growth of structure in the Lambda CDM cosmology.",
    "l1": "The Ly$\\alpha$ forest at redshift three.",
    "l2": "Ly-alpha emitters in deep fields.",
    "l3": "Lyα escape fractions of dwarf galaxies.",
    "o1": "An alphabet of cosmic shapes in a lambda calculus.",  # neither compound
}


def write_records(path: Path) -> Path:
    lines = [
        json.dumps({"id": rid, "title": f"Paper {rid}", "abstract": text, "year": 2025})
        for rid, text in RECORDS.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchService]:
    tmp = tmp_path_factory.mktemp("formulas")
    source = write_records(tmp / "records.jsonl")
    build_index(tmp / "ix", read_paths([source], ReadReport()))
    found = SearchService(tmp / "ix")
    yield found
    found.close()


def ids(service: SearchService, q: str) -> set[str]:
    results = service.search(SearchRequest(q=q, page_size=100, mode="lexical"))
    return {hit.id for hit in results.hits}


@pytest.mark.parametrize(
    "typed",
    [
        "La$_3$Ni$_2$O$_7$",
        "La3Ni2O7",
        "La₃Ni₂O₇",
        "La$_{3}$Ni$_{2}$O$_{7}$",
        "$\\mathrm{La_3Ni_2O_7}$",
        "la3ni2o7",
    ],
)
def test_a_formula_in_every_typed_form(service: SearchService, typed: str) -> None:
    assert ids(service, typed) == {"f1", "f2", "f3", "f4"}


@pytest.mark.parametrize("typed", ["MoS$_2$", "MoS2", "MoS₂"])
def test_a_short_formula(service: SearchService, typed: str) -> None:
    assert ids(service, typed) == {"f5", "f6"}


@pytest.mark.parametrize(
    "typed", ["ΛCDM", "$\\Lambda$CDM", "LambdaCDM", "λCDM", "Lambda-CDM", "Lambda CDM"]
)
def test_a_symbol_joined_or_apart(service: SearchService, typed: str) -> None:
    """``Lambda CDM`` typed as two words is two words, both required: the records that
    wrote them apart, or joined (the joined word stands for both)."""
    assert ids(service, typed) == {"c1", "c2", "c3", "c4", "c5"}


@pytest.mark.parametrize("typed", ["Lyα", "Ly$\\alpha$", "Lyalpha", "Ly-alpha"])
def test_greek_as_a_letter_or_a_name(service: SearchService, typed: str) -> None:
    assert ids(service, typed) == {"l1", "l2", "l3"}


def test_a_word_that_only_starts_with_a_letters_name_is_itself(service: SearchService) -> None:
    assert ids(service, "alphabet") == {"o1"}


def test_the_formula_is_marked_where_the_page_shows_it(service: SearchService) -> None:
    """The page shows La₃Ni₂O₇ for the source's TeX; the match is marked there."""
    results = service.search(SearchRequest(q="La3Ni2O7", page_size=10, mode="lexical"))
    by_id = {hit.id: hit for hit in results.hits}
    assert "<mark>La₃Ni₂O₇</mark>" in by_id["f1"].abstract_html
    results = service.search(SearchRequest(q="LambdaCDM", page_size=10, mode="lexical"))
    by_id = {hit.id: hit for hit in results.hits}
    assert "<mark>ΛCDM</mark>" in by_id["c1"].abstract_html
    assert "<mark>Lambda</mark>-<mark>CDM</mark>" in by_id["c3"].abstract_html
