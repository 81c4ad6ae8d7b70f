"""Imports on demand: the command line loads only what a command needs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("whoosh", "numpy", "flask")
# What only a build needs: the segment writer, its worker processes, the format's write half.
WRITING = {
    "multiprocessing",
    "pubsearch.index.build",
    "pubsearch.index.segments.docpostings",
    "pubsearch.codec.pool",
    "pubsearch.codec.w3write",
    "pubsearch.index.segments.workers",
    "pubsearch.index.segments.writer",
}


def loaded_after(code: str) -> set[str]:
    """The top-level packages and pubsearch modules loaded by ``code``, in a fresh Python."""
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {m.split(".")[0] for m in out} | {m for m in out if m.startswith("pubsearch.")}


def test_help_and_version_load_no_search_engine() -> None:
    for argv in (["--version"], ["--help"], ["query", "--help"], ["index", "--help"]):
        code = (
            "from pubsearch.cli.main import main\n"
            f"try:\n    main({argv!r}, standalone_mode=False)\nexcept SystemExit:\n    pass"
        )
        loaded = loaded_after(code)
        assert not loaded & set(HEAVY), (argv, loaded & set(HEAVY))


def test_a_query_loads_neither_the_writer_nor_the_web_nor_processes(seed_index: Path) -> None:
    code = (
        "from click.testing import CliRunner\n"
        "from pubsearch.cli.main import main\n"
        f"result = CliRunner().invoke(main, ['query', '--index', {str(seed_index)!r}, 'batch'])\n"
        "assert result.exit_code == 0, result.output"
    )
    loaded = loaded_after(code)
    assert "whoosh" in loaded  # it did search
    assert not loaded & ({"flask"} | WRITING)
    # The other commands' modules are imported only when one of them runs.
    others = {f"pubsearch.cli.{name}" for name in ("batch", "trec", "harvest", "indexing")}
    assert not loaded & (others | {"pubsearch.cli.library"}), loaded & others


def test_every_command_is_listed_and_each_runs_from_its_own_module() -> None:
    from click.testing import CliRunner

    from pubsearch.cli.main import LAZY_COMMANDS, main

    listed = CliRunner().invoke(main, ["--help"]).output
    for name in (*LAZY_COMMANDS, "query", "show", "stats", "serve"):
        assert f"  {name} " in listed, name
    for name in LAZY_COMMANDS:
        usage = CliRunner().invoke(main, [name, "--help"]).output
        assert usage.startswith(f"Usage: main {name} "), usage


def test_the_search_side_imports_the_format_reader_not_the_writer() -> None:
    """The search reads segments through w3format and maps stored fields to records with
    documents.py; it never loads the writer, the worker processes or multiprocessing."""
    loaded = loaded_after("import pubsearch.search.service")
    assert {"pubsearch.codec.w3format", "pubsearch.index.documents"} <= loaded
    assert not loaded & WRITING, loaded & WRITING


# What a plain query of words in text needs not: the export formats and their libraries,
# the broader search (only for no results), the sentence model (only with vectors: the
# seed index has none).
NOT_FOR_A_PLAIN_QUERY = {
    "pubsearch.index.embedding",
    "pubsearch.search.export",
    "pubsearch.search.broadening",
    "rispy",
    "bibtexparser",
    "onnxruntime",
    "tokenizers",
}


def test_a_plain_query_loads_only_what_it_needs(seed_index: Path) -> None:
    def loaded_by(shown: str, *args: str) -> set[str]:
        return loaded_after(
            "from click.testing import CliRunner\n"
            "from pubsearch.cli.main import main\n"
            f"result = CliRunner().invoke(main, ['query', '--index', {str(seed_index)!r}, "
            f"'--mode', 'lexical', *{list(args)!r}, 'batch'])\n"
            "assert result.exit_code == 0, result.output\n"
            f"assert {shown!r} in result.output, result.output"
        )

    plain = loaded_by("results for 'batch'")
    assert "pubsearch.search.service" in plain  # it did search
    assert not plain & NOT_FOR_A_PLAIN_QUERY, plain & NOT_FOR_A_PLAIN_QUERY
    assert {"pubsearch.search.export", "rispy"} <= loaded_by("TY  - ", "--format", "ris")


def test_the_version_is_not_read_from_the_package_metadata() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nfrom pubsearch.cli.main import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "print('metadata' if 'importlib.metadata' in sys.modules else 'none')",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    assert out[0].startswith("pubsearch, version ") or out[0].startswith("-c, version "), out
    assert out[1] == "none"
