"""What real queries find: explicit syntax keeps its meaning, plain text never fails.

Each test is a row of the query-correctness table, searched on the seeds (36 records of
two authors, Yang You and Wei Lin).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pubsearch.index.build import build_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search.highlighting import html_to_plain
from pubsearch.search.request import SearchRequest
from pubsearch.search.results import SearchResults
from pubsearch.search.service import SearchService

SEEDS = Path(__file__).resolve().parent.parent / "seeds"


def search(service: SearchService, q: str, **kwargs: object) -> SearchResults:
    return service.search(SearchRequest(q=q, page_size=100, **kwargs))  # type: ignore[arg-type]


def ids(service: SearchService, q: str) -> set[str]:
    return {hit.id for hit in search(service, q).hits}


def test_field_clauses_side_by_side_all_apply(service: SearchService) -> None:
    results = search(service, "author:you subject:cs.CV year:2021")
    explicit = search(service, "author:you AND subject:cs.CV AND year:2021")
    assert results.total == explicit.total == 2
    assert not results.relaxed


def test_a_phrase_a_pattern_and_a_range_all_apply(service: SearchService) -> None:
    results = search(service, 'au:"yang you" cat:cs.* year:>2020', facets=True)
    assert results.total == 6
    assert all("Yang You" in hit.authors and hit.year and hit.year > 2020 for hit in results.hits)
    assert results.facets is not None
    assert [v.value for v in results.facets["author"]] == ["Yang You"]


def test_explicit_syntax_stays_required_when_bare_words_relax(service: SearchService) -> None:
    # No record has every word: the bare words relax, the author does not.
    results = search(service, "author:lin batch size distributed zebra")
    assert results.relaxed and results.total > 0
    assert all("Wei Lin" in hit.authors for hit in results.hits)
    assert results.words == ("batch", "size", "distributed", "zebra")
    assert results.relaxed_note == (
        "No record has all of: batch, size, distributed, zebra; showing records with most of them."
    )
    for text in (
        '"batch size" gpu cluster zebra',
        "-batch gpu cluster zebra",
        "train* gpu zebra x",
    ):
        relaxed = search(service, text)
        kept = search(service, text.split()[0])
        assert relaxed.relaxed and {h.id for h in relaxed.hits} <= ids(service, text.split()[0])
        assert kept.total >= relaxed.total


def test_bare_words_that_all_match_are_not_relaxed(service: SearchService) -> None:
    results = search(service, "deep learning training")
    assert results.total >= 10
    assert not results.relaxed and results.relaxed_note is None and results.words == ()
    few = search(service, "large batch training")  # 6 have every word: fewer than 10
    assert few.relaxed and few.all_words_total == 6
    assert few.relaxed_note is not None and few.relaxed_note.startswith("Only 6 records have")


def test_match_all(service: SearchService) -> None:
    everything = search(service, "")
    assert search(service, "*").total == everything.total == 36
    assert [h.id for h in search(service, "*").hits] == [h.id for h in everything.hits]
    assert ids(service, "batch AND *") == ids(service, "batch")
    assert search(service, "batch AND *").total == search(service, "batch").total
    assert search(service, "batch -*").total == 0
    assert search(service, "-batch").total == 36 - search(service, "batch").total
    assert search(service, "NOT batch").total == 36 - search(service, "batch").total
    assert search(service, "abstract:*").total == 36
    assert search(service, "batch OR *").total == 36
    # Records with the word come first.
    assert {h.id for h in search(service, "batch OR *").hits[:6]} == ids(service, "batch")


def test_no_suggestion_is_made_of_punctuation(service: SearchService) -> None:
    results = search(service, "title:(")
    assert results.suggestion is None
    assert results.total == 36  # nothing to search for: every record
    assert results.notices
    # "title:" then a space is the word "title", corrected as a word: no colon kept.
    corrected = search(service, "title:", correct=True)
    assert corrected.corrected_from == "title:" and corrected.request.q == "tie"


def test_relaxed_words_are_shown_without_the_punctuation_that_made_them_words(
    service: SearchService,
) -> None:
    results = search(service, "permutation: the ?transverse curvature (effect")
    assert results.relaxed
    assert results.words == ("permutation", "the", "transverse", "curvature", "effect")


@pytest.mark.parametrize(
    ("text", "noticed"),
    [
        ("We measure the effect of batch size on training (the ?large batch effect) .", True),
        ("a permutation: the order of training examples changes with the batch size", False),
        ('training with large batches [1]; see: {2} and "quoted text * in it ^ here ~', True),
        ("foo:bar batch size", True),
        ("OR AND NOT batch", True),
        ("((( batch size", True),
    ],
)
def test_pasted_text_is_searched_as_words(service: SearchService, text: str, noticed: bool) -> None:
    results = search(service, text)
    assert results.total > 0
    assert bool(results.notices) == noticed


def test_a_pasted_abstract_is_searched_and_ranks_its_own_record_first(
    service: SearchService,
) -> None:
    record = next(service.iter_records())
    abstract = record.abstract
    assert len(abstract) > 1000
    results = search(service, abstract)
    assert results.hits[0].id == record.id
    assert search(service, abstract * 8).hits[0].id == record.id  # over 10,000 characters


FIELD_CLAUSES = [
    "author:you",
    "au:lin",
    'author:"yang you"',
    "subject:cs.LG",
    "cat:cs.DC",
    "cat:cs.*",
    "subject:eess.*",
    "year:2021",
    "year:>2019",
    "year:2019..2021",
    "year:[2020 TO 2022]",
    "title:batch",
    "ti:learning",
    "abstract:training",
    "abs:gpu",
    'title:"large batch"',
    "-subject:cs.LG",
    "-author:lin",
    "title:train*",
    "NOT year:2021",
]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(FIELD_CLAUSES), min_size=1, max_size=5))
def test_field_clauses_count_as_with_explicit_and(
    service: SearchService, clauses: list[str]
) -> None:
    side_by_side = service.count(SearchRequest(q=" ".join(clauses)))
    explicit = service.count(SearchRequest(q=" AND ".join(clauses)))
    assert side_by_side == explicit
    # And with bare words around them: the clauses still hold for every hit.
    with_words = search(service, " ".join(["batch", "size", "zebra", *clauses]))
    assert {h.id for h in with_words.hits} <= ids(service, " AND ".join(clauses))


def test_tex_titles_are_shown_as_text_with_their_words_marked(tmp_path: Path) -> None:
    corpus = tmp_path / "tex.jsonl"
    corpus.write_text(
        json.dumps(
            {
                "_id": "1",
                "title": "\\textbf{\\underline{Diff}}usion of Fe$_3$GeTe$_2$ monolayers",
                "text": "We study $\\alpha$-stable diffusion in $O(n^2)$ time. " * 8
                + "The diffusion of continuous magnons in monolayers is measured.",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    build_index(tmp_path / "ix", read_paths([corpus], ReadReport()))
    service = SearchService(tmp_path / "ix")
    try:
        (hit,) = service.search(SearchRequest(q="diffusion monolayers")).hits
        assert hit.title_html == "<mark>Diffusion</mark> of Fe₃GeTe₂ <mark>monolayers</mark>"
        assert hit.abstract_html.startswith("We study α-stable <mark>diffusion</mark> in O(n²)")
        assert "$" not in hit.snippet and "\\" not in hit.snippet
        (plain,) = service.search(SearchRequest(q="continuous magnons")).hits
        # A snippet starts and ends at a word's edge.
        text = html_to_plain(plain.snippet)
        for part in text.split(" \u2026 "):
            first, last = part.split()[0], part.split()[-1]
            assert first in plain.abstract.split() or first.rstrip(".,") in plain.abstract
            assert last.rstrip(".,") in plain.abstract.replace(".", " ").split()
        assert hit.title.startswith("\\textbf")  # the record itself is as its source wrote it
    finally:
        service.close()


def test_pasted_text_does_not_build_the_spelling_table(seed_index: Path) -> None:
    # Pasted text is never corrected, so a relaxed paragraph must not pay for the table
    # (1.2 s at 102,289 records); a short query that finds nothing builds it.
    fresh = SearchService(seed_index)
    try:
        pasted = "we study zzqx optimisation of qqzz gradient batches in hybrid clusters at scale"
        assert fresh.search(SearchRequest(q=pasted)).relaxed
        generation, _ = fresh._searcher()
        assert generation._spelling is None
        fresh.search(SearchRequest(q="batch sise"))
        assert generation._spelling is not None
    finally:
        fresh.close()


def test_a_server_prepares_each_new_generation_in_the_background(tmp_path: Path) -> None:
    # After a re-index, the new generation's author names and spelling words are built by a
    # thread of their own: the first search that needs them does not pay for them.
    index_dir = tmp_path / "index"
    report = ReadReport()
    build_index(index_dir, read_paths([SEEDS], report))
    service = SearchService(index_dir, prepare_in_background=True)
    try:
        for _ in range(2):  # the first generation, then a re-index of it
            # A search that needs neither table (one word, 10 or more results): only the
            # background thread builds them.
            assert service.search(SearchRequest(q="training")).total >= 10
            generation, _ = service._searcher()
            deadline = time.monotonic() + 30
            while (
                generation._spelling is None or generation._names is None
            ) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert generation._spelling is not None and generation._names is not None
            build_index(index_dir, read_paths([SEEDS], ReadReport()))
    finally:
        service.close()
    # Without the flag (the command line), nothing is built that a query does not need.
    quiet = SearchService(index_dir)
    try:
        assert quiet.search(SearchRequest(q="training")).total >= 10  # no suggestion asked
        time.sleep(0.5)
        generation, _ = quiet._searcher()
        assert generation._spelling is None
    finally:
        quiet.close()
