"""The bulk writer must write the very index Whoosh's own writer writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from whoosh import index as whoosh_index

from pubsearch import bulk, storage
from pubsearch.indexing import record_fields
from pubsearch.readers import ReadReport, read_paths

DATA = Path(__file__).resolve().parent / "data"


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


@pytest.mark.parametrize("workers", [1, 2])
def test_bulk_writer_writes_the_same_postings(tmp_path: Path, workers: int) -> None:
    docs = _docs()
    plain, fast = tmp_path / "plain", tmp_path / "fast"
    plain.mkdir()
    fast.mkdir()
    _plain_build(plain, docs)
    storage.create_index(fast).close()
    count = bulk.write_documents(
        fast, iter(docs), workers=workers, docs_per_segment=70, parallel_threshold=100
    )
    assert count == len(docs)
    assert _postings(fast) == _postings(plain)


def test_term_pool_sorts_by_field_term_and_document() -> None:
    pool = bulk.TermPool()
    pool.add(("f", b"a", 0, 1.0, b"x"))
    pool.add(("f", b"a", 3, 2.0, b""))
    pool.add(("e", b"b", 1, 1.0, b"yz"))
    pool.add(("e", b"b", 0, 1.0, b""))  # out of document order, as a merge may add it
    pool.add_many("e", 2, [b"c", b"a"], [1.0, 3.0], [b"", b"pq"])
    assert list(pool.iter_postings()) == [
        ("e", b"a", 2, 3.0, b"pq"),
        ("e", b"b", 0, 1.0, b""),
        ("e", b"b", 1, 1.0, b"yz"),
        ("e", b"c", 2, 1.0, b""),
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
from pathlib import Path
from pubsearch import bulk, storage
from pubsearch.indexing import record_fields
from pubsearch.records import Record

def docs():
    for n in range(10**6):
        yield record_fields(Record(title=f"Paper number {{n}}", year=2020))
        if n > 60:
            time.sleep(0.05)  # slow enough to be killed mid-build

path = Path({str(tmp_path / "ix")!r})
path.mkdir()
storage.create_index(path).close()
bulk.write_documents(path, docs(), workers=2, parallel_threshold=10)
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
from pathlib import Path
from pubsearch import bulk, storage
from pubsearch.indexing import record_fields
from pubsearch.records import Record

def docs():
    for n in range(3000):
        yield record_fields(Record(title=f"Paper number {{n}}", year=2020))
        if n > 60:
            time.sleep(0.01)

path = Path({str(tmp_path / "ix")!r})
path.mkdir()
storage.create_index(path).close()
try:
    bulk.write_documents(path, docs(), workers=2, parallel_threshold=10)
except bulk.WorkerError as exc:
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
