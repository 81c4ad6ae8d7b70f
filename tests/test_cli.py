from __future__ import annotations

import csv
import io
import json
import shutil
import time
from pathlib import Path

import pytest
from cli_support import assert_one_line_error
from click.testing import CliRunner, Result

from pubsearch.cli.main import main
from pubsearch.index import storage


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def run(runner: CliRunner, *args: str, **kwargs: object) -> Result:
    return runner.invoke(main, list(args), catch_exceptions=False, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def cli_index(tmp_path_factory: pytest.TempPathFactory, seeds_dir: Path) -> Path:
    index_dir = tmp_path_factory.mktemp("cli-index")
    result = CliRunner().invoke(main, ["index", "--index", str(index_dir), str(seeds_dir)])
    assert result.exit_code == 0, result.output
    return index_dir


def test_help_for_every_command(runner: CliRunner) -> None:
    for command in ["--help", "index --help", "query --help", "show --help", "stats --help"]:
        result = run(runner, *command.split())
        assert result.exit_code == 0
        assert "Usage:" in result.output


def test_index_prints_one_summary_line(runner: CliRunner, tmp_path: Path, seeds_dir: Path) -> None:
    result = run(runner, "index", "--index", str(tmp_path / "ix"), str(seeds_dir))
    assert result.exit_code == 0, result.output
    assert result.stdout.count("\n") == 1
    assert "indexed 36 records; 0 duplicates merged; 0 blocks skipped" in result.stdout


def test_a_large_build_without_the_c_module_says_how_to_get_it(
    runner: CliRunner, tmp_path: Path, seeds_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pubsearch.cli import indexing as cli_indexing
    from pubsearch.core import speedups

    monkeypatch.setattr(
        cli_indexing, "SLOW_BUILD_NOTE_FROM", 10
    )  # the seeds' 36 records count as large
    monkeypatch.delenv("PUBSEARCH_NO_SPEEDUPS", raising=False)
    monkeypatch.setattr(speedups, "_compiled", None)  # as where it could not be built
    build = ("index", "--index", str(tmp_path / "ix"), str(seeds_dir))
    result = run(runner, *build)
    assert result.exit_code == 0, result.output
    assert "indexed 36 records" in result.stdout
    assert "note: indexed in plain Python" in result.stderr
    assert "apt-get install gcc python3-dev" in result.stderr
    # Turned off on purpose, or a small build: no note.
    monkeypatch.setenv("PUBSEARCH_NO_SPEEDUPS", "1")
    assert (
        "note:" not in run(runner, "index", "--index", str(tmp_path / "ix"), str(seeds_dir)).stderr
    )
    monkeypatch.delenv("PUBSEARCH_NO_SPEEDUPS")
    monkeypatch.setattr(cli_indexing, "SLOW_BUILD_NOTE_FROM", 10_000)
    assert (
        "note:" not in run(runner, "index", "--index", str(tmp_path / "ix"), str(seeds_dir)).stderr
    )


def test_index_defaults_to_seeds_and_env_index(
    runner: CliRunner, tmp_path: Path, seeds_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(seeds_dir, tmp_path / "seeds")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PUBSEARCH_INDEX", str(tmp_path / "from-env"))
    result = run(runner, "index")
    assert result.exit_code == 0, result.output
    assert storage.current_generation(tmp_path / "from-env") is not None
    monkeypatch.delenv("PUBSEARCH_INDEX")
    assert run(runner, "index").exit_code == 0
    assert storage.current_generation(tmp_path / "index") is not None
    # --index beats the environment
    monkeypatch.setenv("PUBSEARCH_INDEX", str(tmp_path / "ignored"))
    assert run(runner, "index", "--index", str(tmp_path / "opt")).exit_code == 0
    assert not (tmp_path / "ignored").exists()


def test_index_reports_skipped_blocks_with_file_and_line(runner: CliRunner, tmp_path: Path) -> None:
    page = tmp_path / "page.txt"
    page.write_text(
        "arXiv subjects\n\nAda\n\nPublications and source records attributed to Ada.\n\n"
        "arXiv2020\n\nGood\n\nText.\n\ncs.LG\u2197\n\narXiv2021\n\ncs.LG\u2197\n",
        "utf-8",
    )
    result = run(runner, "index", "--index", str(tmp_path / "ix"), str(page))
    assert result.exit_code == 0
    assert f"warning: {page}:15: record has no title" in result.stderr
    assert f"1 blocks skipped ({page}:15)" in result.stdout


def test_unreadable_file_is_named_and_the_rest_indexed(
    runner: CliRunner, tmp_path: Path, seeds_dir: Path
) -> None:
    src = tmp_path / "src"
    shutil.copytree(seeds_dir, src)
    (src / "zz.bin").write_bytes(b"\x00\x01\x02\x03")
    result = run(runner, "index", "--index", str(tmp_path / "ix"), str(src))
    assert result.exit_code == 1
    assert f"error: {src / 'zz.bin'}: not a text file" in result.stderr
    assert "indexed 36 records" in result.stdout


def test_nothing_readable_leaves_index_unchanged(
    runner: CliRunner, tmp_path: Path, cli_index: Path
) -> None:
    index_dir = tmp_path / "ix"
    shutil.copytree(cli_index, index_dir)
    before = (index_dir / "CURRENT").read_text()
    empty = tmp_path / "empty.txt"
    empty.write_text("", "utf-8")
    result = run(runner, "index", "--index", str(index_dir), str(empty))
    assert result.exit_code == 1
    assert "left unchanged" in result.stderr
    assert (index_dir / "CURRENT").read_text() == before
    assert run(runner, "query", "--index", str(index_dir), "batch").exit_code == 0


def test_missing_path_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    result = run(runner, "index", "--index", str(tmp_path), str(tmp_path / "nope"))
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_locked_index(runner: CliRunner, tmp_path: Path, seeds_dir: Path) -> None:
    with storage.writer_lock(tmp_path, timeout=0):
        result = run(runner, "index", "--index", str(tmp_path), "--wait", "0.2", str(seeds_dir))
    assert_one_line_error(result, 1, "being written by another pubsearch process")


def test_update(runner: CliRunner, tmp_path: Path, cli_index: Path) -> None:
    index_dir = tmp_path / "ix"
    shutil.copytree(cli_index, index_dir)
    page = tmp_path / "new.txt"
    page.write_text(
        "arXiv subjects\n\nAda\n\nPublications and source records attributed to Ada.\n\n"
        "arXiv2020\n\nThe Limit of the Batch Size\n\nText.\n\ncs.LG\u2197\n\n"
        "arXiv2023\n\nZymurgy at Scale\n\nBrewing.\n\ncs.AI\u2197\n",
        "utf-8",
    )
    result = run(runner, "index", "--update", "--index", str(index_dir), str(page))
    assert result.exit_code == 0, result.output
    assert "1 replaced" in result.stdout and "37 in" in result.stdout
    out = run(runner, "query", "--index", str(index_dir), "title:limit", "--format", "json")
    (hit,) = json.loads(out.stdout)["hits"]
    assert hit["authors"] == ["Yang You", "Ada"]


def test_query_text_output(runner: CliRunner, cli_index: Path) -> None:
    result = run(runner, "query", "--index", str(cli_index), "batch size", "--facets")
    assert result.exit_code == 0
    out = result.stdout
    # By words and meaning (the index has vectors): the six records with both words, and
    # those only alike in meaning past semantic.FLOOR (how many depends on the vectors).
    header = out.splitlines()[0]
    assert header.startswith("1-")
    assert "results for 'batch size' (page 1 of 1, 6 by their words" in header
    assert "  1. The Limit of the Batch Size" in out
    assert "author: Yang You (6)" in out
    assert "subject: cs.LG (5), cs.DC (" in out
    words = run(runner, "query", "--index", str(cli_index), "batch size", "--mode", "lexical")
    assert words.stdout.startswith("1-6 of 6 results for 'batch size'")
    assert "\x1b[" not in out  # plain when piped


def test_query_text_output_is_bold_on_a_terminal(runner: CliRunner, cli_index: Path) -> None:
    result = run(runner, "query", "--index", str(cli_index), "batch", color=True)
    assert "\x1b[1mBatch\x1b[0m" in result.stdout


def test_query_json_structure(runner: CliRunner, cli_index: Path) -> None:
    result = run(
        runner,
        "query",
        "--index",
        str(cli_index),
        "batch size",
        "--facets",
        "--format",
        "json",
        "--limit",
        "3",
        "--mode",
        "lexical",
    )
    data = json.loads(result.stdout)
    assert {"query", "total", "page", "page_size", "hits", "facets"} <= data.keys()
    assert (data["query"], data["total"], data["page"], data["page_size"]) == (
        "batch size",
        6,
        1,
        3,
    )
    hit = data["hits"][0]
    assert {
        "id",
        "title",
        "abstract",
        "authors",
        "year",
        "subjects",
        "score",
        "snippet",
    } <= hit.keys()
    assert isinstance(hit["authors"], list) and isinstance(hit["year"], int)
    assert isinstance(hit["score"], float)
    assert data["facets"]["author"] == [{"value": "Yang You", "count": 6, "selected": False}]
    assert [f["value"] for f in data["facets"]["year"]] == ["2021", "2020", "2019"]
    assert {f["value"]: f["count"] for f in data["facets"]["subject"]} == {"cs.LG": 5, "cs.DC": 1}


def test_query_json_without_facets_has_no_facets_key(runner: CliRunner, cli_index: Path) -> None:
    data = json.loads(
        run(runner, "query", "--index", str(cli_index), "batch", "--format", "json").stdout
    )
    assert "facets" not in data


def test_query_jsonl_and_csv(runner: CliRunner, cli_index: Path) -> None:
    jsonl = run(runner, "query", "--index", str(cli_index), "batch", "--format", "jsonl").stdout
    rows = [json.loads(line) for line in jsonl.splitlines()]
    assert len(rows) == 6 and rows[0]["rank"] == 1
    text = run(runner, "query", "--index", str(cli_index), "batch", "--format", "csv").stdout
    table = list(csv.DictReader(io.StringIO(text)))
    assert [r["id"] for r in table] == [r["id"] for r in rows]
    assert table[0]["authors"] == "Yang You"


def test_query_filters(runner: CliRunner, cli_index: Path) -> None:
    def total(*args: str) -> int:
        out = run(runner, "query", "--index", str(cli_index), *args, "--format", "json").stdout
        return int(json.loads(out)["total"])

    assert total("--author", "Wei Lin") == 18
    assert total("--subject", "cs.DC", "--subject", "cs.CV") == 15
    assert total("--year", "2021") == 15
    assert total("--year", "2019..2020") == 11
    assert total("training", "--author", "Yang You", "--year", "2020..") == 9


def test_query_sort_and_paging(runner: CliRunner, cli_index: Path) -> None:
    out = run(
        runner,
        "query",
        "--index",
        str(cli_index),
        "--sort",
        "oldest",
        "--limit",
        "2",
        "--page",
        "2",
        "--format",
        "json",
    ).stdout
    data = json.loads(out)
    assert [h["rank"] for h in data["hits"]] == [3, 4]
    assert data["hits"][0]["year"] <= data["hits"][1]["year"]


def test_no_results_shows_the_spelling_correction(runner: CliRunner, cli_index: Path) -> None:
    out = run(runner, "query", "--index", str(cli_index), "batch sise", "--mode", "lexical").stdout
    assert out.startswith(
        "Showing results for 'batch size': nothing matched 'batch sise' "
        "(--no-correct searches it as typed).\n"
    )
    assert "1-6 of 6 results for 'batch size'" in out
    hybrid = run(runner, "query", "--index", str(cli_index), "batch sise").stdout
    assert hybrid.startswith("Showing results for 'batch size': nothing matched 'batch sise'")
    # By words only: by meaning, the typo is close to one title, 0.361 on one machine
    # and under the floor of 0.35 on another (the CPU's int8 kernels differ).
    typed = run(
        runner,
        "query",
        "--index",
        str(cli_index),
        "batch sise",
        "--no-correct",
        "--mode",
        "lexical",
    ).stdout
    assert "No results for 'batch sise'." in typed
    assert "Did you mean: batch size" in typed
    assert "Broader: without \u201csise\u201d finds 6: pubsearch query batch" in typed
    assert (
        json.loads(
            run(runner, "query", "--index", str(cli_index), "batch sise", "--format", "json").stdout
        )["corrected_from"]
        == "batch sise"
    )


def test_no_results_with_filters_suggests_dropping_one(runner: CliRunner, cli_index: Path) -> None:
    out = run(runner, "query", "--index", str(cli_index), "lstm", "--year", "2022").stdout
    assert "Broader: without the year filter finds 1: pubsearch query lstm" in out


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["year:abc"], ["year:abc is not a year"]),
        (["year:[2020 TO"], ["not closed"]),
        (["x", "--year", "abc"], ["--year", "abc"]),
        (["x", "--year", "2021..2019"], ["--year"]),
        (["x", "--page", "0"], ["page"]),
        (["x", "--limit", "1000"], ["page_size"]),
        (["x" * 20_001], ["characters long"]),
        (["x", "--sort", "cited"], ["sort", "citation counts", "OpenAlex"]),
    ],
)
def test_query_usage_errors_exit_2(
    runner: CliRunner, cli_index: Path, args: list[str], fragments: list[str]
) -> None:
    result = run(runner, "query", "--index", str(cli_index), *args)
    assert_one_line_error(result, 2, *fragments)


def test_missing_and_empty_index_exit_1(runner: CliRunner, tmp_path: Path) -> None:
    assert_one_line_error(
        run(runner, "query", "--index", str(tmp_path / "none"), "x"), 1, "no index"
    )
    (tmp_path / "empty").mkdir()
    assert_one_line_error(
        run(runner, "query", "--index", str(tmp_path / "empty"), "x"), 1, "no index"
    )
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "CURRENT").write_text("gen-missing")
    assert_one_line_error(run(runner, "stats", "--index", str(tmp_path / "broken")), 1, "missing")


def test_show_and_stats(runner: CliRunner, cli_index: Path) -> None:
    first = json.loads(
        run(runner, "query", "--index", str(cli_index), "lamb", "--format", "json").stdout
    )
    record_id = first["hits"][0]["id"]
    text = run(runner, "show", "--index", str(cli_index), record_id).stdout
    assert text.startswith("Large Batch Optimization for Deep Learning")
    assert "authors:   Yang You" in text
    data = json.loads(
        run(runner, "show", "--index", str(cli_index), record_id, "--format", "json").stdout
    )
    assert data["year"] == 2020 and data["subjects"] == ["cs.LG"]
    assert_one_line_error(run(runner, "show", "--index", str(cli_index), "nope"), 2, "no record")
    stats = run(runner, "stats", "--index", str(cli_index)).stdout
    assert "records:   36" in stats
    data = json.loads(run(runner, "stats", "--index", str(cli_index), "--format", "json").stdout)
    assert data["records"] == 36 and data["years"]["2021"] == 15


def test_index_progress_bar_shows_rate_and_time_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from pubsearch.cli.progress import IndexProgress as _Progress
    from pubsearch.ingest.readers import ReadReport, read_paths

    sample = Path(__file__).resolve().parent / "data" / "arxiv-2024-2026.sample.jsonl"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    report = ReadReport()
    records = read_paths([sample], report)
    monkeypatch.setattr(_Progress, "TICK", 0.05)
    with _Progress(records, report, sample.stat().st_size) as counted:
        assert sum(1 for _ in counted) == 300
        time.sleep(0.3)  # the index being written: the elapsed time goes on showing
    shown = capsys.readouterr().err
    assert "indexing: 300 records read" in shown and "records/s" in shown and "100%" in shown
    assert ", ," not in shown and ": ," not in shown
    writing = [part for part in shown.split("\r") if "all 300 records read; writing" in part]
    assert len(writing) >= 3  # redrawn while the last segments are written
    assert report.bytes_read == sample.stat().st_size


def test_query_text_may_start_with_a_dash_and_need_no_quotes(
    runner: CliRunner, cli_index: Path
) -> None:
    excluded = run(runner, "query", "--index", str(cli_index), "-lstm").stdout
    assert excluded.startswith("1-10 of 35 results for '-lstm'")
    words = run(runner, "query", "--index", str(cli_index), "batch", "size", "-lstm").stdout
    assert "of 5 results for 'batch size -lstm'" in words


def test_a_mistyped_option_is_refused_not_searched(runner: CliRunner, cli_index: Path) -> None:
    result = run(runner, "query", "--index", str(cli_index), "--limt", "3", "batch")
    assert result.exit_code == 2
    assert "No such option '--limt'. Did you mean '--limit'?" in result.output


def test_a_page_past_the_last_is_an_error(runner: CliRunner, cli_index: Path) -> None:
    assert_one_line_error(
        run(runner, "query", "--index", str(cli_index), "batch", "--page", "99"),
        2,
        "--page: 99 is past the last page (page 1 of 6 results)",
    )
    assert_one_line_error(
        run(runner, "query", "--index", str(cli_index), "zzzqqq", "--page", "2"),
        2,
        "there are no results",
    )


# -- reference-manager formats -------------------------------------------------------------


def test_index_library_files_and_sort_by_citations(
    runner: CliRunner, tmp_path: Path, formats_index: Path
) -> None:
    formats = Path(__file__).parent / "data" / "formats"
    result = run(runner, "index", "--index", str(tmp_path / "ix"), str(formats))
    assert result.exit_code == 0, result.output
    assert f"warning: {formats / 'library.bib'}:407: BibTeX entry not parsed" in result.stderr
    assert "Traceback" not in result.output
    assert "indexed 101 records" in result.stdout
    out = run(runner, "query", "--index", str(formats_index), "--sort", "cited", "--limit", "3")
    assert out.exit_code == 0, out.output
    assert "cited by 169" in out.stdout
    stats = run(runner, "stats", "--index", str(formats_index))
    assert "citations:" in stats.stdout


@pytest.mark.parametrize("fmt", ["ris", "csljson"])
def test_query_exports_for_reference_managers(
    runner: CliRunner, formats_index: Path, tmp_path: Path, fmt: str
) -> None:
    result = run(runner, "query", "--index", str(formats_index), "black hole", "--format", fmt)
    assert result.exit_code == 0, result.output
    exported = tmp_path / f"refs.{fmt}"
    exported.write_text(result.stdout, encoding="utf-8")
    again = run(runner, "index", "--index", str(tmp_path / "ix"), str(exported))
    assert (
        again.exit_code == 0 and "indexed 1 records; 0 duplicates merged; 0 blocks" in again.stdout
    )
    shown = run(runner, "show", "--index", str(tmp_path / "ix"), "2602.08029")
    assert "Berthy T. Feng; Andrew A. Chael" in shown.stdout


def test_show_lists_every_id_of_a_merged_paper(runner: CliRunner, tmp_path: Path) -> None:
    source = tmp_path / "two.jsonl"
    listings = [
        {"id": "2505.17997", "title": "Same Paper", "abstract": "A.", "year": 2025},
        {
            "id": "2506.03038",
            "title": "Same paper",
            "abstract": "A.",
            "year": 2025,
            "doi": "10.1/X",
        },
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in listings), encoding="utf-8")
    index = str(tmp_path / "ix")
    assert run(runner, "index", "--index", index, str(source)).exit_code == 0
    text = run(runner, "show", "--index", index, "2505.17997").stdout
    assert "arxiv:     2505.17997, 2506.03038\n" in text
    assert "doi:       10.1/x\n" in text
    data = json.loads(
        run(runner, "show", "--index", index, "2505.17997", "--format", "json").stdout
    )
    assert (data["arxiv_id"], data["arxiv_ids"]) == ("2505.17997", ["2505.17997", "2506.03038"])
    assert data["dois"] == ["10.1/x"]
    hits = json.loads(run(runner, "query", "--index", index, "paper", "--format", "json").stdout)
    assert hits["hits"][0]["arxiv_ids"] == ["2505.17997", "2506.03038"]


def test_query_and_show_take_identifiers_in_any_form(runner: CliRunner, tmp_path: Path) -> None:
    source = tmp_path / "records.jsonl"
    listings = [
        {"id": "2503.18889", "title": "Gadgets", "abstract": "G.", "year": 2025, "doi": "10.1/G"},
        {"id": "2505.17997", "title": "Widgets", "abstract": "W.", "year": 2025},
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in listings), encoding="utf-8")
    index = str(tmp_path / "ix")
    assert run(runner, "index", "--index", index, str(source)).exit_code == 0
    out = run(runner, "query", "--index", index, "arXiv:2503.18889").stdout
    assert "1-1 of 1 results" in out and "Gadgets" in out and "is not a field" not in out
    for typed in ("2503.18889v2", "doi:10.1/G", "https://doi.org/10.1/g", "arxiv:2503.18889"):
        shown = run(runner, "show", "--index", index, typed)
        assert shown.exit_code == 0, shown.output
        assert shown.stdout.startswith("Gadgets\n")
    out = run(runner, "query", "--index", index, "2505.99999").stdout
    assert "Note: No record in this index has the id arXiv:2505.99999.\n" in out
    assert "No results for '2505.99999'." in out
    assert_one_line_error(run(runner, "show", "--index", index, "2505.99999"), 2, "no record")
