"""The one record type, and how records that describe the same paper become one.

Every reader (see :mod:`pubsearch.ingest.readers`) produces :class:`Record` values. A paper can be
listed by several sources (two people's profile pages, a JSON dump and arXiv's snapshot);
:class:`RecordMerger` folds those into one record, with the authors and subjects of all.

Identity, strongest first: the arXiv id, then the DOI, then the normalised title with the
year (or the source's own id). Two records are the same paper when they share one of these
keys, or are linked by a chain of records that do (see :class:`PaperGroups`).
"""

from __future__ import annotations

import datetime
import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields, replace
from functools import cached_property, reduce
from typing import Any, Generic, TypeVar

from pubsearch.ingest.identifiers import normalize_arxiv_id as normalize_arxiv_id
from pubsearch.ingest.identifiers import normalize_doi as normalize_doi
from pubsearch.ingest.textforms import fold

__all__ = ["fold"]  # pubsearch.ingest.textforms.fold, where most modules take it from

# Private-use characters that mark highlighted spans inside snippets. They are removed from
# all record text on the way in, so they can never be forged by a record.
MARK_START = "\ue000"
MARK_END = "\ue001"

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ue000\ue001]")
_SPACES = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^\w]+")


def clean_text(text: str | None) -> str:
    """Collapse white space and drop control characters; ``None`` becomes ``""``."""
    if not text:
        return ""
    # The fast paths below give the same result as the regular expressions: str.split()
    # splits on exactly the characters that ``\s`` matches. ASCII text is already NFC.
    if text.isascii():
        # Printable ASCII has no white space but " " (nor any other control character):
        # without two in a row or one at either end, there is nothing to do (most titles
        # and abstracts: half clean_text's time, split and joined, for an abstract).
        if text.isprintable() and "  " not in text and text[0] != " " and text[-1] != " ":
            return text
        # Split first: the white space it removes includes the control characters that
        # are white space; a printable rest holds no other.
        joined = " ".join(text.split())
        if joined.isprintable():
            return joined
    else:
        text = unicodedata.normalize("NFC", text)
    if _CONTROL.search(text):
        text = _CONTROL.sub(" ", text)
    return " ".join(text.split())


def title_key(title: str) -> str:
    """Normalised title: folded, punctuation dropped, words joined by single spaces."""
    if title.isascii():  # the same, without regular expressions (8.6 -> 2.5 us a title)
        return " ".join(title.lower().translate(_ASCII_NON_WORD).split())
    return _SPACES.sub(" ", _NON_WORD.sub(" ", fold(title)).replace("_", " ")).strip()


# Every ASCII character that is not a letter or a digit (``\w`` less ``_``), to a space;
# but apostrophes and underscores go, as fold() drops them ("O'Brien" is "obrien").
_ASCII_NON_WORD = {c: " " for c in range(128) if not chr(c).isalnum()} | {
    ord("'"): "",
    ord("_"): "",
}


_INITIAL_DOTS = re.compile(r"(?<=\w)\.")


def author_identity(name: str) -> str:
    """What two spellings of one author's name share: folded, ``Family, Given`` read as
    ``Given Family``, and the dots after initials dropped, so that ``Christian S. Hardtke``,
    ``Christian S Hardtke`` and ``Hardtke, Christian S.`` are one author of a record."""
    folded = fold(name)
    if "," in folded:
        family, _, given = folded.partition(",")
        folded = f"{given} {family}"
    return " ".join(_INITIAL_DOTS.sub(" ", folded).replace(" -", "-").split())


def _dedupe(values: Iterable[str], key: Callable[[str], str] | None = None) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        value = clean_text(value)
        k = key(value) if key else value
        if value and k not in seen:
            seen.add(k)
            out.append(value)
    return tuple(out)


@dataclass(frozen=True)
class Record:
    """One publication.

    ``origins`` says where the record was read from, as ``path:line`` strings (several when
    sources were merged). ``arxiv_id`` and ``doi`` are normalised; ``id`` is the arXiv id
    when there is one, else the DOI, else a stable hash of the title key and year.
    ``other_arxiv_ids`` and ``other_dois`` are every further id the paper was read with
    (merged from several sources): the record answers to all of them.
    """

    title: str
    abstract: str = ""
    authors: tuple[str, ...] = ()
    year: int | None = None
    # ISO 8601 where the source gives the day (YYYY-MM-DD), or the month of a submission
    # (YYYY-MM: see pubsearch.ingest.dating)
    date: str | None = None
    subjects: tuple[str, ...] = ()
    source: str = ""
    origins: tuple[str, ...] = ()
    arxiv_id: str | None = None
    doi: str | None = None
    id: str = field(default="")
    # How many works cite this one, where the source counts them (OpenAlex's cited_by_count).
    cited_by: int | None = None
    other_arxiv_ids: tuple[str, ...] = ()
    other_dois: tuple[str, ...] = ()
    # The day of the listing that gave the record, where it is dated by the month of its
    # submission instead (an arXiv id years older than the listing: pubsearch.ingest.dating).
    listed: str | None = None
    # The arXiv id is a reference's claim (a BibTeX eprint, which reference managers get
    # wrong at times): the record is the paper of that id only if their titles agree
    # (pubsearch.ingest.eprints). Not stored: it matters while records are merged.
    arxiv_id_claimed: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "title", clean_text(self.title))
        object.__setattr__(self, "abstract", clean_text(self.abstract))
        object.__setattr__(self, "authors", _dedupe(self.authors, key=author_identity))
        object.__setattr__(self, "subjects", _dedupe(self.subjects))
        arxiv_ids = _normalized(normalize_arxiv_id, self.arxiv_id, self.other_arxiv_ids)
        object.__setattr__(self, "arxiv_id", arxiv_ids[0] if arxiv_ids else None)
        object.__setattr__(self, "other_arxiv_ids", arxiv_ids[1:])
        dois = _normalized(normalize_doi, self.doi, self.other_dois)
        object.__setattr__(self, "doi", dois[0] if dois else None)
        object.__setattr__(self, "other_dois", dois[1:])
        object.__setattr__(self, "date", checked_date(self.date, self.year))
        listed = self.listed if self.listed and len(self.listed) == 10 else None  # a day
        object.__setattr__(self, "listed", checked_date(listed, None))
        object.__setattr__(self, "arxiv_id_claimed", self.arxiv_id_claimed and bool(arxiv_ids))
        if not self.id:
            object.__setattr__(self, "id", self._derived_id())

    def _derived_id(self) -> str:
        if self.arxiv_id:
            return self.arxiv_id
        if self.doi:
            return "doi:" + self.doi
        if not self.title:
            # An untitled record: named by its text, so that two untitled records of one
            # year are not one.
            digest = hashlib.sha1(f"{title_key(self.abstract)}|{self.year}".encode()).hexdigest()
            return "a" + digest[:11]
        digest = hashlib.sha1(f"{title_key(self.title)}|{self.year}".encode()).hexdigest()
        return "t" + digest[:11]

    @property
    def arxiv_ids(self) -> tuple[str, ...]:
        """Every arXiv id of the paper, its own (``arxiv_id``) first."""
        return (self.arxiv_id, *self.other_arxiv_ids) if self.arxiv_id else ()

    @property
    def dois(self) -> tuple[str, ...]:
        """Every DOI of the paper, its own (``doi``) first."""
        return (self.doi, *self.other_dois) if self.doi else ()

    @property
    def display_title(self) -> str:
        """The title; for an untitled record, the first words of its abstract (see
        :func:`title_from_text`)."""
        return self.title or title_from_text(self.abstract)

    def __reduce__(self) -> tuple[Callable[..., Record], tuple[Any, ...]]:
        """Pickled as its field values, and its identity keys once worked out, without
        the field names; unpickled without ``__post_init__``, whose work is done.

        A build sends its workers records (1,748 bytes pickled on average, where the
        record's document takes 3,565); the dataclass's own way took half as long again
        to unpickle.
        """
        keys = self.__dict__.get("identity_keys")
        return _unpickled_record, (tuple(map(self.__getattribute__, _FIELD_NAMES)), keys)

    @cached_property
    def identity_keys(self) -> tuple[str, ...]:
        """Every key under which this record is the same paper as another (worked out
        once: merging and indexing both ask)."""
        keys = ["arxiv:" + arxiv_id for arxiv_id in self.arxiv_ids]
        keys += ["doi:" + doi for doi in self.dois]
        if self.has_own_id:
            # The source names its records (BEIR's "_id": "4983"): two of them with different
            # ids are different papers even when their titles agree ("Summary").
            keys.append("id:" + self.id)
            return tuple(keys)
        tkey = title_key(self.title)
        if tkey:
            keys.append(f"title:{tkey}|{self.year}")
        return tuple(keys)

    @property
    def has_own_id(self) -> bool:
        """True when ``id`` came from the source, not from the arXiv id, DOI or title."""
        derived = {self._derived_id(), self.arxiv_id, "doi:" + self.doi if self.doi else None}
        return self.id not in derived

    @property
    def url(self) -> str | None:
        """The arXiv abstract page, or the DOI resolver, when known."""
        if self.arxiv_id:
            return f"https://arxiv.org/abs/{self.arxiv_id}"
        if self.doi:
            return f"https://doi.org/{self.doi}"
        return None


_FIELD_NAMES = tuple(f.name for f in fields(Record))


def _normalized(
    normalize: Callable[[str | None], str | None], first: str | None, others: Iterable[str]
) -> tuple[str, ...]:
    """``first`` and ``others`` normalised, each once, in order; those that are no id left out."""
    found = (normalize(value) for value in (first, *others))
    return tuple(dict.fromkeys(value for value in found if value))


def checked_date(date: str | None, year: int | None) -> str | None:
    """``date`` when it is a real day (``YYYY-MM-DD``) or month (``YYYY-MM``) of ``year``
    (or of any year when there is none), else None: a date that contradicts the year is
    not kept."""
    if not date:
        return None
    try:
        day = datetime.date.fromisoformat(date + "-01" if len(date) == 7 else date)
    except ValueError:
        return None
    if len(date) not in (7, 10) or (year is not None and day.year != year):
        return None
    return date


def date_number(date: str) -> int:
    """``2024-03-15`` -> 20240315, ``2007-05`` -> 20070500: how a date is indexed and
    sorted (a month before its days)."""
    return int((date + "-00" if len(date) == 7 else date).replace("-", ""))


def date_of_number(number: int) -> str | None:
    """20240315 -> ``2024-03-15``, 20070500 -> ``2007-05`` (None for 0: no date)."""
    if not number:
        return None
    text = f"{number:08d}"
    if text[6:] == "00":
        return f"{text[:4]}-{text[4:6]}"
    return f"{text[:4]}-{text[4:6]}-{text[6:]}"


# An untitled record is shown with this many of its first words, at most.
MADE_UP_TITLE_WORDS = 12
MADE_UP_TITLE_CHARS = 90


def title_from_text(text: str) -> str:
    """A stand-in title made of the first words of ``text`` (up to its first sentence's
    end, :data:`MADE_UP_TITLE_WORDS` words or :data:`MADE_UP_TITLE_CHARS` characters),
    ending in "…" when it is cut."""
    words = text.split()
    taken: list[str] = []
    for word in words[:MADE_UP_TITLE_WORDS]:
        if taken and len(" ".join([*taken, word])) > MADE_UP_TITLE_CHARS:
            break
        taken.append(word)
        if word.endswith((".", "?", "!")) and len(taken) > 3:
            return " ".join(taken).rstrip(".")
    made = " ".join(taken)
    return made + " \u2026" if len(taken) < len(words) else made


def _unpickled_record(values: tuple[Any, ...], keys: tuple[str, ...] | None) -> Record:
    """The record :meth:`Record.__reduce__` pickled."""
    record: Record = object.__new__(Record)
    state = record.__dict__
    state.update(zip(_FIELD_NAMES, values, strict=True))
    if keys is not None:
        state["identity_keys"] = keys
    return record


def merge(a: Record, b: Record) -> Record:
    """One record from two descriptions of the same paper.

    The first keeps its text unless it lacks some; authors, subjects and origins are the
    union, in order of first appearance (one author under two spellings once: see
    :func:`author_identity`), and so are the arXiv ids and DOIs: the first record's
    own, else the second's, are the merged record's own. The id is the arXiv id, else
    the DOI, else the first record's id; the citation count is the larger one.
    """
    arxiv_ids = a.arxiv_ids + b.arxiv_ids
    dois = a.dois + b.dois
    if arxiv_ids:
        new_id = arxiv_ids[0]
    elif dois:
        new_id = "doi:" + dois[0]
    else:
        new_id = a.id
    dated, other = (a, b) if a.year is not None else (b, a)
    date = dated.date
    if date and len(date) == 7 and other.date and other.date.startswith(date + "-"):
        date = other.date  # the day of the month a submission's id gives
    return replace(
        a,
        title=a.title or b.title,
        abstract=a.abstract if len(a.abstract) >= len(b.abstract) else b.abstract,
        authors=a.authors + b.authors,
        year=dated.year,
        date=date,
        listed=dated.listed,
        subjects=a.subjects + b.subjects,
        source=a.source or b.source,
        origins=a.origins + tuple(o for o in b.origins if o not in a.origins),
        arxiv_id=arxiv_ids[0] if arxiv_ids else None,
        other_arxiv_ids=arxiv_ids[1:],
        doi=dois[0] if dois else None,
        other_dois=dois[1:],
        id=new_id,
        cited_by=_larger(a.cited_by, b.cited_by),
        # Still a claim unless a record read the id from the paper itself.
        arxiv_id_claimed=all(r.arxiv_id_claimed or not r.arxiv_id for r in (a, b)),
    )


def _larger(a: int | None, b: int | None) -> int | None:
    """The larger of two counts, either of which may be unknown."""
    if a is None or b is None:
        return b if a is None else a
    return max(a, b)


Member = TypeVar("Member")


def _arrival(entry: tuple[int, object]) -> int:
    return entry[0]


class PaperGroups(Generic[Member]):
    """Which records are the same paper: a union-find over their identity keys.

    Records are numbered in order of arrival, from 1; a paper's slot is the number of its
    first record. A record none of whose keys was seen opens a paper. A record with keys
    seen before joins their papers, which become one under the oldest slot. Only the keys
    of the records themselves count, never those of a merged record (whose title and year
    may come from different records), and a key stays with the paper that first had it:
    so two records are one paper exactly when a chain of shared keys links them, whatever
    the order of the records.

    Each paper keeps its members in order of arrival. ``add(..., hold=False)`` holds
    nothing for a record that opens a paper; if duplicates join that paper later,
    ``stub(slot)`` stands for it among the members. Memory is one entry per distinct key
    and per paper folded into another, plus the members held.
    """

    def __init__(self, stub: Callable[[int], Member] | None = None) -> None:
        self._stub = stub
        self._slot_by_key: dict[str, int] = {}
        self._folded_into: dict[int, int] = {}
        self._held: dict[int, list[tuple[int, Member]]] = {}
        self.added = 0
        self.papers = 0

    def add(self, keys: tuple[str, ...], member: Member, hold: bool = True) -> int | None:
        """Place a record with ``keys`` (``member`` stands for it): return the slot of the
        paper it joined, or ``None`` when it opens a new paper (slot :attr:`added`)."""
        self.added += 1
        seq = self.added
        known = {self._root(self._slot_by_key[k]) for k in keys if k in self._slot_by_key}
        if not known:
            self.papers += 1
            for key in keys:
                self._slot_by_key[key] = seq
            if hold:
                self._held[seq] = [(seq, member)]
            return None
        slot, *others = sorted(known)
        members = self._take(slot)
        for other in others:
            self._folded_into[other] = slot
            members += self._take(other)
        self.papers -= len(others)
        members.append((seq, member))
        if others:
            members.sort(key=_arrival)
        self._held[slot] = members
        for key in keys:
            self._slot_by_key.setdefault(key, slot)
        return slot

    def _take(self, slot: int) -> list[tuple[int, Member]]:
        held = self._held.pop(slot, None)
        if held is not None:
            return held
        if self._stub is None:
            raise AssertionError(f"paper {slot} holds no members and there is no stub")
        return [(slot, self._stub(slot))]

    def _root(self, slot: int) -> int:
        """The slot that ``slot`` was folded into, following every later fold."""
        root = slot
        while root in self._folded_into:
            root = self._folded_into[root]
        while slot != root:  # point the path straight at the root for next time
            up = self._folded_into[slot]
            self._folded_into[slot] = root
            slot = up
        return root

    def held(self) -> Iterator[list[Member]]:
        """The members of each paper that holds some, in order of first appearance."""
        for slot in sorted(self._held):
            yield [member for _, member in self._held[slot]]


class RecordMerger:
    """Collects records and folds duplicates together.

    ``add`` returns ``True`` when the record is the same paper as one seen before. Each
    paper is its records folded with :func:`merge` in order of arrival.
    """

    def __init__(self) -> None:
        self._groups: PaperGroups[Record] = PaperGroups()

    @property
    def duplicates(self) -> int:
        """How many records added were folded into another."""
        return self._groups.added - self._groups.papers

    def add(self, record: Record) -> bool:
        return self._groups.add(record.identity_keys, record) is not None

    def __len__(self) -> int:
        return self._groups.papers

    def __iter__(self) -> Iterator[Record]:
        for members in self.groups():
            yield reduce(merge, members)

    def groups(self) -> Iterator[list[Record]]:
        """The records of each paper, in order of arrival (what ``__iter__`` folds)."""
        return self._groups.held()


def merge_records(records: Iterable[Record]) -> tuple[list[Record], int]:
    """Fold duplicates; return the records in first-seen order and how many were merged."""
    merger = RecordMerger()
    for record in records:
        merger.add(record)
    return list(merger), merger.duplicates


@dataclass(frozen=True)
class Written:
    """A record that :class:`StreamingMerger` let through to be written; found again by its
    identity keys (no other written record shares any of them)."""

    keys: tuple[str, ...]
    # Its arXiv id is a claim (Record.arxiv_id_claimed), which its stored fields do not say.
    claimed: bool = False


class StreamingMerger:
    """Finds duplicates in a stream of records while holding only what identifies them.

    ``add`` returns ``True`` for a record that is the first of its paper so far: the caller
    writes it at once, and only its identity keys stay here. A record that is the same
    paper as one seen before returns ``False`` and is held. After the stream,
    :meth:`groups` lists each paper that had duplicates as its members in order of arrival,
    :class:`Written` or held :class:`Record`; folding them with :func:`merge` gives the
    record :class:`RecordMerger` would give. Memory grows with the number of papers only by
    their identity keys, and with the duplicates themselves.
    """

    def __init__(self) -> None:
        self._first_keys: dict[int, tuple[str, ...]] = {}
        self._claimed: set[int] = set()  # of those, the records whose arXiv id is a claim
        self._groups: PaperGroups[Written | Record] = PaperGroups(stub=self._written)

    @property
    def duplicates(self) -> int:
        """How many records added were folded into another (as RecordMerger counts)."""
        return self._groups.added - self._groups.papers

    def add(self, record: Record) -> bool:
        keys = record.identity_keys
        if self._groups.add(keys, record, hold=False) is not None:
            return False
        if keys:  # a record without keys can have no duplicates
            self._first_keys[self._groups.added] = keys
            if record.arxiv_id_claimed:
                self._claimed.add(self._groups.added)
        return True

    def _written(self, slot: int) -> Written:
        return Written(self._first_keys.pop(slot), slot in self._claimed)

    def __len__(self) -> int:
        """Papers seen (duplicates counted once)."""
        return self._groups.papers

    def groups(self) -> Iterator[list[Written | Record]]:
        """Members of each paper that had duplicates, in order of first appearance."""
        return self._groups.held()
