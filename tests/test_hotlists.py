"""A segment's longest posting lists, kept again as arrays, must be the lists its blocks
hold, and searches must find and rank the same with them or without them; its terms table,
read with a descriptor of its own, must give what Whoosh's reader gives."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from whoosh import query as wq

from pubsearch.codec import hotlists, w3format, w3terms
from pubsearch.core import npzfiles
from pubsearch.index import postings as index_postings
from pubsearch.index import storage
from pubsearch.index.build import build_index, update_index
from pubsearch.index.schema import KEPT_LIST_FIELDS
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record
from pubsearch.search import masks
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService

DATA = Path(__file__).resolve().parent / "data"
SAMPLE = DATA / "arxiv-2024-2026.sample.jsonl"
# The sample's 300 records keep no list at the real bound (512 postings): with this one,
# lists of 16 to 18 documents are kept as numbers, longer ones as bitmaps.
LOW_BOUND = 16


@pytest.fixture()
def low_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hotlists, "MIN_POSTINGS", LOW_BOUND)


def _build(index_dir: Path, workers: int = 1) -> Path:
    build_index(index_dir, read_paths([SAMPLE], ReadReport()), workers=workers)
    gen = storage.current_generation(index_dir)
    assert gen is not None
    return gen


def _segments(gen: Path):  # type: ignore[no-untyped-def]
    ix = storage.open_index(gen)
    return ix, ix.reader()


def test_kept_lists_are_the_lists_the_blocks_hold(tmp_path: Path, low_bound: None) -> None:
    gen = _build(tmp_path)
    assert list(gen.glob("*" + hotlists.SUFFIX))
    ix, reader = _segments(gen)
    forms = set()
    with reader:
        for segment, _ in reader.leaf_readers():
            kept = w3format.kept_lists(segment)
            assert kept is not None
            n = segment.doc_count_all()
            for fieldname in KEPT_LIST_FIELDS:
                for text, info in segment.iter_field(fieldname):
                    blocks = w3format.raw_list(segment, fieldname, text, False)
                    assert blocks is not None
                    found = kept.get(fieldname, text)
                    long_enough = info.doc_frequency() >= hotlists.threshold(n)
                    assert (found is not None) == long_enough, (fieldname, text)
                    if found is None:
                        continue
                    forms.add("bitmap" if len(found[0]) * hotlists.DENSE > n else "numbers")
                    assert found[0].dtype == np.int64 and found[1].dtype == np.float64
                    assert found[0].tolist() == blocks[0].tolist()
                    assert found[1].tolist() == blocks[1].tolist()
                    table = segment._terms._tindex.get(segment._terms._keycoder(fieldname, text))
                    assert kept.row(fieldname, text) == table
                    flags = np.zeros(n, dtype=np.bool_)
                    assert kept.mark(fieldname, text, flags)
                    assert np.flatnonzero(flags).tolist() == blocks[0].tolist()
            # Other fields keep nothing: the abstract's would double what is kept.
            assert kept.get("abstract", b"the") is None
    ix.close()
    assert forms == {"bitmap", "numbers"}


def test_a_segment_without_long_lists_has_no_file(tmp_path: Path) -> None:
    gen = _build(tmp_path)  # 300 records: no list of 512 documents
    assert not list(gen.glob("*" + hotlists.SUFFIX))
    ix, reader = _segments(gen)
    with reader:
        assert all(w3format.kept_lists(s) is None for s, _ in reader.leaf_readers())
    ix.close()


def test_lists_with_weights_a_byte_cannot_hold_are_left_out() -> None:
    texts = [b"a", b"b", b"c", b"d"]
    docnums = np.arange(40, dtype=np.uint32) % 20
    # a: whole weights; b: one of 300; c: one of 1.5; d: one of 0.5
    weights = np.ones(40, dtype=np.float64)
    weights[12] = 300.0
    weights[25] = 1.5
    weights[33] = 0.5
    order = np.arange(40)
    bounds = [10, 20, 30, 40]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(hotlists, "MIN_POSTINGS", 10)
        kept = hotlists.select(texts, bounds, order, docnums, weights, doc_count=20)
        assert kept is not None
        assert kept.texts.tolist() == [b"a"]
        assert kept.weights.tolist() == [1] * 10
        assert hotlists.select(texts[1:2], [10], order[10:20], docnums, weights, 20) is None


def test_numbers_are_32_bits_past_65536_documents(tmp_path: Path) -> None:
    docnums = np.linspace(5, 100_000, 3200).astype(np.uint32)  # a list of 3,200 of 100,001
    kept = hotlists.select([b"w"], [3200], np.arange(3200), docnums, np.ones(3200), 100_001)
    assert kept is not None and kept.ids.dtype == np.uint32 and not len(kept.bits)
    assert hotlists.with_rows(kept, {}) is None  # each list's row is needed
    kept = hotlists.with_rows(kept, {b"w": b"row of w"})
    assert kept is not None
    hotlists.save(tmp_path / "x.hot.npz", {"content": kept})
    opened = hotlists.open_lists(str(tmp_path / "x.hot.npz"), 100_001)
    assert opened is not None
    found = opened.get("content", b"w")
    assert found is not None and found[0].tolist() == docnums.tolist()
    assert found[0][-1] == 100_000
    assert opened.row("content", b"w") == b"row of w"
    assert opened.get("content", b"v") is None and opened.get("title", b"w") is None


@pytest.mark.parametrize("damage", ["truncated", "garbage", "parts missing"])
def test_a_damaged_file_is_not_used(tmp_path: Path, low_bound: None, damage: str) -> None:
    gen = _build(tmp_path / "ix")
    expected = _answers(tmp_path / "ix")
    for path in gen.glob("*" + hotlists.SUFFIX):
        if damage == "truncated":
            path.write_bytes(path.read_bytes()[:1000])
        elif damage == "garbage":
            path.write_bytes(b"not a zip file at all" * 100)
        else:
            arrays = dict(npzfiles.load_arrays(path))
            del arrays["content.weights"]
            npzfiles.save_arrays(path, arrays)
    moved = tmp_path / "moved"  # a new path: this process has not opened its files yet
    shutil.copytree(tmp_path / "ix", moved)
    gen = storage.current_generation(moved)
    assert gen is not None
    ix, reader = _segments(gen)
    with reader:
        assert all(w3format.kept_lists(s) is None for s, _ in reader.leaf_readers())
    ix.close()
    assert _answers(moved) == expected


QUERIES = [
    "the",
    "of the and in",
    "the OR of OR and",
    "learning AND the",
    "the -model",
    '"of the"',
    "title:the",
    "ti:learning OR ti:model",
    "author:wang",
    "model*",
    "the of and in to a is we for that on with this by as are be an from our which",
    "language models AND NOT the",
    "(the OR of) AND (model OR data)",
]


def _answers(index_dir: Path) -> list[tuple[object, ...]]:
    """Each query's total, top 20 (ids and scores) and facet counts."""
    service = SearchService(index_dir)
    try:
        out: list[tuple[object, ...]] = []
        for q in QUERIES:
            for sort in ("relevance", "newest"):
                result = service.search(SearchRequest(q=q, facets=True, page_size=20, sort=sort))
                out.append(
                    (
                        q,
                        sort,
                        result.total,
                        [(h.id, round(h.score, 9)) for h in result.hits],
                        [
                            (name, [(v.value, v.count) for v in values])
                            for name, values in (result.facets or {}).items()
                        ],
                    )
                )
        return out
    finally:
        service.close()


def test_searches_find_and_rank_the_same_with_kept_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without = _answers_of_a_build(tmp_path / "without")
    monkeypatch.setattr(hotlists, "MIN_POSTINGS", LOW_BOUND)
    with_kept = _answers_of_a_build(tmp_path / "with")
    assert list((tmp_path / "with").glob("gen-*/*" + hotlists.SUFFIX))
    assert with_kept == without


def _answers_of_a_build(index_dir: Path) -> list[tuple[object, ...]]:
    _build(index_dir)
    return _answers(index_dir)


def test_a_term_mask_is_the_list_whether_kept_or_not(tmp_path: Path, low_bound: None) -> None:
    gen = _build(tmp_path)
    ix = storage.open_index(gen)
    with ix.searcher() as searcher:
        reader = searcher.reader()
        size = reader.doc_count_all()
        for word in ("the", "of", "learning", "graph", "nothingatall"):
            mask = masks.term_mask(reader, "content", word, size)
            expected = sorted(searcher.docs_for_query(wq.Term("content", word)))
            assert np.flatnonzero(mask).tolist() == expected
    ix.close()


def test_updates_keep_lists_and_merged_segments_take_theirs_away(
    tmp_path: Path, low_bound: None
) -> None:
    _build(tmp_path)
    for n in range(9):  # the eighth merges the build's and seven updates' small segments
        records = [
            Record(id=f"u{n}-{i}", title=f"The study {n} of the thing {i}", abstract="the " * 3)
            for i in range(20)
        ]
        update_index(tmp_path, records)
        gen = storage.current_generation(tmp_path)
        assert gen is not None
        segs = {p.name.removesuffix(".seg") for p in gen.glob("*.seg")}
        kept = {p.name.removesuffix(hotlists.SUFFIX) for p in gen.glob("*" + hotlists.SUFFIX)}
        assert kept <= segs  # none left behind by a segment merged away
        assert len(kept) == len(segs)  # every segment of 20 documents keeps "the"
    ix = storage.open_index(gen)
    with ix.searcher() as searcher:
        reader = searcher.reader()
        sizes = sorted(segment.doc_count_all() for segment, _ in reader.leaf_readers())
        assert sizes == [20, 300 + 8 * 20]  # the ninth update's, and the merged one
        for segment, _ in reader.leaf_readers():
            kept_lists = w3format.kept_lists(segment)
            assert kept_lists is not None
            found = kept_lists.get("content", b"the")
            blocks = w3format.raw_list(segment, "content", b"the", False)
            assert found is not None and blocks is not None
            assert found[0].tolist() == blocks[0].tolist()
        total = len(list(searcher.docs_for_query(wq.Term("content", "the"))))
    ix.close()
    service = SearchService(tmp_path)
    try:
        assert service.search(SearchRequest(q="the")).total == total
    finally:
        service.close()


def test_the_terms_table_is_read_as_whoosh_reads_it(tmp_path: Path) -> None:
    """Terms are looked up, and read in order, from the segment's file with a descriptor
    of its own: every key (and keys that are not there) as Whoosh's reader finds it."""
    gen = _build(tmp_path)
    ix, reader = _segments(gen)
    with reader:
        for segment, _ in reader.leaf_readers():
            opened = w3terms.opened_files(segment)
            assert opened.table is not None
            tindex = segment._terms._tindex
            items = list(tindex.items())
            assert items
            for key, value in items:
                assert opened.table.get(key) == value
                assert opened.table.get(key + b"~") == tindex.get(key + b"~")
            assert opened.table.get(b"\xff\xff") is None
            for start in (items[0][0], items[len(items) // 2][0], b"\x00\x01m"):
                assert list(w3terms.items_from(opened, tindex, start)) == list(
                    tindex.items_from(start)
                )
            with pytest.MonkeyPatch.context() as mp:  # reads across many buffers
                mp.setattr(w3terms, "_ITEMS_READ", 64)
                assert list(w3terms.items_from(opened, tindex, items[0][0])) == items
    ix.close()


def test_many_terms_are_looked_up_at_once_as_whoosh_finds_each(
    tmp_path: Path, low_bound: None
) -> None:
    """The rows of many terms in many segments, found together (kept lists' rows with one
    search, the others with one pass over each terms table, in C where it is built), are
    those Whoosh's reader gives term by term: terms a segment has, kept or not, and terms
    it does not have (absent words, a longer word, a prefix, text ending in NUL)."""
    _build(tmp_path)
    extra = [
        Record(id=f"x{i}", title="The theory", abstract="A model of the theory.") for i in (1, 2)
    ]
    update_index(tmp_path, extra)
    ix, reader = _segments(storage.current_generation(tmp_path))  # type: ignore[arg-type]
    with reader:
        segments = [segment for segment, _ in reader.leaf_readers()]
        assert len(segments) == 2
        for fieldname in ("content", "title", "author", "subject", "nofield"):
            known = fieldname in reader.schema
            have = sorted({t for s in segments if known for t, _ in s.iter_field(fieldname)})[::3]
            texts: list[str | bytes] = [*have, b"zzzq", b"the\0", b"th", b"theory~", b""]
            found = w3terms.term_rows_many(segments, fieldname, texts)
            for segment, rows in zip(segments, found, strict=True):
                terms = segment._terms
                for text, row in zip(texts, rows, strict=True):
                    expected = (
                        terms._tindex.get(terms._keycoder(fieldname, text))
                        if fieldname in terms._fieldmap
                        else None
                    )
                    assert row == expected, (fieldname, text)
            assert any(row is not None for rows in found for row in rows) == bool(have)
        kept = w3format.kept_lists(segments[0])
        assert kept is not None and kept.rows("content", [b"the"]) != [None]
        many = index_postings.term_rows_many(reader, "content", ["the", "zzzq", "the", "model"])
        assert many is not None
        assert many[0] == many[2] == index_postings.term_rows(reader, "content", "the")
        assert many[1] == ()
        assert [index_postings.doc_frequency(reader, "content", t) for t in ("the", "model")] == [
            reader.doc_frequency("content", t) for t in ("the", "model")
        ]
        assert index_postings.doc_frequencies(reader, "content", ["the", "zzzq"]) == [
            reader.doc_frequency("content", "the"),
            0,
        ]
    ix.close()


@pytest.mark.speedups
def test_many_look_ups_in_c_refuse_what_they_cannot_read(tmp_path: Path) -> None:
    """Tables of the wrong size, a hash table past the end of the file, and keys that
    are not bytes are refused with an error, not read."""
    import os

    from pubsearch.core import speedups

    compiled = speedups.active()
    assert compiled is not None
    path = tmp_path / "table"
    path.write_bytes(b"\0" * 64)
    fd = os.open(path, os.O_RDONLY)
    try:
        tables = np.zeros((256, 2), dtype=np.int64)
        hashes = np.zeros(1, dtype=np.uint32).tobytes()
        assert compiled.table_get_many(fd, 0, tables.tobytes(), [b"k"], hashes) == [None]
        with pytest.raises(ValueError, match="wrong size"):
            compiled.table_get_many(fd, 0, tables.tobytes()[:-8], [b"k"], hashes)
        with pytest.raises(ValueError, match="wrong size"):
            compiled.table_get_many(fd, 0, tables.tobytes(), [b"k", b"j"], hashes)
        tables[0] = (1_000, 4)  # key hash 0: table 0, past the file's 64 bytes
        with pytest.raises(ValueError, match="past the end"):
            compiled.table_get_many(fd, 0, tables.tobytes(), [b"k"], hashes)
        with pytest.raises(ValueError, match="bytes"):
            compiled.table_get_many(fd, 0, tables.tobytes(), ["k"], hashes)
    finally:
        os.close(fd)


@pytest.mark.speedups
@pytest.mark.parametrize(
    ("fieldname", "pattern"),
    [("content", "t"), ("content", "co"), ("title", "l"), ("author", "w"), ("content", "zzq")],
)
def test_a_prefix_read_in_c_is_what_python_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, low_bound: None, fieldname: str, pattern: str
) -> None:
    """A prefix's words and lists, scanned and decoded in C a run of lists at a time
    between the kept ones, are those the word-by-word reading gives."""
    from pubsearch.core import speedups

    compiled = speedups.active()
    assert compiled is not None
    ix, reader = _segments(_build(tmp_path, workers=2))
    kept_words = 0
    try:
        for segment, _ in reader.leaf_readers():
            opened = w3terms.opened_files(segment)
            in_c = w3format._prefix_postings_in_c(
                segment, opened, fieldname, pattern.encode(), None, compiled
            )
            monkeypatch.setattr(speedups, "active", lambda: None)
            plain = w3format.prefix_postings(segment, fieldname, pattern, None)
            monkeypatch.setattr(speedups, "active", lambda: compiled)
            assert plain is not None
            assert in_c.words == plain.words
            # The kept lists are apart, each word's in its place: put back, the same lists.
            ids, weights, counts = [], [], []
            begin = 0
            for number, count in enumerate(in_c.counts.tolist()):
                if number in in_c.kept:
                    assert count == 0
                    kept_ids, kept_weights = in_c.kept[number]
                    ids.append(kept_ids)
                    weights.append(kept_weights)
                    counts.append(len(kept_ids))
                else:
                    ids.append(in_c.ids[begin : begin + count])
                    weights.append(in_c.weights[begin : begin + count])
                    counts.append(count)
                begin += count
            assert begin == len(in_c.ids)
            assert counts == plain.counts.tolist()
            if ids:
                assert np.array_equal(np.concatenate(ids), plain.ids)
                assert np.array_equal(np.concatenate(weights), plain.weights)
            kept_words += len(in_c.kept)
    finally:
        reader.close()
        ix.close()
    if pattern != "zzq":
        assert kept_words  # runs of lists on either side of kept ones


@pytest.mark.speedups
@pytest.mark.parametrize("q", ["model*", "th*", "co*", "pr*", "learn* AND the"])
def test_a_prefix_with_kept_lists_scores_as_numpy_does_to_the_last_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, low_bound: None, q: str
) -> None:
    """Its kept lists, scored where they stand among its other postings, give the sums
    numpy gives for all its postings in one array."""
    from pubsearch.core import speedups
    from pubsearch.index.lengths import field_lengths
    from pubsearch.search.compiler import parse_query
    from pubsearch.search.topdocs import _scores

    ix = storage.open_index(_build(tmp_path))
    try:
        with ix.searcher() as searcher:
            query = parse_query(q, searcher.schema)
            size = searcher.reader().doc_count_all()
            cache: dict[str, object] = {}

            def lengths(fieldname: str):  # type: ignore[no-untyped-def]
                return cache.setdefault(fieldname, field_lengths(searcher.reader(), fieldname))

            reader = searcher.reader()
            patterns = [p for p in query.leaves() if isinstance(p, wq.PatternQuery)]
            assert any(masks.pattern_postings(reader, p).kept for p in patterns)  # type: ignore[union-attr]
            in_c = _scores(searcher, searcher.weighting, query, size, lengths)
            monkeypatch.setattr(speedups, "enabled", False)
            in_numpy = _scores(searcher, searcher.weighting, query, size, lengths)
    finally:
        ix.close()
    assert in_c is not None and in_numpy is not None
    assert in_c[0].tolist() == in_numpy[0].tolist()
    assert in_c[1].tobytes() == in_numpy[1].tobytes()
