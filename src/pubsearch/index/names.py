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
(:func:`pubsearch.ingest.records.author_identity`: ``Y. You``, ``Y You``, ``You, Y.``), not for
every name the rule above finds (``Yang You``, ``Yu You``).

German and Scandinavian names are written two ways: ``Schölkopf`` and ``Schoelkopf``,
``Sørensen`` and ``Soerensen`` (:func:`pubsearch.ingest.textforms.transliterations`). A word of
a recorded name written with such a letter is one word with its spelled-out form and its
folded one (``scholkopf``, ``schoelkopf``), so that any of the three finds every record
that wrote any of them; a typed name is read as typed and as spelled out.

:class:`NameIndex` is the table of every recorded name by surname, kept as arrays: built
with each index generation and saved beside it (``names.npz``), read mapped when a search
first needs it.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pubsearch.core import npzfiles
from pubsearch.core.ranges import gathered
from pubsearch.ingest.records import author_identity, fold
from pubsearch.ingest.textforms import transliterations

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
    """Recorded names (a facet's labels, by id) found by their surnames' last word, and
    how many records people of each surname wrote. Arrays: the keys' hashes in order, the
    ids of each key's names, and each key's count of records; and the words written two
    ways (see the module's doc)."""

    def __init__(
        self,
        labels: Sequence[str],
        variants: dict[str, str],
        arrays: dict[str, Any],
    ) -> None:
        self._labels = labels
        self._variants = variants
        self._hashes: UInt64Array = arrays["hashes"]
        self._starts: IntArray = arrays["starts"]
        self._ids: Int32Array = arrays["ids"]
        self._papers: Int32Array = arrays["papers"]
        self._keys: npt.NDArray[np.uint8] = arrays["keys"]
        self._forms: dict[str, list[str]] | None = None  # shared form -> its forms

    @classmethod
    def build(cls, labels: Sequence[str], documents: Documents | None = None) -> NameIndex:
        """The table of ``labels``; with ``documents`` (each name's documents, see
        :class:`Documents`), each surname's count of records, else 0."""
        variants = name_variants(labels)
        key_ids: dict[str, int] = {}
        pair_keys: list[int] = []
        pair_names: list[int] = []
        for number, label in enumerate(labels):
            for key in dict.fromkeys(_canonical_word(k, variants) for k in _keys(label)):
                pair_keys.append(key_ids.setdefault(key, len(key_ids)))
                pair_names.append(number)
        key_hash = np.fromiter(map(_hash, key_ids), dtype=np.uint64, count=len(key_ids))
        by_pair = key_hash[np.asarray(pair_keys, dtype=np.int64)]
        names = np.asarray(pair_names, dtype=np.int32)
        order = np.lexsort((names, by_pair))
        by_pair, names = by_pair[order], names[order]
        hashes, firsts = np.unique(by_pair, return_index=True)
        starts = np.append(firsts, len(by_pair)).astype(np.int64)
        papers = np.zeros(len(hashes), dtype=np.int32)
        if documents is not None and len(names):
            papers = _papers(documents, np.repeat(np.arange(len(hashes)), np.diff(starts)), names)
        key_of = dict(zip(key_hash.tolist(), key_ids, strict=True))
        keys = _packed(key_of[h] for h in hashes.tolist())
        arrays = {"hashes": hashes, "starts": starts, "ids": names, "papers": papers, "keys": keys}
        return cls(labels, variants, arrays)

    def surnames(self) -> list[tuple[str, int]]:
        """Every surname key (folded, the last word of a surname and its parts between
        hyphens), with how many records people of that surname wrote."""
        keys = _unpacked(self._keys, len(self._hashes))
        return list(zip(keys, self._papers.tolist(), strict=True))

    def _bucket(self, key: str) -> int | None:
        """Where ``key``'s names are in the arrays, or None when no name has it."""
        wanted = np.uint64(_hash(key))
        at = int(np.searchsorted(self._hashes, wanted))
        if at < len(self._hashes) and self._hashes[at] == wanted:
            return at
        return None

    def _candidates(self, key: str) -> Iterable[int]:
        """Ids of the recorded names whose surname is found by ``key`` (or more)."""
        at = self._bucket(key)
        if at is None:
            return ()
        ids: list[int] = self._ids[self._starts[at] : self._starts[at + 1]].tolist()
        return ids

    def papers(self, word: str) -> int:
        """How many records people with the surname ``word`` wrote (0 when none has it)."""
        words = _words(word)
        if len(words) != 1:
            return 0
        at = self._bucket(_canonical_word(words[0], self._variants))
        return 0 if at is None else int(self._papers[at])

    def readings(self, typed: str) -> list[list[Name]]:
        """The ways to read ``typed``, in order (see :func:`typed_readings`), each as typed
        and as spelled out (``Schölkopf``, ``Schoelkopf``), with the words written two
        ways in the index as one."""
        forms = dict.fromkeys([typed, transliterations(typed)])
        each = [typed_readings(form) for form in forms]
        out: list[list[Name]] = []
        for position in range(max(map(len, each))):
            group = [
                self._canonical(readings[position]) for readings in each if position < len(readings)
            ]
            out.append(list(dict.fromkeys(group)))
        return out

    def spellings(self, typed: str) -> list[str]:
        """The words of ``typed`` (folded) in every way the index writes them
        (``schoelkopf`` and ``scholkopf``)."""
        if self._forms is None:
            forms: dict[str, list[str]] = {}
            for word, shared in self._variants.items():
                forms.setdefault(shared, []).append(word)
            self._forms = forms
        words = dict.fromkeys([*_words(typed), *_words(transliterations(typed))])
        out = dict.fromkeys(words)
        for word in words:
            for part in word.split("-"):
                shared = self._variants.get(part, part)
                out.update(dict.fromkeys(self._forms.get(shared, [part])))
        return list(out)

    def _canonical(self, name: Name) -> Name:
        variants = self._variants
        return Name(
            tuple(_canonical_word(w, variants) for w in name.surname),
            tuple(_canonical_word(w, variants) for w in name.given),
        )

    def find(self, typed: str) -> list[int]:
        """The ids of the recorded names ``typed`` stands for, in id order."""
        exact = quoted_name(typed)
        if exact is not None:
            return self.same_person(exact)
        for number, group in enumerate(self.readings(typed)):
            if number and "," in typed:
                break
            found = {
                i
                for reading in group
                for i in self._candidates(reading.surname[-1])
                if matches(reading, self._canonical(recorded_name(self._labels[i])))
            }
            if found:
                return sorted(found)
        return []

    def same_person(self, name: str) -> list[int]:
        """The ids of the recorded names that are ``name`` written one way or another
        (the same :func:`~pubsearch.ingest.records.author_identity`), in id order."""
        identity = author_identity(name)
        return sorted(
            {
                i
                for key in _folded_keys(name)
                for i in self._candidates(_canonical_word(key, self._variants))
                if author_identity(self._labels[i]) == identity
            }
        )

    def save(self, directory: Path, generation: int) -> None:
        """Write the table into ``directory`` (a new file, renamed into place), for Whoosh
        generation ``generation`` of the index there."""
        forms = list(self._variants)
        npzfiles.save_arrays(
            directory / NAMES_FILE,
            {
                "meta": np.asarray(
                    [FORMAT_VERSION, generation, len(self._labels), len(forms)], dtype=np.int64
                ),
                "hashes": self._hashes,
                "starts": self._starts,
                "ids": self._ids,
                "papers": self._papers,
                "keys": self._keys,
                "forms": _packed(forms),
                "canonical": _packed(self._variants[f] for f in forms),
            },
        )

    @classmethod
    def load(cls, directory: Path, labels: Sequence[str], generation: int) -> NameIndex | None:
        """The table saved in ``directory`` for Whoosh generation ``generation`` and these
        ``labels``, or None when there is none (a generation built before tables were
        saved) or it is for another."""
        try:
            data = npzfiles.load_arrays(directory / NAMES_FILE)
            meta = data["meta"]
            if int(meta[0]) != FORMAT_VERSION or int(meta[1]) != generation:
                return None
            if int(meta[2]) != len(labels):
                return None
            count = int(meta[3])
            forms = _unpacked(data["forms"], count)
            variants = dict(zip(forms, _unpacked(data["canonical"], count), strict=True))
            arrays = {name: data[name] for name in ("hashes", "starts", "ids", "papers", "keys")}
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):
            return None
        return cls(labels, variants, arrays)


@dataclass(frozen=True)
class Documents:
    """Which documents each name is on: a facet table's entries (document, name id), and
    which documents are live."""

    value_ids: Int32Array
    doc_of_entry: Int32Array
    live: npt.NDArray[np.bool_]


def _papers(documents: Documents, pair_bucket: IntArray, pair_name: Int32Array) -> Int32Array:
    """Each bucket's count of live documents with a name in it."""
    buckets = int(pair_bucket.max()) + 1 if len(pair_bucket) else 0
    # Each name's buckets (a name is in one to three), then each entry's.
    order = np.argsort(pair_name, kind="stable")
    names, by_name = pair_name[order], pair_bucket[order]
    size = max(int(names.max()) + 1, int(documents.value_ids.max(initial=-1)) + 1)
    per_name = np.bincount(names, minlength=size)
    first = np.concatenate([[0], np.cumsum(per_name)])
    live = documents.live[documents.doc_of_entry]
    values = documents.value_ids[live].astype(np.int64)
    docs = documents.doc_of_entry[live].astype(np.int64)
    counts = per_name[values]
    entry_bucket = by_name[gathered(first[values], counts)]
    entry_doc = np.repeat(docs, counts)
    pairs = np.unique(entry_bucket.astype(np.int64) * len(documents.live) + entry_doc)
    found: Int32Array = np.bincount(pairs // len(documents.live), minlength=buckets).astype(
        np.int32
    )
    return found


def name_variants(labels: Iterable[str]) -> dict[str, str]:
    """Words of ``labels`` written two ways (see the module's doc), folded, each part of a
    hyphenated word apart -> the one form each such pair (or chain) shares: the first of
    its forms in the alphabet."""
    parent: dict[str, str] = {}

    def root(word: str) -> str:
        while (up := parent.get(word, word)) != word:
            word = up
        return word

    for label in labels:
        if label.isascii():
            continue
        spelled = transliterations(label)
        if spelled == label:
            continue
        written, other = _words(label), _words(spelled)
        if len(written) != len(other):
            continue
        for pair in zip(written, other, strict=True):
            parts = [word.split("-") for word in pair]
            if pair[0] == pair[1] or len(parts[0]) != len(parts[1]):
                continue
            for first, second in zip(*parts, strict=True):
                a, b = root(first), root(second)
                if a != b:
                    low, high = sorted((a, b))
                    parent[high] = low
                    parent.setdefault(low, low)
    return {word: root(word) for word in parent}


def _canonical_word(word: str, variants: dict[str, str]) -> str:
    """``word`` with each of its hyphenated parts in the form its variants share."""
    if not variants:
        return word
    if "-" not in word:
        return variants.get(word, word)
    return "-".join(variants.get(part, part) for part in word.split("-"))


def _hash(key: str) -> int:
    """A key's place in the table: 64 bits of BLAKE2 (the same in every process)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little")


def _packed(words: Iterable[str]) -> npt.NDArray[np.uint8]:
    return np.frombuffer(_SEPARATOR.join(words).encode("utf-8"), dtype=np.uint8)


def _unpacked(packed: npt.NDArray[np.uint8], count: int) -> list[str]:
    words = bytes(packed).decode("utf-8").split(_SEPARATOR) if count else []
    if len(words) != count:
        raise ValueError("saved name forms do not match their count")
    return words


# The name table, beside a generation's index files; bump FORMAT_VERSION when its arrays
# change meaning (an older file is then built anew).
NAMES_FILE = "names.npz"
FORMAT_VERSION = 1
_SEPARATOR = "\x1f"

IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
UInt64Array = npt.NDArray[np.uint64]


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
