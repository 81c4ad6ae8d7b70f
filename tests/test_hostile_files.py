"""Broken and hostile input files: each is named (with its line), readable records still
index, and a fatal error leaves the previous index as it was."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pubsearch.cli.main import main
from pubsearch.core.errors import ReadError
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService


def jsonl_record(n: int) -> str:
    return json.dumps(
        {"id": f"r{n}", "title": f"Record number {n}", "abstract": "text", "year": 2020}
    )


def index(index_dir: Path, *paths: Path, update: bool = False) -> Result:
    args = ["index", "--index", str(index_dir), *(["--update"] if update else []), *map(str, paths)]
    return CliRunner().invoke(main, args, catch_exceptions=False)


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.jsonl"
    path.write_text("".join(jsonl_record(n) + "\n" for n in range(5)), "utf-8")
    return path


@pytest.fixture
def live_index(tmp_path: Path, seeds_dir: Path) -> Path:
    index_dir = tmp_path / "ix"
    assert index(index_dir, seeds_dir).exit_code == 0
    return index_dir


def total(index_dir: Path) -> int:
    return SearchService(index_dir).search(SearchRequest()).total


def test_binary_file(tmp_path: Path, good: Path) -> None:
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    result = index(tmp_path / "ix", binary, good)
    assert result.exit_code == 1
    assert f"error: {binary}: not a text file" in result.stderr
    assert total(tmp_path / "ix") == 5


def test_invalid_utf8_names_file_and_line(tmp_path: Path, good: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes((jsonl_record(10) + "\n").encode() * 3 + b'{"title": "caf\xe9"}\n')
    result = index(tmp_path / "ix", bad, good)
    assert result.exit_code == 1
    assert f"error: {bad}:4: not UTF-8 text" in result.stderr
    # The file's lines before the bad byte were read; the other file too.
    assert total(tmp_path / "ix") == 6


def test_truncated_gzip(tmp_path: Path, good: Path) -> None:
    whole = gzip.compress("".join(jsonl_record(n) + "\n" for n in range(100, 2100)).encode())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    result = index(tmp_path / "ix", cut, good)
    assert result.exit_code == 1
    assert f"error: {cut}: gzip file is truncated" in result.stderr
    assert total(tmp_path / "ix") > 5


def test_json_error_on_line_70000(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    lines = [jsonl_record(n) for n in range(70_001)]
    lines[69_999] = '{"id": "broken", "title": '
    path.write_text("\n".join(lines) + "\n", "utf-8")
    report = ReadReport()
    count = sum(1 for _ in read_paths([path], report))
    assert count == 70_000
    assert [p.where for p in report.problems] == [f"{path}:70000"]


def test_fifty_megabyte_single_line(tmp_path: Path, good: Path) -> None:
    huge = tmp_path / "huge.jsonl"
    with huge.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "huge", "title": "Huge", "abstract": "word " * 10_000_000}))
        fh.write("\n" + jsonl_record(99) + "\n")
    assert huge.stat().st_size > 50_000_000
    result = index(tmp_path / "ix", huge, good)
    assert result.exit_code == 0
    size = len("Huge") + len(("word " * 10_000_000).strip())
    assert f"warning: {huge}:1: record of {size:,} characters skipped" in result.stderr
    assert total(tmp_path / "ix") == 6


def test_empty_file_is_a_warning(tmp_path: Path, good: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    result = index(tmp_path / "ix", empty, good)
    assert result.exit_code == 0
    assert f"warning: {empty}:1: empty file" in result.stderr
    assert total(tmp_path / "ix") == 5


def test_only_broken_input_leaves_previous_index_untouched(
    tmp_path: Path, live_index: Path
) -> None:
    before = (live_index / "CURRENT").read_text()
    binary = tmp_path / "x.bin"
    binary.write_bytes(b"\x00" * 100)
    for update in (False, True):
        result = index(live_index, binary, update=update)
        assert result.exit_code == 1
        assert "left unchanged" in result.stderr
    assert (live_index / "CURRENT").read_text() == before
    assert total(live_index) == 36


def test_directory_of_ten_thousand_small_files(tmp_path: Path) -> None:
    source = tmp_path / "many"
    for n in range(10_000):
        sub = source / f"d{n // 1000}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"r{n}.jsonl").write_text(jsonl_record(n) + "\n", "utf-8")
    result = index(tmp_path / "ix", source)
    assert result.exit_code == 0, result.stderr
    assert "indexed 10,000 records" in result.stdout
    assert total(tmp_path / "ix") == 10_000


def test_file_that_disappears_mid_run(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    for n in range(3):
        (source / f"{n}.jsonl").write_text(jsonl_record(n) + "\n", "utf-8")
    errors: list[ReadError] = []
    records = read_paths([source], ReadReport(), on_file_error=errors.append)
    first = next(records)
    (source / "1.jsonl").unlink()  # gone after the directory was listed
    rest = list(records)
    assert [r.id for r in [first, *rest]] == ["r0", "r2"]
    assert len(errors) == 1
    assert str(errors[0]).startswith(f"{source / '1.jsonl'}: ")
    assert "No such file" in str(errors[0])


def test_directory_that_disappears_before_indexing(tmp_path: Path, live_index: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    shutil.rmtree(gone)
    result = index(live_index, gone)
    assert result.exit_code == 2
    assert total(live_index) == 36
