"""Spelling corrections a researcher can trust: the words of titles and the surnames of
authors, weighed by how often the whole corrected query occurs.

The dictionary is every word of the titles of an index generation (unstemmed, with how
many titles use it) and every surname of its authors (with how many records people of
that name wrote). Candidates for a word are the dictionary's words within two edits of
it, a swap of neighbours counting as one (found as SymSpell finds them: by the words left
when up to two letters of the first :data:`PREFIX_LENGTH` are deleted, the distance then
measured by symspellpy's Damerau-Levenshtein).

A word the index knows is never corrected: a word of any record's title or abstract, or
a word of any author's name (``Hinton``, ``Niessner``). Each other word gets its nearest
candidates, and the candidates of a query's words are weighed together: the combination
kept has the fewest edits, then the most records with all of its words and the query's
other words (``gravitaional wavs``: *gravitational waves*, 1,221 records, not
*gravitational ways*, 263), then the most used words. A word typed with a capital
(``Hintn``) prefers a surname to another word as near.

Pasted text is not corrected (more than :data:`MAX_WORDS` words); nor are words with
digits, or shorter than :data:`MIN_LENGTH` letters.

The table (words, counts, and the deletions that find them) is built with each index
generation and saved beside it (``spelling.npz``), read mapped when a query first needs
it.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations, repeat
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pubsearch.core import npzfiles
from pubsearch.ingest.records import fold

MAX_EDITS = 2
# Letters of a word whose deletions find it (SymSpell's prefix length: 5 keeps the table
# a third of 7's size, docs/performance.md).
PREFIX_LENGTH = 5
MIN_LENGTH = 3
MAX_WORDS = 8
# Candidates weighed for each misspelt word, and combinations of them counted at most.
CANDIDATES = 6
COMBINATIONS = 64
# What a word typed with a capital pays for a candidate that is not a surname.
NOT_A_NAME = 0.5

_CORRECTABLE = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")

# Whether the index knows a word (folded): in a title or abstract, or in a name.
Known = Callable[[str], bool]
# How many records have all of some words (each a text word, or a surname: its authors'
# records too).
Together = Callable[[Sequence["Candidate"]], int]

SPELLING_FILE = "spelling.npz"
FORMAT_VERSION = 1
_SEPARATOR = "\x1f"


@dataclass(frozen=True)
class Correction:
    """Where a word stood in the query text, and what to write instead."""

    start: int
    end: int
    word: str


@dataclass(frozen=True)
class Candidate:
    """A word for a typed one: how far, how used, whether it is a surname, and how many
    of the typed word's first and last letters it keeps."""

    word: str
    distance: float
    count: int
    name: bool = False
    kept: int = 0


def worth_correcting(words: Sequence[object]) -> bool:
    """Whether a query of these words is corrected at all: not when it has none, nor when
    it has more than :data:`MAX_WORDS` (a pasted text: its odd words are not typing
    mistakes)."""
    return 0 < len(words) <= MAX_WORDS


def correctable(word: str) -> bool:
    """Whether ``word`` (folded) could be a misspelling this module corrects."""
    return len(word) >= MIN_LENGTH and _CORRECTABLE.fullmatch(word) is not None


class Spelling:
    """The correctly spelt words of an index generation (see the module's doc), as
    arrays: the words packed, their counts and which are surnames, and the deletions'
    hashes in order with the word each finds."""

    def __init__(self, arrays: dict[str, Any]) -> None:
        self._text: npt.NDArray[np.uint8] = arrays["text"]
        self._ends: npt.NDArray[np.int64] = arrays["ends"]
        self._counts: npt.NDArray[np.int64] = arrays["counts"]
        self._names: npt.NDArray[np.bool_] = arrays["names"]
        self._hashes: npt.NDArray[np.uint64] = arrays["hashes"]
        self._finds: npt.NDArray[np.int32] = arrays["finds"]
        # symspellpy is imported with the first table a process reads or builds.
        from symspellpy.editdistance import DistanceAlgorithm, EditDistance

        self._distance = EditDistance(DistanceAlgorithm.DAMERAU_OSA)

    @classmethod
    def build(
        cls, titles: Iterable[tuple[str, int]], surnames: Iterable[tuple[str, int]]
    ) -> Spelling:
        """The table of the titles' words and the surnames, each with its count."""
        counts: dict[str, int] = {}
        for word, count in titles:
            if correctable(word):
                counts[word] = max(counts.get(word, 0), count)
        title_words = set(counts)
        named: set[str] = set()
        for word, count in surnames:
            if correctable(word):
                named.add(word)
                counts[word] = max(counts.get(word, 0), count)
        words = sorted(counts)
        deletions: dict[str, int] = {}
        pair_deletion: list[int] = []
        pair_word: list[int] = []
        # A word's deletions are its prefix's: worked out once a prefix (137,000 words of
        # titles and surnames share 41,000 prefixes at 102,289 records; 4.1 s -> 1.6 s).
        by_prefix: dict[str, list[int]] = {}
        for number, word in enumerate(words):
            prefix = word[:PREFIX_LENGTH]
            found = by_prefix.get(prefix)
            if found is None:
                found = by_prefix[prefix] = [
                    deletions.setdefault(gone, len(deletions)) for gone in _deletions(prefix)
                ]
            pair_deletion.extend(found)
            pair_word.extend(repeat(number, len(found)))
        hashed = np.fromiter(map(_hash, deletions), dtype=np.uint64, count=len(deletions))
        by_pair = hashed[np.asarray(pair_deletion, dtype=np.int64)]
        order = np.argsort(by_pair, kind="stable")
        encoded = [word.encode("utf-8") for word in words]
        return cls(
            {
                "text": np.frombuffer(b"".join(encoded), dtype=np.uint8),
                "ends": np.cumsum([len(b) for b in encoded], dtype=np.int64),
                "counts": np.asarray([counts[w] for w in words], dtype=np.int64),
                # A surname no title uses: what a word typed with a capital prefers.
                "names": np.asarray([w in named and w not in title_words for w in words]),
                "hashes": by_pair[order],
                "finds": np.asarray(pair_word, dtype=np.int32)[order],
            }
        )

    def __len__(self) -> int:
        return len(self._ends)

    def __contains__(self, word: object) -> bool:
        """Whether ``word`` (folded) is a word of the table (they are in order)."""
        low, high = 0, len(self)
        while low < high:
            middle = (low + high) // 2
            if self._word(middle) < str(word):
                low = middle + 1
            else:
                high = middle
        return low < len(self) and self._word(low) == word

    def _word(self, number: int) -> str:
        start = int(self._ends[number - 1]) if number else 0
        return bytes(self._text[start : int(self._ends[number])]).decode("utf-8")

    def candidates(self, word: str) -> list[Candidate]:
        """The dictionary's words within :data:`MAX_EDITS` of ``word`` (folded), itself
        left out, nearest first, then most used."""
        wanted = np.fromiter(map(_hash, _deletions(word)), dtype=np.uint64)
        starts = np.searchsorted(self._hashes, wanted, side="left")
        stops = np.searchsorted(self._hashes, wanted, side="right")
        numbers = {int(n) for a, b in zip(starts, stops, strict=True) for n in self._finds[a:b]}
        found = []
        for number in numbers:
            other = self._word(number)
            if other == word or abs(len(other) - len(word)) > MAX_EDITS:
                continue
            distance = self._distance.compare(word, other, MAX_EDITS)
            if distance > 0:
                count, name = int(self._counts[number]), bool(self._names[number])
                found.append(Candidate(other, distance, count, name, _kept(word, other)))
        found.sort(key=lambda c: (c.distance, -c.count, c.word))
        return found

    def corrections(
        self, words: list[tuple[int, int, str]], known: Known, together: Together
    ) -> list[Correction]:
        """The corrections of a query's words, given as (start, end, text): the
        combination of candidates that the module's doc describes."""
        if not worth_correcting(words):
            return []
        fixed: list[Candidate] = []
        open_words: list[tuple[int, int, list[Candidate]]] = []
        for start, end, text in words:
            folded = fold(text)
            if not correctable(folded) or folded in self or known(folded):
                fixed.append(Candidate(folded, 0, 0))
                continue
            found = self.candidates(folded)
            if not found:
                fixed.append(Candidate(folded, 0, 0))
                continue
            if text[:1].isupper():
                found = [
                    c if c.name else replace(c, distance=c.distance + NOT_A_NAME) for c in found
                ]
                found.sort(key=lambda c: (c.distance, -c.count, c.word))
            open_words.append((start, end, found[:CANDIDATES]))
        if not open_words:
            return []
        best = _best(open_words, fixed, together)
        return [
            Correction(start, end, chosen.word)
            for (start, end, _), chosen in zip(open_words, best, strict=True)
        ]

    def save(self, directory: Path, generation: int) -> None:
        """Write the table into ``directory`` for Whoosh generation ``generation``."""
        npzfiles.save_arrays(
            directory / SPELLING_FILE,
            {
                "meta": np.asarray([FORMAT_VERSION, generation, len(self)], dtype=np.int64),
                "text": self._text,
                "ends": self._ends,
                "counts": self._counts,
                "names": self._names,
                "hashes": self._hashes,
                "finds": self._finds,
            },
        )

    @classmethod
    def load(cls, directory: Path, generation: int) -> Spelling | None:
        """The table saved in ``directory`` for Whoosh generation ``generation``, or None
        when there is none (a generation built before tables were saved) or it is for
        another."""
        try:
            data = npzfiles.load_arrays(directory / SPELLING_FILE)
            meta = data["meta"]
            if int(meta[0]) != FORMAT_VERSION or int(meta[1]) != generation:
                return None
            table = cls(data)
            if len(table) != int(meta[2]):
                return None
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):
            return None
        return table


def _best(
    open_words: list[tuple[int, int, list[Candidate]]],
    fixed: list[Candidate],
    together: Together,
) -> tuple[Candidate, ...]:
    """The combination of the open words' candidates with the fewest edits, then the most
    records with all its words and the fixed ones (those with only its own words when no
    record has them all with the fixed ones), then the most used words."""
    lists = [found for _, _, found in open_words]
    while _product_size(lists) > COMBINATIONS:
        longest = max(range(len(lists)), key=lambda i: len(lists[i]))
        lists[longest] = lists[longest][:-1]
    combinations = list(itertools.product(*lists))
    with_fixed = [together([*fixed, *combo]) if fixed else 0 for combo in combinations]
    if not any(with_fixed):
        with_fixed = [together(combo) for combo in combinations]

    def weight(at: int) -> tuple[float, int, int, int]:
        combo = combinations[at]
        return (
            sum(c.distance for c in combo),
            -with_fixed[at],
            # Forms of one word are found by the same records: "wavs" is "waves", not "wave".
            -sum(c.kept for c in combo),
            -sum(c.count for c in combo),
        )

    return combinations[min(range(len(combinations)), key=weight)]


def _product_size(lists: list[list[Candidate]]) -> int:
    size = 1
    for found in lists:
        size *= len(found)
    return size


def _kept(typed: str, other: str) -> int:
    """How many of ``typed``'s first letters and last letters ``other`` has in place."""
    first = 0
    for a, b in zip(typed, other, strict=False):
        if a != b:
            break
        first += 1
    last = 0
    for a, b in zip(reversed(typed[first:]), reversed(other[first:]), strict=False):
        if a != b:
            break
        last += 1
    return first + last


def _deletions(word: str) -> set[str]:
    """The strings left when up to :data:`MAX_EDITS` letters are deleted from the first
    :data:`PREFIX_LENGTH` letters of ``word`` (that prefix itself included), never down to
    nothing: the prefix's subsequences of all but up to two of its letters (by
    ``itertools.combinations``, twice as fast as deleting a letter at a time)."""
    prefix = word[:PREFIX_LENGTH]
    size = len(prefix)
    shortest = max(size - MAX_EDITS, 1)
    return {"".join(kept) for k in range(shortest, size + 1) for kept in combinations(prefix, k)}


def _hash(text: str) -> int:
    """A deletion's place in the table: 64 bits of BLAKE2 (the same in every process)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
