"""The arXiv subject table: full names for codes, case-insensitively."""

from __future__ import annotations

import re

import pytest

from pubsearch.ingest.subjects import ARCHIVES, CATEGORIES, subject_name


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("cs.DC", "Distributed, Parallel, and Cluster Computing"),
        ("cs.LG", "Machine Learning"),
        ("stat.ML", "Machine Learning"),
        ("eess.SY", "Systems and Control"),
        ("physics.ins-det", "Instrumentation and Detectors"),
        ("math.GT", "Geometric Topology"),
        ("quant-ph", "Quantum Physics"),
        ("hep-th", "High Energy Physics - Theory"),
        ("cond-mat.stat-mech", "Statistical Mechanics"),
        ("astro-ph.CO", "Cosmology and Nongalactic Astrophysics"),
        ("q-bio.NC", "Neurons and Cognition"),
        ("q-fin.ST", "Statistical Finance"),
        ("econ.EM", "Econometrics"),
    ],
)
def test_known_codes_have_their_arxiv_names(code: str, name: str) -> None:
    assert subject_name(code) == name


def test_lookup_ignores_case_and_spaces() -> None:
    assert subject_name("cs.lg") == subject_name(" CS.LG ") == "Machine Learning"


def test_unknown_code_has_no_name() -> None:
    assert subject_name("cs.XX") is None
    assert subject_name("") is None


def test_every_category_is_a_well_formed_code_of_a_known_archive() -> None:
    for code, name in CATEGORIES.items():
        assert name and name == name.strip()
        assert re.fullmatch(r"[a-z][a-z\-]*(\.[A-Za-z][A-Za-z\-]*)?", code), code
        archive = code.split(".")[0]
        if "." in code:
            assert archive in ARCHIVES, code


def test_table_covers_the_main_archives() -> None:
    prefixes = {code.split(".")[0] for code in CATEGORIES if "." in code}
    assert {"cs", "math", "stat", "eess", "physics", "q-bio", "q-fin", "econ"} <= prefixes
    assert {"astro-ph", "cond-mat", "nlin"} <= prefixes
    assert sum(1 for c in CATEGORIES if c.startswith("cs.")) == 40


def test_only_subjects_written_as_codes_get_an_arxiv_name() -> None:
    from pubsearch.ingest.subjects import arxiv_subject_name

    assert arxiv_subject_name("cs.LG") == arxiv_subject_name("cs.lg") == "Machine Learning"
    assert arxiv_subject_name("hep-th") == "High Energy Physics - Theory"
    assert arxiv_subject_name("Physics") is None  # an OpenAlex concept, not the archive
    assert arxiv_subject_name("Machine learning") is None
    assert arxiv_subject_name("") is None
