from __future__ import annotations

import copy
import pickle
import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pubsearch.ingest.records import (
    MARK_START,
    Record,
    author_identity,
    clean_text,
    date_number,
    date_of_number,
    fold,
    merge,
    merge_records,
    normalize_arxiv_id,
    normalize_doi,
    title_key,
)


def test_clean_text_collapses_space_and_drops_controls_and_marks() -> None:
    assert clean_text("  a\r\n\tb\x00c " + MARK_START) == "a b c"
    assert clean_text(None) == ""


# Every ASCII character, the control characters and white space in particular, and a few
# beyond: accents to compose, the private-use marks clean_text drops, odd spaces.
_TEXT_CHARS = st.sampled_from(
    [chr(c) for c in range(128)]
    + ["\u00e9", "e\u0301", "\u00a0", "\u2028", "\u200b"]
    + [MARK_START, "\ue001"]
)


# Printable ASCII, spaces often: text clean_text may return as it is, or nearly.
_PRINTABLE = st.lists(st.sampled_from(["a", "Bc", "d.", "~", "0", " ", "  "]), max_size=12)


@given(st.lists(_TEXT_CHARS, max_size=40).map("".join) | _PRINTABLE.map("".join))
@example("a b.")
@example("a  b")
@example(" a")
@example("a ")
def test_clean_text_equals_its_definition(text: str) -> None:
    """The fast paths give what the plain definition gives: NFC, each control character
    a space, white space collapsed and trimmed."""
    spaced = re.sub(
        r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ue000\ue001]", " ", unicodedata.normalize("NFC", text)
    )
    assert clean_text(text) == re.sub(r"\s+", " ", spaced).strip()


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
        ("math.GT/0309136", "math/0309136"),  # arXiv drops the subject class
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

from functools import reduce  # noqa: E402

from pubsearch.ingest.records import StreamingMerger, Written  # noqa: E402

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


@settings(max_examples=500, deadline=None)
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


def _reference_merge(records: list[Record]) -> tuple[list[Record], int]:
    """The definition, by brute force: records are one paper when a chain of shared identity
    keys links them; each paper is its records merged in order of arrival."""
    groups: list[list[int]] = []
    for i, record in enumerate(records):
        keys = set(record.identity_keys)
        linked = [g for g in groups if any(keys & set(records[j].identity_keys) for j in g)]
        joined = sorted([i, *(j for g in linked for j in g)])
        groups = [g for g in groups if g not in linked] + [joined]
    groups.sort(key=lambda g: g[0])
    return [reduce(merge, (records[j] for j in g)) for g in groups], len(records) - len(groups)


@settings(max_examples=500, deadline=None)
@given(st.lists(_records, max_size=12))
def test_both_mergers_give_the_papers_that_chains_of_shared_keys_define(
    records: list[Record],
) -> None:
    expected = _reference_merge(records)
    assert merge_records(records) == expected
    got, got_duplicates = _stream_merge(records)
    assert sorted(got, key=repr) == sorted(expected[0], key=repr)
    assert got_duplicates == expected[1]


def test_a_key_that_loses_in_a_merge_still_links_its_paper() -> None:
    # Found by hypothesis: the merged record of the first two keeps DOI 10.1/x, and the
    # mergers used to file only a merged record's keys, so the third record's 10.1/y,
    # which the second record has, linked to nothing.
    records = [
        Record(title="", arxiv_id="2101.00001", doi="10.1/x", origins=("a",)),
        Record(title="", arxiv_id="2101.00001", doi="10.1/y", origins=("b",)),
        Record(title="", doi="10.1/y", origins=("c",)),
    ]
    merged, duplicates = merge_records(records)
    assert duplicates == 2
    assert [(r.id, r.doi, r.origins) for r in merged] == [("2101.00001", "10.1/x", ("a", "b", "c"))]
    assert _stream_merge(records) == (merged, 2)


# Found by hypothesis: the first group (r1, r4, r5) merged into a "Batch size" of 2020
# with DOI 10.1/x, whose title key is also that of r2. The mergers used to file the keys of
# merged records, moving that key from r2's paper to r1's, so where r6 went depended on
# whether it came before or after r5.
_R1 = Record(title="", doi="10.1/x", origins=("r1",))
_R2 = Record(title="Batch size", year=2020, arxiv_id="2101.00001", origins=("r2",))
_R3 = Record(title="", arxiv_id="2101.00001", origins=("r3",))
_R4 = Record(title="", year=2020, doi="10.1/x", origins=("r4",))
_R5 = Record(title="Batch size", doi="10.1/x", origins=("r5",))
_R6 = Record(title="Batch size", year=2020, origins=("r6",))


@pytest.mark.parametrize(
    "order",
    [
        [_R1, _R2, _R3, _R4, _R5, _R6],
        [_R1, _R2, _R3, _R6, _R4, _R5],
        [_R6, _R5, _R4, _R3, _R2, _R1],
    ],
)
def test_a_key_of_a_merged_record_does_not_move_a_record_to_another_paper(
    order: list[Record],
) -> None:
    merged, duplicates = merge_records(order)
    assert duplicates == 4
    assert sorted(sorted(r.origins) for r in merged) == [["r1", "r4", "r5"], ["r2", "r3", "r6"]]
    got, got_duplicates = _stream_merge(order)
    assert got_duplicates == 4
    assert sorted(got, key=repr) == sorted(merged, key=repr)


def test_two_papers_may_merge_into_records_with_a_common_title_key() -> None:
    records = [_R1, _R2, _R3, _R4, _R5]
    merged, duplicates = merge_records(records)
    assert duplicates == 3
    assert [(r.id, r.origins) for r in merged] == [
        ("doi:10.1/x", ("r1", "r4", "r5")),
        ("2101.00001", ("r2", "r3")),
    ]
    assert all("title:batch size|2020" in r.identity_keys for r in merged)
    got, got_duplicates = _stream_merge(records)
    assert got_duplicates == 3
    assert sorted(got, key=repr) == sorted(merged, key=repr)


def test_papers_joined_by_a_later_record_merge_in_order_of_arrival() -> None:
    a = Record(title="A", doi="10.1/a", origins=("a",))
    b = Record(title="B", arxiv_id="2101.00002", origins=("b",))
    a_again = Record(title="", doi="10.1/a", abstract="From the second a.", origins=("a2",))
    both = Record(title="", doi="10.1/a", arxiv_id="2101.00002", origins=("ab",))
    merged, duplicates = merge_records([a, b, a_again, both])
    assert duplicates == 3
    assert [r.origins for r in merged] == [("a", "b", "a2", "ab")]
    merger = StreamingMerger()
    assert [merger.add(r) for r in (a, b, a_again, both)] == [True, True, False, False]
    assert list(merger.groups()) == [
        [Written(a.identity_keys), Written(b.identity_keys), a_again, both]
    ]
    assert (len(merger), merger.duplicates) == (1, 3)


def _title_key_by_definition(title: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w]+", " ", fold(title)).replace("_", " ")).strip()


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_title_key_of_ascii_titles_is_the_key_by_definition(title: str) -> None:
    assert title.isascii()
    assert title_key(title) == _title_key_by_definition(title)


@pytest.mark.parametrize("title", ["Ünïcode Títle_x", "Straße  —  Über", "a\u00a0b"])
def test_title_key_of_other_titles_is_the_key_by_definition(title: str) -> None:
    assert title_key(title) == _title_key_by_definition(title)


@pytest.mark.parametrize("keys_known", [False, True])
def test_a_record_pickles_as_itself_without_its_post_init_again(
    keys_known: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a build sends its workers: the same record back, its identity keys with it
    once worked out, and ``__post_init__`` not run again (its work is done)."""
    record = Record(
        title="  A  title ",
        abstract="Text",
        authors=("C. Balázs", "c. balazs", "B. Two"),
        year=2024,
        subjects=("cs.LG",),
        origins=("a.jsonl:3",),
        arxiv_id="arXiv:2401.00001v2",
        doi="https://doi.org/10.1/X",
    )
    if keys_known:
        assert record.identity_keys
    data = pickle.dumps(record, protocol=5)

    def refuse(self: Record) -> None:
        raise AssertionError("__post_init__ ran again")

    monkeypatch.setattr(Record, "__post_init__", refuse)
    back = pickle.loads(data)
    assert back == record and type(back) is Record
    assert vars(back) == vars(record)  # the cached identity keys too, when there were any
    assert ("identity_keys" in vars(back)) is keys_known
    assert back.identity_keys == ("arxiv:2401.00001", "doi:10.1/x", "title:a title|2024")
    assert copy.deepcopy(record) == record


@pytest.mark.parametrize(
    "spelling",
    ["Christian S Hardtke", "Christian S. Hardtke", "Hardtke, Christian S.", "christian s hardtke"],
)
def test_names_differing_in_the_dots_of_initials_or_the_order_are_one_author(
    spelling: str,
) -> None:
    record = Record(title="T", authors=("Christian S. Hardtke", spelling, "C. Hardtke"))
    assert record.authors == ("Christian S. Hardtke", "C. Hardtke")
    assert author_identity(spelling) == "christian s hardtke"
    assert author_identity("J.-P. Dupont") == author_identity("J.-P Dupont") == "j-p dupont"


def test_merge_keeps_the_larger_citation_count() -> None:
    a = Record(title="T", doi="10.1/x", cited_by=3)
    b = Record(title="T", doi="10.1/x", cited_by=12, authors=("Christian S Hardtke",))
    c = Record(title="T", doi="10.1/x", authors=("Christian S. Hardtke",))
    assert merge(a, b).cited_by == 12
    assert merge(b, a).cited_by == 12
    assert merge(c, Record(title="T", doi="10.1/x")).cited_by is None
    merged = merge(merge(a, b), c)
    assert merged.cited_by == 12
    assert merged.authors == ("Christian S Hardtke",)


def test_a_merged_paper_keeps_every_arxiv_id_and_doi_of_its_records() -> None:
    first = Record(title="Same Title", year=2025, arxiv_id="2505.17997", doi="10.1/a")
    second = Record(title="Same title!", year=2025, arxiv_id="2506.03038v2", doi="10.1/B")
    third = Record(title="Other", year=2024, doi="10.1/b", arxiv_id="arXiv:2401.00001")
    (paper,), merged = merge_records([first, second, third])
    assert merged == 2
    # The first record's ids stay the paper's own, and its id; the others are kept too.
    assert paper.id == paper.arxiv_id == "2505.17997"
    assert paper.arxiv_ids == ("2505.17997", "2506.03038", "2401.00001")
    assert paper.other_arxiv_ids == ("2506.03038", "2401.00001")
    assert paper.dois == ("10.1/a", "10.1/b")
    assert paper.identity_keys[:5] == (
        "arxiv:2505.17997",
        "arxiv:2506.03038",
        "arxiv:2401.00001",
        "doi:10.1/a",
        "doi:10.1/b",
    )
    # Another order of arrival makes another id its own, deterministically.
    (again,), _ = merge_records([second, first, third])
    assert again.id == "2506.03038"
    assert set(again.arxiv_ids) == set(paper.arxiv_ids)


def test_further_ids_are_normalised_deduplicated_and_stand_in_for_a_missing_own_id() -> None:
    record = Record(
        title="T",
        other_arxiv_ids=("arXiv:2505.17997v3", "2505.17997", "not an id"),
        other_dois=("https://doi.org/10.1/X", "10.1/x"),
    )
    assert record.arxiv_id == record.id == "2505.17997"
    assert record.other_arxiv_ids == ()
    assert record.dois == ("10.1/x",)
    assert Record(
        title="T", arxiv_id="2505.17997", other_arxiv_ids=("2505.17997v2",)
    ).arxiv_ids == ("2505.17997",)


def test_a_month_is_a_date_and_sorts_before_its_days() -> None:
    record = Record(title="T", year=2007, date="2007-05", listed="2025-08-26")
    assert (record.date, record.listed) == ("2007-05", "2025-08-26")
    assert date_number("2007-05") == 20070500 < date_number("2007-05-01")
    assert date_of_number(20070500) == "2007-05"
    assert date_of_number(20070501) == "2007-05-01"
    assert Record(title="T", year=2008, date="2007-05").date is None  # not of its year
    assert Record(title="T", date="2007-13").date is None
    assert Record(title="T", listed="2025-08").listed is None  # a listing is a day


def test_merge_takes_the_day_a_second_record_gives_of_a_month() -> None:
    dated = Record(title="T", year=2007, date="2007-05", listed="2025-08-26", arxiv_id="0705.1862")
    day = Record(title="T", year=2007, date="2007-05-12", arxiv_id="0705.1862")
    merged = merge(dated, day)
    assert (merged.year, merged.date, merged.listed) == (2007, "2007-05-12", "2025-08-26")
    other_month = Record(title="T", year=2007, date="2007-06-01", arxiv_id="0705.1862")
    assert merge(dated, other_month).date == "2007-05"
