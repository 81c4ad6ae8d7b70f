"""Author names as people write them: which recorded names a typed name stands for.

A recorded name (``Vishal M. Patel``, ``Patel, Vishal M.``, ``Ludwig van Beethoven``) is a
surname and given names: the part before a comma, or else the last word with the
particles before it (``van der Berg``); suffixes (``Jr.``, ``III``) are dropped, and a
hyphenated given name is one name (``Jean-Pierre``, ``J.-P.``). Case and accents never
count.

A typed name (an author filter, or words of the search box) stands for a recorded name
when

* the surnames agree: the same words, or the typed one is the recorded one's last word or
  a part of it between hyphens (``Beethoven``, ``Garcia`` for ``García-Márquez``);
* and the typed given names agree with the recorded ones: the first with the first, the
  others in order with some of the rest (middle names may be left out), each the same
  word or an initial of it, part by part when hyphenated (``V. Patel``, ``Vishal Patel``
  and ``V. M. Patel`` find ``Vishal M. Patel``, not ``A. V. Patel``; ``J.-P. Dupont``
  finds ``Jean-Pierre Dupont``, ``Hao Zhang`` not ``Hao-Bin Zhang``; a surname alone
  finds every given name).

A typed name without a comma is read surname last (``Vishal Patel``); when that finds no
one, as a surname alone if it starts with a particle (``van Roij``), then surname first
(``Patel V``, ``You Yang``). A one-letter word is never a surname.

A name in double quotes (``"Y. You"``: what an author's link on a hit asks for) stands
only for that name as recorded and its other spellings of one person
(:func:`pubsearch.records.author_identity`: ``Y. You``, ``Y You``, ``You, Y.``), not for
every name the rule above finds (``Yang You``, ``Yu You``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from pubsearch.records import author_identity, fold

PARTICLES = frozenset(
    (
        "van von der den de del della dei di da das do dos du le la les ten ter zu bin ibn al el"
    ).split()
)
SUFFIXES = frozenset("jr sr ii iii iv".split())

_WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")
_QUOTES = {'"': '"', "\u201c": "\u201d"}


def exact_name(name: str) -> str:
    """An author filter that stands for ``name`` as recorded only (see the module's doc)."""
    return f'"{name}"'


def quoted_name(typed: str) -> str | None:
    """The name inside the quotes of an author filter such as ``"Y. You"``; None for a
    name without them."""
    text = typed.strip()
    if len(text) > 2 and _QUOTES.get(text[0]) == text[-1]:
        return text[1:-1].strip() or None
    return None


@dataclass(frozen=True)
class Name:
    """A name taken apart: surname words and given-name words, folded."""

    surname: tuple[str, ...]
    given: tuple[str, ...]


def _words(text: str) -> list[str]:
    # "J.-P." is one given name, "j-p", as "Jean-Pierre" is "jean-pierre".
    folded = fold(text).replace(".-", "-")
    return [w for w in _WORD.findall(folded) if w not in SUFFIXES]


def _given(words: Sequence[str]) -> tuple[str, ...]:
    return tuple(words)


def recorded_name(text: str) -> Name:
    """A name as a source records it (see the module's doc)."""
    if "," in text:
        family, _, given = text.partition(",")
        return Name(tuple(_words(family)), _given(_words(given)))
    words = _words(text)
    if not words:
        return Name((), ())
    start = len(words) - 1
    while start > 1 and words[start - 1] in PARTICLES:
        start -= 1
    return Name(tuple(words[start:]), _given(words[:start]))


def typed_readings(text: str) -> list[Name]:
    """The ways to read a typed name: surname last, then surname first (see the module's
    doc); none when it has no word."""
    if "," in text:
        name = recorded_name(text)
        return [name] if name.surname else []
    words = _words(text)
    readings = []
    if words:
        readings.append(recorded_name(" ".join(words)))
        lead = 0
        while lead < len(words) - 1 and words[lead] in PARTICLES:
            lead += 1
        if lead:  # "van Roij": all surname
            readings.append(Name(tuple(words), ()))
    if len(words) > 1:
        readings.append(Name((words[0],), _given(words[1:])))
    return [r for r in readings if r.surname and len(r.surname[-1]) > 1]


def _same_given(typed: str, recorded: str) -> bool:
    """The same given name, or an initial of it; a hyphenated one part by part
    (``j-p`` and ``jean-pierre``; not ``hao`` and ``hao-bin``)."""
    typed_parts, recorded_parts = typed.split("-"), recorded.split("-")
    if len(typed_parts) != len(recorded_parts):
        return False
    return all(map(_same_word, typed_parts, recorded_parts))


def _same_word(typed: str, recorded: str) -> bool:
    if typed == recorded:
        return True
    if len(typed) == 1:
        return recorded.startswith(typed)
    return len(recorded) == 1 and typed.startswith(recorded)


def matches(typed: Name, recorded: Name) -> bool:
    """Whether the typed name stands for the recorded one (see the module's doc)."""
    if not recorded.surname:
        return False
    if typed.surname != recorded.surname:
        if len(typed.surname) != 1:
            return False
        last = recorded.surname[-1]
        if typed.surname[0] != last and typed.surname[0] not in last.split("-"):
            return False
    if not typed.given:
        return True
    if not recorded.given or not _same_given(typed.given[0], recorded.given[0]):
        return False
    at = 1
    for word in typed.given[1:]:
        while at < len(recorded.given) and not _same_given(word, recorded.given[at]):
            at += 1
        if at == len(recorded.given):
            return False
        at += 1
    return True


class NameIndex:
    """Recorded names (a facet's labels, by id) found by their surnames' last word."""

    def __init__(self, labels: Sequence[str]) -> None:
        self._labels = labels
        self._by_key: dict[str, list[int]] = {}
        for number, label in enumerate(labels):
            for key in _keys(label):
                self._by_key.setdefault(key, []).append(number)

    def _candidates(self, key: str) -> Iterable[int]:
        """Ids of the recorded names whose surname is found by ``key`` (or more)."""
        return self._by_key.get(key, ())

    def find(self, typed: str) -> list[int]:
        """The ids of the recorded names ``typed`` stands for, in id order."""
        exact = quoted_name(typed)
        if exact is not None:
            return self.spellings(exact)
        readings = typed_readings(typed)
        for number, reading in enumerate(readings):
            if number and "," in typed:
                break
            found = sorted(
                {
                    i
                    for i in self._candidates(reading.surname[-1])
                    if matches(reading, recorded_name(self._labels[i]))
                }
            )
            if found:
                return found
        return []

    def spellings(self, name: str) -> list[int]:
        """The ids of the recorded names that are ``name`` written one way or another
        (the same :func:`~pubsearch.records.author_identity`), in id order."""
        identity = author_identity(name)
        return sorted(
            {
                i
                for key in _folded_keys(name)
                for i in self._candidates(key)
                if author_identity(self._labels[i]) == identity
            }
        )


class ScannedNames(NameIndex):
    """:class:`NameIndex`'s answers without its table: the surname looked for as a word in
    the names' folded forms, all in one text (the folded keys a generation's facet table
    saves, separated by ``separator``), and the names where it is found checked as the
    table's are. A scan of 15 MB costs 10 to 40 ms; the table of every author's surname,
    1.7 s at 1,000,000 records. For a process that asks for a few names (``pubsearch
    query``); a server builds the table, and so does a process that has spent
    :data:`SCANNING_BUDGET` scanning (it is asking for many)."""

    def __init__(self, labels: Sequence[str], folded: bytes, separator: int) -> None:
        self._labels = labels
        # Folded as _words folds a name, so that every key is a word of this text.
        self._text = folded.replace(b".-", b"-")
        codes = np.frombuffer(self._text, dtype=np.uint8)
        self._ends = np.flatnonzero(codes == separator)  # where each name but the last ends
        self._codes = codes
        self._found: dict[str, list[int]] = {}  # the last few keys' names
        self.seconds = 0.0  # spent scanning, so far

    def _candidates(self, key: str) -> Iterable[int]:
        found = self._found.get(key)
        if found is None:
            if len(self._found) >= _SCANNED_KEPT:
                self._found.clear()
            started = time.perf_counter()
            found = self._found[key] = self._scan(key)
            self.seconds += time.perf_counter() - started
        return found

    def _scan(self, key: str) -> list[int]:
        word = key.encode("utf-8")
        if not word:
            return []
        starts = np.fromiter(
            (m.start() for m in re.finditer(re.escape(word), self._text)), dtype=np.int64
        )
        if not len(starts):
            return []
        # Not inside a longer word: no ASCII letter or digit either side. (A non-ASCII
        # character either side may be a letter: such names are kept, and matches()
        # decides, as it does for every name found.)
        codes = self._codes
        before = np.where(starts > 0, codes[np.maximum(starts - 1, 0)], 0)
        after_at = starts + len(word)
        after = np.where(after_at < len(codes), codes[np.minimum(after_at, len(codes) - 1)], 0)
        whole = ~_WORD_BYTE[before] & ~_WORD_BYTE[after]
        names = np.searchsorted(self._ends, starts[whole])  # separators before each: its id
        ids: list[int] = np.unique(names).tolist()
        return ids


# Keys whose names a ScannedNames keeps (a query asks for a few).
_SCANNED_KEPT = 256
# Seconds of scanning after which the table of surnames is built instead (a third of what
# building it costs at 1,000,000 records).
SCANNING_BUDGET = 0.5
# ASCII letters and digits, by byte.
_WORD_BYTE = np.zeros(256, dtype=np.bool_)
_WORD_BYTE[list(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")] = True


def _keys(label: str) -> list[str]:
    """What a recorded name is found by: its surname's last word and that word's parts
    between hyphens (what :func:`recorded_name` finds, for less: this runs for every
    author of the index)."""
    if label.isascii() and "," not in label:
        # Most names end in a word of ASCII letters (``S. Chen``): that word, in lower
        # case, is the key, without folding or a regular expression (1.9 to 0.4 s for
        # the 256,855 names of 100,000 records).
        last = label.rpartition(" ")[2]
        if last.isalpha():
            key = last.lower()
            if key not in SUFFIXES:
                return [key]
    return _folded_keys(label)


def _folded_keys(label: str) -> list[str]:
    """:func:`_keys` of any name, the long way."""
    folded = fold(label).replace(".-", "-")
    if "," in folded:
        folded = folded.partition(",")[0]
    words = _WORD.findall(folded)
    while words and words[-1] in SUFFIXES:
        words.pop()
    if not words:
        return []
    last = words[-1]
    return [last, *last.split("-")] if "-" in last else [last]
