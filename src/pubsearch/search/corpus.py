"""Every document of a generation at once, by document number: what the library
(:mod:`pubsearch.library`) needs to know which records are new, which are tagged, and what
their text is for recommendations. Read from the stored fields in one pass (2.5 s for
102,289 records), kept by the service per generation."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pubsearch.ingest.records import date_number

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_GENERATION_STAMP = re.compile(r"gen-(\d{8}T\d{6})")


@dataclass(frozen=True)
class Corpus:
    """One generation's documents by number: ``ids[d]`` the record's id ("" for a deleted
    document), ``also[d]`` its other arXiv ids and DOIs, ``days[d]`` the day it was listed
    (else its date; YYYYMMDD, a month's first day for a month, 0 undated), ``live``."""

    generation: str
    published: float  # when the generation went live (seconds since the epoch)
    ids: tuple[str, ...]
    also: tuple[tuple[str, ...], ...]
    days: IntArray
    live: BoolArray

    @property
    def size(self) -> int:
        return len(self.ids)

    def answers_to(self, doc: int) -> tuple[str, ...]:
        """Every id document ``doc``'s record answers to, its own first."""
        return (self.ids[doc], *self.also[doc])


def generation_time(name: str, fallback: float) -> float:
    """When generation ``name`` (``gen-YYYYMMDDTHHMMSS-...``, UTC) was published."""
    match = _GENERATION_STAMP.match(name)
    if match is None:
        return fallback
    stamp = match.group(1)
    parts = (stamp[:4], stamp[4:6], stamp[6:8], stamp[9:11], stamp[11:13], stamp[13:15])
    return float(calendar.timegm(tuple(int(p) for p in parts) + (0, 0, 0)))


def _day(stored: dict[str, Any]) -> int:
    listed = stored.get("listed")
    if listed:
        return date_number(str(listed))
    number = int(stored.get("date") or 0)
    if number and number % 100 == 0:
        number += 1  # a month: its first day
    return number


def read_corpus(
    reader: Any, generation: str, published: float, texts: list[str] | None = None
) -> Corpus:
    """Every document of ``reader`` (a Whoosh reader); with ``texts``, each document's
    title and abstract (a line apart) appended to it too."""
    size = reader.doc_count_all()
    ids: list[str] = [""] * size
    also: list[tuple[str, ...]] = [()] * size
    days = np.zeros(size, dtype=np.int64)
    live = np.zeros(size, dtype=np.bool_)
    for doc in range(size):
        if reader.is_deleted(doc):
            if texts is not None:
                texts.append("")
            continue
        stored = reader.stored_fields(doc)
        ids[doc] = stored["id"]
        others = [stored.get("arxiv_id"), stored.get("doi")]
        others += [key.split(":", 1)[1] for key in stored.get("other_ids") or ()]
        also[doc] = tuple(dict.fromkeys(o for o in others if o and o != ids[doc]))
        days[doc] = _day(stored)
        live[doc] = True
        if texts is not None:
            texts.append(f"{stored.get('title', '')}\n{stored.get('abstract', '')}")
    return Corpus(generation, published, tuple(ids), tuple(also), days, live)
