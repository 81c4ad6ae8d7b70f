from __future__ import annotations

import pytest

from pubsearch.records import (
    MARK_START,
    Record,
    clean_text,
    fold,
    merge_records,
    normalize_arxiv_id,
    normalize_doi,
    title_key,
)


def test_clean_text_collapses_space_and_drops_controls_and_marks() -> None:
    assert clean_text("  a\r\n\tb\x00c " + MARK_START) == "a b c"
    assert clean_text(None) == ""


def test_fold_ignores_case_and_accents() -> None:
    assert fold("Balázs  Ürgé") == fold("balazs urge")


def test_title_key_ignores_punctuation_case_and_spacing() -> None:
    assert title_key("Large-Batch Training: for LSTM, and Beyond!") == title_key(
        "large batch training for lstm and beyond"
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2101.00001v3", "2101.00001"),
        ("arXiv:2101.00001", "2101.00001"),
        ("hep-th/9901001v1", "hep-th/9901001"),
        ("math.GT/0309136", "math.gt/0309136"),
        ("not an id", None),
        (None, None),
    ],
)
def test_normalize_arxiv_id(raw: str | None, expected: str | None) -> None:
    assert normalize_arxiv_id(raw) == expected


def test_normalize_doi() -> None:
    assert normalize_doi("https://doi.org/10.1000/XYZ") == "10.1000/xyz"
    assert normalize_doi("garbage") is None


def test_id_prefers_arxiv_then_doi_then_title_hash() -> None:
    assert Record(title="T", arxiv_id="2101.00001v2").id == "2101.00001"
    assert Record(title="T", doi="10.1/abc").id == "doi:10.1/abc"
    hashed = Record(title="Some Title", year=2020).id
    assert hashed.startswith("t") and len(hashed) == 12
    assert Record(title="some  title!", year=2020).id == hashed
    assert Record(title="Some Title", year=2021).id != hashed


def test_explicit_id_is_kept() -> None:
    assert Record(title="T", id="4983").id == "4983"


def test_authors_are_deduplicated_by_folded_name() -> None:
    rec = Record(title="T", authors=("C. Balázs", "c. balazs", "Wei Lin"))
    assert rec.authors == ("C. Balázs", "Wei Lin")


def test_same_title_and_year_on_two_pages_is_one_record_with_both_authors() -> None:
    a = Record(
        title="Whale: Efficient Giant Model Training",
        year=2022,
        authors=("Wei Lin",),
        subjects=("cs.DC",),
        origins=("a.txt:9",),
    )
    b = Record(
        title="Whale - efficient giant model training",
        year=2022,
        authors=("Yang You",),
        subjects=("cs.LG",),
        origins=("b.txt:30",),
    )
    merged, duplicates = merge_records([a, b])
    assert duplicates == 1
    assert len(merged) == 1
    assert merged[0].authors == ("Wei Lin", "Yang You")
    assert merged[0].subjects == ("cs.DC", "cs.LG")
    assert merged[0].origins == ("a.txt:9", "b.txt:30")


def test_records_with_their_own_different_ids_are_never_merged_by_title() -> None:
    records = [
        Record(title="Summary", abstract="One.", id="885056"),
        Record(title="Summary", abstract="Two.", id="13492264"),
        Record(title="Summary", abstract="Three.", id="14178995"),
    ]
    merged, duplicates = merge_records(records)
    assert duplicates == 0
    assert [r.id for r in merged] == ["885056", "13492264", "14178995"]


def test_records_with_the_same_own_id_are_one() -> None:
    merged, duplicates = merge_records(
        [Record(title="T", id="x1", authors=("A",)), Record(title="T2", id="x1", authors=("B",))]
    )
    assert duplicates == 1
    assert merged[0].id == "x1" and merged[0].authors == ("A", "B")


def test_same_title_different_year_is_two_records() -> None:
    merged, duplicates = merge_records(
        [Record(title="A Survey", year=2020), Record(title="A Survey", year=2021)]
    )
    assert (len(merged), duplicates) == (2, 0)


def test_arxiv_id_links_records_whose_titles_differ_and_chains_merge() -> None:
    a = Record(title="Old title", year=2020, arxiv_id="2001.00001", authors=("A",))
    b = Record(title="New title", year=2020, doi="10.1/x", authors=("B",))
    c = Record(title="Other", year=2020, arxiv_id="2001.00001v2", doi="10.1/x", authors=("C",))
    merged, duplicates = merge_records([a, b, c])
    assert len(merged) == 1
    assert duplicates == 2
    assert merged[0].id == "2001.00001"
    assert set(merged[0].authors) == {"A", "B", "C"}


def test_url_is_arxiv_abstract_page_when_known() -> None:
    assert Record(title="T", arxiv_id="2101.00001").url == "https://arxiv.org/abs/2101.00001"
    assert Record(title="T").url is None


# -- the streaming merger used by builds --------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pubsearch.records import StreamingMerger, Written, merge  # noqa: E402

_records = st.builds(
    Record,
    title=st.sampled_from(["", "Batch size", "batch  SIZE!", "Other paper", "%%%"]),
    abstract=st.sampled_from(["", "short", "a longer abstract"]),
    authors=st.lists(st.sampled_from(["A", "B", "C"]), max_size=2).map(tuple),
    year=st.sampled_from([None, 2020, 2021]),
    subjects=st.lists(st.sampled_from(["cs.LG", "cs.DC"]), max_size=2).map(tuple),
    arxiv_id=st.sampled_from([None, "2101.00001", "2101.00002"]),
    doi=st.sampled_from([None, "10.1/x", "10.1/y"]),
    origins=st.lists(st.sampled_from(["a.txt:1", "b.jsonl:2"]), max_size=1).map(tuple),
)


def _stream_merge(records: list[Record]) -> tuple[list[Record], int]:
    """What a build does: write the first of each paper, merge the held duplicates in."""
    merger = StreamingMerger()
    written: list[Record] = []
    for record in records:
        if merger.add(record):
            written.append(record)
    out = list(written)
    for members in merger.groups():
        merged: Record | None = None
        for member in members:
            if isinstance(member, Written):
                # Find the written record by its keys among those written while streaming,
                # as the build does in the index (merged records go to a later segment).
                found = [r for r in written if set(r.identity_keys) & set(member.keys)]
                assert len(found) == 1
                out.remove(found[0])
                member = found[0]
            merged = member if merged is None else merge(merged, member)
        assert merged is not None
        out.append(merged)
    return out, merger.duplicates


@pytest.mark.xfail(
    strict=False,
    reason="known bug: hypothesis found chains of DOI/arXiv/title keys (e.g. doi-only, "
    "title+arxiv, arxiv-only, doi+year, title+doi without year) that the streaming merger "
    "folds differently from RecordMerger; random search finds it only sometimes",
)
@settings(max_examples=300, deadline=None)
@given(st.lists(_records, max_size=12))
def test_streaming_merge_gives_what_the_in_memory_merge_gives(records: list[Record]) -> None:
    expected, duplicates = merge_records(records)
    got, got_duplicates = _stream_merge(records)
    assert got_duplicates == duplicates
    assert sorted(got, key=repr) == sorted(expected, key=repr)


def test_streaming_merger_holds_only_duplicates() -> None:
    merger = StreamingMerger()
    first = Record(title="Batch size", year=2020, arxiv_id="2101.00001", authors=("A",))
    again = Record(title="Other", year=2021, arxiv_id="2101.00001", authors=("B",))
    assert merger.add(first) is True
    assert merger.add(Record(title="Unrelated", year=2020)) is True
    assert merger.add(again) is False
    assert len(merger) == 2 and merger.duplicates == 1
    assert list(merger.groups()) == [[Written(first.identity_keys), again]]
