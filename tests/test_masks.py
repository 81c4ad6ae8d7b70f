"""Match masks from posting lists must be the documents Whoosh's matchers find."""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from whoosh import formats
from whoosh import query as wq
from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC, W3TermInfo
from whoosh.writing import SegmentWriter

from pubsearch.codec import w3format, w3positions, w3terms
from pubsearch.core import speedups
from pubsearch.index import postings as index_postings
from pubsearch.index import storage
from pubsearch.index.build import build_index, update_index
from pubsearch.index.documents import record_fields
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record
from pubsearch.search import masks
from pubsearch.search.masks import _sorted_common, phrase_docs, postings, query_mask
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture()
def index_dir(tmp_path: Path, seeds_dir: Path) -> Path:
    build_index(tmp_path, read_paths([seeds_dir], ReadReport()))
    return tmp_path


def _searcher(index_dir: Path):  # type: ignore[no-untyped-def]
    ix = storage.open_index(storage.current_generation(index_dir))  # type: ignore[arg-type]
    return ix.searcher()


@pytest.mark.parametrize("word", ["batch", "train", "network", "you", "nothingatall"])
def test_postings_are_the_posting_list(index_dir: Path, word: str) -> None:
    with _searcher(index_dir) as searcher:
        for field in ("title", "abstract", "content"):
            ids, weights = postings(searcher.reader(), field, word)
            matcher_ids, matcher_weights = [], []
            if (field, word) in searcher.reader():
                matcher = searcher.reader().postings(field, word)
                while matcher.is_active():
                    matcher_ids.append(matcher.id())
                    matcher_weights.append(matcher.weight())
                    matcher.next()
            assert ids.tolist() == matcher_ids
            assert weights.tolist() == pytest.approx(matcher_weights)


def test_phrase_matches_are_shared_by_searchers_of_one_generation(index_dir: Path) -> None:
    phrase = wq.Phrase("abstract", ["batch", "size"])
    with _searcher(index_dir) as first, _searcher(index_dir) as second:
        assert first.reader() is not second.reader()
        found = phrase_docs(first, phrase)
        assert found is not None and len(found)
        assert phrase_docs(second, phrase) is found  # decoded once
        assert not found.flags.writeable
        size = first.reader().doc_count_all()
        assert np.flatnonzero(query_mask(first, phrase, size)).tolist() == sorted(
            first.docs_for_query(phrase)
        )


def test_phrase_matches_follow_a_new_generation(index_dir: Path) -> None:
    service = SearchService(index_dir)
    try:
        before = service.search(SearchRequest(q='"batch size"')).total
        update_index(
            index_dir,
            [Record(id="new", title="On the batch size", abstract="The batch size matters.")],
        )
        assert service.search(SearchRequest(q='"batch size"')).total == before + 1
    finally:
        service.close()


def test_doc_frequencies_are_whooshs_in_every_segment(index_dir: Path) -> None:
    """From the terms' rows kept for the generation: each word's frequency summed over the
    segments, deleted documents included, as Whoosh's reader gives it; 0 for a word no
    segment has; and after an update, the new generation's."""
    update_index(
        index_dir,
        [Record(id=f"more-{n}", title=f"Batch size {n}", abstract="The batch.") for n in range(3)],
    )
    with _searcher(index_dir) as searcher:
        reader = searcher.reader()
        assert len(reader.leaf_readers()) > 1
        for field in ("title", "abstract", "content", "author", "subject"):
            words = [*list(reader.field_terms(field))[:150], "nothingatall"]
            for word in words:
                want = reader.doc_frequency(field, word)
                assert index_postings.doc_frequency(reader, field, word) == want, (field, word)
                rows = index_postings.term_rows(reader, field, word)
                assert rows is not None and len(rows) == sum(
                    (field, word) in leaf for leaf, _ in reader.leaf_readers()
                )
        before = index_postings.doc_frequency(reader, "title", "batch")
    update_index(index_dir, [Record(id="one-more", title="A batch", abstract="Batch.")])
    with _searcher(index_dir) as searcher:
        assert index_postings.doc_frequency(searcher.reader(), "title", "batch") == before + 1


def test_term_rows_are_looked_up_once_a_generation(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoosh asks each segment's table three times for a word a query scores (is it
    there, its frequency, its postings): here once, for every searcher of the generation."""
    monkeypatch.setattr(
        index_postings, "_TERM_ROWS", index_postings.SharedResults(limit=2, size=lambda rows: 1)
    )
    asked: list[str] = []  # a text for each segment it was looked up in
    looked_up = w3terms.term_rows_many

    def counted(segments, fieldname, texts):  # type: ignore[no-untyped-def]
        asked.extend(text for text in texts for _ in segments)
        return looked_up(segments, fieldname, texts)

    monkeypatch.setattr(w3terms, "term_rows_many", counted)
    with _searcher(index_dir) as first, _searcher(index_dir) as second:
        segments = len(first.reader().leaf_readers())
        for searcher in (first, second):
            searcher.idf("content", "batch")
            postings(searcher.reader(), "content", "batch")
            assert searcher.doc_frequency("content", "batch") == index_postings.doc_frequency(
                searcher.reader(), "content", "batch"
            )
        assert asked.count("batch") == segments
        for word in ("size", "train", "batch"):  # two kept: "batch" was dropped
            index_postings.doc_frequency(first.reader(), "content", word)
        assert asked.count("batch") == 2 * segments


def test_long_posting_lists_are_shared_by_searchers_of_one_generation(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A list this long is read once for every thread and searcher of the generation (the
    per-thread cache is not what serves the second searcher: a new thread asks), and is
    the list Whoosh's matcher gives; a shorter one is not kept."""
    monkeypatch.setattr(index_postings, "_LONG_LIST_POSTINGS", 10)
    monkeypatch.setattr(index_postings, "_LONG_LISTS", index_postings.SharedResults(limit=1 << 20))
    reads: list[str] = []
    read = index_postings.read_postings

    def counted(reader, fieldname, text):  # type: ignore[no-untyped-def]
        reads.append(text)
        return read(reader, fieldname, text)

    monkeypatch.setattr(index_postings, "read_postings", counted)
    with _searcher(index_dir) as first, _searcher(index_dir) as second:
        reader = first.reader()
        long_word, short_word = "the", "batch"
        assert first.doc_frequency("content", long_word) >= 10
        assert first.doc_frequency("content", short_word) < 10
        got: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # type: ignore[type-arg]

        def in_new_thread(searcher, word: str) -> None:  # type: ignore[no-untyped-def]
            got[word] = postings(searcher.reader(), "content", word)

        for searcher in (first, second):
            for word in (long_word, short_word):
                thread = threading.Thread(target=in_new_thread, args=(searcher, word))
                thread.start()
                thread.join()
                ids, weights = got[word]
                matcher = reader.postings("content", word)
                assert ids.tolist() == list(matcher.all_ids())
                assert len(weights) == len(ids)
        assert reads.count(long_word) == 1
        assert reads.count(short_word) == 2
        assert not got[long_word][0].flags.writeable


def test_a_threads_recent_lists_are_bounded_in_bytes_as_well_as_in_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A common word's list grows with the index: a thread keeps the last lists only up to
    a number of bytes, and always the newest, however large."""
    monkeypatch.setattr(index_postings, "_RECENT_MAX_BYTES", 10_000)
    recent: OrderedDict[object, tuple[object, ...]] = OrderedDict()

    def lists(count: int) -> tuple[object, np.ndarray, np.ndarray]:  # type: ignore[type-arg]
        return (None, np.zeros(count, dtype=np.int64), np.zeros(count, dtype=np.float64))

    for word in range(4):
        index_postings._remember(recent, word, lists(200))  # 3,200 bytes each
    assert list(recent) == [1, 2, 3]
    index_postings._remember(recent, "huge", lists(5_000))  # 80,000 bytes: alone, and kept
    assert list(recent) == ["huge"]
    for word in range(index_postings._RECENT_SIZE + 3):
        index_postings._remember(recent, ("small", word), lists(1))
    assert len(recent) == index_postings._RECENT_SIZE


@pytest.mark.parametrize("text", ["000A:0", "1A:0 model"])
def test_a_field_the_schema_lacks_matches_nothing(index_dir: Path, text: str) -> None:
    # Whoosh's parser can make a term of an unknown field out of "000A:0" (found by
    # hypothesis): it matches nothing, rather than raising.
    service = SearchService(index_dir)
    try:
        assert service.search(SearchRequest(q=text)).total >= 0
    finally:
        service.close()
    with _searcher(index_dir) as searcher:
        size = searcher.reader().doc_count_all()
        assert not query_mask(searcher, wq.Term("A", "0"), size).any()


_SORTED_SETS = st.lists(st.integers(0, 60), max_size=30).map(
    lambda xs: np.asarray(sorted(set(xs)), dtype=np.int64)
)


@given(_SORTED_SETS, _SORTED_SETS)
def test_sorted_common_is_the_intersection(a: np.ndarray, b: np.ndarray) -> None:  # type: ignore[type-arg]
    assert _sorted_common(a, b).tolist() == np.intersect1d(a, b).tolist()


@given(_SORTED_SETS, _SORTED_SETS)
def test_common_indices_are_where_both_have_a_number(a: np.ndarray, b: np.ndarray) -> None:  # type: ignore[type-arg]
    """In C (a merge that gallops) and with numpy, the same indices: the definition's."""
    want = [(i, j) for i, x in enumerate(a.tolist()) for j, y in enumerate(b.tolist()) if x == y]
    in_a, in_b = masks._common_indices(a, b)
    assert list(zip(in_a.tolist(), in_b.tolist(), strict=True)) == want
    if speedups.compiled is not None:
        with pytest.MonkeyPatch.context() as patched:
            patched.setattr(speedups, "enabled", False)
            plain = masks._common_indices(a, b)
        assert [x.tolist() for x in plain] == [in_a.tolist(), in_b.tolist()]


@pytest.mark.speedups
def test_common_indices_in_c_gallop_and_refuse_unsorted_numbers() -> None:
    assert speedups.compiled is not None, "the C speedups were not built"
    long = np.arange(0, 3_000_000, 3, dtype=np.int64)
    short = np.array([-5, 0, 4, 299_999, 300_000, 2_999_997, 5_000_000], dtype=np.int64)
    for a, b in ((short, long), (long, short)):
        in_a, in_b = (np.frombuffer(x, np.int64) for x in speedups.compiled.common_indices(a, b))
        assert a[in_a].tolist() == b[in_b].tolist() == [0, 300_000, 2_999_997]
    with pytest.raises(ValueError, match="not rising"):
        speedups.compiled.common_indices(np.array([3, 2], dtype=np.int64), long)
    with pytest.raises(ValueError, match="int64"):
        speedups.compiled.common_indices(b"abc", long)


@pytest.mark.parametrize("text", ["batch size", "large batch training", "large batch"])
def test_phrases_match_the_same_with_positions_out_of_order(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """Positions are expected in order, candidate by candidate, and then need no sorting;
    given out of order they are sorted, and the matches are the same."""
    table = w3positions.position_table

    def reversed_table(values: list[bytes]) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[type-arg]
        owners, positions = table(values)
        return owners[::-1].copy(), positions[::-1].copy()

    matched = 0
    monkeypatch.setattr(w3positions, "phrase_fits", lambda values, slop: None)  # arrays
    with _searcher(index_dir) as searcher:
        reader = searcher.reader()
        for field in ("title", "abstract", "author"):
            words = tuple(searcher.schema[field].analyzer.words(text))
            assert len(words) > 1
            expected = masks._phrase_docs(reader, field, words, 1)
            monkeypatch.setattr(w3positions, "position_table", reversed_table)
            assert masks._phrase_docs(reader, field, words, 1).tolist() == expected.tolist()
            monkeypatch.setattr(w3positions, "position_table", table)
            matched += len(expected)
    assert matched > 0


@pytest.mark.speedups
@pytest.mark.parametrize("text", ["batch size", "large batch training", "of the", "in the model"])
@pytest.mark.parametrize("slop", [1, 2, 4])
def test_phrases_match_the_same_in_c_as_with_arrays(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch, text: str, slop: int
) -> None:
    assert speedups.compiled is not None, "the C speedups were not built"
    matched = 0
    with _searcher(index_dir) as searcher:
        reader = searcher.reader()
        for field in ("title", "abstract", "author"):
            words = tuple(searcher.schema[field].analyzer.words(text))
            assert len(words) > 1
            in_c = masks._phrase_docs(reader, field, words, slop)
            with monkeypatch.context() as patched:
                patched.setattr(w3positions, "phrase_fits", lambda values, slop: None)
                with_arrays = masks._phrase_docs(reader, field, words, slop)
            assert in_c.tolist() == with_arrays.tolist(), field
            matched += len(in_c)
    assert matched > 0


@pytest.mark.parametrize("slop", [1, 3])
def test_phrases_across_segments_match_what_whoosh_matches(index_dir: Path, slop: int) -> None:
    """A phrase is matched a segment at a time: segments lacking a word, or having both
    words only in different records, match nothing; deleted records are left to the
    caller (as Whoosh leaves them out, so are they here before comparing)."""
    updates = [
        [Record(id="u1", title="Batch", abstract="Only batch here, size elsewhere.")],
        [Record(id="u2", title="Size", abstract="The size of it.")],
        [
            Record(id="u3", title="Batch size", abstract="A batch size and a size batch."),
            Record(id="u4", title="Batch", abstract="Batch normalisation of the size."),
        ],
        [Record(id="u3", title="Batch size again", abstract="A large batch size.")],  # replaced
    ]
    for records in updates:
        update_index(index_dir, records)
    with _searcher(index_dir) as searcher:
        reader = searcher.reader()
        assert len(reader.leaf_readers()) > 2 and reader.has_deletions()
        matched = 0
        for field in ("title", "abstract"):
            for text in ("batch size", "size batch", "batch size of", "of the size"):
                words = tuple(searcher.schema[field].analyzer.words(text))
                docs = masks._phrase_docs(reader, field, words, slop)
                live = [d for d in docs.tolist() if not reader.is_deleted(d)]
                q = wq.Phrase(field, list(words), slop=slop)
                assert live == sorted(searcher.docs_for_query(q)), (field, text)
                matched += len(live)
        assert matched > 3


def _fits_by_definition(positions: list[list[list[int]]], slop: int) -> list[bool]:
    """For each candidate: some position of each word 1 to ``slop`` after the nearest
    position before it reached by the word before."""
    out = []
    for candidate in range(len(positions[0])):
        reached = sorted(set(positions[0][candidate]))
        for word in positions[1:]:
            kept = []
            for p in sorted(set(word[candidate])):
                below = [r for r in reached if r < p]
                if below and p - below[-1] <= slop:
                    kept.append(p)
            reached = kept
        out.append(bool(reached))
    return out


_POSITIONS = st.lists(st.integers(0, 40), max_size=12)


@pytest.mark.speedups
@given(
    words=st.integers(2, 4).flatmap(
        lambda n: st.integers(0, 6).flatmap(
            lambda c: st.lists(st.lists(_POSITIONS, min_size=c, max_size=c), min_size=n, max_size=n)
        )
    ),
    slop=st.integers(1, 4),
)
def test_phrase_fits_in_c_is_its_definition(words: list[list[list[int]]], slop: int) -> None:
    """Positions in any order, repeated or not, over 255 apart (other pickle opcodes)."""
    assert speedups.compiled is not None, "the C speedups were not built"
    fmt = formats.Positions()
    positions = [[[p * 9 for p in c] for c in word] for word in words]
    values = [w3positions.PackedValues.of([fmt.encode(c) for c in word]) for word in positions]
    fits = speedups.compiled.phrase_fits([(v.joined, v.starts, v.ends) for v in values], slop)
    assert [bool(b) for b in fits] == _fits_by_definition(positions, slop)


@pytest.mark.speedups
@given(values=st.lists(st.binary(max_size=40), min_size=1, max_size=4))
def test_phrase_fits_in_c_refuses_damaged_values(values: list[bytes]) -> None:
    assert speedups.compiled is not None, "the C speedups were not built"
    fmt = formats.Positions()
    good = w3positions.PackedValues.of([fmt.encode([1, 300, 70_000]) for _ in values])
    bad = w3positions.PackedValues.of(values)
    for given_values in ([bad, good], [good, bad]):
        try:
            fits = speedups.compiled.phrase_fits(
                [(v.joined, v.starts, v.ends) for v in given_values], 1
            )
        except ValueError:
            continue
        assert len(fits) == len(values)
    twice = w3positions.PackedValues.of([fmt.encode([1, 300, 70_000]) for _ in values] * 2)
    with pytest.raises(ValueError, match="of one length"):
        speedups.compiled.phrase_fits(
            [(good.joined, good.starts, good.ends)] + [(twice.joined, twice.starts, twice.ends)], 1
        )
    outside = (good.joined, good.starts, good.ends + 1)
    with pytest.raises(ValueError, match="outside"):
        speedups.compiled.phrase_fits([(good.joined, good.starts, good.ends), outside], 1)


@pytest.mark.parametrize("in_c", [pytest.param(True, marks=pytest.mark.speedups), False])
def test_position_table_decodes_what_whoosh_encodes(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch, in_c: bool
) -> None:
    """Positions decoded for many values at once are each value's own, as Whoosh decodes
    it: values from the index, and made up ones with long gaps (other pickle opcodes),
    over 1,000 positions (pickled in batches) and without their final STOP; in C and in
    Python."""
    if in_c:
        assert speedups.compiled is not None, "the C speedups were not built"
    monkeypatch.setattr(speedups, "enabled", in_c)
    fmt = formats.Positions()
    made = [
        [0],
        [5, 300],
        [3, 70_000, 70_001],
        [65_535, 65_536],
        list(range(0, 2_000, 7)),
        list(range(0, 9_000, 3)),
    ]
    values = [fmt.encode(p) for p in made] + [fmt.encode([1, 2])[:-1]]
    with _searcher(index_dir) as searcher:
        for word in ("batch", "train", "network"):
            for _, _, piece in index_postings.postings_with_values(
                searcher.reader(), "abstract", word
            ):
                values += piece.as_list()
    assert len(values) > 20
    owners, positions = w3positions.position_table(values)
    want_owners: list[int] = []
    want_positions: list[int] = []
    for i, value in enumerate(values):
        decoded = fmt.decode_positions(value if value.endswith(b".") else value + b".")
        want_owners += [i] * len(decoded)
        want_positions += decoded
    assert owners.tolist() == want_owners
    assert positions.tolist() == want_positions
    empty_owners, empty_positions = w3positions.position_table([])
    assert len(empty_owners) == len(empty_positions) == 0


@pytest.mark.speedups
def test_position_table_in_c_refuses_what_it_does_not_read() -> None:
    assert speedups.compiled is not None, "the C speedups were not built"
    fmt = formats.Positions()
    good = fmt.encode([1, 5])
    for bad in (b"", good[:6], good[:4] + b"\x80\x03" + good[6:], good + b"X", good[:-1] + b"N"):
        with pytest.raises(ValueError, match="unexpected encoding"):
            speedups.compiled.position_table([good, bad])


def _matcher_postings(reader, fieldname: str, text: str):  # type: ignore[no-untyped-def]
    """A posting list as Whoosh's matchers give it, posting by posting, deleted
    documents included."""
    ids, weights, values = [], [], []
    for segment, offset in reader.leaf_readers():
        if (fieldname, text) not in segment:
            continue
        matcher = segment.postings(fieldname, text)
        if hasattr(matcher, "child"):  # past the deletions filter, which skipped some
            matcher = matcher.child
            matcher.reset()
        while matcher.is_active():
            ids.append(matcher.id() + offset)
            weights.append(matcher.weight())
            values.append(matcher.value())
            matcher.next()
    return ids, weights, values


@pytest.mark.parametrize("writer", ["pubsearch", "whoosh"])
def test_posting_lists_read_whole_are_whoosh_matchers_lists(
    tmp_path: Path, seeds_dir: Path, writer: str
) -> None:
    """Every posting list of every field, read in one piece and taken apart block by
    block, is what Whoosh's matchers read: long lists of several blocks, an index of two
    segments with deleted documents, blocks pickled by pubsearch's writer or Whoosh's."""
    records = list(read_paths([seeds_dir, DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))
    if writer == "pubsearch":
        build_index(tmp_path, records + records[:5])  # duplicates merged: deletions
        ix = storage.open_index(storage.current_generation(tmp_path))  # type: ignore[arg-type]
    else:
        ix = storage.create_index(tmp_path)
        for part in (records[:150], records[150:]):
            plain = SegmentWriter(ix)
            for record in part:
                plain.add_document(**record_fields(record))
            plain.commit(merge=False)
        plain = SegmentWriter(ix)
        plain.delete_by_term("id", records[3].id)
        plain.commit(merge=False)
    long_lists = 0
    with ix.reader() as reader:
        assert len(reader.leaf_readers()) == 2 and reader.has_deletions()
        for fieldname in ("title", "abstract", "content", "author", "subject", "keys"):
            for text in reader.field_terms(fieldname):
                positions = fieldname in ("title", "abstract", "author")
                ids, weights = index_postings.read_postings(reader, fieldname, text)
                pieces = index_postings._read_pieces(reader, fieldname, text, positions)
                values = [v for *_, piece in pieces for v in piece.as_list()] if positions else None
                want_ids, want_weights, want_values = _matcher_postings(reader, fieldname, text)
                assert ids.tolist() == want_ids, (fieldname, text)
                assert weights.tolist() == pytest.approx(want_weights), (fieldname, text)
                if positions:
                    assert values is not None
                    assert values == want_values, (fieldname, text)
                long_lists += len(want_ids) > 128
        for segment, _ in reader.leaf_readers():  # read whole, not through the fallback
            first_term = next(segment.field_terms("content"))
            assert w3format.raw_list(segment, "content", first_term, False)
    ix.close()
    assert long_lists > 5


@pytest.mark.parametrize("writer", ["pubsearch", "whoosh"])
def test_pattern_postings_are_the_lists_of_the_words_it_expands_to(
    tmp_path: Path, seeds_dir: Path, writer: str
) -> None:
    """A prefix or wildcard read a segment at a time (words in order from the prefix,
    lists in one piece) gives each word Whoosh's expansion finds, with its matcher's
    postings: inlined lists, long lists of several blocks, two segments, deletions."""
    records = list(read_paths([seeds_dir, DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))
    if writer == "pubsearch":
        build_index(tmp_path, records + records[:5])
        ix = storage.open_index(storage.current_generation(tmp_path))  # type: ignore[arg-type]
    else:
        ix = storage.create_index(tmp_path)
        for part in (records[:150], records[150:]):
            plain = SegmentWriter(ix)
            for record in part:
                plain.add_document(**record_fields(record))
            plain.commit(merge=False)
    patterns = [
        wq.Prefix("content", "co"),
        wq.Prefix("content", "t"),
        wq.Prefix("title", "learn"),
        wq.Wildcard("content", "ne?r*"),
        wq.Wildcard("abstract", "*ing"),
        wq.Wildcard("content", "c?n"),
        wq.Prefix("subject", "cs."),
        wq.Prefix("author", "y"),
        wq.Prefix("content", "zzzq"),
        # The words as written that patterns on titles and abstracts expand to.
        wq.Prefix("title_words", "learn"),
        wq.Prefix("abstract_words", "co"),
        wq.Wildcard("abstract_words", "transform?r*"),
    ]
    inlined = several_blocks = 0
    with ix.reader() as reader:
        assert len(reader.leaf_readers()) == 2
        for q in patterns:
            kept = masks.pattern_postings(reader, q)
            assert kept is not None
            found = kept.whole()
            want = sorted({w.decode() for w in q._btexts(reader)})
            assert sorted(found.words) == want, q
            for number, word in enumerate(found.words):
                mine = found.word_of == number
                want_ids, want_weights, _ = _matcher_postings(reader, q.fieldname, word)
                assert sorted(found.ids[mine].tolist()) == sorted(want_ids), (q, word)
                order = np.argsort(found.ids[mine], kind="stable")
                assert found.weights[mine][order].tolist() == pytest.approx(want_weights)
                inlined += len(want_ids) == 1
                several_blocks += len(want_ids) > 128
        assert masks.pattern_postings(reader, wq.Prefix("year", "2")) is None  # not text
    ix.close()
    assert inlined and several_blocks


def _raw_lists(reader, fieldnames):  # type: ignore[no-untyped-def]
    """The bytes of every posting list kept in the postings file (not inlined)."""
    for segment, _ in reader.leaf_readers():
        terms = segment._terms
        stats = W3TermInfo._struct.size
        for fieldname in fieldnames:
            for text in segment.field_terms(fieldname):
                tbytes = segment._text_to_bytes(fieldname, text)
                row = terms._tindex.get(terms._keycoder(fieldname, tbytes))
                if row[0]:
                    continue
                offset = int.from_bytes(row[stats : stats + 8], "big")
                length = int.from_bytes(row[stats + 8 : stats + 12], "big")
                yield fieldname, text, terms._postfile.get(offset, length)


@pytest.mark.speedups
@pytest.mark.parametrize("writer", ["pubsearch", "whoosh"])
def test_posting_lists_decoded_in_c_are_what_pickle_reads(
    tmp_path: Path, seeds_dir: Path, writer: str
) -> None:
    """Every list of either writer's index: the C decoder gives the numbers and weights
    that Python's pickle gives, and refuses none of them."""
    assert speedups.compiled is not None, "the C speedups were not built"
    records = list(read_paths([seeds_dir, DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))
    if writer == "pubsearch":
        build_index(tmp_path, records)
        ix = storage.open_index(storage.current_generation(tmp_path))  # type: ignore[arg-type]
    else:
        ix = storage.create_index(tmp_path)
        plain = SegmentWriter(ix)
        for record in records:
            plain.add_document(**record_fields(record))
        plain.commit(merge=False)
    decoded = refused = 0
    with ix.reader() as reader:
        fields = ("title", "abstract", "content", "author", "subject", "keys", "id")
        for fieldname, text, raw in _raw_lists(reader, fields):
            ids, weights = speedups.compiled.decode_list(raw, WHOOSH3_HEADER_MAGIC, zlib.decompress)
            python = w3format.BlockArrays()
            python.add_list(raw)
            want_ids, want_weights = python.arrays()
            assert np.frombuffer(ids, dtype=np.int64).tolist() == want_ids.tolist(), text
            assert np.frombuffer(weights, dtype=np.float64).tolist() == want_weights.tolist()
            decoded += 1
            if fieldname not in ("title", "abstract"):
                continue  # values of a fixed size, joined in one bytes a block: not decoded
            # With their values (encoded positions): what pickle reads. Whoosh's protocol-2
            # pickles (each value a call to _codecs.encode) are refused, and pickle reads them.
            with_values = w3format.BlockArrays(with_values=True)
            with_values.add_list(raw)
            try:
                *_, values = speedups.compiled.decode_list(
                    raw, WHOOSH3_HEADER_MAGIC, zlib.decompress, True
                )
            except ValueError:
                assert writer == "whoosh" and any(with_values.values), text
                refused += 1
            else:
                assert values == with_values.values, text
                *_, joined, ends = speedups.compiled.decode_list(
                    raw, WHOOSH3_HEADER_MAGIC, zlib.decompress, 2
                )
                sizes = np.diff(np.frombuffer(ends, dtype=np.int64), prepend=0)
                assert sizes.tolist() == [len(v) for v in values], text
                assert joined == b"".join(values), text
    ix.close()
    assert decoded > 500
    assert refused > 100 if writer == "whoosh" else not refused


@pytest.fixture(scope="module")
def long_raw_list(tmp_path_factory: pytest.TempPathFactory, seeds_dir: Path) -> bytes:
    """The bytes of a posting list of several compressed blocks."""
    index_dir = tmp_path_factory.mktemp("decoder")
    build_index(index_dir, read_paths([seeds_dir], ReadReport()))
    ix = storage.open_index(storage.current_generation(index_dir))  # type: ignore[arg-type]
    with ix.reader() as reader:
        raw = max((r for _, _, r in _raw_lists(reader, ["content"])), key=len)
    ix.close()
    return raw


@pytest.mark.speedups
@given(damage=st.binary(max_size=64), where=st.integers(min_value=0, max_value=100_000))
def test_the_c_decoder_refuses_damaged_lists(
    long_raw_list: bytes, damage: bytes, where: int
) -> None:
    """Bytes changed, cut or added anywhere: a ValueError (or zlib's error), never a crash
    or a read past the end."""
    assert speedups.compiled is not None, "the C speedups were not built"
    raw = long_raw_list
    at = where % len(raw)
    for broken in (raw[:at] + damage + raw[at + len(damage) :], raw[:at], raw + damage):
        for with_values in (False, True):
            try:
                speedups.compiled.decode_list(
                    broken, WHOOSH3_HEADER_MAGIC, zlib.decompress, with_values
                )
            except (ValueError, zlib.error):
                pass


@pytest.mark.speedups
@given(values=st.lists(st.binary(max_size=40), max_size=8))
def test_the_c_position_decoder_refuses_damaged_values(values: list[bytes]) -> None:
    assert speedups.compiled is not None, "the C speedups were not built"
    fmt = formats.Positions()
    for given_values in (values, [fmt.encode([1, 300, 70_000]), *values]):
        try:
            owners, positions = speedups.compiled.position_table(given_values)
        except ValueError:
            continue
        assert len(owners) == len(positions)
