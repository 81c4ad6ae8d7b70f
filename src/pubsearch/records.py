"""The one record type, and how records that describe the same paper become one.

Every reader (see :mod:`pubsearch.readers`) produces :class:`Record` values. A paper can be
listed by several sources (two people's profile pages, a JSON dump and arXiv's snapshot);
:class:`RecordMerger` folds those into one record, with the authors and subjects of all.

Identity, strongest first: the arXiv id, then the DOI, then the normalised title with the
year. Two records are the same paper when any of these keys is equal.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

# Private-use characters that mark highlighted spans inside snippets. They are removed from
# all record text on the way in, so they can never be forged by a record.
MARK_START = "\ue000"
MARK_END = "\ue001"

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ue000\ue001]")
_SPACES = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^\w]+")
_ARXIV_NEW = re.compile(r"^(?:arxiv:)?(\d{4}\.\d{4,5})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_OLD = re.compile(r"^(?:arxiv:)?([a-z\-]+(?:\.[a-z]{2})?/\d{7})(?:v\d+)?$", re.IGNORECASE)


def clean_text(text: str | None) -> str:
    """Collapse white space and drop control characters; ``None`` becomes ``""``."""
    if not text:
        return ""
    # The fast paths below give the same result as the regular expressions: str.split()
    # splits on exactly the characters that ``\s`` matches. ASCII text is already NFC.
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    if _CONTROL.search(text):
        text = _CONTROL.sub(" ", text)
    return " ".join(text.split())


def fold(text: str) -> str:
    """Case- and accent-insensitive form of ``text``, for comparing names and titles."""
    if text.isascii():  # the same result, without decomposing (casefold is lower for ASCII)
        return " ".join(text.lower().split())
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SPACES.sub(" ", stripped.casefold()).strip()


def title_key(title: str) -> str:
    """Normalised title: folded, punctuation dropped, words joined by single spaces."""
    return _SPACES.sub(" ", _NON_WORD.sub(" ", fold(title)).replace("_", " ")).strip()


def normalize_arxiv_id(value: str | None) -> str | None:
    """``arXiv:2101.00001v2`` -> ``2101.00001``; ``hep-th/9901001v1`` -> ``hep-th/9901001``."""
    if not value:
        return None
    value = value.strip()
    for pattern in (_ARXIV_NEW, _ARXIV_OLD):
        match = pattern.match(value)
        if match:
            return match.group(1).lower()
    return None


def normalize_doi(value: str | None) -> str | None:
    """Lower-case DOI without a resolver prefix, or ``None``."""
    if not value:
        return None
    value = value.strip().lower()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"):
        if value.startswith(prefix):
            value = value[len(prefix) :]
    return value if value.startswith("10.") and "/" in value else None


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
    """

    title: str
    abstract: str = ""
    authors: tuple[str, ...] = ()
    year: int | None = None
    subjects: tuple[str, ...] = ()
    source: str = ""
    origins: tuple[str, ...] = ()
    arxiv_id: str | None = None
    doi: str | None = None
    id: str = field(default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "title", clean_text(self.title))
        object.__setattr__(self, "abstract", clean_text(self.abstract))
        object.__setattr__(self, "authors", _dedupe(self.authors, key=fold))
        object.__setattr__(self, "subjects", _dedupe(self.subjects))
        object.__setattr__(self, "arxiv_id", normalize_arxiv_id(self.arxiv_id))
        object.__setattr__(self, "doi", normalize_doi(self.doi))
        if not self.id:
            object.__setattr__(self, "id", self._derived_id())

    def _derived_id(self) -> str:
        if self.arxiv_id:
            return self.arxiv_id
        if self.doi:
            return "doi:" + self.doi
        digest = hashlib.sha1(f"{title_key(self.title)}|{self.year}".encode()).hexdigest()
        return "t" + digest[:11]

    @property
    def identity_keys(self) -> tuple[str, ...]:
        """Every key under which this record is the same paper as another."""
        keys = []
        if self.arxiv_id:
            keys.append("arxiv:" + self.arxiv_id)
        if self.doi:
            keys.append("doi:" + self.doi)
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


def merge(a: Record, b: Record) -> Record:
    """One record from two descriptions of the same paper.

    The first keeps its text unless it lacks some; authors, subjects and origins are the
    union, in order of first appearance. The id is the arXiv id, else the DOI, else the
    first record's id.
    """
    arxiv_id = a.arxiv_id or b.arxiv_id
    doi = a.doi or b.doi
    if arxiv_id:
        new_id = arxiv_id
    elif doi:
        new_id = "doi:" + doi
    else:
        new_id = a.id
    return replace(
        a,
        title=a.title or b.title,
        abstract=a.abstract if len(a.abstract) >= len(b.abstract) else b.abstract,
        authors=a.authors + b.authors,
        year=a.year if a.year is not None else b.year,
        subjects=a.subjects + b.subjects,
        source=a.source or b.source,
        origins=a.origins + tuple(o for o in b.origins if o not in a.origins),
        arxiv_id=arxiv_id,
        doi=doi,
        id=new_id,
    )


def _root_slot(merged_into: dict[int, int], slot: int) -> int:
    """The slot that ``slot`` was folded into, following every later fold."""
    while slot in merged_into:
        slot = merged_into[slot]
    return slot


class RecordMerger:
    """Collects records and folds duplicates together.

    ``add`` returns ``True`` when the record was merged into one seen before.
    """

    def __init__(self) -> None:
        self._records: dict[int, Record] = {}
        self._slot_by_key: dict[str, int] = {}
        self._merged_into: dict[int, int] = {}
        self._next_slot = 0
        self._added = 0

    @property
    def duplicates(self) -> int:
        """How many records added were folded into another."""
        return self._added - len(self._records)

    def add(self, record: Record) -> bool:
        self._added += 1
        slots = {
            self._root(self._slot_by_key[k]) for k in record.identity_keys if k in self._slot_by_key
        }
        if not slots:
            self._next_slot += 1
            self._store(self._next_slot, record)
            return False
        # Fold every matching record (and the new one) into the oldest slot.
        first, *rest = sorted(slots)
        merged = self._records[first]
        for other in rest:
            merged = merge(merged, self._records.pop(other))
            self._merged_into[other] = first  # keys that still name it name ``first``
        merged = merge(merged, record)
        self._store(first, merged)
        return True

    def _root(self, slot: int) -> int:
        return _root_slot(self._merged_into, slot)

    def _store(self, slot: int, record: Record) -> None:
        self._records[slot] = record
        for key in record.identity_keys:
            self._slot_by_key[key] = slot

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[Record]:
        for slot in sorted(self._records):
            yield self._records[slot]


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


class StreamingMerger:
    """Finds duplicates in a stream of records while holding only what identifies them.

    ``add`` returns ``True`` for a record that is the first of its paper so far: the caller
    writes it at once, and only its identity (keys, year, ids) stays here. A record that is
    the same paper as one seen before returns ``False`` and is held. After the stream,
    :meth:`groups` lists each paper that had duplicates as its members in order of arrival,
    :class:`Written` or held :class:`Record`; folding them with :func:`merge` gives the
    record :class:`RecordMerger` would give. Memory grows with the number of papers only by
    their identity, and with the duplicates themselves.
    """

    def __init__(self) -> None:
        self._identity: dict[int, Record] = {}
        self._members: dict[int, list[Written | Record]] = {}
        self._slot_by_key: dict[str, int] = {}
        self._merged_into: dict[int, int] = {}
        self._next_slot = 0
        self._added = 0

    @property
    def duplicates(self) -> int:
        """How many records added were folded into another (as RecordMerger counts)."""
        return self._added - len(self._identity)

    def add(self, record: Record) -> bool:
        self._added += 1
        keys = record.identity_keys
        slots = {self._root(self._slot_by_key[k]) for k in keys if k in self._slot_by_key}
        if not slots:
            self._next_slot += 1
            self._store(self._next_slot, _identity_of(record))
            return True
        first, *rest = sorted(slots)
        identity = self._identity[first]
        members = self._members.pop(first, None) or [Written(identity.identity_keys)]
        for other in rest:
            other_identity = self._identity.pop(other)
            members += self._members.pop(other, []) or [Written(other_identity.identity_keys)]
            identity = merge(identity, other_identity)
            self._merged_into[other] = first
        members.append(record)
        self._members[first] = members
        self._store(first, _identity_of(merge(identity, record)))
        return False

    def _root(self, slot: int) -> int:
        return _root_slot(self._merged_into, slot)

    def _store(self, slot: int, identity: Record) -> None:
        self._identity[slot] = identity
        for key in identity.identity_keys:
            self._slot_by_key[key] = slot

    def __len__(self) -> int:
        """Papers seen (duplicates counted once)."""
        return len(self._identity)

    def groups(self) -> Iterator[list[Written | Record]]:
        """Members of each paper that had duplicates, in order of first appearance."""
        for slot in sorted(self._members):
            yield self._members[slot]


def _identity_of(record: Record) -> Record:
    """The least of ``record`` that gives the same identity keys, alone and when merged."""
    tkey = title_key(record.title)
    return Record(
        title=tkey or ("?" if record.title else ""),  # "?" has an empty key, like the title
        year=record.year,
        arxiv_id=record.arxiv_id,
        doi=record.doi,
        id=record.id,  # a source's own id is an identity key too (see identity_keys)
    )
