"""Opening sources (gzip, standard input, bad bytes) and choosing a reader for each."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

import pytest

from pubsearch.core.errors import ParameterError, ReadError
from pubsearch.ingest.readers import FORMATS, ReadReport, read_paths
from pubsearch.ingest.readers.sources import detect_format
from pubsearch.ingest.records import Record

DATA = Path(__file__).parent / "data"
CORPUS_SAMPLE = DATA / "arxiv-2024-2026.sample.jsonl"
SNAPSHOT_SAMPLE = DATA / "arxiv-snapshot.sample.json"

# A made-up profile page with one record.
PROFILE = (
    "arXiv subjects\n\nAda Lovelace\n\n"
    "Publications and source records attributed to Ada Lovelace.\n\n"
    "arXiv2021\n\nNotes on an analytical engine\n\nAn abstract.\n\ncs.DC\u2197\n"
)
BEIR = (
    '{"_id": "4983", "title": "Tiny made-up paper one.", "text": "An abstract."}\n'
    '{"_id": "77", "title": "Tiny made-up paper two.", "text": "Another abstract."}\n'
)


def read(*paths: str | Path, fmt: str = "auto") -> tuple[list[Record], ReadReport]:
    report = ReadReport()
    return list(read_paths(list(paths), report, fmt)), report


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def fake_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> io.BytesIO:
    raw = io.BytesIO(data)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(raw, encoding="utf-8"))
    return raw


def test_both_readers_are_registered() -> None:
    assert {"profile", "jsonl", "arxiv"} <= set(FORMATS)


# -- detection ---------------------------------------------------------------------------


def first_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)[:32]


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        (PROFILE, "profile"),
        (BEIR, "jsonl"),
        (CORPUS_SAMPLE.read_text(encoding="utf-8"), "jsonl"),
        (SNAPSHOT_SAMPLE.read_text(encoding="utf-8"), "arxiv"),
        ("\n\n" + BEIR, "jsonl"),
        ("{not json\n" + BEIR, "jsonl"),
        ('[{"title": "T"}]', "jsonl"),
        ('{"title": "T", "versions": []}\n', "arxiv"),
        ('{"title": "T", "authors_parsed": [["A", "B", ""]]}\n', "arxiv"),
        ("\ufeff" + BEIR, "jsonl"),
        ("just some prose\nover two lines\n", None),
        ("", None),
    ],
)
def test_detect_format(text: str, fmt: str | None) -> None:
    assert detect_format(first_lines(text)) == fmt


def test_pretty_printed_snapshot_array_is_detected_and_read(tmp_path: Path) -> None:
    objects = [json.loads(line) for line in SNAPSHOT_SAMPLE.read_text().splitlines()[:3]]
    path = write(tmp_path / "snap.json", json.dumps(objects, indent=2).encode())
    assert detect_format(first_lines(path.read_text())) == "arxiv"
    records, report = read(path)
    assert report.problems == []
    assert [r.id for r in records] == ["0704.0001", "0704.0002", "0704.0003"]
    assert records[0].year == 2007


def test_each_file_of_a_directory_gets_its_own_reader(tmp_path: Path) -> None:
    write(tmp_path / "a-profile.txt", PROFILE.encode())
    write(tmp_path / "b-beir.jsonl", BEIR.encode())
    write(tmp_path / "c-snapshot.json.gz", gzip.compress(SNAPSHOT_SAMPLE.read_bytes()))
    records, report = read(tmp_path)
    assert report.files == 3
    assert report.records_read == len(records) == 1 + 2 + 50
    assert report.problems == []
    assert records[0].authors == ("Ada Lovelace",)
    assert [r.id for r in records[1:3]] == ["4983", "77"]
    assert records[3].source == "arXiv"


# -- gzip --------------------------------------------------------------------------------


def test_gzip_is_recognised_by_its_bytes_not_its_name(tmp_path: Path) -> None:
    path = write(tmp_path / "records.data", gzip.compress(CORPUS_SAMPLE.read_bytes()))
    plain, _ = read(CORPUS_SAMPLE)
    unzipped, report = read(path)
    assert report.problems == []
    assert len(unzipped) == 300
    assert [(r.id, r.title, r.authors) for r in unzipped] == [
        (r.id, r.title, r.authors) for r in plain
    ]
    assert unzipped[4].origins == (f"{path}:5",)


def test_gzip_named_gz_holding_plain_text_reads_as_text(tmp_path: Path) -> None:
    path = write(tmp_path / "not-really.jsonl.gz", BEIR.encode())
    records, _ = read(path)
    assert [r.id for r in records] == ["4983", "77"]


def test_truncated_gzip_names_the_file_and_keeps_what_was_read(tmp_path: Path) -> None:
    data = gzip.compress(CORPUS_SAMPLE.read_bytes())
    path = write(tmp_path / "cut.jsonl.gz", data[: len(data) // 2])
    report = ReadReport()
    records: list[Record] = []
    with pytest.raises(ReadError) as caught:
        for record in read_paths([path], report):
            records.append(record)
    assert caught.value.where == str(path)
    assert "truncated" in str(caught.value)
    assert 0 < len(records) < 300
    assert "lines read" in str(caught.value)


def test_truncated_gzip_with_on_file_error_goes_on(tmp_path: Path) -> None:
    data = gzip.compress(BEIR.encode() * 50)
    write(tmp_path / "a.jsonl.gz", data[:-20])
    write(tmp_path / "b.jsonl", BEIR.encode())
    errors: list[ReadError] = []
    records = list(read_paths([tmp_path], ReadReport(), on_file_error=errors.append))
    assert [e.where for e in errors] == [str(tmp_path / "a.jsonl.gz")]
    assert records[-2].origins == (f"{tmp_path / 'b.jsonl'}:1",)


def test_corrupt_gzip_names_the_file(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(BEIR.encode()))
    data[-8] ^= 0xFF  # the CRC of the uncompressed data
    path = write(tmp_path / "bad.gz", bytes(data))
    with pytest.raises(ReadError) as caught:
        read(path)
    assert caught.value.where == str(path)
    assert "corrupt" in str(caught.value)


@pytest.mark.parametrize("at", [0.05, 0.3, 0.7])
def test_garbled_gzip_data_names_the_file_and_the_lines_read(tmp_path: Path, at: float) -> None:
    """Bytes changed inside the compressed data: whatever the decompressor raises for it
    (ISA-L's own error, or a bad checksum) is one clear error."""
    data = bytearray(gzip.compress(CORPUS_SAMPLE.read_bytes()))
    middle = int(len(data) * at)
    data[middle : middle + 64] = bytes(64 * [0xFF])
    path = write(tmp_path / "garbled.jsonl.gz", bytes(data))
    with pytest.raises(ReadError) as caught:
        read(path)
    assert caught.value.where == str(path)
    assert "gzip data is corrupt" in str(caught.value)
    assert "lines read before that" in str(caught.value)


# -- standard input ----------------------------------------------------------------------


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = fake_stdin(monkeypatch, BEIR.encode())
    records, report = read("-")
    assert [r.id for r in records] == ["4983", "77"]
    assert records[1].origins == ("<stdin>:2",)
    assert report.files == 1
    assert not raw.closed  # standard input is not ours to close


def test_gzipped_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_stdin(monkeypatch, gzip.compress(SNAPSHOT_SAMPLE.read_bytes()))
    records, _ = read("-")
    assert len(records) == 50
    assert records[0].id == "0704.0001"


def test_reading_is_streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    line = json.dumps({"title": "T", "abstract": "x" * 1000}) + "\n"
    raw = fake_stdin(monkeypatch, line.encode() * 5000)  # about 5 MB
    records = read_paths(["-"], ReadReport())
    assert next(records).title == "T"
    assert raw.tell() < 256 * 1024


# -- bad bytes and bad lines -------------------------------------------------------------


def test_malformed_line_names_file_and_line_and_the_rest_is_read(tmp_path: Path) -> None:
    lines = BEIR.splitlines()
    path = write(tmp_path / "f.jsonl", "\n".join([lines[0], "{broken", lines[1]]).encode())
    records, report = read(path)
    assert [r.id for r in records] == ["4983", "77"]
    assert [p.where for p in report.problems] == [f"{path}:2"]


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.jsonl", BEIR.encode() + b'{"title": "caf\xe9"}\n')
    with pytest.raises(ReadError) as caught:
        read(path)
    assert caught.value.where == f"{path}:3"
    assert "not UTF-8" in str(caught.value)


def test_invalid_utf8_after_many_lines_keeps_the_lines_before(tmp_path: Path) -> None:
    data = BEIR.encode() * 50 + b'{"title": "caf\xe9"}\n' + BEIR.encode()
    path = write(tmp_path / "bad.jsonl", data)
    records: list[Record] = []
    with pytest.raises(ReadError) as caught:
        for record in read_paths([path], ReadReport()):
            records.append(record)
    assert caught.value.where == f"{path}:101"
    assert len(records) == 100


def test_invalid_utf8_in_gzip_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.gz", gzip.compress(b"\xff\xfe" + BEIR.encode()))
    with pytest.raises(ReadError) as caught:
        read(path)
    assert caught.value.where == f"{path}:1"


def test_crlf_and_byte_order_mark(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + BEIR.replace("\n", "\r\n").encode()
    records, report = read(write(tmp_path / "crlf.jsonl", data))
    assert report.problems == []
    assert [r.id for r in records] == ["4983", "77"]


def test_profile_with_old_mac_line_ends(tmp_path: Path) -> None:
    records, _ = read(write(tmp_path / "p.txt", PROFILE.replace("\n", "\r").encode()))
    assert [r.title for r in records] == ["Notes on an analytical engine"]
    assert records[0].subjects == ("cs.DC",)


def test_binary_file(tmp_path: Path) -> None:
    path = write(tmp_path / "x.bin", b"\x00\x01\x02" * 100)
    with pytest.raises(ReadError, match="binary"):
        read(path)


def test_unrecognised_format(tmp_path: Path) -> None:
    path = write(tmp_path / "notes.txt", b"just some prose\n")
    with pytest.raises(ReadError) as caught:
        read(path)
    assert caught.value.where == str(path)
    assert "unrecognised format" in str(caught.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ReadError, match="no such file"):
        read(tmp_path / "absent.jsonl")


# -- forcing a format --------------------------------------------------------------------


def test_forced_jsonl_reads_a_snapshot_as_generic_json() -> None:
    records, _ = read(SNAPSHOT_SAMPLE, fmt="jsonl")
    assert len(records) == 50
    # The generic reader knows no "versions": its date is update_date, a listing's day,
    # 19 months after the id's: it is dated by the id's month (pubsearch.ingest.dating).
    assert (records[0].year, records[0].date, records[0].listed) == (2007, "2007-04", "2008-11-26")
    assert records[0].source == ""


def test_forced_arxiv_on_beir_skips_every_record(tmp_path: Path) -> None:
    records, report = read(write(tmp_path / "beir.jsonl", BEIR.encode()), fmt="arxiv")
    assert records == []
    assert len(report.problems) == 2
    assert all("no arXiv id" in p.message for p in report.problems)


def test_forced_format_reads_content_detection_would_refuse(tmp_path: Path) -> None:
    path = write(tmp_path / "late.jsonl", b"prose first\n" + BEIR.encode())
    with pytest.raises(ReadError):
        read(path)
    records, report = read(path, fmt="jsonl")
    assert [r.id for r in records] == ["4983", "77"]
    assert [p.where for p in report.problems] == [f"{path}:1"]


def test_unknown_format() -> None:
    with pytest.raises(ParameterError, match="unknown format 'endnote'"):
        read(CORPUS_SAMPLE, fmt="endnote")


def test_the_format_names_the_command_line_offers_are_the_readers() -> None:
    from pubsearch.ingest.readers import FORMAT_NAMES, FORMATS

    assert FORMAT_NAMES == tuple(FORMATS)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("library.bib", "bibtex"),
        ("library.ris", "ris"),
        ("library.csl.json", "csljson"),
        ("openalex-works.jsonl", "openalex"),
        ("openalex-response.json", "openalex"),
        ("crossref-works.json", "crossref"),
        ("crossref-work.json", "crossref"),
        ("crossref-works.jsonl", "crossref"),
    ],
)
def test_library_formats_are_detected_from_their_content(name: str, fmt: str) -> None:
    from pubsearch.ingest.readers.sources import detect_format

    path = DATA / "formats" / name
    first = path.read_text(encoding="utf-8-sig").splitlines(keepends=True)[:32]
    assert detect_format(first) == fmt
    forced, _ = read(path, fmt=fmt)
    detected, _ = read(path)
    assert forced == detected and len(detected) >= 1


def test_a_bib_file_forced_as_ris_finds_nothing_to_read(tmp_path: Path) -> None:
    records, _ = read(DATA / "formats" / "library.bib", fmt="ris")
    assert records == []
