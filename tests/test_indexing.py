from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pubsearch.core.errors import IndexLockedError, IndexMissingError
from pubsearch.index import storage
from pubsearch.index.build import build_index, update_index
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService


def seeds(seeds_dir: Path) -> Iterator[Record]:
    return read_paths([seeds_dir], ReadReport())


def generations(index_dir: Path) -> list[str]:
    return sorted(p.name for p in index_dir.glob(storage.GEN_PREFIX + "*"))


def test_build_creates_a_generation_and_pointer(tmp_path: Path, seeds_dir: Path) -> None:
    summary = build_index(tmp_path, seeds(seeds_dir))
    assert (summary.indexed, summary.total, summary.duplicates_merged) == (36, 36, 0)
    assert (tmp_path / "CURRENT").read_text().strip() == summary.generation
    assert generations(tmp_path) == [summary.generation]


def test_rebuild_swaps_and_keeps_one_old_generation(tmp_path: Path, seeds_dir: Path) -> None:
    first = build_index(tmp_path, seeds(seeds_dir)).generation
    second = build_index(tmp_path, seeds(seeds_dir)).generation
    third = build_index(tmp_path, seeds(seeds_dir)).generation
    assert len({first, second, third}) == 3
    assert generations(tmp_path) == sorted([second, third])


def test_failed_build_leaves_previous_index_searchable(tmp_path: Path, seeds_dir: Path) -> None:
    build_index(tmp_path, seeds(seeds_dir))
    before = (tmp_path / "CURRENT").read_text()

    def broken() -> Iterator[Record]:
        yield Record(title="Only one", year=2020)
        raise KeyboardInterrupt  # as if Ctrl-C came mid-build

    with pytest.raises(KeyboardInterrupt):
        build_index(tmp_path, broken())
    assert (tmp_path / "CURRENT").read_text() == before
    assert not list(tmp_path.glob(storage.BUILD_PREFIX + "*"))
    assert SearchService(tmp_path).search(SearchRequest(q="batch")).total == 6


def test_abandoned_build_directory_is_cleaned_by_next_build(
    tmp_path: Path, seeds_dir: Path
) -> None:
    build_index(tmp_path, seeds(seeds_dir))
    stale = storage.new_build_dir(tmp_path)  # as a SIGKILLed build would leave it
    (stale / "junk").write_text("x")
    build_index(tmp_path, seeds(seeds_dir))
    assert not stale.exists()


def test_second_writer_fails_clearly_while_first_holds_the_lock(
    tmp_path: Path, seeds_dir: Path
) -> None:
    build_index(tmp_path, seeds(seeds_dir))
    with storage.writer_lock(tmp_path, timeout=0):
        with pytest.raises(IndexLockedError, match="another pubsearch process"):
            build_index(tmp_path, seeds(seeds_dir), lock_timeout=0.2)
    assert SearchService(tmp_path).search(SearchRequest()).total == 36


def test_update_adds_replaces_and_merges(tmp_path: Path, seeds_dir: Path) -> None:
    build_index(tmp_path, seeds(seeds_dir))
    service = SearchService(tmp_path)
    assert service.search(SearchRequest(authors=("Ada Lovelace",))).total == 0
    new = Record(
        title="A Brand New Paper on Zymurgy",
        year=2023,
        authors=("Ada Lovelace",),
        subjects=("cs.AI",),
    )
    # The same paper as a seed record (title + year), listed under another person.
    same = Record(
        title="the limit of the batch size",
        year=2020,
        authors=("Ada Lovelace",),
        subjects=("stat.ML",),
    )
    summary = update_index(tmp_path, [new, same])
    assert (summary.indexed, summary.replaced, summary.total) == (2, 1, 37)

    # The service notices the new generation without being reopened.
    assert service.search(SearchRequest(q="zymurgy")).total == 1
    merged = service.search(SearchRequest(q='title:"limit of the batch size"')).hits
    assert len(merged) == 1
    assert merged[0].authors == ("Yang You", "Ada Lovelace")
    assert merged[0].subjects == ("cs.LG", "stat.ML")
    results = service.search(SearchRequest(facets=True, facet_size=100))
    assert results.facets is not None
    authors = {v.value: v.count for v in results.facets["author"]}
    assert authors == {"Yang You": 18, "Wei Lin": 18, "Ada Lovelace": 2}
    subjects = {v.value: v.count for v in results.facets["subject"]}
    assert subjects["cs.LG"] == 10 and subjects["stat.ML"] == 1 and subjects["cs.AI"] == 1


def test_an_update_finds_a_merged_paper_by_any_of_its_ids(tmp_path: Path) -> None:
    listings = [
        Record(title="Widgets", year=2025, arxiv_id="2505.17997", origins=("a.jsonl:1",)),
        Record(title="Widgets", year=2025, arxiv_id="2506.03038", origins=("a.jsonl:2",)),
    ]
    build_index(tmp_path, listings)
    # Its second arXiv id, from another source with another title: the same paper.
    later = Record(
        title="Widgets, revised", arxiv_id="2506.03038v3", doi="10.5555/w", origins=("b.bib:1",)
    )
    summary = update_index(tmp_path, [later])
    assert (summary.replaced, summary.total) == (1, 1)
    service = SearchService(tmp_path)
    try:
        record = service.record("doi:10.5555/w")
        assert record.id == "2505.17997"
        assert record.arxiv_ids == ("2505.17997", "2506.03038")
        assert record.origins == ("a.jsonl:1", "a.jsonl:2", "b.bib:1")
    finally:
        service.close()


def test_update_by_id_replaces_the_record(tmp_path: Path) -> None:
    build_index(tmp_path, [Record(title="Old", id="42", year=2020, authors=("A",))])
    update_index(tmp_path, [Record(title="New", id="42", year=2021, authors=("A",))])
    service = SearchService(tmp_path)
    assert service.record("42").title == "New"
    assert service.search(SearchRequest()).total == 1


def test_a_doi_with_commas_still_identifies_its_paper(tmp_path: Path) -> None:
    doi = "10.1002/(sici)1097-4636(199706)35:4<409::aid-jbm1>3.0.co;2-b,x%2c"
    first = Record(
        id="a1", title="Old title", doi=doi, year=2020, authors=("A",), origins=("a.jsonl:1",)
    )
    again = Record(
        id="b1", title="Other title", doi=doi, year=2020, authors=("B",), origins=("b.jsonl:1",)
    )
    summary = build_index(tmp_path, [first, again])
    assert (summary.total, summary.duplicates_merged) == (1, 1)
    third = Record(
        id="c1", title="Third title", doi=doi, year=2020, authors=("C",), origins=("c.jsonl:1",)
    )
    summary = update_index(tmp_path, [third])
    assert (summary.total, summary.replaced) == (1, 1)
    service = SearchService(tmp_path)
    try:
        (record,) = list(service.iter_records())
    finally:
        service.close()
    assert set(record.authors) == {"A", "B", "C"}


def test_update_without_index_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(IndexMissingError):
        update_index(tmp_path, [Record(title="x")])


def test_old_searcher_keeps_working_after_swap(tmp_path: Path, seeds_dir: Path) -> None:
    build_index(tmp_path, seeds(seeds_dir))
    _, ix = storage.open_current(tmp_path)
    with ix.searcher() as searcher:
        build_index(tmp_path, [Record(title="Replacement", year=2020)])
        assert searcher.doc_count() == 36
    assert SearchService(tmp_path).search(SearchRequest()).total == 1


def test_pointer_to_missing_generation_is_reported(tmp_path: Path) -> None:
    (tmp_path / "CURRENT").write_text("gen-gone\n")
    from pubsearch.core.errors import IndexCorruptError

    with pytest.raises(IndexCorruptError, match="missing or incomplete"):
        SearchService(tmp_path).search(SearchRequest())
    assert os.path.exists(tmp_path / "CURRENT")


# -- streaming builds: duplicates across files, worker processes, memory -------------------


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    import gzip
    import json

    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    return path


@pytest.mark.parametrize("workers", [1, 2])
def test_streaming_build_merges_duplicates_across_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    import json

    from pubsearch.index.segments import workers as segment_workers
    from pubsearch.ingest.records import merge_records

    # Worker processes for this small input.
    monkeypatch.setattr(segment_workers, "PARALLEL_THRESHOLD", 50)
    sample = Path(__file__).resolve().parent / "data" / "arxiv-2024-2026.sample.jsonl"
    rows = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()]
    first = _write_jsonl(tmp_path / "a.jsonl.gz", rows[:200])
    # The second file lists 40 of the same papers again, with another author each.
    again = [{**row, "authors": ["Second Source"]} for row in rows[160:200]]
    second = _write_jsonl(tmp_path / "b.jsonl.gz", again + rows[200:])

    index_dir = tmp_path / "ix"
    summary = build_index(index_dir, read_paths([first, second], ReadReport()), workers=workers)
    expected, duplicates = merge_records(read_paths([first, second], ReadReport()))
    assert (summary.total, summary.duplicates_merged) == (len(expected), duplicates) == (300, 40)

    service = SearchService(index_dir)
    try:
        found = {r.id: r for r in service.iter_records()}
        merged = service.search(SearchRequest(authors=("Second Source",), facets=True))
    finally:
        service.close()
    assert found == {r.id: r for r in expected}
    assert merged.total == 40
    assert all(len(found[row["id"]].origins) == 2 for row in again)  # type: ignore[index]


def test_index_of_another_schema_is_refused_with_a_rebuild_hint(tmp_path: Path) -> None:
    from whoosh import fields
    from whoosh import index as whoosh_index

    from pubsearch.core.errors import IndexCorruptError

    gen = tmp_path / "gen-old"
    gen.mkdir()
    whoosh_index.create_in(str(gen), fields.Schema(id=fields.ID(stored=True), title=fields.TEXT))
    (tmp_path / "CURRENT").write_text("gen-old\n")
    with pytest.raises(IndexCorruptError, match="another version of pubsearch; rebuild it"):
        SearchService(tmp_path).search(SearchRequest(q="x"))


def test_index_with_words_cut_otherwise_is_refused_with_a_rebuild_hint(tmp_path: Path) -> None:
    """An index whose analyzers are of another analysis version (an older pubsearch cut
    ``La$_3$Ni$_2$O$_7$`` into ``la``, ``_3`` ...) answers no query and takes no update:
    its words would not meet today's."""
    from whoosh import index as whoosh_index

    from pubsearch.core.errors import IndexCorruptError
    from pubsearch.index.build import update_index
    from pubsearch.index.schema import ANALYSED_FIELDS, build_schema
    from pubsearch.ingest.records import Record

    schema = build_schema()
    for name in ANALYSED_FIELDS:
        schema[name].analyzer.items[0].version = 1
    gen = tmp_path / "gen-old"
    gen.mkdir()
    whoosh_index.create_in(str(gen), schema)
    (tmp_path / "CURRENT").write_text("gen-old\n")
    with pytest.raises(IndexCorruptError, match="another version of pubsearch; rebuild it"):
        SearchService(tmp_path).search(SearchRequest(q="x"))
    with pytest.raises(IndexCorruptError, match="another version of pubsearch.*rebuild it"):
        update_index(tmp_path, [Record(title="A new paper", year=2024)])
    assert not list(tmp_path.glob(".build-*"))  # the update's copy is gone


def test_an_index_without_the_words_as_written_is_refused_with_a_rebuild_hint(
    tmp_path: Path, seeds_dir: Path
) -> None:
    """An index built before wildcards read words as written (no ``title_words`` and
    ``abstract_words``) answers nothing and takes no update: its patterns would match
    stems. Searching and updating it say to rebuild it; a rebuild searches."""
    from whoosh import index as whoosh_index

    from pubsearch.core.errors import IndexCorruptError
    from pubsearch.index.documents import record_fields
    from pubsearch.index.schema import WRITTEN_FIELDS, build_schema

    schema = build_schema()
    for name in WRITTEN_FIELDS.values():
        schema.remove(name)
    gen = tmp_path / "gen-old"
    gen.mkdir()
    ix = whoosh_index.create_in(str(gen), schema)
    with ix.writer() as writer:
        for record in seeds(seeds_dir):
            doc = record_fields(record)
            for name in WRITTEN_FIELDS.values():
                del doc[name]
            writer.add_document(**doc)
    ix.close()
    (tmp_path / "CURRENT").write_text("gen-old\n")
    with pytest.raises(IndexCorruptError, match="another version of pubsearch.*rebuild it"):
        SearchService(tmp_path).search(SearchRequest(q="optim*"))
    with pytest.raises(IndexCorruptError, match="another version of pubsearch.*rebuild it"):
        update_index(tmp_path, seeds(seeds_dir))
    build_index(tmp_path, seeds(seeds_dir))
    service = SearchService(tmp_path)
    try:
        assert service.search(SearchRequest(q="optim*")).total > 0
    finally:
        service.close()


def test_an_update_leaves_a_record_that_came_back_unchanged_and_removes_by_key(
    tmp_path: Path,
) -> None:
    first = Record(title="Widgets", year=2025, arxiv_id="2505.17997", origins=("a.jsonl:1",))
    second = Record(title="Gadgets", year=2025, arxiv_id="2505.17998", origins=("a.jsonl:2",))
    build_index(tmp_path, [first, second])
    summary = update_index(tmp_path, [first])
    assert (summary.replaced, summary.unchanged, summary.total) == (1, 1, 2)
    changed = Record(
        title="Widgets, revised", year=2025, arxiv_id="2505.17997", origins=("a.jsonl:1",)
    )
    summary = update_index(tmp_path, [changed], remove=["arxiv:2505.17998"])
    assert (summary.replaced, summary.unchanged, summary.removed, summary.total) == (1, 0, 1, 1)
    service = SearchService(tmp_path)
    try:
        assert service.record("arxiv:2505.17997").title == "Widgets, revised"
        assert service.search(SearchRequest(q="gadgets")).total == 0
    finally:
        service.close()
