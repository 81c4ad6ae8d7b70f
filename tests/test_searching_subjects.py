"""Subjects as people type them, in searches of a real index: arXiv codes, archives
(``astro-ph``, ``astro-ph.*``), the names the page shows (``Machine Learning``), patterns,
keywords as recorded; and what is said of a subject that stands for none."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from subject_fixtures import RECORDS, titles_with

from pubsearch.cli.main import main
from pubsearch.index.build import build_index
from pubsearch.search.request import SearchRequest, YearRange
from pubsearch.search.service import SearchService


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("subjects-index")
    build_index(directory, RECORDS)
    return directory


@pytest.fixture(scope="module")
def service(index_dir: Path) -> Iterator[SearchService]:
    svc = SearchService(index_dir)
    yield svc
    svc.close()


def found_titles(service: SearchService, *subjects: str, q: str = "") -> set[str]:
    results = service.search(SearchRequest(q=q, subjects=subjects, page_size=100))
    assert results.total == len(results.hits)
    return {hit.title for hit in results.hits}


@pytest.mark.parametrize("typed", ["Machine Learning", "machine learning", "MACHINE LEARNING"])
def test_a_name_the_page_shows_stands_for_every_code_of_that_name(
    service: SearchService, typed: str
) -> None:
    results = service.search(SearchRequest(subjects=(typed,), facets=True, page_size=100))
    assert {hit.title for hit in results.hits} == titles_with("cs.LG", "stat.ML")
    assert results.total == 4
    assert results.subjects_found == {typed: ("cs.LG", "stat.ML")}
    # Ambiguous: both are searched, and the notice says so.
    assert results.notices == (
        f"Subject \u201c{typed}\u201d is the name of cs.LG and stat.ML: records of each are shown.",
    )
    assert results.facets is not None
    selected = [(v.value, v.count) for v in results.facets["subject"] if v.selected]
    assert selected == [("cs.LG", 3), ("stat.ML", 2)]


@pytest.mark.parametrize("typed", ["astro-ph", "astro-ph.*", "ASTRO-PH.*", "Astrophysics"])
def test_an_archive_stands_for_itself_and_all_its_categories(
    service: SearchService, typed: str
) -> None:
    assert found_titles(service, typed) == titles_with("astro-ph", "astro-ph.GA", "astro-ph.CO")
    results = service.search(SearchRequest(subjects=(typed,)))
    assert results.notices == ()
    assert sorted(results.subjects_found[typed]) == ["astro-ph", "astro-ph.CO", "astro-ph.GA"]


def test_codes_keywords_and_patterns_as_recorded(service: SearchService) -> None:
    assert found_titles(service, "cs.LG") == titles_with("cs.LG")
    assert found_titles(service, "CS.lg") == titles_with("cs.LG")
    assert found_titles(service, "astro-ph.GA") == titles_with("astro-ph.GA")
    assert found_titles(service, "dark MATTER") == titles_with("Dark matter")
    assert found_titles(service, "cs") == titles_with("cs.LG")
    assert found_titles(service, "st*.ML") == titles_with("stat.ML")
    assert found_titles(service, "hep-th") == titles_with("hep-th")  # an archive alone
    # Filters of one facet are OR'd: an archive and a name.
    assert found_titles(service, "astro-ph", "Machine Learning") == titles_with(
        "astro-ph", "astro-ph.GA", "astro-ph.CO", "cs.LG", "stat.ML"
    )


def test_an_unknown_subject_is_named_with_the_closest_known_ones(service: SearchService) -> None:
    results = service.search(SearchRequest(subjects=("Machine Learnin",), facets=True))
    assert results.total == 0
    assert results.notices == (
        "No subject \u201cMachine Learnin\u201d in the index; did you mean Machine Learning "
        "(cs.LG), Machine Learning (stat.ML)?",
    )
    assert results.subjects_found == {"Machine Learnin": ()}
    # The facet shows it, selected, so that it can be removed.
    assert results.facets is not None
    first = results.facets["subject"][0]
    assert (first.value, first.count, first.selected) == ("Machine Learnin", 0, True)
    # A keyword as recorded, an archive by its pattern, a name nearly right.
    assert "Dark matter?" in search_notice(service, "dark mater")
    assert "did you mean Astrophysics (astro-ph.*)" in search_notice(service, "astrophysic")
    assert search_notice(service, "zzzz") == "No subject \u201czzzz\u201d in the index."


def test_known_arxiv_subjects_the_index_lacks_are_said_to_have_no_records(
    service: SearchService,
) -> None:
    assert search_notice(service, "cs.DC") == (
        "No record has subject cs.DC (Distributed, Parallel, and Cluster Computing)."
    )
    assert search_notice(service, "quantum physics") == (
        "No record has subject quantum physics (quant-ph)."
    )
    assert search_notice(service, "q-fin.*") == (
        "No record has a subject in q-fin (Quantitative Finance)."
    )
    assert search_notice(service, "xyz*") == "No subject in the index fits xyz*."


def search_notice(service: SearchService, typed: str) -> str:
    results = service.search(SearchRequest(subjects=(typed,)))
    assert results.total == 0
    (notice,) = results.notices
    return notice


def test_facet_counts_stay_disjunctive_and_exact(service: SearchService) -> None:
    results = service.search(
        SearchRequest(subjects=("astro-ph",), year=YearRange(2022, 2023), facets=True)
    )
    in_years = [r for r in RECORDS if r.year in (2022, 2023)]
    astro = {"astro-ph", "astro-ph.GA", "astro-ph.CO"}
    assert results.total == sum(1 for r in in_years if astro & set(r.subjects))
    assert results.facets is not None
    # Subjects are counted without the subject filter, with the year's.
    counts = {v.value: v.count for v in results.facets["subject"] if v.count}
    assert counts == dict(Counter(s for r in in_years for s in r.subjects))
    # Years are counted with the subject filter (every astro-ph record, whatever its year).
    years = {int(v.value): v.count for v in results.facets["year"]}
    assert years == dict(Counter(r.year for r in RECORDS if astro & set(r.subjects)))
    # Every value the filter stands for is ticked, first, astro-ph too (none in 2022-23).
    selected = [(v.value, v.count) for v in results.facets["subject"] if v.selected]
    assert selected == [("astro-ph.GA", 2), ("astro-ph.CO", 1), ("astro-ph", 0)]
    assert all(v.selected for v in results.facets["subject"][:3])


def test_selected_values_come_first_even_past_the_facet_size(service: SearchService) -> None:
    request = SearchRequest(subjects=("hep-th", "Dark matter"), facet_size=1, facets=True)
    results = service.search(request)
    assert results.facets is not None
    shown = [(v.value, v.count, v.selected) for v in results.facets["subject"]]
    # The two selected (one record each) first, then the most common one.
    assert shown == [("Dark matter", 1, True), ("hep-th", 1, True), ("cs.LG", 3, False)]


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ('subject:"Machine Learning"', titles_with("cs.LG", "stat.ML")),
        ("cat:astro-ph.*", titles_with("astro-ph", "astro-ph.GA", "astro-ph.CO")),
        ("subject:astro-ph", titles_with("astro-ph", "astro-ph.GA", "astro-ph.CO")),
        ("subject:cs.LG", titles_with("cs.LG")),
        ('subject:"dark matter"', titles_with("Dark matter")),
        ("deep -subject:astro-ph", {"Gradient descent for deep networks"}),
        (
            "subject:astro-ph OR subject:hep-th",
            titles_with("astro-ph", "astro-ph.GA", "astro-ph.CO", "hep-th"),
        ),
    ],
)
def test_subject_in_query_text_takes_the_same_subjects(
    service: SearchService, q: str, expected: set[str]
) -> None:
    assert found_titles(service, q=q) == expected


def test_subject_in_query_text_says_when_it_stands_for_none(service: SearchService) -> None:
    results = service.search(SearchRequest(q="subject:Machine"))
    assert results.total == 0
    assert results.notices == (
        "No subject \u201cMachine\u201d in the index; did you mean Machine Learning (cs.LG), "
        "Machine Learning (stat.ML)?",
    )
    # Thirty archives in one query are thirty terms, not every category of each.
    many = " OR ".join(["subject:cs", "subject:astro-ph"] * 15)
    assert found_titles(service, q=many) == titles_with(
        "cs.LG", "astro-ph", "astro-ph.GA", "astro-ph.CO"
    )


def test_the_command_line_and_its_json_say_what_a_subject_stood_for(index_dir: Path) -> None:
    runner = CliRunner()
    args = ["query", "--index", str(index_dir), "--subject", "Machine Learnin"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == (
        "Note: No subject \u201cMachine Learnin\u201d in the index; did you mean Machine "
        "Learning (cs.LG), Machine Learning (stat.ML)?"
    )
    result = runner.invoke(main, [*args[:-1], "astro-ph.*", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["total"] == 4
    assert data["notices"] == []
    assert sorted(data["subjects_found"]["astro-ph.*"]) == [
        "astro-ph",
        "astro-ph.CO",
        "astro-ph.GA",
    ]
    assert data["filters"]["subject"] == ["astro-ph.*"]
