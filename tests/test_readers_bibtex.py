"""BibTeX and BibLaTeX files: Zotero's, JabRef's, Google Scholar's, arXiv's and DBLP's
entries, @string macros, TeX in names and titles, and entries that cannot be read."""

from __future__ import annotations

import pytest
from format_fixtures import FORMATS_DIR, assert_records_as_expected, read_fixture

from pubsearch.ingest.readers.bibtex import authors_of, plain_text, read_bibtex
from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.records import Record

NAME = "library.bib"


def read_text(text: str) -> tuple[list[Record], ReadReport]:
    report = ReadReport()
    return list(read_bibtex(text.splitlines(keepends=True), "mem.bib", report)), report


def test_every_exported_entry_reads_field_by_field() -> None:
    records, report = read_fixture(NAME)
    assert_records_as_expected(records, NAME)
    assert len(records) == 34


def test_the_awkward_entries() -> None:
    records, _ = read_fixture(NAME)
    by_title = {r.title: r for r in records[30:]}
    kernel = by_title["Kernel Methods for Öptical Flow in $\\mathcal{O}(n)$ Time & Space"]
    assert kernel.authors == (
        "Karolina Górnicka",
        "Paweł Wójcik",
        "The EXAMPLE Collaboration",
        "Anna van der Berg Jr.",
        "Christian S. Hardtke",
    )
    assert kernel.source == "Computer Science -- Workshop on Test Entries"  # cs # {...}
    assert kernel.year == 2024 and kernel.date is None
    assert kernel.subjects == ("optical flow", "kernel methods")
    assert kernel.abstract == (
        "We test BibTeX entries: accents such as naïve and Erdős, an escaped 50% and "
        "\\emph{emphasis}."
    )
    quoted = by_title["A Parenthesised Entry With Quoted Values"]
    assert quoted.authors == ("Jörg Müller", "Anders Ångström")
    assert (quoted.year, quoted.date, quoted.doi) == (2023, "2023-11", "10.5555/lts.2023.0042")
    assert quoted.source == "Letters in Test Science"
    old = by_title["An Old-Style arXiv Identifier"]
    assert (old.arxiv_id, old.subjects, old.authors) == (
        "hep-th/9901001",
        ("hep-th",),
        ("Edward Witten",),
    )
    assert "An Entry After the Broken One Is Still Read" in by_title


def test_an_unreadable_entry_is_reported_with_its_line_and_the_rest_read() -> None:
    records, report = read_fixture(NAME)
    lines = (FORMATS_DIR / NAME).read_text().splitlines()
    broken = lines.index("@article{broken2024,") + 1
    untitled = lines.index("@article{untitled2024,") + 1
    assert [(p.where.rsplit(":", 1)[1], p.message) for p in report.problems] == [
        (
            str(broken),
            "BibTeX entry not parsed (a brace or quote is not closed before the next entry); "
            "skipped",
        ),
        (str(untitled), "BibTeX entry 'untitled2024' has neither a title nor an abstract; skipped"),
    ]
    assert records[-1].origins == (f"{FORMATS_DIR / NAME}:{untitled + 6}",)


def test_string_macros_apply_to_the_entries_below_them_only() -> None:
    records, report = read_text(
        "@misc{a, title = {Before}, journal = jl}\n"
        '@string{jl = "Journal of Later"}\n'
        "@misc{b, title = {After}, journal = jl, month = jan}\n"
        '@STRING{ x = "X" }\n'
        '@misc{c, title = "T " # x # { and } # jl, year = "2020"}\n'
    )
    assert [r.source for r in records] == ["jl", "Journal of Later", ""]
    assert records[2].title == "T X and Journal of Later"
    assert report.problems == []


@pytest.mark.parametrize(
    ("field", "names"),
    [
        ("Lee, Minji and Hardtke, Christian S", ["Minji Lee", "Christian S. Hardtke"]),
        ("Minji Lee and Christian S. Hardtke and others", ["Minji Lee", "Christian S. Hardtke"]),
        (
            "de la Fuente, Ana and Ludwig van Beethoven",
            ["Ana de la Fuente", "Ludwig van Beethoven"],
        ),
        ("{\\v{S}}r{\\'a}mek, Ond{\\v{r}}ej", ["Ondřej Šrámek"]),
        ("Woong{-}Seob Jeong", ["Woong-Seob Jeong"]),
        ("{Barnes and Noble, Inc.}", ["Barnes and Noble, Inc."]),
    ],
)
def test_names_in_both_orders(field: str, names: list[str]) -> None:
    notes: list[str] = []
    assert authors_of(field, notes) == names
    assert notes == []


def test_titles_lose_protective_braces_but_keep_math_and_commands() -> None:
    assert plain_text('The {BERT} of {\\"O}sterreich') == "The BERT of Österreich"
    assert plain_text("Bounds in $\\mathcal{O}(n^{2})$") == "Bounds in $\\mathcal{O}(n^{2})$"
    assert plain_text("An \\emph{emphasised} {Word}") == "An \\emph{emphasised} Word"


def test_year_from_a_biblatex_date_and_the_day_or_month_kept() -> None:
    records, _ = read_text(
        "@article{k, title={T}, date={2024-05-29}}\n@article{j, title={U}, date={2024-05}}\n"
        "@article{i, title={V}, date={2024-13}}"
    )
    assert [(r.year, r.date) for r in records] == [
        (2024, "2024-05-29"),
        (2024, "2024-05"),
        (2024, None),
    ]


def test_arxiv_ids_from_eprint_doi_url_and_scholars_journal() -> None:
    records, _ = read_text(
        "@misc{a, title={A}, eprint={2401.00001}, archivePrefix={arXiv}}\n"
        "@misc{b, title={B}, doi={10.48550/arXiv.2401.00002}}\n"
        "@misc{c, title={C}, url={https://arxiv.org/abs/2401.00003v2}}\n"
        "@article{d, title={D}, journal={arXiv preprint arXiv:2401.00004}}\n"
        "@misc{e, title={E}, eprint={1234.5678}, archivePrefix={HAL}}\n"
    )
    assert [r.arxiv_id for r in records] == [
        "2401.00001",
        "2401.00002",
        "2401.00003",
        "2401.00004",
        None,
    ]


def test_comments_preambles_and_text_outside_entries_make_no_records() -> None:
    records, report = read_text(
        'This file was made by hand.\n@comment{nothing here}\n@preamble{"x"}\n'
        "@misc{a, title={Only}}\n"
    )
    assert [r.title for r in records] == ["Only"]
    assert report.problems == []
