"""Subjects as people type them: which recorded subjects a typed subject stands for.

A subject filter (``--subject``, ``subject=``, a ticked facet) and ``subject:`` in a query
take, case and accents ignored:

* a subject as recorded: an arXiv code (``cs.LG``), a keyword or a topic, exactly;
* an arXiv archive, alone or as a pattern (``astro-ph``, ``astro-ph.*``, ``cs``,
  ``cond-mat.*``): the archive's own code and every category in it (``astro-ph``,
  ``astro-ph.CO``, ``astro-ph.GA``, ...);
* the name arXiv gives a category or an archive, as the page shows it (``Machine
  Learning``, ``Astrophysics``): every code of that name (``cs.LG`` and ``stat.ML``), with
  a notice when the index records more than one;
* any other pattern of ``*`` and ``?`` (``cs.L*``; fnmatch's, ``[...]`` too): every
  recorded subject it fits.

A subject recorded exactly as typed is that subject (a keyword "Machine Learning" is the
keyword), except an archive's code, which is the whole archive. What stands for no
recorded subject gets a notice: for an arXiv code or name, that no record has it; for
anything else, the closest subjects the index records.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pubsearch.ingest.records import fold
from pubsearch.ingest.subjects import ARCHIVES, CATEGORIES, arxiv_subject_name, subject_name

# How many of the closest recorded subjects an unknown one's notice suggests, and how
# close they must be: the similarity of the folded texts, 0 to 100 (rapidfuzz's ratio,
# difflib's as a percentage: "machine" is 61 of "machine learning").
SUGGESTIONS = 5
SUGGESTION_CUTOFF = 60
# An archive as a pattern: its code, then ".*" or "*" (``astro-ph.*``, ``cs*``).
_ARCHIVE_PATTERN = re.compile(r"(.+?)\.?\*")


@dataclass(frozen=True)
class SubjectMatch:
    """What one typed subject stands for: the ids of recorded subjects (the facet table's,
    in id order) and, when worth saying, a notice about it."""

    typed: str
    ids: tuple[int, ...]
    notice: str | None = None


@functools.cache
def _codes_by_name() -> dict[str, tuple[str, ...]]:
    """Folded arXiv name -> the codes (categories and archives) of that name."""
    found: dict[str, list[str]] = {}
    for code, name in {**CATEGORIES, **ARCHIVES}.items():
        codes = found.setdefault(fold(name), [])
        if code not in codes:
            codes.append(code)
    return {name: tuple(codes) for name, codes in found.items()}


@functools.cache
def _archives() -> dict[str, str]:
    """Folded archive code -> the code as arXiv writes it."""
    return {fold(code): code for code in ARCHIVES}


@functools.cache
def _codes() -> dict[str, str]:
    """Folded arXiv code (category or archive) -> the code as arXiv writes it."""
    return {fold(code): code for code in (*CATEGORIES, *ARCHIVES)}


def _archive_of(key: str) -> str | None:
    """The archive (folded) a folded subject key belongs to: its own, for an archive's
    code, or the one before its dot (``astro-ph.ga``, and a category arXiv adds later)."""
    if key in _archives():
        return key
    archive, dot, _ = key.partition(".")
    return archive if dot and archive in _archives() else None


class SubjectIndex:
    """The recorded subjects of one index (a facet's labels and folded keys, by id), found
    by what people type (see the module's doc)."""

    def __init__(self, labels: Sequence[str], ids_by_key: Mapping[str, int]) -> None:
        self._labels = labels
        self._ids_by_key = ids_by_key
        self._by_archive: dict[str, tuple[int, ...]] | None = None
        self._choices: dict[str, list[str]] | None = None

    def find(self, typed: str) -> SubjectMatch:
        text = typed.strip()
        key = fold(text)
        if key in _archives():
            return self._archive(text, key)
        found = self._ids_by_key.get(key)
        if found is not None:
            return SubjectMatch(typed, (found,))
        if "*" in key or "?" in key:
            return self._pattern(text, key)
        name = subject_name(key)
        if name is not None:
            code = _codes()[key]
            return SubjectMatch(typed, (), f"No record has subject {code} ({name}).")
        codes = _codes_by_name().get(key)
        if codes is not None:
            return self._named(typed, codes)
        return SubjectMatch(typed, (), self._unknown(text, key))

    # -- what a typed subject can be ------------------------------------------------------

    def _archive(self, typed: str, archive: str) -> SubjectMatch:
        ids = self.archive_ids(archive)
        if ids:
            return SubjectMatch(typed, ids)
        code = _archives()[archive]
        return SubjectMatch(typed, (), f"No record has a subject in {code} ({ARCHIVES[code]}).")

    def _pattern(self, typed: str, key: str) -> SubjectMatch:
        whole = _ARCHIVE_PATTERN.fullmatch(key)
        if whole is not None and whole.group(1) in _archives():
            return self._archive(typed, whole.group(1))
        # fnmatch's translation: each * an atomic group, so that no pattern backtracks for
        # long (``*a*a*a...*b``).
        pattern = re.compile(fnmatch.translate(key))
        ids = tuple(sorted(i for k, i in self._ids_by_key.items() if pattern.fullmatch(k)))
        if ids:
            return SubjectMatch(typed, ids)
        return SubjectMatch(typed, (), f"No subject in the index fits {typed}.")

    def _named(self, typed: str, codes: tuple[str, ...]) -> SubjectMatch:
        """The codes arXiv gives this name: the subjects of those the index records."""
        ids: list[int] = []
        recorded: list[str] = []
        for code in codes:
            key = fold(code)
            found = (
                self.archive_ids(key)
                if key in _archives()
                else (() if (i := self._ids_by_key.get(key)) is None else (i,))
            )
            if found:
                recorded.append(_whole(code))
                ids.extend(found)
        name = typed.strip()
        if not recorded:
            listed = ", ".join(map(_whole, codes))
            return SubjectMatch(typed, (), f"No record has subject {name} ({listed}).")
        notice = None
        if len(recorded) > 1:
            notice = (
                f"Subject \u201c{name}\u201d is the name of {_and(recorded)}: "
                "records of each are shown."
            )
        return SubjectMatch(typed, tuple(sorted(set(ids))), notice)

    def _unknown(self, typed: str, key: str) -> str:
        from rapidfuzz import fuzz, process  # 60 ms to import: only for an unknown subject

        choices = self._suggestion_choices()
        # rapidfuzz compares with every choice in C: 21 ms for 100,000 keywords, where
        # difflib's get_close_matches took 1.4 s (same ratio, 2 busy CPUs).
        close = process.extract(
            key,
            list(choices),
            scorer=fuzz.ratio,
            limit=SUGGESTIONS * 2,
            score_cutoff=SUGGESTION_CUTOFF,
        )
        shown = list(dict.fromkeys(label for k, _, _ in close for label in choices[k]))
        if not shown:
            return f"No subject \u201c{typed}\u201d in the index."
        return (
            f"No subject \u201c{typed}\u201d in the index; did you mean "
            f"{', '.join(shown[:SUGGESTIONS])}?"
        )

    # -- tables, built when first needed --------------------------------------------------

    def archive_ids(self, archive: str) -> tuple[int, ...]:
        """The recorded subjects of a (folded) archive: its own code and its categories."""
        by_archive = self._by_archive
        if by_archive is None:
            grouped: dict[str, list[int]] = {}
            for key, vid in self._ids_by_key.items():
                home = _archive_of(key)
                if home is not None:
                    grouped.setdefault(home, []).append(vid)
            by_archive = self._by_archive = {a: tuple(sorted(v)) for a, v in grouped.items()}
        return by_archive.get(archive, ())

    def _suggestion_choices(self) -> dict[str, list[str]]:
        """What an unknown subject is compared with (folded) -> how a suggestion shows it:
        each recorded subject, an arXiv code by its code and by its name ("Machine
        Learning (cs.LG)"), and each archive the index has subjects of ("Astrophysics
        (astro-ph.*)")."""
        choices = self._choices
        if choices is None:
            choices = {}

            def add(text: str, shown: str) -> None:
                labels = choices.setdefault(fold(text), [])
                if shown not in labels:
                    labels.append(shown)

            for label in self._labels:
                name = arxiv_subject_name(label)
                if name is None:
                    add(label, label)
                elif fold(label) not in _archives():  # archives: below
                    code = _codes().get(fold(label), label)
                    add(code, f"{name} ({code})")
                    add(name, f"{name} ({code})")
            for archive, code in _archives().items():
                if self.archive_ids(archive):
                    add(code, f"{ARCHIVES[code]} ({_whole(code)})")
                    add(ARCHIVES[code], f"{ARCHIVES[code]} ({_whole(code)})")
            self._choices = choices
        return choices


def _whole(code: str) -> str:
    """How a code is shown for what it stands for: an archive with categories as a
    pattern (``astro-ph.*``), anything else as it is (``hep-th``, ``cs.LG``)."""
    return f"{code}.*" if code in ARCHIVES and code not in CATEGORIES else code


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
