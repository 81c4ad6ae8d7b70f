"""Facets on the page and in the API: disjunctive counts, checked against counts computed
by hand from the seed records (OR within a facet, AND across facets, each facet counted
with its own selection left out)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from subject_fixtures import RECORDS

from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record, merge_records
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService
from pubsearch.web import SERVICE_KEY, create_app


@pytest.fixture(scope="module")
def records(seeds_dir: Path) -> list[Record]:
    merged, _ = merge_records(read_paths([seeds_dir], ReadReport()))
    return merged


Filter = Callable[[Record], bool]


def _filters(
    authors: tuple[str, ...] = (),
    subjects: tuple[str, ...] = (),
    years: tuple[int, int] | None = None,
) -> dict[str, Filter]:
    out: dict[str, Filter] = {}
    if authors:
        out["author"] = lambda r: any(a in r.authors for a in authors)
    if subjects:
        out["subject"] = lambda r: any(s in r.subjects for s in subjects)
    if years:
        out["year"] = lambda r: r.year is not None and years[0] <= r.year <= years[1]
    return out


def _by_hand(records: list[Record], filters: dict[str, Filter]) -> dict[str, Any]:
    """Total and disjunctive facet counts, the slow and obvious way."""

    def passing(skip: str | None) -> list[Record]:
        return [r for r in records if all(f(r) for name, f in filters.items() if name != skip)]

    return {
        "total": len(passing(None)),
        "author": Counter(a for r in passing("author") for a in r.authors),
        "subject": Counter(s for r in passing("subject") for s in r.subjects),
        "year": Counter(str(r.year) for r in passing("year") if r.year is not None),
    }


def _api_counts(client: FlaskClient, query: str) -> dict[str, Any]:
    data = client.get("/api/search?" + query).get_json()
    out: dict[str, Any] = {"total": data["total"]}
    for name in ("author", "subject", "year"):
        out[name] = Counter({v["value"]: v["count"] for v in data["facets"][name]})
    return out


SCENARIOS = [
    ("", {}),
    ("subject=cs.DC", {"subjects": ("cs.DC",)}),
    ("subject=cs.DC&subject=cs.LG", {"subjects": ("cs.DC", "cs.LG")}),
    ("author=Yang+You", {"authors": ("Yang You",)}),
    ("year=2021", {"years": (2021, 2021)}),
    (
        "author=Yang+You&subject=cs.DC&subject=cs.LG&year=2020..2021",
        {"authors": ("Yang You",), "subjects": ("cs.DC", "cs.LG"), "years": (2020, 2021)},
    ),
    (
        "author=Wei+Lin&author=Yang+You&subject=cs.CV&year=2019..2022",
        {"authors": ("Wei Lin", "Yang You"), "subjects": ("cs.CV",), "years": (2019, 2022)},
    ),
]


@pytest.mark.parametrize(("query", "selection"), SCENARIOS)
def test_api_counts_equal_counts_by_hand(
    client: FlaskClient, records: list[Record], query: str, selection: dict[str, Any]
) -> None:
    # facet_size large enough to list every value.
    assert _api_counts(client, query + "&facet_size=1000") == _by_hand(
        records, _filters(**selection)
    )


def test_counts_with_a_query_equal_counts_by_hand(
    client: FlaskClient, records: list[Record], service: SearchService
) -> None:
    matching = {h.id for h in service.search(SearchRequest(q="training", page_size=100)).hits}
    assert 5 < len(matching) < len(records)
    texts = [r for r in records if r.id in matching]
    query = "q=training&subject=cs.LG&subject=cs.CV&year=2020..2022&facet_size=1000"
    expected = _by_hand(texts, _filters(subjects=("cs.LG", "cs.CV"), years=(2020, 2022)))
    assert _api_counts(client, query) == expected


def test_picking_a_subject_still_counts_the_other_subjects(client: FlaskClient) -> None:
    """The acceptance example: cs.DC picked, cs.LG still shows how many it would add."""
    plain = _api_counts(client, "")
    picked = _api_counts(client, "subject=cs.DC")
    assert picked["total"] == plain["subject"]["cs.DC"] == 9
    assert picked["subject"]["cs.LG"] == plain["subject"]["cs.LG"] == 10
    both = _api_counts(client, "subject=cs.DC&subject=cs.LG")
    assert both["total"] == 9 + 10  # no seed record has both


def test_seed_facets_known_numbers(client: FlaskClient) -> None:
    counts = _api_counts(client, "")
    assert counts["total"] == 36
    assert counts["author"] == Counter({"Yang You": 18, "Wei Lin": 18})
    assert counts["year"] == Counter({"2018": 1, "2019": 3, "2020": 8, "2021": 15, "2022": 9})
    assert counts["subject"]["cs.LG"] == 10
    assert counts["subject"]["physics.ins-det"] == 2


# -- the same counts on the page -------------------------------------------------------------

_OPTION = re.compile(
    r'name="(author|subject)" value="([^"]+)"( checked)?>.*?'
    r'<span class="count"[^>]*>([\d,]+)</span>',
    re.DOTALL,
)
_BAR = re.compile(r'aria-label="(\d{4}): (\d+) results( \(selected\))?"')


def page_facets(html: str) -> dict[str, dict[str, tuple[int, bool]]]:
    """Facet values on a rendered page: {facet: {value: (count, selected)}}."""
    out: dict[str, dict[str, tuple[int, bool]]] = {"author": {}, "subject": {}, "year": {}}
    for name, value, checked, count in _OPTION.findall(html):
        out[name][value] = (int(count.replace(",", "")), bool(checked))
    for year, count, selected in _BAR.findall(html):
        out["year"][year] = (int(count), bool(selected))
    return out


@pytest.mark.parametrize(("query", "selection"), SCENARIOS)
def test_page_shows_the_same_counts_and_ticks_the_selection(
    client: FlaskClient, records: list[Record], query: str, selection: dict[str, Any]
) -> None:
    html = client.get("/?" + query + "&facet_size=1000").get_data(as_text=True)
    shown = page_facets(html)
    expected = _by_hand(records, _filters(**selection))
    for name in ("author", "subject", "year"):
        assert {v: c for v, (c, _) in shown[name].items()} == dict(expected[name]), name
    ticked_authors = {v for v, (_, sel) in shown["author"].items() if sel}
    ticked_subjects = {v for v, (_, sel) in shown["subject"].items() if sel}
    assert ticked_authors == set(selection.get("authors", ()))
    assert ticked_subjects == set(selection.get("subjects", ()))
    if "years" in selection:
        start, end = selection["years"]
        selected_years = {int(v) for v, (_, sel) in shown["year"].items() if sel}
        assert selected_years == {int(y) for y in expected["year"] if start <= int(y) <= end}


def test_selected_value_with_no_matches_still_shows_so_it_can_be_unticked(
    client: FlaskClient,
) -> None:
    html = client.get("/?q=whale&subject=math.GT").get_data(as_text=True)
    assert page_facets(html)["subject"]["math.GT"] == (0, True)


# -- subjects by name, archive and pattern (tests/subject_fixtures.py) ------------------------


@pytest.fixture(scope="module")
def subjects_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FlaskClient]:
    index_dir = tmp_path_factory.mktemp("web-subjects")
    build_index(index_dir, RECORDS)
    app = create_app(index_dir, test_config={"TESTING": True})
    yield app.test_client()
    app.extensions[SERVICE_KEY].close()


def _chips(html: str) -> list[tuple[str, str, str]]:
    """Each chip's (label, tooltip, the URL that removes it)."""
    found = re.findall(
        r'<a class="chip" href="([^"]+)"(?: title="([^"]*)")?[^>]*>'
        r'<span class="chip-facet">[^<]*</span> (.*?) <span class="chip-x"',
        html,
    )
    return [(unescape(label), unescape(title), unescape(url)) for url, title, label in found]


def test_a_subject_by_name_ticks_its_codes_first_and_says_it_means_both(
    subjects_client: FlaskClient,
) -> None:
    html = subjects_client.get("/?subject=Machine+Learning").get_data(as_text=True)
    assert "<strong>4</strong> results" in html
    assert (
        "<li>Subject \u201cMachine Learning\u201d is the name of cs.LG and stat.ML: records of "
        "each are shown.</li>" in html
    )
    shown = list(page_facets(html)["subject"].items())
    assert shown[:2] == [("cs.LG", (3, True)), ("stat.ML", (2, True))]
    assert not any(selected for _, (_, selected) in shown[2:])
    assert _chips(html) == [("Machine Learning (2 subjects)", "cs.LG, stat.ML", "/")]


def test_an_archive_on_the_page_and_in_the_api(subjects_client: FlaskClient) -> None:
    html = subjects_client.get("/?subject=astro-ph.*&q=*").get_data(as_text=True)
    assert "<strong>4</strong> results" in html
    ticked = [v for v, (_, selected) in page_facets(html)["subject"].items() if selected]
    assert ticked == ["astro-ph.GA", "astro-ph", "astro-ph.CO"]
    api = subjects_client.get("/api/search?subject=astro-ph").get_json()
    assert api["total"] == 4 and api["notices"] == []
    assert sorted(api["subjects_found"]["astro-ph"]) == ["astro-ph", "astro-ph.CO", "astro-ph.GA"]


def test_an_unknown_subject_on_the_page_names_the_closest_and_stays_removable(
    subjects_client: FlaskClient,
) -> None:
    html = subjects_client.get("/?q=deep&subject=Machine+Learnin").get_data(as_text=True)
    assert "No results" in html
    assert (
        "<li>No subject \u201cMachine Learnin\u201d in the index; did you mean Machine Learning "
        "(cs.LG), Machine Learning (stat.ML)?</li>" in html
    )
    shown = list(page_facets(html)["subject"].items())
    assert shown[0] == ("Machine Learnin", (0, True))
    assert _chips(html) == [("Machine Learnin", "Not in the index", "/?q=deep")]
