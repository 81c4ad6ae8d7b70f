"""Spelling corrections a researcher can trust: the words of titles, weighted by use.

Candidates come from SymSpell (the ``symspellpy`` package: every word of the titles of an
index generation, unstemmed, within two edits, counting a swap of neighbours as one); the
one kept is the nearest, and among the nearest the one most records use (its stem's
document frequency in titles and abstracts, which a query word's own typo shares with no
one). A word is corrected when no record has it, or when few do (:data:`RARE`) and a
near word is used :data:`RARITY` times as often (a typo that made it into a few abstracts).

Pasted text is not corrected (more than :data:`MAX_WORDS` words); nor are words with
digits, or shorter than :data:`MIN_LENGTH` letters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from symspellpy import SymSpell, Verbosity

from pubsearch.records import fold

MAX_EDITS = 2
# SymSpell's prefix length: 5 keeps the table a third of 7's size (docs/performance.md).
PREFIX_LENGTH = 5
MIN_LENGTH = 3
MAX_WORDS = 8
# A word at most RARE records use is still corrected to one RARITY times as common (a
# typo that made it into a few abstracts: "langauge", 6 records at 102,289).
RARE = 50
RARITY = 100

_CORRECTABLE = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")

# How many records use a word (its stem's document frequency), by the word.
Usage = Callable[[str], int]


@dataclass(frozen=True)
class Correction:
    """Where a word stood in the query text, and what to write instead."""

    start: int
    end: int
    word: str


def worth_correcting(words: Sequence[object]) -> bool:
    """Whether a query of these words is corrected at all: not when it has none, nor when
    it has more than :data:`MAX_WORDS` (a pasted text: its odd words are not typing
    mistakes). Asked before a generation's table is built, which costs about a second."""
    return 0 < len(words) <= MAX_WORDS


class Spelling:
    """The correctly spelt words of an index generation (its titles' words)."""

    def __init__(self, words: Iterable[str]) -> None:
        self._symspell = SymSpell(
            max_dictionary_edit_distance=MAX_EDITS, prefix_length=PREFIX_LENGTH
        )
        for word in words:
            if len(word) >= MIN_LENGTH and _CORRECTABLE.fullmatch(word):
                self._symspell.create_dictionary_entry(word, 1)

    def correct(self, word: str, usage: Usage) -> str | None:
        """The word to write for ``word`` (folded), or None when it stands as it is."""
        folded = fold(word)
        if len(folded) < MIN_LENGTH or not _CORRECTABLE.fullmatch(folded):
            return None
        own = usage(folded)
        if own > RARE:
            return None  # a word this many records use is no typing mistake
        found = self._symspell.lookup(folded, Verbosity.ALL, max_edit_distance=MAX_EDITS)
        candidates = [s for s in found if s.term != folded]
        if not candidates:
            return None
        nearest = min(s.distance for s in candidates)
        # Among the nearest, the most used (then the first in the alphabet).
        used = sorted((-usage(s.term), str(s.term)) for s in candidates if s.distance == nearest)
        best_use, best = -used[0][0], used[0][1]
        if best_use == 0 or (own and best_use < own * RARITY):
            return None
        return best

    def corrections(self, words: list[tuple[int, int, str]], usage: Usage) -> list[Correction]:
        """The corrections of a query's words, given as (start, end, text)."""
        if not worth_correcting(words):
            return []
        out = []
        for start, end, text in words:
            better = self.correct(text, usage)
            if better is not None:
                out.append(Correction(start, end, better))
        return out
