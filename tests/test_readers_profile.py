from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pubsearch.core.errors import ReadError
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record, merge_records

HEADER = (
    "arXiv subjects\n\n{name}\n\nPublications and source records attributed to {name}.\n\n"
    "At least 3 records \u00b7 Page 1Linked to original sources\n\n"
)


def page(name: str, *blocks: str) -> str:
    return HEADER.format(name=name) + "\n\n".join(blocks) + "\n"


def block(
    year: int, title: str, abstract: str = "An abstract.", subjects: str = "cs.LG\u2197"
) -> str:
    parts = [f"arXiv{year}", title]
    if abstract:
        parts.append(abstract)
    parts.append(subjects)
    return "\n\n".join(parts)


def read(*paths: Path) -> tuple[list[Record], ReadReport]:
    report = ReadReport()
    return list(read_paths(list(paths), report)), report


def test_real_seeds_hold_36_records(seeds_dir: Path) -> None:
    records, report = read(seeds_dir)
    merged, duplicates = merge_records(records)
    assert report.problems == []
    assert len(merged) == 36
    assert duplicates == 0
    per_page = Counter(r.origins[0].split(":")[0] for r in merged)
    assert sorted(per_page.values()) == [18, 18]


def test_real_seeds_years_and_subjects(seeds_dir: Path) -> None:
    merged, _ = merge_records(read(seeds_dir)[0])
    assert min(r.year or 0 for r in merged) == 2018
    assert max(r.year or 0 for r in merged) == 2022
    subjects = Counter(s for r in merged for s in r.subjects)
    assert subjects["cs.LG"] == 10
    assert subjects["cs.DC"] == 9
    assert subjects["cs.CV"] == 6
    assert subjects["eess.SY"] == 3


def test_real_seeds_large_batch_record(seeds_dir: Path) -> None:
    merged, _ = merge_records(read(seeds_dir)[0])
    title = "Large Batch Optimization for Deep Learning: Training BERT in 76 minutes"
    (record,) = [r for r in merged if r.title == title]
    assert record.year == 2020
    assert record.subjects == ("cs.LG",)
    assert record.authors == ("Yang You",)
    assert record.source == "arXiv"
    assert record.abstract.startswith("Training large deep neural networks")


def test_every_record_has_the_page_person_as_author(seeds_dir: Path) -> None:
    records, _ = read(seeds_dir)
    by_file = {r.origins[0].split(":")[0]: r.authors for r in records}
    assert sorted(a for authors in by_file.values() for a in authors) == ["Wei Lin", "Yang You"]


def test_same_paper_on_two_pages_is_one_record(tmp_path: Path) -> None:
    shared = block(2021, "Shared Paper on Training", "Both wrote it.")
    (tmp_path / "a.txt").write_text(page("Ada One", shared, block(2020, "Only A")), "utf-8")
    (tmp_path / "b.txt").write_text(
        page("Bo Two", block(2021, "shared paper on training!")), "utf-8"
    )
    merged, duplicates = merge_records(read(tmp_path)[0])
    assert duplicates == 1
    (paper,) = [r for r in merged if r.title == "Shared Paper on Training"]
    assert paper.authors == ("Ada One", "Bo Two")
    assert paper.abstract == "Both wrote it."
    assert len(merged) == 2


def test_tolerates_crlf_bom_no_final_newline_blank_lines_and_unicode(tmp_path: Path) -> None:
    text = page(
        "Zoë Ångström",
        block(2019, "Über Straße: naïve café models", "Résumé of μ-results.\n\n\n\nMore text."),
        block(2020, "No Abstract Here", ""),
        block(2021, "Several Tags", subjects="cs.LG\u2197 stat.ML\u2197"),
    )
    raw = "\ufeff" + text.replace("\n", "\r\n").rstrip("\r\n") + "\r\n\r\n\r\n"
    path = tmp_path / "p.txt"
    path.write_bytes(raw.encode("utf-8")[:-2])  # no final newline
    records, report = read(path)
    assert report.problems == []
    assert [r.title for r in records] == [
        "Über Straße: naïve café models",
        "No Abstract Here",
        "Several Tags",
    ]
    assert records[0].abstract == "Résumé of μ-results. More text."
    assert records[0].authors == ("Zoë Ångström",)
    assert records[1].abstract == ""
    assert records[2].subjects == ("cs.LG", "stat.ML")


def test_unreadable_blocks_are_skipped_with_file_and_line(tmp_path: Path) -> None:
    text = page(
        "Ada One",
        block(2019, "Good One"),
        "arXiv2020\n\ncs.LG\u2197",  # no title
        "arXiv2021\n\nTitle Without Subjects\n\nAbstract only.",
        block(2022, "Good Two"),
    )
    path = tmp_path / "p.txt"
    path.write_text(text, "utf-8")
    records, report = read(path)
    assert [r.title for r in records] == ["Good One", "Good Two"]
    lines = text.splitlines()
    no_title_line = lines.index("arXiv2020") + 1
    no_subject_line = lines.index("arXiv2021") + 1
    assert [p.where for p in report.problems] == [
        f"{path}:{no_title_line}",
        f"{path}:{no_subject_line}",
    ]
    assert "no title" in report.problems[0].message
    assert "subject" in report.problems[1].message


def test_binary_file_is_a_read_error(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(ReadError, match="not a text file"):
        read(path)


def test_invalid_utf8_is_a_read_error(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(HEADER.format(name="A").encode() + b"arXiv2020\n\n\xff\xfe bad\n")
    with pytest.raises(ReadError, match="UTF-8"):
        read(path)


def test_page_without_attribution_line_is_not_a_profile(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("just some notes\nnothing here\n", "utf-8")
    with pytest.raises(ReadError, match="unrecognised format"):
        read(path)


def test_lines_ending_in_a_year_inside_a_record_do_not_start_one(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text(
        page(
            "Ada One",
            block(2020, "Cosmology 2020", "We trained models in Spring 2019"),
            "Semantic Scholar 2021\n\nTwo-word Source\n\nText.\n\ncs.LG\u2197",
        ),
        "utf-8",
    )
    records, report = read(path)
    assert report.problems == []
    assert [(r.title, r.source, r.year) for r in records] == [
        ("Cosmology 2020", "arXiv", 2020),
        ("Two-word Source", "Semantic Scholar", 2021),
    ]
    assert records[0].abstract == "We trained models in Spring 2019"
