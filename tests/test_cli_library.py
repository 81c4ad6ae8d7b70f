"""pubsearch follow, news and tag: over a real index, through click's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import assert_one_line_error
from click.testing import CliRunner, Result
from library_support import build, record, update

from pubsearch.cli.main import main


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return build(tmp_path / "ix")


def test_follow_then_news_prints_what_came_since(index: Path) -> None:
    ix = ("--index", str(index))
    assert run("follow", "add", "gnn", "graph", "neural", "--subject", "cs.LG", *ix).exit_code == 0
    assert "gnn" in run("follow", "list", *ix).output
    assert run("news", "gnn", *ix).output.startswith("gnn: 0 new")
    update(index, [record(501, "graph"), record(502, "galaxy")])
    listed = json.loads(run("follow", "list", "--format", "json", *ix).output)
    assert listed == [
        {
            "name": "gnn",
            "request": {"q": "graph neural", "subjects": ["cs.LG"]},
            "new": 1,
            "seen": listed[0]["seen"],
        }
    ]
    out = run("news", *ix).output
    assert out.startswith("gnn: 1 new") and "2503.00501" in out and "2503.00502" not in out
    assert "gnn: 0 new" in run("news", *ix).output  # seen now


def test_news_formats_as_query_does(index: Path) -> None:
    ix = ("--index", str(index))
    run("follow", "add", "galaxies", "galaxy", *ix)
    update(index, [record(601, "galaxy"), record(602, "galaxy")])
    data = json.loads(run("news", "galaxies", "--format", "json", *ix).output)
    assert [h["id"] for h in data[0]["hits"]] == ["2503.00602", "2503.00601"]
    bib = run("news", "galaxies", "--since", "2025-03-01", "--format", "bibtex", *ix).output
    assert bib.count("@article") + bib.count("@misc") >= 12
    assert "2503.00602" in bib


def test_tags_from_the_command_line(index: Path) -> None:
    ix = ("--index", str(index))
    assert (
        "Tagged 2 more records"
        in run("tag", "add", "reading", "2503.00001", "2503.00002", *ix).output
    )
    assert "Tagged 0 more" in run("tag", "add", "reading", "arXiv:2503.00001", *ix).output
    assert run("tag", "list", *ix).output.split() == ["reading", "2"]
    ids = [
        h["id"]
        for h in json.loads(run("tag", "list", "reading", "--format", "json", *ix).output)["hits"]
    ]
    assert sorted(ids) == ["2503.00001", "2503.00002"]
    assert "Untagged 1 record" in run("tag", "remove", "reading", "2503.00001", *ix).output
    assert "ER  -" in run("tag", "list", "reading", "--format", "ris", *ix).output


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (("news", "nope"), ("NAME", "no saved search is called 'nope'")),
        (("news", "--since", "2026-13-01"), ("--since", "not a date")),
        (("news", "--since", "yesterday"), ("--since", "2026-11-01")),
        (("follow", "add", "bad name", "x"), ("NAME", "is not a name")),
        (("follow", "remove", "nope"), ("NAME", "nope")),
        (("tag", "add", "reading", "2503.99999"), ("2503.99999",)),
        (("follow", "add", "y", "x", "--year", "20x"), ("--year",)),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    index: Path, args: tuple[str, ...], fragments: tuple[str, ...]
) -> None:
    result = CliRunner().invoke(main, [*args, "--index", str(index)])
    assert_one_line_error(result, 2, *fragments)
    assert run("follow", "list", "--index", str(index)).output.startswith("No saved searches")
    assert run("tag", "list", "--index", str(index)).output.startswith("No tags")


def _update_from_file(index_dir: Path, path: Path, number: int) -> Result:
    item = {
        "id": f"2503.{number:05d}",
        "title": f"Galaxy study number {number}: galaxy clusters",
        "abstract": "We study galaxy clusters dark matter halos and weak lensing surveys.",
        "authors": ["Ada Shared"],
        "year": 2025,
    }
    path.write_text(json.dumps(item) + "\n", encoding="utf-8")
    return run("index", "--update", "--no-vectors", str(path), "--index", str(index_dir))


def test_an_update_makes_the_word_table_when_a_tag_needs_it(index: Path, tmp_path: Path) -> None:
    from pubsearch.index import storage
    from pubsearch.library import recommend

    cache = index / recommend.CACHE_DIR
    # No tag yet: an update makes nothing.
    plain = _update_from_file(index, tmp_path / "one.jsonl", 801)
    assert plain.exit_code == 0, plain.output
    assert "recommendations:" not in plain.stderr and not cache.exists()
    assert run("tag", "add", "gal", "2503.00001", "--index", str(index)).exit_code == 0
    tagged = _update_from_file(index, tmp_path / "two.jsonl", 802)
    assert tagged.exit_code == 0, tagged.output
    assert "recommendations: the word table of 32 records is ready" in tagged.stderr
    live = storage.current_generation(index)
    assert live is not None
    [kept] = cache.glob("*.npz")
    assert kept.name.startswith(live.name + ".")
    # The list reads it: the file is not made again.
    made = kept.stat().st_mtime_ns
    listed = run("recommend", "gal", "--limit", "1", "--index", str(index))
    assert listed.exit_code == 0 and "Galaxy study" in listed.output
    assert kept.stat().st_mtime_ns == made
