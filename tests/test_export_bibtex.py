"""Exporting every page of a search (capped), and BibTeX from the library and the CLI."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from format_fixtures import assert_round_trip
from hypothesis import given, settings
from hypothesis import strategies as st

from pubsearch.cli.main import main
from pubsearch.ingest.readers.bibtex import plain_text
from pubsearch.ingest.records import Record
from pubsearch.search import export
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService


def test_key_is_family_name_year_and_first_significant_title_word() -> None:
    record = Record(title="Large Batch Optimization", authors=("Yang You",), year=2020)
    assert export.bibtex_key(record) == "you2020large"
    record = Record(title="The Limit of the Batch Size", authors=("Yang You",), year=2020)
    assert export.bibtex_key(record) == "you2020limit"
    record = Record(title="Über Ähnlichkeit", authors=("Balázs, Csaba",))
    assert export.bibtex_key(record) == "balazsnduber"
    assert export.bibtex_key(Record(title="")) == "anonnd"


def test_special_characters_are_escaped() -> None:
    assert export.bibtex_escape(r"50% of {x}_1 & $y$ #2 ~ ^ \ ") == (
        r"50\% of \{x\}\_1 \& \$y\$ \#2 \textasciitilde{} \textasciicircum{} "
        r"\textbackslash{} "
    )


def test_arxiv_record_is_misc_with_eprint() -> None:
    record = Record(
        title="A & B: 100% {braces}",
        abstract="We study $x_1$.",
        authors=("Yang You", "Wei Lin"),
        year=2021,
        date="2021-03",
        subjects=("cs.LG", "cs.DC"),
        source="arXiv",
        arxiv_id="2101.00001v2",
        doi="10.1000/XYZ",
    )
    entry = export.record_to_bibtex(record, "you2021b")
    assert entry.startswith("@misc{you2021b,\n")
    assert "  author = {Yang You and Wei Lin},\n" in entry
    assert r"  title = {A \& B: 100\% \{braces\}}," in entry
    assert "  date = {2021-03}," in entry
    assert "  eprint = {2101.00001},\n" in entry
    assert "  archivePrefix = {arXiv},\n" in entry
    assert "  primaryClass = {cs.LG},\n" in entry
    assert "  doi = {10.1000/xyz},\n" in entry
    assert "  url = {https://arxiv.org/abs/2101.00001},\n" in entry
    assert r"  abstract = {We study $x_1$.}" in entry  # math as TeX
    assert entry.endswith("}\n")
    assert entry.count("{") - entry.count(r"\{") == entry.count("}") - entry.count(r"\}")


def test_published_record_is_an_article_in_its_journal() -> None:
    record = Record(title="Paper", authors=("A B",), year=2019, source="JMLR", doi="10.1/x")
    entry = export.record_to_bibtex(record, "b2019paper")
    assert entry.startswith("@article{b2019paper,")
    assert "  journal = {JMLR},\n" in entry
    assert "eprint" not in entry


def test_keys_are_unique_and_comment_comes_first() -> None:
    records = [Record(title="Same Title", authors=("Yang You",), year=2020)] * 3
    text = export.records_to_bibtex(records, comment="first line\nsecond line")
    assert text.startswith("% first line\n% second line\n\n@misc{")
    keys = re.findall(r"^@misc\{([^,]+),", text, re.MULTILINE)
    assert keys == ["you2020same", "you2020samea", "you2020sameb"]


def test_collect_hits_reads_every_page(service: SearchService) -> None:
    batch = export.collect_hits(service.search, SearchRequest(page=3, page_size=2))
    assert batch.total == 36
    assert len(batch.hits) == 36
    assert not batch.capped
    assert [h.rank for h in batch.hits] == list(range(1, 37))
    assert len({h.id for h in batch.hits}) == 36


def test_collect_hits_stops_at_the_cap_and_says_so(service: SearchService) -> None:
    request = SearchRequest(q="training")
    batch = export.collect_hits(service.search, request, cap=3)
    assert len(batch.hits) == 3
    assert batch.capped
    assert batch.total > 3
    assert f"3 of {batch.total} results for 'training' (capped at 3;" in batch.describe(request)


def test_hits_to_bibtex_uses_whole_records(service: SearchService) -> None:
    results = service.search(SearchRequest(q="batch size"))
    text = export.hits_to_bibtex(results.hits, service.record)
    assert text.count("@misc{") == results.total == 6
    assert "you2020limit" in text


def test_cli_query_format_bibtex(seed_index: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "query",
            "batch size",
            "--index",
            str(seed_index),
            "--page-size",
            "2",
            "--format",
            "bibtex",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("@misc{") == 2
    assert result.output.startswith("@misc{you2020limit,\n")


def test_tex_math_and_commands_are_written_as_tex_and_the_rest_escaped() -> None:
    assert export.bibtex_text("MoTe$_{2-x}$") == "MoTe$_{2-x}$"
    assert export.bibtex_text("$\\Lambda$CDM") == "$\\Lambda$CDM"
    assert export.bibtex_text("La$_3$Ni$_2$O$_7$") == "La$_3$Ni$_2$O$_7$"
    assert export.bibtex_text("Ly$\\alpha$ at 50% & {x}") == "Ly$\\alpha$ at 50\\% \\& \\{x\\}"
    assert export.bibtex_text("An \\emph{odd} #1") == "An \\emph{odd} \\#1"
    # Braces that do not pair cannot be written as TeX: the whole text is escaped.
    assert export.bibtex_text("a } b $x{$") == ("a \\textbraceright{} b \\$x\\textbraceleft{}\\$")


def _braces_pair(value: str) -> bool:
    """Whether every brace of a BibTeX value pairs, as BibTeX counts them (escaped or not)."""
    depth = 0
    for char in value:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab $\\{}_^~%&#\u00e9\u03b1", max_size=40))
def test_any_title_reads_back_from_its_bibtex_as_it_was(title: str) -> None:
    text = " ".join(title.split())
    written = export.bibtex_text(text)
    assert _braces_pair(written)
    assert plain_text(written) == text


def test_tex_further_ids_and_a_month_survive_an_export_and_a_reindex(
    tex_index: Path, tmp_path: Path
) -> None:
    assert_round_trip(tex_index, tmp_path, "tex.bib", export.records_to_bibtex)
    svc = SearchService(tex_index)
    try:
        text = export.records_to_bibtex([svc.record("2402.00021")])
    finally:
        svc.close()
    assert "  eprint = {2402.00021},\n" in text
    assert "  note = {Also arXiv:2402.00022; doi:10.1103/physrevb.110.000022},\n" in text
