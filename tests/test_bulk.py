"""The bulk writer must write the index Whoosh's own writer writes."""

from __future__ import annotations

import gc
import multiprocessing
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh import analysis
from whoosh import fields as whoosh_fields
from whoosh import index as whoosh_index
from whoosh.codec.whoosh3 import W3TermInfo
from whoosh.qparser import QueryParser
from whoosh.writing import SegmentWriter

from pubsearch.codec import w3format, w3write
from pubsearch.codec.pool import FieldPostings, TermPool, _stable_order
from pubsearch.core import speedups as speedups_module
from pubsearch.index import analysis as pubsearch_analysis
from pubsearch.index import storage
from pubsearch.index.build import build_index
from pubsearch.index.documents import record_fields
from pubsearch.index.schema import WRITTEN_FIELDS, build_schema, text_analyzer
from pubsearch.index.segments import docpostings
from pubsearch.index.segments import workers as segment_workers
from pubsearch.index.segments import writer as segment_writer
from pubsearch.index.segments.writer import BulkWriter
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record

DATA = Path(__file__).resolve().parent / "data"
SEEDS = Path(__file__).resolve().parent.parent / "seeds"


def _docs() -> list[dict[str, Any]]:
    records = read_paths([DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport())
    return [record_fields(r) for r in records]


def _postings(index_dir: Path) -> dict[tuple[str, bytes], list[tuple[int, float, bytes]]]:
    """Every term's postings, by document id (docnums differ between segment layouts)."""
    ix = whoosh_index.open_dir(str(index_dir))
    out: dict[tuple[str, bytes], list[tuple[int, float, bytes]]] = {}
    with ix.reader() as reader:
        ids = {d: f["id"] for d, f in reader.iter_docs()}
        for fieldname, text in reader.all_terms():
            matcher = reader.postings(fieldname, text)
            items = []
            while matcher.is_active():
                value = matcher.value() if matcher.supports("positions") else b""
                items.append((ids[matcher.id()], round(matcher.weight(), 6), value))
                matcher.next()
            if fieldname.startswith("spell_"):
                # Spelling words are posted to each segment's first document, once per
                # document that has them: only their number means anything.
                items = [("", 1.0, b"")] * len(items)
            out[(fieldname, text)] = sorted(items)
    ix.close()
    return out


def _plain_build(path: Path, docs: list[dict[str, Any]]) -> None:
    ix = storage.create_index(path)
    writer = ix.writer()
    for doc in docs:
        writer.add_document(**doc)
    writer.commit()
    ix.close()


def _whoosh_built_and_empty(tmp_path: Path, docs: list[dict[str, Any]]) -> tuple[Path, Path]:
    """An index of ``docs`` built by Whoosh's own writer, and an empty one beside it."""
    plain, fast = tmp_path / "plain", tmp_path / "fast"
    plain.mkdir()
    fast.mkdir()
    _plain_build(plain, docs)
    storage.create_index(fast).close()
    return plain, fast


@pytest.mark.parametrize("workers", [1, 2])
def test_bulk_writer_writes_the_same_postings(tmp_path: Path, workers: int) -> None:
    docs = _docs()
    plain, fast = _whoosh_built_and_empty(tmp_path, docs)
    count = segment_workers.write_documents(
        fast, iter(docs), workers=workers, docs_per_segment=70, parallel_threshold=100
    )
    assert count == len(docs)
    assert _postings(fast) == _postings(plain)


@pytest.mark.speedups
def test_words_numbered_anew_between_segments_give_the_same_postings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vocabulary past its limit is numbered anew when a segment starts (it would grow
    with the corpus otherwise): the postings stay Whoosh's."""
    _require_speedups()
    monkeypatch.setattr(pubsearch_analysis, "_VOCABULARY_LIMIT", 50)
    vocabulary = text_analyzer().vocabulary()
    assert vocabulary is not None
    generation = vocabulary.generation
    docs = _docs()
    plain, fast = _whoosh_built_and_empty(tmp_path, docs)
    segment_workers.write_documents(fast, iter(docs), workers=1, docs_per_segment=70)
    assert vocabulary.generation >= generation + 4  # 300 documents: 5 segments
    assert _postings(fast) == _postings(plain)


def test_a_field_map_is_started_anew_for_a_vocabulary_numbered_anew() -> None:
    vocabulary = pubsearch_analysis.Vocabulary()
    held = FieldPostings()
    fieldmap = held.fieldmap(vocabulary)
    fieldmap += bytes([1, 0, 0, 0])  # as doc_postings_ids fills it
    assert held.fieldmap(vocabulary) is fieldmap
    vocabulary.number("net")
    vocabulary.trim(limit=0)
    assert held.fieldmap(vocabulary) == bytearray()
    other = pubsearch_analysis.Vocabulary()
    held.fieldmap(vocabulary).append(1)
    assert held.fieldmap(other) == bytearray()


@pytest.mark.parametrize("workers", [1, 2])
def test_items_become_documents_where_they_are_written(tmp_path: Path, workers: int) -> None:
    """Records given with ``to_doc`` (what a build sends its workers) make the index their
    documents make, in this process and in workers."""
    records = list(read_paths([DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))
    small = {"workers": workers, "docs_per_segment": 70, "parallel_threshold": 100}
    as_docs, as_records = tmp_path / "docs", tmp_path / "records"
    for path in (as_docs, as_records):
        path.mkdir()
        storage.create_index(path).close()
    segment_workers.write_documents(as_docs, iter([record_fields(r) for r in records]), **small)
    count = segment_workers.write_documents(
        as_records, iter(records), to_doc=record_fields, **small
    )
    assert count == len(records) == 300
    assert _postings(as_records) == _postings(as_docs)


def test_workers_exit_cleanly_after_the_build_has_gone_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build commits as the workers exit, and a thread joins them: each ends with
    status 0, and none is left running or unjoined."""
    handed: list[Any] = []
    join_meanwhile = segment_workers._join_meanwhile

    def note(procs: list[Any]) -> None:
        handed.extend(procs)
        join_meanwhile(procs)

    monkeypatch.setattr(segment_workers, "_join_meanwhile", note)
    storage.create_index(tmp_path).close()
    count = segment_workers.write_documents(
        tmp_path, iter(_docs()), workers=2, parallel_threshold=100
    )
    assert count == len(_docs()) and len(handed) == 2
    deadline = time.monotonic() + 30
    while any(p.exitcode is None for p in handed) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p.exitcode for p in handed] == [0, 0]
    assert not multiprocessing.active_children()


@pytest.mark.speedups  # content is made from title and abstract on the C path only
def test_derived_content_postings_are_whooshs_beside_a_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``content`` postings made from the title's and abstract's when the segment is
    written (see docpostings.Derivation), in a segment into which a commit also merges two
    earlier ones (their postings come term by term, not document by document), and for
    a document with a boost, whose content is indexed as any field: Whoosh's."""
    monkeypatch.setattr(segment_writer, "DERIVED_DOCS_AT_ONCE", 16)  # made in several ranges
    docs = _docs()[:120]
    docs[70] = {**docs[70], "_boost": 2.0}
    plain, fast = tmp_path / "plain", tmp_path / "fast"
    plain.mkdir()
    fast.mkdir()
    _plain_build(plain, docs)
    ix = storage.create_index(fast)
    for part in (docs[:30], docs[30:60]):
        writer = ix.writer()
        for doc in part:
            writer.add_document(**doc)
        writer.commit(merge=False)
    writer = BulkWriter(ix)
    for doc in docs[60:]:
        writer.add_document(**doc)
    assert len(writer._derived_docs) == 59  # all but the boosted one
    writer.commit(optimize=True)  # the two earlier segments merged into this one
    with ix.reader() as reader:
        assert len(reader.leaf_readers()) == 1
    ix.close()
    assert _postings(fast) == _postings(plain)


# -- the fast path against Whoosh's own writer, index by index -------------------------------


def _real_docs() -> list[dict[str, Any]]:
    """The real records in tests/data and seeds/, plus a few made to reach the corners:
    boosts, a text of stop words only, non-ASCII words, lines, an empty abstract."""
    records = list(
        read_paths(
            [
                DATA / "arxiv-2024-2026.sample.jsonl",
                DATA / "arxiv-snapshot.sample.json",
                SEEDS,
            ],
            ReadReport(),
        )
    )
    docs = [record_fields(r) for r in records]
    made = [
        Record(title="The of and", abstract="", authors=("A. Nobody",), year=2024),
        Record(
            title="Über die Zählung\nof ROUTES, routes and routing",
            abstract="Ça va: naïve café-style Gödel numbering.\n\nRouting again; u.s. v1.2 it's",
            authors=("Zoë Ängström", "José Núñez"),
            subjects=("math.LO",),
            year=2025,
        ),
        Record(title="Boosted neural network pruning", abstract="network " * 40, year=2026),
    ]
    extra = [record_fields(r) for r in made]
    extra[1]["_boost"] = 2.0
    extra[2]["_abstract_boost"] = 1.5
    extra[2]["_title_boost"] = 3.0
    return docs + extra


def _plain_whoosh_build(path: Path, docs: list[dict[str, Any]]) -> None:
    """Whoosh's own writer: its ``add_document`` per document, its pool, one segment."""
    path.mkdir()
    ix = storage.create_index(path)
    writer = ix.writer()
    assert type(writer) is SegmentWriter
    for doc in docs:
        writer.add_document(**doc)
    writer.commit()
    ix.close()


def _fast_build(path: Path, docs: list[dict[str, Any]], workers: int) -> None:
    path.mkdir()
    storage.create_index(path).close()
    small = {"docs_per_segment": 120, "parallel_threshold": 100} if workers > 1 else {}
    assert segment_workers.write_documents(path, iter(docs), workers=workers, **small) == len(docs)


_TEXT_FIELDS = ("title", "abstract", "content", "author")


def _index_facts(index_dir: Path) -> dict[str, Any]:
    """Everything a reader sees in the index, by document id (docnums depend on how the
    documents were spread over segments)."""
    ix = whoosh_index.open_dir(str(index_dir))
    facts: dict[str, Any] = {}
    with ix.reader() as reader:
        schema = ix.schema
        ids = {d: f["id"] for d, f in reader.iter_docs()}
        facts["doc_count"] = reader.doc_count()
        facts["stored"] = {f["id"]: f for _, f in reader.iter_docs()}
        facts["lengths"] = {
            name: {ids[d]: reader.doc_field_length(d, name) for d in ids} for name in _TEXT_FIELDS
        }
        facts["total_lengths"] = {name: reader.field_length(name) for name in _TEXT_FIELDS}
        terms: dict[tuple[str, bytes], Any] = {}
        for fieldname, text in reader.all_terms():
            matcher = reader.postings(fieldname, text)
            fmt = schema[fieldname].format
            items = []
            while matcher.is_active():
                value = matcher.value()
                if fmt.supports("positions"):
                    decoded: Any = fmt.decode_positions(value)
                elif fmt.supports("frequency") and fmt.posting_size:
                    decoded = matcher.value_as("frequency")
                else:
                    decoded = None
                items.append((ids[matcher.id()], matcher.weight(), decoded))
                matcher.next()
            if fieldname.startswith("spell_"):
                # Spelling words are posted to each segment's first document, once per
                # document that has them: only their number is read.
                items = [len(items)]
            terms[(fieldname, text)] = (
                reader.doc_frequency(fieldname, text),
                reader.frequency(fieldname, text),
                sorted(items),
            )
        facts["terms"] = terms
        facts["columns"] = {
            name: {ids[d]: v for d, v in enumerate(reader.column_reader(name))}
            for name in ("author_facet", "subject_facet", "year")
        }
        with ix.searcher() as searcher:
            # Equal scores come in docnum order: by id here.
            facts["searches"] = {
                q: sorted(
                    (
                        (-round(hit.score, 9), ids[hit.docnum])
                        for hit in searcher.search(parsed, limit=None)
                    ),
                )
                for q in _QUERIES
                for parsed in [QueryParser("content", schema).parse(q)]
            }
    ix.close()
    return facts


_QUERIES = (
    "network",
    "quantum field theory",
    'title:"neural network"',
    'abstract:"dark matter"',
    "author:smith OR author:wang",
    "subject:cs.lg model",
    "learning year:[2024 TO 2025]",
    "routing OR zahlung OR godel",
)


@pytest.fixture(scope="module")
def plain_facts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("plain") / "ix"
    _plain_whoosh_build(path, _real_docs())
    return _index_facts(path)


@pytest.mark.parametrize("workers", [1, 2])
def test_fast_path_builds_the_index_whoosh_builds(
    tmp_path: Path, plain_facts: dict[str, Any], workers: int
) -> None:
    _fast_build(tmp_path / "fast", _real_docs(), workers)
    fast = _index_facts(tmp_path / "fast")
    assert fast["doc_count"] == plain_facts["doc_count"] == len(_real_docs())
    assert fast["stored"] == plain_facts["stored"]
    assert fast["lengths"] == plain_facts["lengths"]
    assert fast["total_lengths"] == plain_facts["total_lengths"]
    assert fast["terms"].keys() == plain_facts["terms"].keys()
    for term, facts in plain_facts["terms"].items():
        assert fast["terms"][term] == facts, term
    assert fast["columns"] == plain_facts["columns"]
    assert all(plain_facts["searches"][q] for q in _QUERIES)  # the queries find something
    assert fast["searches"] == plain_facts["searches"]


def _raw_terms(index_dir: Path) -> dict[bytes, tuple[bytes, list[tuple[Any, Any]]]]:
    """Each term's row in the terms table (its statistics) and its postings, block by
    block, decoded, for a one-segment index."""
    ix = whoosh_index.open_dir(str(index_dir))
    out: dict[bytes, tuple[bytes, list[tuple[Any, Any]]]] = {}
    with ix.reader() as reader:
        terms = reader._terms  # W3TermsReader
        stats = W3TermInfo._struct.size
        for key, row in terms._tindex.items():
            offset = int.from_bytes(row[stats : stats + 8], "big")
            length = int.from_bytes(row[stats + 8 : stats + 12], "big")
            out[key] = (row[:stats], _blocks(terms._postfile.get(offset, length)))
    ix.close()
    return out


def _blocks(raw: bytes) -> list[tuple[Any, Any]]:
    """A term's postings bytes as its blocks: each block's info (less whether its data is
    compressed) and its data, unpickled."""
    return [
        ((count, maxid, maxweight, minlen, maxlen), data)
        for (count, maxid, maxweight, _, minlen, maxlen), data in w3format.w3_blocks(raw)
    ]


def _require_speedups() -> None:
    if speedups_module.compiled is None:
        pytest.skip("pubsearch.core._speedups (C) was not built: a C compiler and Python's headers")


@pytest.mark.parametrize(
    "speedups", [pytest.param(True, marks=pytest.mark.speedups), False], ids=["c", "python"]
)
@pytest.mark.parametrize("small_chunks", [False, True])
def test_fast_path_writes_whoosh_postings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_chunks: bool, speedups: bool
) -> None:
    """One segment each: every term's statistics are Whoosh's, byte for byte, and so are
    its postings blocks once unpickled (the fast path pickles them with a newer protocol),
    but for spelling words' values (Whoosh posts them with whatever value its loop left
    behind, and sorts them by it). With the C companion and without it."""
    if speedups:
        _require_speedups()
    monkeypatch.setattr(speedups_module, "enabled", speedups)
    if small_chunks:  # terms written a few at a time, the block caches cleared often
        monkeypatch.setattr(w3write, "_CHUNK_POSTINGS", 7)
        monkeypatch.setattr(w3write, "_BLOCK_CACHE_LIMIT", 3)
    docs = _real_docs()
    _plain_whoosh_build(tmp_path / "plain", docs)
    _fast_build(tmp_path / "fast", docs, workers=1)
    plain = _raw_terms(tmp_path / "plain")
    fast = _raw_terms(tmp_path / "fast")
    assert fast.keys() == plain.keys()
    ix = whoosh_index.open_dir(str(tmp_path / "plain"))
    with ix.reader() as reader:
        spell_id = reader._terms._tindex.extras["fieldmap"]["spell_title"]
    ix.close()
    spell = spell_id.to_bytes(2, "big")
    compared = [key for key in plain if not key.startswith(spell)]
    assert len(compared) > 10_000
    multi_block = 0
    for key in compared:
        assert fast[key] == plain[key], key
        multi_block += len(plain[key][1]) > 1
    assert multi_block > 10  # long posting lists (several blocks) among them
    for key in plain.keys() - compared:
        assert fast[key][0] == plain[key][0], key  # the same statistics


def test_fast_path_pickles_blocks_with_a_newer_protocol(tmp_path: Path) -> None:
    """What makes the fast path's postings smaller than Whoosh's: no ``_codecs.encode``
    call per position list."""
    docs = _real_docs()
    _plain_whoosh_build(tmp_path / "plain", docs)
    _fast_build(tmp_path / "fast", docs, workers=1)
    sizes = {}
    for name in ("plain", "fast"):
        ix = whoosh_index.open_dir(str(tmp_path / name))
        with ix.reader() as reader:
            stats = W3TermInfo._struct.size
            rows = reader._terms._tindex.values()
            sizes[name] = sum(int.from_bytes(row[stats + 8 : stats + 12], "big") for row in rows)
        ix.close()
    assert sizes["fast"] < 0.9 * sizes["plain"]


def test_term_pool_sorts_by_field_term_and_document() -> None:
    pool = TermPool()
    pool.add(("f", b"a", 0, 1.0, b"x"))
    pool.add(("f", b"a", 3, 2.0, b""))
    pool.add(("e", b"b", 1, 1.0, b"yz"))
    pool.add(("e", b"b", 0, 1.0, b""))  # out of document order, as a merge may add it
    pool.add_many("e", 2, [b"c", b"a"], [1.0, 3.0], [b"", b"pq"])
    pool.add_many("e", 3, ["b", "é"], [2.0, 1.0], [b"rs", b""])  # texts, as the bulk path adds
    assert list(pool.iter_postings()) == [
        ("e", b"a", 2, 3.0, b"pq"),
        ("e", b"b", 0, 1.0, b""),
        ("e", b"b", 1, 1.0, b"yz"),
        ("e", b"b", 3, 2.0, b"rs"),
        ("e", b"c", 2, 1.0, b""),
        ("e", "é".encode(), 3, 1.0, b""),
        ("f", b"a", 0, 1.0, b"x"),
        ("f", b"a", 3, 2.0, b""),
    ]


def test_workers_exit_when_the_build_is_killed(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    script = f"""
import time
import gc
import zlib
from collections.abc import Iterator
from pathlib import Path
from pubsearch.index import storage
from pubsearch.core.errors import WorkerError
from pubsearch.index.segments import workers
from pubsearch.index.documents import record_fields
from pubsearch.index.build import build_index
from pubsearch.ingest.records import Record

def docs():
    for n in range(10**6):
        yield record_fields(Record(title=f"Paper number {{n}}", year=2020))
        if n > 60:
            time.sleep(0.05)  # slow enough to be killed mid-build

path = Path({str(tmp_path / "ix")!r})
path.mkdir()
storage.create_index(path).close()
workers.write_documents(path, docs(), workers=2, parallel_threshold=10)
"""
    proc = subprocess.Popen([sys.executable, "-c", script])
    children: list[int] = []
    deadline = time.monotonic() + 60
    while len(children) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as fh:
                children = [int(p) for p in fh.read().split()]
        except OSError:
            break
    assert len(children) >= 2, "the build started no workers"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30
    alive = children
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [pid for pid in alive if _running(pid)]
    assert not alive, f"workers {alive} outlived their killed build"


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return not any(line.startswith("State:") and "Z" in line for line in fh)
    except OSError:
        return False


def test_build_fails_promptly_when_its_workers_die(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    script = f"""
import time
import gc
import zlib
from collections.abc import Iterator
from pathlib import Path
from pubsearch.index import storage
from pubsearch.core.errors import WorkerError
from pubsearch.index.segments import workers
from pubsearch.index.documents import record_fields
from pubsearch.index.build import build_index
from pubsearch.ingest.records import Record

def docs():
    for n in range(3000):
        yield record_fields(Record(title=f"Paper number {{n}}", year=2020))
        if n > 60:
            time.sleep(0.01)

path = Path({str(tmp_path / "ix")!r})
path.mkdir()
storage.create_index(path).close()
try:
    workers.write_documents(path, docs(), workers=2, parallel_threshold=10)
except WorkerError as exc:
    print("failed:", exc, flush=True)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
        workers = [pid for pid in _children(proc.pid) if "spawn_main" in _cmdline(pid)]
    assert len(workers) == 2, "the build started no workers"
    for pid in workers:  # as if something killed them
        os.kill(pid, signal.SIGKILL)
    out, _ = proc.communicate(timeout=120)
    assert "failed: indexing worker" in out


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.speedups
def test_version_says_whether_indexing_runs_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from pubsearch.cli.main import main

    _require_speedups()
    result = CliRunner().invoke(main, ["--version"], prog_name="pubsearch")
    assert result.exit_code == 0
    assert result.output.startswith("pubsearch, version ")
    assert "(indexing with its C speedups)" in result.output
    monkeypatch.setattr(speedups_module, "_compiled", None)
    assert "was not built" in speedups_module.note()
    monkeypatch.setattr(speedups_module, "_compiled", speedups_module._NOT_LOADED)
    monkeypatch.setenv("PUBSEARCH_NO_SPEEDUPS", "1")
    assert speedups_module.compiled is None and speedups_module.active() is None
    assert "PUBSEARCH_NO_SPEEDUPS is set" in speedups_module.note()
    monkeypatch.setattr(speedups_module, "_compiled", speedups_module._NOT_LOADED)


_KEYWORD_TEXT = st.text(
    alphabet=st.sampled_from(list("ab, \t\nÉé.:%|-") + ["İ", "ß", "\u00a0"]), max_size=24
)


@pytest.mark.parametrize(
    "field",
    [
        whoosh_fields.ID(),
        whoosh_fields.ID(field_boost=2.5),
        whoosh_fields.ID(analyzer=analysis.IDTokenizer() | analysis.LowercaseFilter()),
        whoosh_fields.KEYWORD(commas=True),
        whoosh_fields.KEYWORD(commas=True, lowercase=True),
        whoosh_fields.KEYWORD(commas=True, lowercase=True, field_boost=0.5, scorable=True),
    ],
    ids=["id", "id-boost", "id-lower", "commas", "commas-lower", "commas-boost"],
)
@settings(max_examples=300, deadline=None)
@given(value=_KEYWORD_TEXT)
def test_direct_terms_equal_whoosh_index(field: Any, value: str) -> None:
    direct = docpostings.direct_terms(field)
    assert direct is not None
    assert sorted(direct(value)) == sorted(field.index(value))


@pytest.mark.parametrize(
    ("field", "known"),
    [
        (whoosh_fields.KEYWORD(), False),  # separated by spaces
        (whoosh_fields.TEXT(), False),
        (whoosh_fields.NUMERIC(int), False),
        (whoosh_fields.KEYWORD(commas=True, vector=True), False),
        (
            whoosh_fields.KEYWORD(
                analyzer=analysis.CommaSeparatedTokenizer() | analysis.StopFilter()
            ),
            False,
        ),
        (whoosh_fields.ID(analyzer=analysis.CommaSeparatedTokenizer()), True),
    ],
    ids=["spaces", "text", "numeric", "vector", "commas-stops", "id-by-commas"],
)
def test_direct_terms_only_for_known_shapes(field: Any, known: bool) -> None:
    direct = docpostings.direct_terms(field)
    assert (direct is not None) == known
    if direct is not None:
        value = "A, b ,a,,c d"
        assert sorted(direct(value)) == sorted(field.index(value))


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.one_of(st.integers(0, 65535), st.booleans()), max_size=30))
def test_numeric_terms_equal_whoosh_index(values: list[Any]) -> None:
    field = whoosh_fields.NUMERIC(int, bits=16, signed=False)
    terms = docpostings.numeric_terms(field)
    assert terms is not None
    for value in values:  # repeated values come from the memo
        assert terms(value) == list(field.index(value))
    assert docpostings.numeric_terms(whoosh_fields.TEXT()) is None


@settings(max_examples=200, deadline=None)
@given(
    keys=st.lists(
        st.one_of(st.integers(0, 5), st.integers(0, (1 << 16) + 3), st.integers(0, (1 << 32) - 1)),
        max_size=60,
    )
)
def test_stable_order_is_numpys_stable_argsort(keys: list[int]) -> None:
    array = numpy.array(keys, dtype=numpy.int64)
    assert _stable_order(array).tolist() == numpy.argsort(array, kind="stable").tolist()


@settings(max_examples=100, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(["a", "b", "c", "d", "é"]), min_size=1, max_size=4),
        max_size=12,
    )
)
def test_term_pool_in_document_order_sorts_by_term_then_document(docs: list[list[str]]) -> None:
    pool = TermPool()
    expected = []
    for docnum, words in enumerate(docs):
        terms = sorted(set(words))
        pool.add_many("f", docnum, terms, [1.0] * len(terms), [b""] * len(terms))
        expected += [("f", t.encode(), docnum, 1.0, b"") for t in terms]
    assert list(pool.iter_postings()) == sorted(expected)


def test_collector_stays_off_while_writing_and_as_before_after(tmp_path: Path) -> None:
    assert gc.isenabled()
    seen: list[bool] = []

    def docs() -> Iterator[dict[str, Any]]:
        for doc in _docs()[:3]:
            seen.append(gc.isenabled())
            yield doc
        raise ValueError("a bad record")  # the collector comes back after a failure too

    ix = storage.create_index(tmp_path)
    with pytest.raises(ValueError, match="a bad record"):
        segment_writer.write_segments(ix, docs(), 100)
    assert seen == [False, False, False]
    assert gc.isenabled()


def test_young_objects_collected_after_each_full_segment(tmp_path: Path) -> None:
    generations: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and not gc.isenabled():  # not one once the writing is over
            generations.append(info["generation"])

    ix = storage.create_index(tmp_path)
    gc.callbacks.append(note)
    try:
        segments = segment_writer.write_segments(ix, iter(_docs()[:5]), 2)
    finally:
        gc.callbacks.remove(note)
    assert len(segments) == 3
    assert generations == [0, 0]  # after the two full segments; none by itself


def test_freed_memory_handed_back_after_each_full_segment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pubsearch.core import memory

    trims: list[int] = []
    monkeypatch.setattr(memory, "trim", lambda: trims.append(len(trims)) or True)
    ix = storage.create_index(tmp_path)
    segments = segment_writer.write_segments(ix, iter(_docs()[:5]), 2)
    assert len(segments) == 3
    assert trims == [0, 1]  # after the two full segments


def test_write_documents_reads_with_the_collector_off(tmp_path: Path) -> None:
    seen: list[bool] = []

    def docs() -> Iterator[dict[str, Any]]:
        for doc in _docs()[:3]:
            seen.append(gc.isenabled())
            yield doc

    storage.create_index(tmp_path)
    assert segment_workers.write_documents(tmp_path, docs(), workers=1) == 3
    assert seen == [False, False, False]
    assert gc.isenabled()


def test_direct_terms_of_a_word_list_are_whooshs() -> None:
    field = whoosh_fields.KEYWORD(commas=True, lowercase=True)
    direct = docpostings.direct_terms(field)
    assert direct is not None
    assert direct(["A b", "c", "A b"]) == list(field.index(["A b", "c", "A b"]))


@given(data=st.binary(max_size=5_000) | st.text(max_size=2_000).map(str.encode))
def test_deflate_writes_what_zlib_reads(data: bytes) -> None:
    """Whoosh's readers decompress postings blocks and stored fields with ``zlib``."""
    assert zlib.decompress(w3write._deflate(data, 3)) == data


def test_stored_fields_are_deflated_with_isal_and_read_back(tmp_path: Path) -> None:
    docs = _docs()[:5]
    ix = storage.create_index(tmp_path)
    writer = BulkWriter(ix, lock=False)
    try:
        stored = writer.perdocwriter._colwriters["_stored"]._child
        assert stored._compress is w3write._deflate
    finally:
        writer.cancel()
    segment_workers.write_documents(tmp_path, docs, workers=1)
    with whoosh_index.open_dir(str(tmp_path)).searcher() as searcher:
        found = {fields["id"]: fields for fields in searcher.all_stored_fields()}
    assert {doc["id"]: doc["title"] for doc in docs} == {k: f["title"] for k, f in found.items()}


def test_a_failed_document_leaves_no_field_lengths(tmp_path: Path) -> None:
    """Lengths (a byte a document and field, and each field's total) are written with the
    segment, from the documents that went through: as Whoosh's writer, less the lengths of
    a document it failed part way (a bad year comes after the title and abstract)."""
    first, second = _docs()[:2]
    bad = {**_docs()[2], "year": "not a year"}
    _plain_whoosh_build(tmp_path / "plain", [first, second])
    (tmp_path / "fast").mkdir()
    ix = storage.create_index(tmp_path / "fast")
    writer = BulkWriter(ix, lock=False)
    writer.add_document(**first)
    with pytest.raises(ValueError):
        writer.add_document(**bad)
    writer.add_document(**second)
    writer.commit()
    facts = {}
    for name in ("plain", "fast"):
        with whoosh_index.open_dir(str(tmp_path / name)).reader() as reader:
            facts[name] = (
                [[reader.doc_field_length(d, f) for f in _TEXT_FIELDS] for d in range(2)],
                [reader.field_length(f) for f in _TEXT_FIELDS],
                [reader.stored_fields(d)["id"] for d in range(2)],
            )
    assert facts["fast"] == facts["plain"]
    assert facts["fast"][2] == [first["id"], second["id"]]


def test_a_parallel_build_numbers_the_documents_the_same_every_time(
    tmp_path: Path, seeds_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whichever worker is faster, the same input gives the same document numbers (ties
    in score are ordered by them): each worker takes every other batch, and the segments
    are committed in worker order."""
    monkeypatch.setattr(segment_workers, "PARALLEL_THRESHOLD", 20)
    monkeypatch.setattr(segment_workers, "BATCH_SIZE", 7)
    monkeypatch.setattr(segment_workers, "DOCS_PER_SEGMENT", 40)
    records = list(read_paths([seeds_dir, DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))
    orders = []
    for attempt in range(3):
        index_dir = tmp_path / f"ix{attempt}"
        build_index(index_dir, records, workers=2)
        ix = storage.open_index(storage.current_generation(index_dir))  # type: ignore[arg-type]
        with ix.reader() as reader:
            assert len(reader.leaf_readers()) > 4
            orders.append([fields["id"] for fields in reader.all_stored_fields()])
        ix.close()
    assert orders[0] == orders[1] == orders[2]
    assert sorted(orders[0]) == sorted({r.id for r in records})


@pytest.mark.parametrize(
    "speedups", [pytest.param(True, marks=pytest.mark.speedups), False], ids=["c", "python"]
)
def test_words_as_written_are_their_sources_words_unstemmed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, speedups: bool
) -> None:
    """The fields patterns search (title_words, abstract_words) take their words from the
    title's and abstract's analysis, unstemmed, and hold what Whoosh's own writer puts in
    them: each word as written, with its frequency in each document."""
    if speedups:
        _require_speedups()
    monkeypatch.setattr(speedups_module, "enabled", speedups)
    specs = docpostings.bulk_fields(build_schema())
    for source, written in WRITTEN_FIELDS.items():
        assert specs[written].unstemmed_of == specs[source] and not specs[written].positions
    docs = _docs()
    plain, fast = _whoosh_built_and_empty(tmp_path, docs)
    segment_workers.write_documents(
        fast, iter(docs), workers=1, docs_per_segment=70, parallel_threshold=100
    )
    theirs, ours = _postings(plain), _postings(fast)
    for source, written in WRITTEN_FIELDS.items():
        keys = {key for key in theirs if key[0] == written}
        assert keys == {key for key in ours if key[0] == written}
        assert all(ours[key] == theirs[key] for key in keys)
        words = {text for _, text in keys}
        stems = {text for name, text in theirs if name == source}
        assert len(words - stems) > 100 and len(stems - words) > 100, source  # not stems
    assert max(weight for key in keys for _, weight, _ in ours[key]) > 1  # frequencies
