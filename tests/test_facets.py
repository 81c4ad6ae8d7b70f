"""The fast paths (saved facet arrays, query masks, numpy counts) against plain counts.

The index is a real one: the seeds plus 300 real arXiv records (tests/data), with some of
them listed twice. Every expectation is computed the plain way: Whoosh's own
``docs_for_query`` and a ``Counter`` over the stored fields of the matching documents.
"""

from __future__ import annotations

import gc
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from whoosh import columns as whoosh_columns
from whoosh import fields as whoosh_fields
from whoosh import index as whoosh_index

from pubsearch.index import facets, storage
from pubsearch.index.build import build_index, update_index
from pubsearch.index.facets import FACETS_FILE, FacetTable, _column_values, _live, _years
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record, fold
from pubsearch.search.compiler import parse_query
from pubsearch.search.masks import query_mask
from pubsearch.search.request import SearchRequest, YearRange
from pubsearch.search.service import SearchService

DATA = Path(__file__).resolve().parent / "data"
SAMPLE = DATA / "arxiv-2024-2026.sample.jsonl"

QUERIES = [
    "",
    "learning",
    "model",
    "quantum",
    "neural networks",
    "graph neural network",
    '"language models"',
    '"batch size"',
    "title:learning",
    'author:"Yang You"',
    "learning -neural",
    "learning OR quantum",
    "(graph OR network) AND learn*",
    "year:2021",
    "learning year:2024..2026",
    "subject:cs.lg",
    "cat:cs.*",
    "deep NOT learning",
    "batch sise",
    '"neural network" OR "language model"',
    'title:"large language models"',
    '"state of the art"',
]


def _records(seeds_dir: Path) -> list[Record]:
    records = list(read_paths([seeds_dir, SAMPLE], ReadReport()))
    # A few papers listed again by another source, with another author: merged on build.
    again = [
        replace(r, authors=("Second Source",), origins=("other.jsonl:1",), id="")
        for r in records[40:52]
    ]
    return records + again


@pytest.fixture(scope="module")
def real_index(tmp_path_factory: pytest.TempPathFactory, seeds_dir: Path) -> Path:
    index_dir = tmp_path_factory.mktemp("facets-index")
    build_index(index_dir, _records(seeds_dir))
    return index_dir


def _generation(index_dir: Path) -> Path:
    return index_dir / (index_dir / "CURRENT").read_text().strip()


def _plain_facets(
    index_dir: Path, q: str, request: SearchRequest
) -> tuple[int, dict[str, Counter[str]]]:
    """Total and disjunctive facet counts, from docs_for_query and stored fields."""
    ix = whoosh_index.open_dir(str(_generation(index_dir)))
    with ix.searcher() as searcher:
        query = parse_query(q, searcher.schema)
        if query is None:
            docs = list(searcher.reader().all_doc_ids())
        else:
            docs = list(searcher.docs_for_query(query))
        stored = [searcher.stored_fields(d) for d in docs]
    ix.close()

    def passes(doc: dict[str, Any], skip: str) -> bool:
        if skip != "author" and request.authors:
            wanted = {fold(a) for a in request.authors}
            if not wanted & {fold(a) for a in doc.get("author") or ()}:
                return False
        if skip != "subject" and request.subjects:
            wanted = {fold(s) for s in request.subjects}
            if not wanted & {fold(s) for s in doc.get("subject") or ()}:
                return False
        if skip != "year" and request.year is not None:
            year = doc.get("year")
            lo, hi = request.year.start, request.year.end
            if year is None or (lo is not None and year < lo) or (hi is not None and year > hi):
                return False
        return True

    total = sum(1 for doc in stored if passes(doc, ""))
    counts: dict[str, Counter[str]] = {"author": Counter(), "year": Counter(), "subject": Counter()}
    for doc in stored:
        if passes(doc, "author"):
            counts["author"].update({fold(a) for a in doc.get("author") or ()})
        if passes(doc, "subject"):
            counts["subject"].update({fold(s) for s in doc.get("subject") or ()})
        if passes(doc, "year") and doc.get("year"):
            counts["year"][str(doc["year"])] += 1
    return total, counts


def _fast_facets(
    service: SearchService, request: SearchRequest
) -> tuple[int, dict[str, Counter[str]]]:
    results = service.search(request)
    assert results.facets is not None
    counts = {
        name: Counter({fold(v.value): v.count for v in values if v.count})
        for name, values in results.facets.items()
    }
    return results.total, counts


FILTERS = [
    {},
    {"year": YearRange(2025, 2026)},
    {"subjects": ("cs.LG",)},
    {"authors": ("Yang You",), "year": YearRange(2019, None)},
    {"subjects": ("cs.CV", "cs.CL"), "year": YearRange(None, 2025)},
]


@pytest.mark.parametrize("q", QUERIES)
@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: ",".join(f) or "none")
def test_fast_facet_counts_equal_plain_counts(
    real_index: Path, q: str, filters: dict[str, Any]
) -> None:
    # As typed: the plain counts know no spelling correction.
    request = SearchRequest(q=q, facets=True, facet_size=1000, correct=False, **filters)
    service = SearchService(real_index)
    try:
        total, counts = _fast_facets(service, request)
    finally:
        service.close()
    plain_total, plain_counts = _plain_facets(real_index, q, request)
    assert total == plain_total
    for name, plain in plain_counts.items():
        listed = counts[name]
        # Every listed value has its plain count; the listed are the most frequent ones.
        assert listed == {value: plain[value] for value in listed}
        assert len(listed) >= min(len(plain), request.facet_size)
        unlisted = [c for v, c in plain.items() if v not in listed]
        assert not unlisted or max(unlisted) <= min(listed.values())


@pytest.mark.parametrize("q", [q for q in QUERIES if q])
def test_query_mask_equals_docs_for_query(real_index: Path, q: str) -> None:
    ix = whoosh_index.open_dir(str(_generation(real_index)))
    with ix.searcher() as searcher:
        query = parse_query(q, searcher.schema)
        assert query is not None
        size = searcher.reader().doc_count_all()
        live = np.zeros(size, dtype=np.bool_)
        live[list(searcher.reader().all_doc_ids())] = True
        fast = set(np.flatnonzero(query_mask(searcher, query, size) & live).tolist())
        assert fast == set(searcher.docs_for_query(query))
    ix.close()


def _tables(index_dir: Path) -> tuple[FacetTable | None, FacetTable]:
    gen = _generation(index_dir)
    ix = whoosh_index.open_dir(str(gen))
    with ix.reader() as reader:
        saved = FacetTable.load(gen, reader, ix.latest_generation())
        fresh = FacetTable.build(reader)
    ix.close()
    return saved, fresh


def _by_label(table: FacetTable) -> dict[str, dict[str, int]]:
    """Counts over the live documents, by folded value: comparable across builds."""
    out: dict[str, dict[str, int]] = {}
    for name in ("authors", "subjects"):
        values = getattr(table, name)
        counts = values.count(table.live)
        out[name] = {fold(values.labels[i]): int(counts[i]) for i in np.flatnonzero(counts)}
    out["years"] = {str(y): c for y, c in table.count_years(table.live).items()}
    live_dates = table.dates[table.live & (table.dates > 0)]
    days, counts = np.unique(live_dates, return_counts=True)
    out["dates"] = {str(d): int(c) for d, c in zip(days, counts, strict=True)}
    return out


def _assert_same_table(saved: FacetTable, fresh: FacetTable) -> None:
    for name in ("authors", "subjects"):
        a, b = getattr(saved, name), getattr(fresh, name)
        assert list(a.labels) == list(b.labels), name
        assert np.array_equal(a.offsets, b.offsets), name
        assert np.array_equal(a.value_ids, b.value_ids), name
        assert dict(a.ids_by_key) == dict(b.ids_by_key), name
    assert np.array_equal(saved.years, fresh.years)
    assert np.array_equal(saved.dates, fresh.dates)
    assert 0 < int((saved.dates > 0).sum()) < saved.size  # dates of the arXiv records only
    assert np.array_equal(saved.live, fresh.live)


@pytest.mark.parametrize("workers", [1, 2])
def test_table_joined_from_the_writers_segments_is_the_one_read_from_the_index(
    tmp_path: Path, seeds_dir: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """The build's table, joined from what each writer worked out for its segments (in
    several segments from two workers, then extended by the merged duplicates), is the
    table read from the whole index: the same ids, labels ("C. Balázs" as first seen),
    offsets, years and live documents."""
    from pubsearch.index.segments import workers as segment_workers

    monkeypatch.setattr(segment_workers, "PARALLEL_THRESHOLD", 50)
    monkeypatch.setattr(segment_workers, "DOCS_PER_SEGMENT", 90)
    joined: list[int] = []
    from_segments = FacetTable.from_segments

    def note(parts: Any) -> FacetTable:
        joined.append(len(parts))
        return from_segments(parts)

    monkeypatch.setattr(FacetTable, "from_segments", note)
    records = _records(seeds_dir)
    build_index(tmp_path, records, workers=workers)
    assert joined and joined[0] >= 4  # several segments
    saved, fresh = _tables(tmp_path)
    assert saved is not None
    assert not fresh.live.all()  # the merged duplicates' first records, deleted
    _assert_same_table(saved, fresh)
    assert _by_label(saved) == _by_label(fresh)


@pytest.mark.parametrize("share", [0.0, 0.01, 0.3, 0.65, 0.9, 0.97, 0.999, 1.0])
def test_counts_of_any_share_of_documents_are_counted_value_by_value(share: float) -> None:
    """Few documents (their own entries), some (every entry tested) or nearly all
    (every document's counts less those left out) count the same."""
    rng = np.random.default_rng(7)
    names = [f"Author {i}" for i in range(300)]
    per_doc = [list(rng.choice(names, size=rng.integers(0, 5), replace=False)) for _ in range(4000)]
    table = facets.MultiValued.from_values(per_doc)
    docs = rng.random(len(per_doc)) < share
    if share > 0.5:
        table.prepare()  # (as a server does before it answers)
        assert "_every_count" in vars(table)
    plain = Counter(v for d, values in enumerate(per_doc) if docs[d] for v in values)
    counts = table.count(docs)
    assert {table.labels[i]: int(c) for i, c in enumerate(counts) if c} == dict(plain)
    assert table.count(docs).tolist() == counts.tolist()  # the kept counts are not changed


def test_a_segments_parts_are_packed_and_join_back_into_its_table() -> None:
    """What a writer sends back holds its labels and keys as packed bytes, not as lists of
    strings (a build's processes hold one per segment), and joins back into the table."""
    per_doc = [["C. Balázs", "A. Ng"], [], ["c. balazs"], ["Zoë Lee", "A. Ng", ""]]
    table = facets.MultiValued.from_values(per_doc)
    parts = table.parts()
    assert isinstance(parts.labels, bytes) and isinstance(parts.keys, bytes)
    assert parts.count == len(table.labels) == 4
    joined = facets.MultiValued.joined([parts, parts])
    assert list(joined.labels) == list(table.labels)
    assert dict(joined.ids_by_key) == dict(table.ids_by_key)
    assert np.array_equal(joined.value_ids, np.concatenate([table.value_ids] * 2))
    assert np.array_equal(joined.offsets[: len(table.offsets)], table.offsets)
    broken = replace(parts, count=3)
    with pytest.raises(ValueError, match="do not match their count"):
        facets.MultiValued.joined([broken])


def test_a_table_joined_from_no_segments_is_empty() -> None:
    table = FacetTable.from_segments([])
    assert table.size == 0 and list(table.authors.labels) == [] and len(table.years) == 0


def test_saved_table_equals_one_read_from_the_index(real_index: Path) -> None:
    saved, fresh = _tables(real_index)
    assert saved is not None
    assert list(saved.authors.labels) == list(fresh.authors.labels)
    assert np.array_equal(saved.authors.value_ids, fresh.authors.value_ids)
    assert np.array_equal(saved.subjects.offsets, fresh.subjects.offsets)
    assert np.array_equal(saved.years, fresh.years)
    assert np.array_equal(saved.dates, fresh.dates)
    assert np.array_equal(saved.live, fresh.live)
    # The keys are made into a dict only when first asked (most searches never ask).
    assert dict(saved.subjects.ids_by_key) == dict(fresh.subjects.ids_by_key)
    assert dict(saved.authors.ids_by_key) == dict(fresh.authors.ids_by_key)
    assert len(saved.authors.ids_by_key) == len(fresh.authors.labels)


def test_saved_keys_are_found_by_bisection_then_by_a_dict(
    real_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A saved table finds its first keys by bisection over the ids in key order (no dict
    of them all made), then, past BISECTED_LOOKUPS, from a dict: the same ids either way,
    for every key, names written in other scripts too, and none for a key it lacks."""
    saved, fresh = _tables(real_index)
    assert saved is not None
    want = dict(fresh.authors.ids_by_key)
    assert len(want) > 50
    keys = saved.authors.ids_by_key
    assert isinstance(keys, facets._SavedKeys)
    monkeypatch.setattr(facets, "BISECTED_LOOKUPS", 3 * len(want) + 10)
    for key, vid in want.items():
        assert keys[key] == vid and key in keys
    for missing in ("", "zz no such author", min(want) + " ", "\ud800"):
        assert keys.get(missing) is None and missing not in keys
    assert keys._ids is None  # not one dict made
    monkeypatch.setattr(facets, "BISECTED_LOOKUPS", 0)
    assert all(keys[key] == vid for key, vid in want.items())
    assert keys._ids is not None and keys.get("zz no such author") is None
    # A server makes the dict before it answers.
    again, _ = _tables(real_index)
    assert again is not None and again.authors.ids_by_key._ids is None  # type: ignore[attr-defined]
    again.prepare()
    assert again.authors.ids_by_key._ids == want  # type: ignore[attr-defined]


def test_keys_in_any_script_are_found_by_bisection() -> None:
    """Keys sorted by code point are in the order of their UTF-8 bytes, which the
    bisection compares."""
    keys = ["łukasz", "ørsted", "王伟", "ıi", "zoe", "a", "Ωmega", "ab", "a b"]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    saved = facets._SavedKeys(
        facets._pack_strings(keys), len(keys), np.asarray(order, dtype=np.int32)
    )
    assert [saved[key] for key in keys] == list(range(len(keys)))
    assert saved._ids is None
    assert all(saved.get(key) is None for key in ("łukas", "王", "b", "aa", "ı"))


def test_a_table_saved_without_its_key_order_finds_keys_by_a_dict(tmp_path: Path) -> None:
    """A table an earlier pubsearch saved (no key order): keys found as before."""
    build_index(tmp_path, read_paths([DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))
    generation = _generation(tmp_path)
    path = generation / FACETS_FILE
    ix = whoosh_index.open_dir(str(generation))
    with ix.reader() as reader:
        before = FacetTable.load(generation, reader, ix.latest_generation())
        assert before is not None
        want = dict(before.authors.ids_by_key)
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files if "key_order" not in name}
        np.savez(path, **arrays)
        after = FacetTable.load(generation, reader, ix.latest_generation())
    ix.close()
    assert after is not None and len(want) > 10
    assert all(after.authors.ids_by_key[key] == vid for key, vid in want.items())


def test_saved_labels_are_decoded_when_asked(real_index: Path) -> None:
    """One at a time (a page shows a few), all at once when iterated; a label id past the
    end is an IndexError, as a tuple's."""
    saved, fresh = _tables(real_index)
    assert saved is not None
    labels, want = saved.authors.labels, list(fresh.authors.labels)
    assert len(labels) == len(want) > 10
    for i in (0, 1, len(want) // 2, len(want) - 1, -1, -len(want)):
        assert labels[i] == want[i]
    for i in (len(want), -len(want) - 1):
        with pytest.raises(IndexError):
            labels[i]
    assert list(labels[2:5]) == want[2:5]
    assert list(labels) == want and labels[3] == want[3]


def test_saved_labels_that_do_not_match_their_count_are_refused() -> None:
    packed = facets._pack_strings(["Ada Lovelace", "Alan Turing"])
    assert list(facets._SavedLabels(packed, 2)) == ["Ada Lovelace", "Alan Turing"]
    for count in (1, 3):
        with pytest.raises(ValueError):
            facets._SavedLabels(packed, count)
    assert list(facets._SavedLabels(facets._pack_strings([]), 0)) == []


def test_saved_keys_that_do_not_match_their_count_are_refused(tmp_path: Path) -> None:
    """A table whose saved keys are not one per value is read afresh, at load time, not
    found out at the first search filtering by an author."""
    build_index(tmp_path, read_paths([DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))
    generation = _generation(tmp_path)
    path = generation / FACETS_FILE
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    assert int(arrays["authors_count"][0]) > 10
    arrays["authors_keys"] = arrays["authors_keys"][: len(arrays["authors_keys"]) // 2]
    np.savez(path, **arrays)
    ix = whoosh_index.open_dir(str(generation))
    with ix.reader() as reader:
        assert FacetTable.load(generation, reader, ix.latest_generation()) is None
    ix.close()


def test_strings_at_are_the_packed_strings_of_those_numbers() -> None:
    """facets.strings_at (labels and person ids decoded in one go) against each string."""
    rng = np.random.default_rng(3)
    alphabet = list("abcł ø-ı.Zé") + [""]
    strings = ["".join(rng.choice(alphabet, size=int(rng.integers(0, 7)))) for _ in range(40)]
    packed = np.frombuffer(facets.VALUE_SEP.join(strings).encode("utf-8"), dtype=np.uint8)
    ends = facets.string_ends(packed, len(strings))
    for indices in ([], [0], [39], [5, 5, 0, 39, 12], rng.integers(0, 40, size=100).tolist()):
        assert facets.strings_at(packed, ends, indices) == [strings[i] for i in indices]
    labels = facets._SavedLabels(packed, len(strings), ends)
    assert facets.labels_at(labels, [3, 1]) == [strings[3], strings[1]]
    assert facets.labels_at(strings, [3, 1]) == [strings[3], strings[1]]


@pytest.mark.parametrize("name", ["authors_label_ends", "authors_key_ends", "subjects_key_ends"])
def test_saved_string_ends_that_do_not_fit_their_strings_are_refused(
    tmp_path: Path, name: str
) -> None:
    """The build saves where each label and key ends; ends that miss a separator, or are
    one short, make the table be read afresh, not decoded wrong."""
    build_index(tmp_path, read_paths([DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))
    generation = _generation(tmp_path)
    path = generation / FACETS_FILE
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    ends = arrays[name]
    assert len(ends) > 3 and ends.dtype == np.int64
    ix = whoosh_index.open_dir(str(generation))
    with ix.reader() as reader:
        for changed in (np.r_[ends[:1], ends[1:2] + 1, ends[2:]], ends[1:]):
            np.savez(path, **{**arrays, name: changed})
            assert FacetTable.load(generation, reader, ix.latest_generation()) is None
        np.savez(path, **arrays)
        assert FacetTable.load(generation, reader, ix.latest_generation()) is not None
    ix.close()


def test_missing_or_stale_saved_table_is_rebuilt(tmp_path: Path, seeds_dir: Path) -> None:
    build_index(tmp_path, read_paths([seeds_dir], ReadReport()))
    (_generation(tmp_path) / FACETS_FILE).write_bytes(b"not a numpy file")
    service = SearchService(tmp_path)
    try:
        results = service.search(SearchRequest(q="batch size", facets=True))
    finally:
        service.close()
    assert results.facets is not None
    assert results.facets["author"][0].value == "Yang You"


def _changed(records: list[Record]) -> Iterator[Record]:
    for r in records[60:90]:
        yield replace(r, authors=(*r.authors, "Ada Update"), subjects=(*r.subjects, "cs.ZZ"))
    yield Record(title="A paper no one listed before", year=2026, authors=("New Person",))


def test_update_keeps_facet_data_right(tmp_path: Path, seeds_dir: Path) -> None:
    records = _records(seeds_dir)
    updated, fresh = tmp_path / "updated", tmp_path / "fresh"
    build_index(updated, records)
    changes = list(_changed(records))
    update_index(updated, changes)

    # The same records, updated the same way, built in one go.
    from pubsearch.index.build import combine
    from pubsearch.ingest.records import merge_records

    final, _ = merge_records(records)
    by_id = {r.id: r for r in final}
    for change in changes:
        by_id[change.id] = combine(by_id[change.id], change) if change.id in by_id else change
    build_index(fresh, by_id.values())

    saved, read_anew = _tables(updated)
    assert saved is not None, "the update saved no facet table"
    assert _by_label(saved) == _by_label(read_anew) == _by_label(_tables(fresh)[1])
    service = SearchService(updated)
    try:
        results = service.search(SearchRequest(authors=("Ada Update",), facets=True))
    finally:
        service.close()
    assert results.total == 30


@pytest.mark.parametrize(("per_segment", "renumbered"), [(100, False), (10, True)])
def test_an_update_merges_only_small_segments_and_reads_the_facet_table_anew_only_then(
    tmp_path: Path,
    seeds_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    per_segment: int,
    renumbered: bool,
) -> None:
    # Many segments: small ones (an update's) are merged, renumbering documents; a
    # build's large ones never are, and their facet table only grows.
    from pubsearch.index.segments import workers, writer

    monkeypatch.setattr(workers, "DOCS_PER_SEGMENT", per_segment)
    monkeypatch.setattr(writer, "SMALL_SEGMENT_DOCS", 50)
    monkeypatch.setattr(writer, "MAX_SMALL_SEGMENTS", 3)
    records = _records(seeds_dir)
    build_index(tmp_path, records)
    read: list[int] = []
    build = FacetTable.build.__func__  # type: ignore[attr-defined]

    def counted(cls: type[FacetTable], reader: Any) -> FacetTable:
        read.append(reader.doc_count_all())
        return build(cls, reader)  # type: ignore[no-any-return]

    monkeypatch.setattr(FacetTable, "build", classmethod(counted))
    segments = len(list(_generation(tmp_path).glob("*.seg")))
    update_index(tmp_path, list(_changed(records)))
    assert bool(read) == renumbered
    after = len(list(_generation(tmp_path).glob("*.seg")))
    assert after == (segments + 1 if not renumbered else 1)  # small ones and the new one
    saved, read_anew = _tables(tmp_path)
    assert saved is not None and _by_label(saved) == _by_label(read_anew)


def test_update_shares_segment_files_with_the_previous_generation(
    tmp_path: Path, seeds_dir: Path
) -> None:
    build_index(tmp_path, read_paths([seeds_dir], ReadReport()))
    before = _generation(tmp_path)
    segments = {p.name: p.stat().st_ino for p in before.glob("*.seg")}
    update_index(tmp_path, [Record(title="One more paper", year=2024)])
    after = _generation(tmp_path)
    linked = {p.name: p.stat().st_ino for p in after.glob("*.seg") if p.name in segments}
    assert linked == segments  # the same files, not copies
    assert len(list(after.glob("*.seg"))) == len(segments) + 1  # the new records' segment


def test_sample_slice_is_what_the_tests_assume() -> None:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 300 and all(json.loads(line)["authors"] is not None for line in lines)


def test_live_documents_are_those_whoosh_has_not_deleted(tmp_path: Path) -> None:
    """The live mask, read from each segment's deleted set, is Whoosh's ``is_deleted``
    document by document: over three segments, with deletions in two of them."""
    ix = storage.create_index(tmp_path)
    for segment in range(3):
        writer = ix.writer()
        for i in range(7):
            writer.add_document(id=f"{segment}-{i}", title=f"paper {segment} {i}")
        writer.commit(merge=False)
    writer = ix.writer()
    for docnum in (0, 3, 15, 20):  # two in the first segment, two in the third
        writer.delete_document(docnum)
    writer.commit(merge=False)
    with ix.reader() as reader:
        assert len(reader.leaf_readers()) == 3
        want = [not reader.is_deleted(d) for d in range(reader.doc_count_all())]
        assert _live(reader).tolist() == want
        assert want.count(False) == 4
    ix.close()


def _whooshs_values(reader: Any, column: str, start: int) -> list[bytes]:
    """A column's values as Whoosh's reader gives them, a document at a time."""
    creader = reader.column_reader(column)
    values = []
    for d in range(start, reader.doc_count_all()):
        try:
            values.append(creader[d])
        except IndexError:  # a segment's last documents without a value have no length
            values.append(b"")
    return values


def _segmented_index(tmp_path: Path, schema: Any, docs: list[dict[str, Any]]) -> Any:
    """An index of ``docs`` in three segments (the second without the columns' fields)."""
    ix = whoosh_index.create_in(str(tmp_path), schema)
    for part in (docs[:5], [{"id": "plain"}], docs[5:]):
        writer = ix.writer()
        for doc in part:
            writer.add_document(**doc)
        writer.commit(merge=False)
    return ix


@pytest.mark.parametrize("cutoff", [2, 2**15])  # with the offsets stored, and without
def test_column_values_read_at_once_are_whooshs(tmp_path: Path, cutoff: int) -> None:
    """The facet columns read a segment at a time give Whoosh's values document by
    document, from every start: over segments with empty values, one without the
    column, values in UTF-8 and both layouts of Whoosh's variable-length column."""
    schema = whoosh_fields.Schema(
        id=whoosh_fields.ID(stored=True),
        names=whoosh_fields.COLUMN(whoosh_columns.VarBytesColumn(write_offsets_cutoff=cutoff)),
    )
    values = ["A. One\x1fB. Two", "", "Balázs Ćwik", "x", "", "C. Three", "ü\x1fv\x1fw", "", "z"]
    docs = [
        {"id": str(i), "names": v.encode()} if v else {"id": str(i)} for i, v in enumerate(values)
    ]
    ix = _segmented_index(tmp_path, schema, docs)
    with ix.reader() as reader:
        assert len(reader.leaf_readers()) == 3
        for start in range(reader.doc_count_all() + 1):
            want = [
                raw.decode().split("\x1f") if raw else []
                for raw in _whooshs_values(reader, "names", start)
            ]
            assert _column_values(reader, "names", start) == want, start
    ix.close()


def test_years_read_at_once_are_whooshs(tmp_path: Path) -> None:
    """Years read a segment at a time are Whoosh's (0 where a document has none), for
    every range of documents, over a segment without the column."""
    schema = whoosh_fields.Schema(
        id=whoosh_fields.ID(stored=True),
        year=whoosh_fields.NUMERIC(int, bits=16, stored=True, sortable=True, signed=False),
    )
    years = [2024, None, 1999, 2026, None, 2001, None, 2025]
    docs = [{"id": str(i), "year": y} if y else {"id": str(i)} for i, y in enumerate(years)]
    ix = _segmented_index(tmp_path, schema, docs)
    with ix.reader() as reader:
        n = reader.doc_count_all()
        ycol = reader.column_reader("year")
        missing = schema["year"].column_type.default_value()
        want = [0 if ycol[d] == missing else ycol[d] for d in range(n)]
        assert 2026 in want and want.count(0) == 4  # three without one, and "plain"
        for start in range(n + 1):
            for stop in range(start, n + 1):
                assert _years(reader, start, stop).tolist() == want[start:stop], (start, stop)
    ix.close()


def test_records_without_a_year_count_under_no_year(tmp_path: Path) -> None:
    """A record without a year is in no year's count and in no year range (Whoosh's
    column holds 65,535 for it), on the web page's and the CLI's path. (The saved table
    hid it, its years kept in 16 bits as -1; one read from the index counted 65,535.)"""
    records = [
        Record(title=f"paper {name}", year=year, arxiv_id=f"2401.0000{i}")
        for i, (name, year) in enumerate([("a", 2024), ("b", None), ("c", 2025), ("d", None)])
    ]
    build_index(tmp_path, records)
    for saved in (True, False):  # the table saved with the build, and one read anew
        if not saved:
            (_generation(tmp_path) / FACETS_FILE).unlink()
        service = SearchService(tmp_path)
        results = service.search(SearchRequest(q="paper", facets=True))
        assert results.total == 4
        assert results.facets is not None
        assert {f.value: f.count for f in results.facets["year"]} == {"2024": 1, "2025": 1}
        ranged = service.search(SearchRequest(q="paper", year=YearRange(2000, None)))
        assert ranged.total == 2


def test_the_table_is_read_with_the_collector_paused(
    real_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    read_years = facets._years

    def years(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return read_years(*args)

    monkeypatch.setattr(facets, "_years", years)
    ix = whoosh_index.open_dir(str(_generation(real_index)))
    with ix.reader() as reader:
        FacetTable.build(reader)
    ix.close()
    assert seen == [False] and gc.isenabled()
