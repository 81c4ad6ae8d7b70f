"""OpenAlex works: inverted-index abstracts, authorships, topics and concepts, citation
counts, API responses, and lines that cannot be read."""

from __future__ import annotations

from format_fixtures import FORMATS_DIR, assert_records_as_expected, read_fixture

from pubsearch.ingest.readers.openalex import abstract_text, record_from_work

NAME = "openalex-works.jsonl"


def test_every_work_reads_field_by_field() -> None:
    records, _ = read_fixture(NAME)
    # A seventh work, a copy of the sixth without its title and abstract, comes in between.
    assert_records_as_expected(records[:6] + records[7:], NAME)
    assert len(records) == 31


def test_a_work_without_title_is_shown_by_its_display_name_and_bad_lines_are_skipped() -> None:
    records, report = read_fixture(NAME)
    assert records[6].title == records[5].title and records[6].abstract == ""
    path = FORMATS_DIR / NAME
    assert [str(p) for p in report.problems] == [
        f"{path}:10: not valid JSON (Expecting value at column 80); skipped",
        f"{path}:13: OpenAlex work has neither a title nor an abstract; skipped",
    ]


def test_the_inverted_index_becomes_the_abstract_again() -> None:
    index = {"the": [0, 3], "cat": [1], "saw": [2], "dog.": [4]}
    assert abstract_text(index) == "the cat saw the dog."
    assert abstract_text(None) == ""
    assert abstract_text({"odd": ["x"], "fine": [0]}) == "fine"


def test_topics_are_the_subjects_else_the_concepts_scored_highly_enough() -> None:
    base = {
        "title": "T",
        "concepts": [
            {"display_name": "Physics", "score": 0.8},
            {"display_name": "Noise", "score": 0.1},
        ],
    }
    with_topics = {**base, "topics": [{"display_name": "Quantum Field Theory"}]}
    assert record_from_work(with_topics, "x:1").subjects == ("Quantum Field Theory",)  # type: ignore[union-attr]
    assert record_from_work(base, "x:1").subjects == ("Physics",)  # type: ignore[union-attr]


def test_ids_and_the_citation_count() -> None:
    work = {
        "display_name": "T",
        "doi": "https://doi.org/10.1234/ABC",
        "ids": {"arxiv": "arXiv:2401.00001v3"},
        "cited_by_count": 12,
        "authorships": [
            {"author": {"display_name": "Christian S Hardtke"}},
            {"raw_author_name": "A. One"},
        ],
    }
    record = record_from_work(work, "x:1")
    assert record is not None
    assert (record.doi, record.arxiv_id, record.cited_by) == ("10.1234/abc", "2401.00001", 12)
    assert record.authors == ("Christian S. Hardtke", "A. One")


def test_an_api_response_is_read_work_by_work() -> None:
    records, report = read_fixture("openalex-response.json")
    assert report.problems == []
    assert [r.authors[0] for r in records] == ["Berthy T. Feng", "Jun Myeong Choi"]
    assert records[0].cited_by == 0
    assert records[1].doi == "10.48550/arxiv.2605.28811"  # "doi" is null: from ids.doi
