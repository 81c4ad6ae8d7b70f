"""arXiv ids and DOIs as people type and paste them (pubsearch.ingest.identifiers)."""

from __future__ import annotations

import pytest

from pubsearch.ingest.identifiers import (
    Identifier,
    arxiv_id_of_doi,
    identifier_in_word,
    normalize_arxiv_id,
    normalize_doi,
    read_identifier,
    submission_month,
)


@pytest.mark.parametrize(
    ("typed", "key"),
    [
        ("2505.17997", "arxiv:2505.17997"),
        ("2505.17997v2", "arxiv:2505.17997"),
        ("arXiv:2505.17997", "arxiv:2505.17997"),
        ("arxiv:2505.17997v2", "arxiv:2505.17997"),
        ("ARXIV: 2505.17997", "arxiv:2505.17997"),
        ("0705.1862", "arxiv:0705.1862"),
        ("1412.6980v9", "arxiv:1412.6980"),
        ("hep-th/9901001", "arxiv:hep-th/9901001"),
        ("hep-th/9901001v3", "arxiv:hep-th/9901001"),
        ("math.GT/0309136", "arxiv:math/0309136"),
        ("arXiv:cond-mat/0211034", "arxiv:cond-mat/0211034"),
        ("https://arxiv.org/abs/2505.17997v1", "arxiv:2505.17997"),
        ("http://www.arxiv.org/abs/hep-th/9901001", "arxiv:hep-th/9901001"),
        ("arxiv.org/pdf/2505.17997", "arxiv:2505.17997"),
        ("https://arxiv.org/pdf/2505.17997v2.pdf", "arxiv:2505.17997"),
        ("https://export.arxiv.org/abs/2505.17997/", "arxiv:2505.17997"),
        ("10.1103/PhysRevLett.123.456", "doi:10.1103/physrevlett.123.456"),
        ("doi:10.1103/PhysRevLett.123.456", "doi:10.1103/physrevlett.123.456"),
        ("DOI: 10.1103/PhysRevLett.123.456", "doi:10.1103/physrevlett.123.456"),
        ("https://doi.org/10.1038/nature14539", "doi:10.1038/nature14539"),
        ("http://dx.doi.org/10.1038/nature14539", "doi:10.1038/nature14539"),
        ("dx.doi.org/10.1038/nature14539", "doi:10.1038/nature14539"),
        ("10.1016/S0140-6736(20)30183-5", "doi:10.1016/s0140-6736(20)30183-5"),
        # arXiv's own DOI is the arXiv id.
        ("10.48550/arXiv.2505.17997", "arxiv:2505.17997"),
        ("https://doi.org/10.48550/arXiv.2505.17997", "arxiv:2505.17997"),
    ],
)
def test_every_form_people_type_is_read_as_its_identifier(typed: str, key: str) -> None:
    found = read_identifier(typed)
    assert found is not None, typed
    assert found.key == key


@pytest.mark.parametrize(
    "typed",
    [
        "1.5",
        "2021",
        "3.14159",
        "2024.12345",  # no month 24
        "1234.5678",  # no month 34
        "2505.1799",  # from 2015 on the number has five digits
        "1201.12345",  # before 2015, four
        "0612.1234",  # new-style ids begin in April 2007
        "hep-th/9913001",  # no month 13
        "hep-th/1201001",  # old-style ids end in 2007
        "and/or",
        "10.5",
        "10.1/x",  # a registrant code has at least four digits
        "doi:",
        "arXiv:",
        "https://arxiv.org/abs/",
        "https://example.org/abs/2505.17997",
        "transformer",
        "",
    ],
)
def test_numbers_years_and_words_are_not_identifiers(typed: str) -> None:
    assert read_identifier(typed) is None


@pytest.mark.parametrize(
    ("word", "key", "used"),
    [
        ("2505.17997.", "arxiv:2505.17997", 10),
        ("2505.17997,", "arxiv:2505.17997", 10),
        ("(2505.17997)", None, 0),
        ("2505.17997)", "arxiv:2505.17997", 10),
        ("10.1038/nature14539).", "doi:10.1038/nature14539", 19),
        ("10.1016/S0140-6736(20)30183-5;", "doi:10.1016/s0140-6736(20)30183-5", 29),
        ("1.5,", None, 0),
    ],
)
def test_punctuation_after_a_pasted_identifier_is_not_part_of_it(
    word: str, key: str | None, used: int
) -> None:
    found = identifier_in_word(word)
    if key is None:
        assert found is None
    else:
        assert found == (read_identifier(word[:used]), used)
        assert found[0].key == key


def test_an_identifier_shows_as_people_write_it() -> None:
    assert str(Identifier("arxiv", "2505.17997")) == "arXiv:2505.17997"
    assert str(Identifier("doi", "10.1038/nature14539")) == "doi:10.1038/nature14539"


def test_sources_ids_are_read_leniently() -> None:
    # What a source calls an arXiv id is kept even where a typed one would be refused.
    assert normalize_arxiv_id("arXiv:1234.5678v2") == "1234.5678"
    assert normalize_arxiv_id("math.GT/0309136v1") == "math/0309136"
    assert normalize_doi("https://dx.doi.org/10.1/ABC") == "10.1/abc"
    assert normalize_doi("doi: 10.1/ABC") == "10.1/abc"
    assert arxiv_id_of_doi("10.48550/ARXIV.2405.18986") == "2405.18986"
    assert arxiv_id_of_doi("10.1103/x") is None


@pytest.mark.parametrize(
    ("arxiv_id", "month"),
    [
        ("0705.1862", (2007, 5)),
        ("2505.17997", (2025, 5)),
        ("hep-th/9901001", (1999, 1)),
        ("astro-ph/0612001", (2006, 12)),
        ("2513.00001", None),
        ("not-an-id", None),
    ],
)
def test_an_arxiv_id_says_when_it_was_given(arxiv_id: str, month: tuple[int, int] | None) -> None:
    assert submission_month(arxiv_id) == month


def test_an_id_asked_for_by_name_may_be_any_a_source_gives() -> None:
    assert read_identifier("doi:10.1/X") is None
    found = read_identifier("doi:10.1/X", strict=False)
    assert found is not None and found.key == "doi:10.1/x"
    found = read_identifier("https://arxiv.org/abs/1234.5678v2", strict=False)
    assert found is not None and found.key == "arxiv:1234.5678"
    found = read_identifier("10.48550/arXiv.2405.18986", strict=False)
    assert found is not None and found.key == "arxiv:2405.18986"
    assert read_identifier("t808ee125210", strict=False) is None


def test_a_long_word_is_no_identifier() -> None:
    assert identifier_in_word("10.1000/" + "x" * 400) is None
    assert identifier_in_word("(2505.17997)") is None
    assert identifier_in_word("2505.17997" + ")" * 400) is None
