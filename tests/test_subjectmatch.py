"""Which recorded subjects a typed subject stands for, over a facet's labels (the service's
tests, tests/test_searching_subjects.py, search a real index with them)."""

from __future__ import annotations

import time

from pubsearch.ingest.records import fold
from pubsearch.search.subjectmatch import SubjectIndex

LABELS = ["cs.LG", "stat.ML", "Machine Learning", "astro-ph.GA", "physics.optics", "Physics"]


def index(labels: list[str] = LABELS) -> SubjectIndex:
    return SubjectIndex(labels, {fold(label): i for i, label in enumerate(labels)})


def found(typed: str, labels: list[str] = LABELS) -> list[str]:
    return [labels[i] for i in index(labels).find(typed).ids]


def test_a_subject_recorded_as_typed_is_that_subject_not_the_arxiv_codes_of_its_name() -> None:
    # A keyword "Machine Learning" (BibTeX, OpenAlex) is the keyword: its facet link
    # selects what it shows.
    assert found("machine learning") == ["Machine Learning"]
    assert index().find("Machine Learning").notice is None
    # Without such a keyword, the name is arXiv's.
    assert found("Machine Learning", ["cs.LG", "stat.ML"]) == ["cs.LG", "stat.ML"]


def test_an_archive_code_is_the_whole_archive_even_when_recorded_as_a_topic() -> None:
    # OpenAlex's topic "Physics" and arXiv's physics archive fold to one value.
    assert found("physics") == ["physics.optics", "Physics"]
    assert found("physics.*") == ["physics.optics", "Physics"]


def test_a_code_arxiv_adds_later_is_in_its_archive() -> None:
    assert found("cs", ["cs.XY", "cs.LG", "csv"]) == ["cs.XY", "cs.LG"]


def test_suggestions_are_what_the_index_records() -> None:
    notice = index(["cs.LG", "cs.CV", "hep-th"]).find("Machine Learnign").notice
    assert notice == (
        "No subject \u201cMachine Learnign\u201d in the index; did you mean Machine Learning "
        "(cs.LG)?"
    )
    # An archive that is a category too is suggested once, as its code.
    notice = index(["hep-th", "hep-ph"]).find("hep-thx").notice
    assert notice is not None
    assert notice.endswith(
        "did you mean High Energy Physics - Theory (hep-th), High Energy "
        "Physics - Phenomenology (hep-ph)?"
    )
    # An archive with categories, as its pattern.
    notice = index(["astro-ph.GA"]).find("astrophysic").notice
    assert notice is not None
    assert notice.endswith(
        "did you mean Astrophysics (astro-ph.*), Astrophysics of Galaxies (astro-ph.GA)?"
    )


def test_a_name_of_an_archive_and_a_category_names_both() -> None:
    match = index(["econ.EM", "q-fin.EC"]).find("Economics")
    assert sorted(match.ids) == [0, 1]
    assert match.notice == (
        "Subject \u201cEconomics\u201d is the name of q-fin.EC and econ.*: records of each "
        "are shown."
    )


def test_blank_and_odd_input_finds_nothing_without_failing() -> None:
    for typed in ("", "   ", "?", "((", "\u0000", "x" * 10_000):
        match = index().find(typed)
        assert match.ids == () and match.notice
    assert found("*") == LABELS  # any subject


def test_patterns_never_take_long_and_a_recorded_question_is_itself() -> None:
    labels = ["a" * 200, "What is life?", "What is lift"]
    started = time.perf_counter()
    assert index(labels).find("*a" * 40 + "*b").ids == ()
    assert time.perf_counter() - started < 1
    assert found("what is life?", labels) == ["What is life?"]
    assert found("what is lif?", labels) == ["What is lift"]
    assert found("[wx]hat is *", labels) == ["What is life?", "What is lift"]
