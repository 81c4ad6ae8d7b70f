"""Positions of the Whoosh 3 format: the packed positions of a posting list decoded into a
table (document, position), and the check of a phrase's words standing in order, in C
where it was built."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt
from whoosh import formats
from whoosh.system import _INT_SIZE

from pubsearch.codec.w3version import fast_paths
from pubsearch.core import speedups

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# The whoosh3 releases whose segment format, and readers' and writers' private attributes,
# this module and w3write were written against and tested with (pyproject.toml's pin).


def phrase_fits(values: list[PackedValues], slop: int) -> npt.NDArray[np.bool_] | None:
    """Which candidates hold a phrase: ``values`` has, for each word of the phrase, the
    encoded positions (see :func:`position_table`) of the word in each candidate. A
    candidate fits where some position of each word stands 1 to ``slop`` after the
    nearest position before it that the word before reached (every position of the first
    word is reached). Worked out a candidate at a time in C, without a table of every
    position; None where the C speedups are not built or the positions are encoded
    otherwise: then :func:`position_table` gives them to numpy."""
    compiled = speedups.active()
    if compiled is None or not fast_paths():
        return None
    try:
        fits = compiled.phrase_fits([(v.joined, v.starts, v.ends) for v in values], slop)
    except ValueError:
        return None
    return np.frombuffer(fits, dtype=np.bool_)


def position_table(values: list[bytes]) -> tuple[IntArray, IntArray]:
    """Every position in ``values`` (encoded position lists, one per candidate) as two
    arrays: the candidate's index in ``values``, and the position.

    Each value is a 4-byte count and a pickled list of position deltas
    (formats.Positions.encode). The values are joined, their counts and pickle headers cut
    out with numpy, and the rest unpickled as one list of lists, in one call; with the C
    speedups, the pickles' opcodes are read in C.
    """
    if not values:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    if not fast_paths():
        return _decoded_position_table(values)
    compiled = speedups.active()
    if compiled is not None:
        try:
            owners, positions = compiled.position_table(values)
        except ValueError:
            pass  # not the encoding the C code reads: pickle decides
        else:
            return np.frombuffer(owners, dtype=np.int64), np.frombuffer(positions, dtype=np.int64)
    joined = np.frombuffer(b"".join(values), dtype=np.uint8)
    sizes = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    ends = np.cumsum(sizes)
    starts = ends - sizes
    header = _INT_SIZE + len(_PICKLE_PROTOCOL_2)
    if bool((sizes <= header).any()):
        raise ValueError("unexpected encoding of positions")
    head = joined[starts[:, None] + np.arange(header)]
    if not bool((head[:, _INT_SIZE:] == np.frombuffer(_PICKLE_PROTOCOL_2, np.uint8)).all()):
        raise ValueError("unexpected encoding of positions")
    # Each pickle body: after the header, up to its STOP.
    keep = np.ones(len(joined), dtype=np.bool_)
    keep[(starts[:, None] + np.arange(header)).ravel()] = False
    keep[(ends - 1)[joined[ends - 1] == _STOP]] = False
    lists = pickle.loads(_PICKLE_PROTOCOL_2 + b"](" + joined[keep].tobytes() + b"e.")
    if len(lists) != len(values):
        raise ValueError("unexpected encoding of positions")
    counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    deltas = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=int(counts.sum()))
    owners = np.repeat(np.arange(len(values), dtype=np.int64), counts)
    # Positions are running sums of the deltas, restarted at each value.
    running = np.concatenate(([0], np.cumsum(deltas)))
    firsts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    positions = running[1:] - np.repeat(running[firsts], counts)
    return owners, positions


def _decoded_position_table(values: list[bytes]) -> tuple[IntArray, IntArray]:
    """:func:`position_table` through Whoosh's own ``Positions.decode_positions``."""
    decode = formats.Positions().decode_positions
    lists = [decode(value) for value in values]
    counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    owners = np.repeat(np.arange(len(values), dtype=np.int64), counts)
    total = int(counts.sum())
    return owners, np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=total)


@dataclass(frozen=True)
class PackedValues:
    """Postings' values (encoded positions) one after another: value ``i`` is the bytes of
    ``joined`` from ``starts[i]`` to ``ends[i]``. Rather than a bytes object a posting:
    a phrase of common words reads some two million values at 1,000,000 records. Some
    of them are selected (:meth:`take`) without copying their bytes."""

    joined: bytes
    starts: IntArray
    ends: IntArray

    @classmethod
    def of(cls, values: list[bytes]) -> PackedValues:
        sizes = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        ends = np.cumsum(sizes)
        return cls(b"".join(values), ends - sizes, ends)

    def __len__(self) -> int:
        return len(self.starts)

    def take(self, indices: IntArray) -> PackedValues:
        return PackedValues(self.joined, self.starts[indices], self.ends[indices])

    def as_list(self) -> list[bytes]:
        joined = self.joined
        return [joined[a:b] for a, b in zip(self.starts.tolist(), self.ends.tolist(), strict=True)]


NO_VALUES = PackedValues(b"", np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


_PICKLE_PROTOCOL_2 = b"\x80\x02"


_STOP = ord(".")
