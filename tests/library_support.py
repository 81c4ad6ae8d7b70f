"""Records and indexes for the library's tests: small, made here, dated so that "new" is
plain to see."""

from __future__ import annotations

from pathlib import Path

from pubsearch.index.build import build_index, update_index
from pubsearch.ingest.records import Record

TOPICS = {
    "graph": "graph neural networks message passing over nodes and edges",
    "galaxy": "galaxy clusters dark matter halos and weak lensing surveys",
    "protein": "protein folding structure prediction with attention",
}


def record(number: int, topic: str, day: str = "2025-03-10", **extra: object) -> Record:
    """A record of arXiv id 2503.<number>, on ``topic``, listed on ``day``."""
    words = TOPICS[topic]
    return Record(
        title=f"{topic.title()} study number {number}: {words.split()[0]} {words.split()[1]}",
        abstract=f"We study {words}. Case {number} of many.",
        authors=(f"Author {number}", "Ada Shared"),
        year=int(day[:4]),
        date=day,
        subjects=("cs.LG",) if topic == "graph" else ("astro-ph.CO",),
        source="test",
        arxiv_id=f"2503.{number:05d}",
        **extra,  # type: ignore[arg-type]
    )


def first_records() -> list[Record]:
    return [
        record(i, ("graph", "galaxy", "protein")[i % 3], f"2025-03-{10 + i % 9:02d}")
        for i in range(1, 31)
    ]


def build(index_dir: Path, records: list[Record] | None = None) -> Path:
    build_index(index_dir, records if records is not None else first_records(), workers=1)
    return index_dir


def update(index_dir: Path, records: list[Record]) -> None:
    update_index(index_dir, records)
