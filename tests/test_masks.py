"""Match masks from posting lists must be the documents Whoosh's matchers find."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from whoosh import query as wq

from pubsearch import storage
from pubsearch.indexing import build_index, update_index
from pubsearch.masks import phrase_docs, postings, query_mask
from pubsearch.readers import ReadReport, read_paths
from pubsearch.records import Record
from pubsearch.searching import SearchRequest, SearchService


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
