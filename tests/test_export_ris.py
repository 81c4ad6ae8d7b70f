"""RIS export: records written as reference managers read them, and read back the same."""

from __future__ import annotations

from pathlib import Path

import pytest
import rispy
from format_fixtures import EXPORT_RECORD, assert_round_trip

from pubsearch.ingest.records import Record
from pubsearch.search.export import name_parts, record_to_ris, records_to_ris

RECORD = EXPORT_RECORD


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("Christian S. Hardtke", ("Christian S.", "Hardtke", "")),
        ("Anna van der Berg", ("Anna", "van der Berg", "")),
        ("Edward Witten Jr.", ("Edward", "Witten", "Jr.")),
        ("Hardtke, Christian S.", ("Christian S.", "Hardtke", "")),
        ("Zhang", ("", "Zhang", "")),
    ],
)
def test_name_parts(name: str, parts: tuple[str, str, str]) -> None:
    assert name_parts(name) == parts


def test_a_record_as_ris() -> None:
    text = records_to_ris([RECORD])
    lines = text.splitlines()
    assert lines[0] == "TY  - JOUR" and lines[-1] == "ER  - "
    assert "AU  - Hardtke, Christian S." in lines
    assert "AU  - van der Berg, Anna" in lines
    assert "AU  - Witten, Edward, Jr." in lines
    assert "AU  - The X Collaboration" in lines
    assert {"PY  - 2024", "DA  - 2024/05/29/", "DO  - 10.5555/lts.2024.0001"} <= set(lines)
    assert {"KW  - Spectroscopy", "KW  - cs.LG", "JO  - Letters in Test Science"} <= set(lines)
    assert "N1  - Cited By :12" in lines  # as Scopus writes the count
    assert "UR  - https://doi.org/10.5555/lts.2024.0001" in lines
    entry = rispy.loads(text)[0]  # rispy reads what pubsearch writes
    assert entry["title"] == "Spin & Charge" and len(entry["authors"]) == 4


def test_a_preprint_is_generic_with_its_arxiv_link() -> None:
    entry = record_to_ris(Record(title="T", arxiv_id="2401.00001", source="arXiv"))
    assert entry["type_of_reference"] == "GEN"
    assert entry["urls"] == ["https://arxiv.org/abs/2401.00001"]


def test_records_are_separated_by_a_blank_line_and_numbered_nowhere() -> None:
    text = records_to_ris([RECORD, Record(title="Second")])
    assert "\nER  - \n\nTY  - GEN\n" in text
    assert not any(line.rstrip(".").isdigit() for line in text.splitlines())


def test_export_then_index_again_gives_the_same_records(
    formats_index: Path, tmp_path: Path
) -> None:
    assert_round_trip(formats_index, tmp_path, "all.ris", records_to_ris)


def test_tex_further_ids_and_a_month_survive_an_export_and_a_reindex(
    tex_index: Path, tmp_path: Path
) -> None:
    assert_round_trip(tex_index, tmp_path, "tex.ris", records_to_ris)
    record = Record(title="T", arxiv_id="2402.00021", doi="10.1/a", other_dois=("10.1/b",))
    text = records_to_ris([record])
    assert "DO  - 10.1/a\n" in text and "N1  - Also doi:10.1/b\n" in text
