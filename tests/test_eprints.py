"""A BibTeX eprint whose title disagrees with the record of that id is not merged
(pubsearch.ingest.eprints), in a build whatever the order of the files, and in an update."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pubsearch.cli.main import main
from pubsearch.index.build import build_index, update_index
from pubsearch.ingest.eprints import EprintCheck, titles_agree
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record
from pubsearch.search.service import SearchService


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Electronic structure of MoTe$_{2-x}$ films", "Electronic Structure of MoTe2-x Films"),
        ("Tensions in $\\Lambda$CDM", "Tensions in \u039bCDM"),
        ("The Ly$\\alpha$ forest at $z>2$", "The Ly\u03b1 forest at z>2"),
        ("Attention Is All You Need", "Attention is all you need: transformers for NLP"),
        ("Superconductivity in {La$_3$Ni$_2$O$_7$}", "SUPERCONDUCTIVITY IN La3Ni2O7"),
        ("Quantum Widgets", ""),
    ],
)
def test_one_paper_formatted_two_ways_agrees(first: str, second: str) -> None:
    assert titles_agree(first, second)
    assert titles_agree(second, first)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            "Deep residual learning for image recognition",
            "Deep learning for image super-resolution",
        ),
        ("Attention Is All You Need", "Language Models are Few-Shot Learners"),
        ("Tensions in $\\Lambda$CDM", "Dark energy surveys"),
    ],
)
def test_two_papers_disagree(first: str, second: str) -> None:
    assert not titles_agree(first, second)
    assert not titles_agree(second, first)


def test_a_group_joined_by_a_wrong_eprint_is_taken_apart_with_a_warning() -> None:
    arxiv = Record(title="Quantum widgets at scale", arxiv_id="2505.17997", origins=("a:1",))
    wrong = Record(
        title="Classical gadgets",
        arxiv_id="2505.17997",
        doi="10.5555/gadgets",
        origins=("lib.bib:12",),
        arxiv_id_claimed=True,
    )
    check = EprintCheck()
    (first, second) = check([arxiv, wrong])
    assert first == [arxiv]
    (gadgets,) = second
    assert (gadgets.arxiv_id, gadgets.id, gadgets.doi) == (None, "doi:10.5555/gadgets", wrong.doi)
    assert check.splits == 1
    assert check.warnings == [
        "lib.bib:12: eprint 2505.17997 is another paper, \u201cQuantum widgets at scale\u201d "
        "(a:1), not \u201cClassical gadgets\u201d: not merged with it, the entry kept without "
        "that id"
    ]
    right = Record(title="Quantum Widgets at Scale", arxiv_id="2505.17997v2", arxiv_id_claimed=True)
    assert check([arxiv, right]) == [[arxiv, right]]
    assert check.splits == 1


ARXIV = [
    {"id": "2505.17997", "title": "Quantum Widgets at Scale", "abstract": "W.", "year": 2025},
    {
        "id": "2503.18889",
        "title": "Spin liquids in $\\alpha$-RuCl$_3$",
        "abstract": "S.",
        "year": 2025,
    },
]
# The first entry's eprint is another paper's (Scholar's mistake); the second is the
# arXiv record's own paper with its title formatted otherwise.
BIBTEX = """@article{gadgets2025,
  title = {Classical Gadgets for Everyone},
  author = {Doe, Jane},
  year = {2025},
  eprint = {2505.17997},
  archivePrefix = {arXiv},
}

@article{ruthenium2025,
  title = {Spin Liquids in {$\\alpha$-RuCl$_3$}},
  author = {Roe, Rick},
  year = {2025},
  journal = {arXiv preprint arXiv:2503.18889},
}
"""


def write_sources(folder: Path) -> tuple[Path, Path]:
    jsonl = folder / "arxiv.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in ARXIV), encoding="utf-8")
    bib = folder / "scholar.bib"
    bib.write_text(BIBTEX, encoding="utf-8")
    return jsonl, bib


def assert_checked(index_dir: Path, bib: Path) -> None:
    service = SearchService(index_dir)
    try:
        records = {r.title: r for r in service.iter_records()}
    finally:
        service.close()
    assert len(records) == 3
    widgets = records["Quantum Widgets at Scale"]
    assert widgets.arxiv_ids == ("2505.17997",) and widgets.authors == ()
    gadgets = records["Classical Gadgets for Everyone"]
    assert gadgets.arxiv_id is None and gadgets.id.startswith("t")
    assert gadgets.origins == (f"{bib}:1",)
    (spin,) = [r for r in records.values() if r.arxiv_id == "2503.18889"]
    assert spin.authors == ("Rick Roe",)  # merged with the BibTeX entry


@pytest.mark.parametrize("bib_first", [False, True])
def test_a_build_merges_the_right_eprint_and_not_the_wrong_one(
    tmp_path: Path, bib_first: bool
) -> None:
    jsonl, bib = write_sources(tmp_path)
    paths = [bib, jsonl] if bib_first else [jsonl, bib]
    summary = build_index(tmp_path / "ix", read_paths(paths, ReadReport()), workers=1)
    assert (summary.indexed, summary.duplicates_merged) == (3, 1)
    (warning,) = summary.warnings
    assert warning.startswith(f"{bib}:1: eprint 2505.17997 is another paper,")
    assert_checked(tmp_path / "ix", bib)


def test_an_update_merges_the_right_eprint_and_not_the_wrong_one(tmp_path: Path) -> None:
    jsonl, bib = write_sources(tmp_path)
    build_index(tmp_path / "ix", read_paths([jsonl], ReadReport()))
    summary = update_index(tmp_path / "ix", read_paths([bib], ReadReport()))
    assert (summary.indexed, summary.replaced, summary.total) == (2, 1, 3)
    (warning,) = summary.warnings
    assert warning.startswith(f"{bib}:1: eprint 2505.17997 is another paper,")
    assert_checked(tmp_path / "ix", bib)


def test_the_index_command_warns_with_file_and_line(tmp_path: Path) -> None:
    jsonl, bib = write_sources(tmp_path)
    result = CliRunner().invoke(
        main, ["index", "--index", str(tmp_path / "ix"), str(jsonl), str(bib)]
    )
    assert result.exit_code == 0, result.output
    assert f"warning: {bib}:1: eprint 2505.17997 is another paper" in result.stderr
    assert "indexed 3 records; 1 duplicates merged; 0 blocks skipped" in result.stdout
