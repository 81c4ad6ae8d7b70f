"""Loose matches stay honest: a relaxed query's count, pages and facets describe the
records that match it well (pubsearch.search.wellmatched); the rest stay reachable with
``loose``; a pasted text is shown by its first words.

Searched on a real index of the first 300 arXiv records of tests/data, where a pasted
abstract shares a word with nearly every record.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from pubsearch.cli.main import main
from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search import wellmatched
from pubsearch.search.request import SearchRequest, YearRange
from pubsearch.search.results import SHOWN_WORDS, SearchResults, shortened
from pubsearch.search.service import SearchService
from pubsearch.web import SERVICE_KEY, create_app

SAMPLE = Path(__file__).resolve().parent / "data" / "arxiv-2024-2026.sample.jsonl"
RECORDS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
# A record with a long abstract (1812.06145: 155 words), pasted whole.
PASTED = next(r for r in RECORDS if r["id"] == "1812.06145")


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    index_dir = tmp_path_factory.mktemp("sample-index")
    build_index(index_dir, read_paths([SAMPLE], ReadReport()))
    return index_dir


@pytest.fixture
def sample(sample_index: Path) -> Iterator[SearchService]:
    svc = SearchService(sample_index)
    yield svc
    svc.close()


@pytest.fixture
def sample_client(sample_index: Path) -> Iterator[FlaskClient]:
    app: Flask = create_app(sample_index, test_config={"TESTING": True})
    yield app.test_client()
    app.extensions[SERVICE_KEY].close()


def search(service: SearchService, q: str, **kwargs: object) -> SearchResults:
    return service.search(SearchRequest(q=q, page_size=100, **kwargs))  # type: ignore[arg-type]


def every_hit(service: SearchService, q: str, **kwargs: object) -> list[str]:
    """The ids of every result, page by page."""
    ids: list[str] = []
    page = 1
    while True:
        results = service.search(SearchRequest(q=q, page=page, page_size=100, **kwargs))  # type: ignore[arg-type]
        ids += [hit.id for hit in results.hits]
        if page >= results.pages:
            return ids
        page += 1


def test_a_pasted_abstract_counts_the_records_that_match_it_well(sample: SearchService) -> None:
    records = sample.stats().records
    results = search(sample, PASTED["abstract"], facets=True)
    assert results.relaxed
    assert results.hits[0].id == PASTED["id"]
    # Nearly every record shares a word with it; few match it well.
    everything = search(sample, PASTED["abstract"], loose=True)
    assert everything.total > 0.8 * records
    assert 1 <= results.total < records / 10
    assert results.loose_total == everything.total - results.total == everything.loose_total
    assert results.pages == -(-results.total // 100) and len(results.hits) == results.total


def test_the_rest_is_reachable_and_ranked_as_before(sample: SearchService) -> None:
    well = every_hit(sample, PASTED["abstract"])
    everything = every_hit(sample, PASTED["abstract"], loose=True)
    assert len(everything) > len(well)
    # The ranking is the same: the records that match well, in the order all are ranked.
    assert [i for i in everything if i in set(well)] == well
    assert everything[0] == well[0] == PASTED["id"]


def test_facets_count_the_records_that_match_well(sample: SearchService) -> None:
    results = search(sample, PASTED["abstract"], facets=True, facet_size=1000)
    assert results.facets is not None
    ids = set(every_hit(sample, PASTED["abstract"]))
    # As indexed: a record listed years after its submission is dated by submission.
    years = Counter(sample.record(i).year for i in ids)
    assert {int(v.value): v.count for v in results.facets["year"]} == years
    assert sum(v.count for v in results.facets["year"]) == results.total
    subjects = Counter(s for r in RECORDS if r["id"] in ids for s in r["categories"])
    assert {v.value: v.count for v in results.facets["subject"]} == subjects
    loose = search(sample, PASTED["abstract"], facets=True, loose=True)
    assert loose.facets is not None
    assert sum(v.count for v in loose.facets["year"]) == loose.total > results.total


def test_filters_narrow_both_counts_and_facets_stay_disjunctive(sample: SearchService) -> None:
    year = sample.record(PASTED["id"]).year  # as indexed (dated by submission: 2018)
    assert year is not None
    unfiltered = search(sample, PASTED["abstract"], facets=True)
    filtered = search(sample, PASTED["abstract"], facets=True, year=YearRange(year, year))
    everything = search(sample, PASTED["abstract"], loose=True, year=YearRange(year, year))
    years = {i: sample.record(i).year for i in every_hit(sample, PASTED["abstract"])}
    assert filtered.total == sum(years[i] == year for i in every_hit(sample, PASTED["abstract"]))
    assert filtered.total + (filtered.loose_total or 0) == everything.total
    assert filtered.facets is not None and unfiltered.facets is not None
    # The year facet is counted without its own filter: the other years still show.
    assert [(v.value, v.count) for v in filtered.facets["year"]] == [
        (v.value, v.count) for v in unfiltered.facets["year"]
    ]


def write_records(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_record_with_every_word_matches_well_however_long(tmp_path: Path) -> None:
    # Three words (a record needs half their weight): short records with two of them match
    # well, those with only the commonest (gamma) loosely, and the one record with all
    # three matches well although its length puts its score far below (once in 3,000 words).
    filler = " ".join(f"filler{i % 300}" for i in range(3_000))
    pairs = [f"ab{i}" for i in range(4)] + [f"bg{i}" for i in range(4)]
    gammas = [f"g{i}" for i in range(6)]
    records = [
        {"id": "all-three", "title": "A long survey", "abstract": f"{filler} alpha beta gamma"},
        *({"id": i, "title": f"Alpha beta note {i}", "abstract": "Short."} for i in pairs[:4]),
        *({"id": i, "title": f"Beta gamma note {i}", "abstract": "Short."} for i in pairs[4:]),
        *({"id": i, "title": f"A note {i}", "abstract": "Gamma once."} for i in gammas),
        *({"id": f"other{i}", "title": f"Other note {i}", "abstract": "None."} for i in range(9)),
    ]
    index_dir = tmp_path / "index"
    corpus = write_records(tmp_path / "records.jsonl", records)
    build_index(index_dir, read_paths([corpus], ReadReport()))
    service = SearchService(index_dir)
    try:
        results = search(service, "alpha beta gamma")
        assert results.relaxed and results.all_words_total == 1
        assert {h.id for h in results.hits} == {"all-three", *pairs}
        assert results.loose_total == len(gammas)
        loose = search(service, "alpha beta gamma", loose=True)
        assert {h.id for h in loose.hits} == {"all-three", *pairs, *gammas}
    finally:
        service.close()


def test_queries_that_are_not_relaxed_have_no_loose_count(sample: SearchService) -> None:
    for text in ("neural", "graph neural network", "title:graph protein folding"):
        results = search(sample, text)
        if not results.relaxed:
            assert results.loose_total is None and results.loose_note is None
    assert search(sample, "neural", loose=True).total == search(sample, "neural").total


def test_the_share_a_record_needs_grows_for_short_queries() -> None:
    assert wellmatched.threshold(64) == wellmatched.SHARE == 0.15
    assert wellmatched.threshold(10) == 0.15
    assert wellmatched.threshold(4) == pytest.approx(0.375)
    assert wellmatched.threshold(3) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("batch size", "batch size"),
        (" ".join(f"w{i}" for i in range(SHOWN_WORDS)), " ".join(f"w{i}" for i in range(10))),
        (
            " ".join(f"w{i}" for i in range(25)),
            " ".join(f"w{i}" for i in range(10)) + " … (25 words)",
        ),
        ("x" * 300, "x" * 80 + " … (300 characters)"),
        ("long " * 5 + "y" * 200, "long long long long long … (6 words)"),
    ],
)
def test_a_long_query_is_shown_by_its_first_words(text: str, shown: str) -> None:
    assert shortened(text) == shown


def test_text_output_shortens_the_query_and_offers_the_rest(sample_index: Path) -> None:
    runner = CliRunner()
    args = ["query", PASTED["abstract"], "--index", str(sample_index), "--limit", "2"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    words = PASTED["abstract"].split()
    label = " ".join(words[:SHOWN_WORDS]) + f" … ({len(words)} words)"
    found = re.search(r"1-2 of (\d+) results for '(.*)' \(page 1 of", result.output)
    assert found is not None, result.output
    assert found.group(2) == label
    assert PASTED["abstract"] not in result.output
    more = re.search(
        r"(\d+) more records share some of the words: --loose shows them\.", result.output
    )
    assert more is not None, result.output
    loose = runner.invoke(main, [*args, "--loose"])
    assert loose.exit_code == 0, loose.output
    assert f"of {int(found.group(1)) + int(more.group(1))} results" in loose.output
    assert f"without --loose, the {found.group(1)} that match it well." in loose.output


def test_json_keeps_the_whole_query_and_counts_both(sample_index: Path) -> None:
    args = ["query", PASTED["abstract"], "--index", str(sample_index), "--format", "json"]
    well = json.loads(CliRunner().invoke(main, args).output)
    loose = json.loads(CliRunner().invoke(main, [*args, "--loose"]).output)
    assert well["query"] == loose["query"] == PASTED["abstract"]
    assert well["loose"] is False and loose["loose"] is True
    assert well["loose_total"] == loose["loose_total"] > 0
    assert loose["total"] == well["total"] + well["loose_total"]
    plain = json.loads(
        CliRunner()
        .invoke(main, ["query", "neural", "--index", str(sample_index), "--format", "json"])
        .output
    )
    assert plain["loose_total"] is None


def test_the_page_shortens_the_query_and_links_to_the_rest(sample_client: FlaskClient) -> None:
    response = sample_client.get("/", query_string={"q": PASTED["abstract"]})
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    words = PASTED["abstract"].split()
    label = " ".join(words[:SHOWN_WORDS]) + f" … ({len(words)} words)"
    title = re.search(r"<title>(.*?)</title>", page, re.S)
    assert title is not None and html.unescape(title.group(1)) == f"{label} · pubsearch"
    heading = re.search(r'<span class="query">(.*?)</span>', page)
    assert heading is not None and html.unescape(heading.group(1)) == label
    # The search box still holds the whole text.
    box = re.search(r'<input id="q" name="q" type="search" value="([^"]*)"', page)
    assert box is not None and html.unescape(box.group(1)) == PASTED["abstract"]
    note = r'<p class="loose">([\d,]+) more records share some of the words\. '
    link = re.search(note + r'<a href="([^"]+)">Show them</a>', page)
    assert link is not None, page
    more = sample_client.get(link.group(2).replace("&amp;", "&"))
    shown = more.get_data(as_text=True)
    assert "Show only the" in shown and 'name="loose" value="1"' in shown


def test_the_api_takes_loose_and_refuses_a_bad_value(sample_client: FlaskClient) -> None:
    well = sample_client.get("/api/search", query_string={"q": PASTED["abstract"]}).get_json()
    loose = sample_client.get(
        "/api/search", query_string={"q": PASTED["abstract"], "loose": "1"}
    ).get_json()
    assert loose["total"] == well["total"] + well["loose_total"]
    bad = sample_client.get("/api/search", query_string={"q": "x", "loose": "maybe"})
    assert bad.status_code == 400
    assert "loose" in bad.get_json()["message"]


@pytest.mark.semantic
def test_hybrid_counts_the_well_matched_and_those_found_by_meaning(
    vector_service: SearchService,
) -> None:
    record = next(r for r in vector_service.iter_records() if len(r.abstract) > 1000)
    hybrid = vector_service.search(SearchRequest(q=record.abstract, page_size=100))
    lexical = vector_service.search(SearchRequest(q=record.abstract, page_size=100, mode="lexical"))
    assert hybrid.mode == "hybrid" and hybrid.relaxed
    assert hybrid.hits[0].id == record.id
    # By words: the records that match well; the rest of the total, by meaning.
    assert hybrid.word_total == lexical.total
    assert hybrid.total >= lexical.total
    # Loose matches found by meaning are counted once, among those by meaning.
    everything = vector_service.search(SearchRequest(q=record.abstract, page_size=100, loose=True))
    assert everything.total == hybrid.total + (hybrid.loose_total or 0)
    # Ranked as before: the fusion sees every match of the words, loose ones too.
    shown = {h.id for h in hybrid.hits}
    assert [h.id for h in everything.hits if h.id in shown] == [h.id for h in hybrid.hits]


def test_batch_writes_the_well_matched_unless_loose(sample_index: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text(f"q1\t{PASTED['abstract']}\n", encoding="utf-8")
    args = ["batch", str(queries), "--index", str(sample_index), "--hits", "1000"]
    well = CliRunner().invoke(main, args)
    loose = CliRunner().invoke(main, [*args, "--loose"])
    assert well.exit_code == 0 and loose.exit_code == 0, well.output + loose.output
    well_ids = [line.split()[2] for line in well.stdout.splitlines()]
    loose_ids = [line.split()[2] for line in loose.stdout.splitlines()]
    service = SearchService(sample_index)
    try:
        assert well_ids == every_hit(service, PASTED["abstract"])
        assert loose_ids == every_hit(service, PASTED["abstract"], loose=True)
    finally:
        service.close()
    assert len(loose_ids) > len(well_ids) and well_ids[0] == PASTED["id"]
