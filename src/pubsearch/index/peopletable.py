"""The people of a generation (:mod:`pubsearch.index.people`'s profiles), saved beside its
index files (``people.npz``, read mapped): each author entry of the facet table (a record's
author) -> its person, how it got there and how sure; each person's id.

A person's id is the name of its profile's commonest written form and the smallest record
id of its records (``yang-liu-3f09c2a1``: the form made a slug, eight hex digits of a
hash of both), so that it stays the same across updates and rebuilds as long as that
person's records do (a new record with a smaller id, or records moving between people,
change it).

An update splits again only the names whose records changed (new records, or records
removed), and those only as far as their new records go: a changed name's earlier people
stay as they were (its new records join them, or make people of their own); the other
names keep their people and ids, as does a changed name's person whose records are the
same; and the joins of the changed names' forms are worked out again. A rebuild splits
every name afresh.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import numpy as np
import numpy.typing as npt

from pubsearch.core import npzfiles
from pubsearch.index import people, peoplewords
from pubsearch.index.facets import (
    FacetTable,
    check_strings,
    labels_at,
    string_ends,
    strings_at,
)
from pubsearch.index.schema import VALUE_SEP
from pubsearch.ingest.records import fold

PEOPLE_FILE = "people.npz"
# Bump when the saved arrays change meaning (an older file is then built anew).
FORMAT_VERSION = 1
_SEPARATOR = VALUE_SEP  # what string_ends and check_strings split by
_SLUG = re.compile(r"[^a-z0-9]+")

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class PeopleTable:
    """Per author entry: its person (-1 for a deleted record's), how it got there
    (:data:`pubsearch.index.people.HOW`) and the confidence; per person, its id."""

    person: npt.NDArray[np.int32]
    how: npt.NDArray[np.uint8]
    confidence: npt.NDArray[np.float32]
    ids: Sequence[str]
    # The entries by name id and by person (stable argsorts), made by the build and saved,
    # so that a results page's author facet finds a name's people by slicing rather than
    # sorting 480,000 entries first (pubsearch.search.profiles.PeopleIndex); None in a
    # table saved without them.
    by_name: npt.NDArray[np.int32] | None = None
    by_person: npt.NDArray[np.int32] | None = None
    # Each author name's written form and kind (peopleevidence.form_key and name_kinds,
    # by name id), so that an update reads only the names added since; None in a table
    # saved without them.
    name_keys: IntArray | None = None
    name_kinds: npt.NDArray[np.int8] | None = None
    # The live names' pairs of initials and full name that stand for each other
    # (people.name_pairs, rows ``initials, full``), so that an update reads only those of
    # the names it changed; None in a table saved without them.
    name_pairs: npt.NDArray[np.int32] | None = None
    # How many live documents hold a word of each bucket (Evidence.word_counts: the
    # buckets of any and their counts) and which documents were live, so that an update
    # counts only the documents changed since.
    word_buckets: npt.NDArray[np.uint32] | None = None
    bucket_counts: npt.NDArray[np.int32] | None = None
    counted: BoolArray | None = None

    @classmethod
    def build(
        cls,
        table: FacetTable,
        words: peoplewords.DocWords,
        previous: PeopleTable | None = None,
        settings: people.Settings | None = None,
    ) -> PeopleTable:
        """The people of ``table``'s authors (``words``: each document's record id and
        words). With ``previous`` (the table of the generation this one extends: the same
        entries first, none renumbered), only the names whose records changed are split
        again, and only the documents of those names and of their written forms are
        read."""
        value = table.authors.value_ids.astype(np.int64)
        docs = table.authors.doc_of_entry.astype(np.int64)
        changed = None if previous is None else changed_labels(table, previous)
        evidence = people.Evidence(
            table.authors,
            table.subjects,
            table.live,
            words,
            changed=changed,
            known_keys=None if previous is None else previous.name_keys,
            known_kinds=None if previous is None else previous.name_kinds,
            known_counts=None if previous is None else previous.known_counts(),
        )
        before = None if previous is None else np.asarray(previous.person, dtype=np.int64)
        split = people.split(evidence, settings, changed, before)
        group, how, confidence = split.group, split.how, split.confidence
        made = split.groups
        if previous is not None and before is not None and changed is not None:
            old = len(before)
            was = np.zeros(len(value), dtype=np.bool_)
            was[:old] = (before >= 0) & table.live[docs[:old]]
            keep = was & ~changed[value]
            group = group.copy()
            # Kept people after the new ones, by their old number.
            group[keep] = made + before[keep[:old]]
            # Entries that stay where they were keep how they got there.
            how, confidence = how.copy(), confidence.copy()
            how[was] = previous.how[was[:old]]
            confidence[was] = previous.confidence[was[:old]]
        live = group >= 0
        numbers, dense = np.unique(group[live], return_inverse=True)
        group = np.full(len(group), -1, dtype=np.int64)
        group[live] = dense
        earlier = np.where(numbers >= made, numbers - made, -1)  # each group's earlier person
        regrouped = people.Split(group, how, confidence)
        live_names = np.zeros(len(table.authors.labels), dtype=np.bool_)
        live_names[value[live]] = True
        known = None if previous is None else previous.name_pairs
        pairs = people.name_pairs(evidence, live_names, changed, known)
        target = people.join(evidence, regrouped, settings, changed, pairs)
        person = np.full(len(group), -1, dtype=np.int64)
        people_numbers, person[live] = np.unique(target[group[live]], return_inverse=True)
        old_ids = () if previous is None else previous.ids
        ids = _ids(
            table, words, person, value, docs, earlier, old_ids, target, people_numbers, before
        )
        counted_buckets = np.flatnonzero(evidence.word_counts)
        return cls(
            person.astype(np.int32),
            how,
            confidence.astype(np.float32),
            ids,
            by_name=np.argsort(value, kind="stable").astype(np.int32),
            by_person=np.argsort(person, kind="stable").astype(np.int32),
            name_keys=evidence.form_keys,
            name_kinds=evidence.name_kinds,
            name_pairs=pairs.astype(np.int32),
            word_buckets=counted_buckets.astype(np.uint32),
            bucket_counts=evidence.word_counts[counted_buckets],
            counted=np.asarray(table.live, dtype=np.bool_),
        )

    def known_counts(
        self,
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int32], BoolArray] | None:
        """The words' counts saved and the documents they count, when they were saved."""
        if self.word_buckets is None or self.bucket_counts is None or self.counted is None:
            return None
        if len(self.word_buckets) != len(self.bucket_counts):
            return None
        return self.word_buckets, self.bucket_counts, self.counted

    def save(self, directory: Path, generation: int) -> None:
        """Write the table into ``directory`` (a new file, renamed into place)."""
        if isinstance(self.ids, _PackedIds):
            packed, ends = self.ids.packed, self.ids.ends
        else:
            packed = np.frombuffer(_SEPARATOR.join(self.ids).encode("utf-8"), dtype=np.uint8)
            ends = string_ends(packed, len(self.ids))
        orders = {
            name: array
            for name, array in (
                ("by_name", self.by_name),
                ("by_person", self.by_person),
                ("name_keys", self.name_keys),
                ("name_kinds", self.name_kinds),
                ("name_pairs", self.name_pairs),
                ("word_buckets", self.word_buckets),
                ("bucket_counts", self.bucket_counts),
                ("counted", self.counted),
            )
            if array is not None
        }
        npzfiles.save_arrays(
            directory / PEOPLE_FILE,
            {
                "meta": np.asarray(
                    [FORMAT_VERSION, generation, len(self.person), len(self.ids)], dtype=np.int64
                ),
                "person": self.person,
                "how": self.how,
                "confidence": self.confidence,
                "ids": packed,
                "id_ends": ends,
                **orders,
            },
        )

    @classmethod
    def load(cls, directory: Path, generation: int, entries: int) -> PeopleTable | None:
        """The table saved in ``directory`` for Whoosh generation ``generation`` of a
        facet table of ``entries`` author entries; None when there is none or it is for
        another."""
        try:
            data = npzfiles.load_arrays(directory / PEOPLE_FILE)
            meta = data["meta"]
            if int(meta[0]) != FORMAT_VERSION or int(meta[1]) != generation:
                return None
            if int(meta[2]) != entries:
                return None
            count = int(meta[3])
            packed, ends = data["ids"], data.get("id_ends")
            check_strings(packed, count, ends, "person ids")  # (ValueError: None)
            ids = _PackedIds(packed, count, ends)
            orders = [data.get(name) for name in ("by_name", "by_person")]
            if any(order is not None and len(order) != entries for order in orders):
                return None
            keys, kinds = data.get("name_keys"), data.get("name_kinds")
            pairs = data.get("name_pairs")
            if pairs is not None and (pairs.ndim != 2 or pairs.shape[1] != 2):
                pairs = None
            return cls(
                data["person"],
                data["how"],
                data["confidence"],
                ids,
                by_name=orders[0],
                by_person=orders[1],
                name_keys=keys,
                name_kinds=kinds,
                name_pairs=pairs,
                word_buckets=data.get("word_buckets"),
                bucket_counts=data.get("bucket_counts"),
                counted=data.get("counted"),
            )
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):
            return None

    def number(self, person_id: str) -> int | None:
        """The number of the person of id ``person_id`` (None when there is none)."""
        if isinstance(self.ids, _PackedIds):
            return self.ids.number(person_id)
        try:
            return self.ids.index(person_id)
        except ValueError:
            return None


class _PackedIds(Sequence[str]):
    """The saved ids (UTF-8, joined by the separator), decoded one at a time as a page
    asks for them: a results page shows a few dozen of the 300,000 people of the arXiv
    records, whose ids a one-shot query would otherwise decode and split (30 to 50 ms).
    Where each id starts is found when one is first asked for."""

    def __init__(
        self, packed: npt.NDArray[np.uint8], count: int, ends: IntArray | None = None
    ) -> None:
        self._packed = packed
        self._count = count
        self._ends = ends  # saved by the build; else found when an id is first asked for
        self._numbers: dict[str, int] | None = None

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return tuple(self)[index]
        if not -self._count <= index < self._count:
            raise IndexError("person number out of range")
        index %= self._count
        ends = self.ends
        start = int(ends[index - 1]) + 1 if index else 0
        return self._packed[start : int(ends[index])].tobytes().decode("utf-8")

    def many(self, indices: Sequence[int]) -> list[str]:
        """The ids ``indices``, decoded in one go."""
        return strings_at(self._packed, self.ends, indices)

    @property
    def packed(self) -> npt.NDArray[np.uint8]:
        """The ids, UTF-8, joined by the separator."""
        return self._packed

    @property
    def ends(self) -> IntArray:
        """Where each id ends in :attr:`packed` (see string_ends)."""
        ends = self._ends
        if ends is None:
            ends = self._ends = string_ends(self._packed, self._count)
        return ends

    @classmethod
    def assembled(
        cls, count: int, old: _PackedIds, at: IntArray, taken: IntArray, new: dict[int, str]
    ) -> _PackedIds:
        """``count`` ids: those numbered ``at`` are ``old``'s ids ``taken`` (copied as
        bytes, not decoded: an update at a million records keeps millions), those of
        ``new`` its strings."""
        encoded = [text.encode("utf-8") for text in new.values()]
        new_numbers = np.fromiter(new, np.int64, len(new))
        old_ends = old.ends
        old_starts = np.where(taken > 0, old_ends[taken - 1] + 1, 0)
        lengths = np.zeros(count, dtype=np.int64)
        lengths[at] = old_ends[taken] - old_starts
        lengths[new_numbers] = np.fromiter(map(len, encoded), np.int64, len(encoded))
        ends = np.cumsum(lengths + 1) - 1  # each id and a separator
        # Kept ids in runs numbered one after another in both (an update numbers its
        # kept people after the new ones, in their earlier order): each run one slice of
        # the earlier bytes, the runs and new ids joined in order of their first number
        # (380,066 runs and 423,355 new ids at 1M records: 2.0 s in a loop of copies).
        order = np.argsort(at, kind="stable")
        at, taken, old_starts = at[order], taken[order], old_starts[order]
        breaks = np.flatnonzero((np.diff(at) != 1) | (np.diff(taken) != 1)) + 1
        firsts = np.r_[0, breaks] if len(at) else breaks
        lasts = np.r_[breaks - 1, len(at) - 1] if len(at) else breaks
        earlier = old.packed.tobytes()
        pieces = [
            earlier[start:end]
            for start, end in zip(
                old_starts[firsts].tolist(), old_ends[taken[lasts]].tolist(), strict=True
            )
        ]
        pieces += encoded
        numbers = np.concatenate([at[firsts], new_numbers])
        joined = _SEPARATOR.encode().join([pieces[i] for i in np.argsort(numbers).tolist()])
        if len(joined) != (int(ends[-1]) if count else 0):
            raise RuntimeError("person ids: kept and new ones do not number every person")
        return cls(np.frombuffer(joined, dtype=np.uint8), count, ends)

    def __iter__(self) -> Iterator[str]:
        if not self._count:
            return iter(())
        return iter(self._packed.tobytes().decode("utf-8").split(_SEPARATOR))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(other) == self._count and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def number(self, person_id: str) -> int | None:
        """The number of the person of id ``person_id`` (None when there is none)."""
        numbers = self._numbers
        if numbers is None:
            numbers = {}
            for at, key in enumerate(self):
                numbers.setdefault(key, at)  # the first, as tuple.index finds
            self._numbers = numbers
        return numbers.get(person_id)


def changed_labels(table: FacetTable, previous: PeopleTable) -> BoolArray:
    """The names on records added since ``previous``, or removed since."""
    value = table.authors.value_ids.astype(np.int64)
    docs = table.authors.doc_of_entry.astype(np.int64)
    old = len(previous.person)
    alive = table.live[docs]
    touched = np.zeros(len(value), dtype=np.bool_)
    touched[old:] = True
    touched[:old] |= (previous.person >= 0) != alive[:old]
    changed = np.zeros(len(table.authors.labels), dtype=np.bool_)
    changed[value[touched]] = True
    return changed


def _ids(
    table: FacetTable,
    words: peoplewords.DocWords,
    person: IntArray,
    value: IntArray,
    docs: IntArray,
    earlier: IntArray,
    old_ids: Sequence[str],
    target: IntArray,
    numbers: IntArray,
    before: IntArray | None = None,
) -> Sequence[str]:
    """Each person's id (see the module's doc): a person whose first group (the one the
    others joined) was an earlier person (``earlier``, by group: its number in
    ``old_ids``, else -1) keeps that person's id, as does one made again whose entries
    are exactly an earlier person's (``before``: each earlier entry's person)."""
    count = len(numbers)
    made: dict[int, str] = {}
    need = np.ones(count, dtype=np.bool_)
    groups = np.flatnonzero(earlier >= 0)
    roots = groups[target[groups] == groups]
    kept_at = np.searchsorted(numbers, roots)
    kept_from = earlier[roots]
    need[kept_at] = False
    live = np.flatnonzero(person >= 0)
    if before is not None and len(old_ids):
        same_at, same_from = _unchanged(person, live[need[person[live]]], before, count)
        need[same_at] = False
        kept_at, kept_from = (
            np.concatenate([kept_at, same_at]),
            np.concatenate([kept_from, same_from]),
        )
    entries = live[need[person[live]]]
    if len(entries):
        labels = table.authors.labels
        size = len(labels)
        # The commonest written form of each person (ties: the first name id).
        pairs = person[entries] * size + value[entries]
        forms, form_counts = np.unique(pairs, return_counts=True)
        order = np.lexsort((forms % size, -form_counts, forms // size))
        owners = forms[order] // size
        first = np.r_[True, owners[1:] != owners[:-1]]
        main = dict(zip(owners[first].tolist(), (forms[order][first] % size).tolist(), strict=True))
        # Its smallest record id: the documents involved ranked by their ids once.
        involved = np.unique(docs[entries])
        known = len(words.ids)
        record_ids = np.asarray([words.ids[d] if d < known else "" for d in involved.tolist()])
        order = np.argsort(record_ids, kind="stable")
        rank = np.empty(len(involved), dtype=np.int64)
        rank[order] = np.arange(len(involved))
        rank[record_ids == ""] = len(involved)  # no id: last
        in_order = record_ids[order]
        smallest = np.full(count, len(involved), dtype=np.int64)
        np.minimum.at(smallest, person[entries], rank[np.searchsorted(involved, docs[entries])])
        # Each person's name and record decoded in one go (423,355 people at 1M records).
        persons = list(main)
        names = labels_at(labels, list(main.values()))
        records = np.append(in_order, "")[np.minimum(smallest[persons], len(involved))]
        for number, name, record in zip(persons, names, records.tolist(), strict=True):
            made[number] = person_id(name, record)
    for number in np.flatnonzero(need).tolist():
        made.setdefault(number, f"person-{number}")  # (a person of no live entry)
    if isinstance(old_ids, _PackedIds):
        # Kept people's ids copied as bytes (millions at 1M records), not decoded.
        return _PackedIds.assembled(count, old_ids, kept_at, kept_from, made)
    ids: list[str] = [""] * count
    olds = tuple(old_ids)
    for number, old in zip(kept_at.tolist(), kept_from.tolist(), strict=True):
        ids[number] = olds[old]
    for number, text in made.items():
        ids[number] = text
    return tuple(ids)


def _unchanged(
    person: IntArray, entries: IntArray, before: IntArray, count: int
) -> tuple[IntArray, IntArray]:
    """The persons of ``entries`` (of ``count``) whose entries are all an earlier person's
    (``before``: each earlier entry's person, -1 for none) and all of them, and that
    earlier person: an update makes the people of a changed name again, most of them as
    they were (423,355 at 1M synthetic records)."""
    old = len(before)
    earlier = np.full(len(entries), -1, dtype=np.int64)
    was = entries < old
    earlier[was] = before[entries[was]]
    owner = person[entries]
    lowest = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    highest = np.full(count, -1, dtype=np.int64)
    np.minimum.at(lowest, owner, earlier)
    np.maximum.at(highest, owner, earlier)
    sizes = np.bincount(owner, minlength=count)
    earlier_sizes = np.bincount(before[before >= 0], minlength=int(before.max(initial=-1)) + 1)
    candidates = np.flatnonzero((lowest == highest) & (highest >= 0))
    whole = earlier_sizes[highest[candidates]] == sizes[candidates]
    return candidates[whole], highest[candidates[whole]]


def person_id(name: str, record_id: str) -> str:
    """The id of the person written ``name`` whose smallest record id is ``record_id``."""
    key = name.lower() if name.isascii() else fold(name)
    slug = _SLUG.sub("-", key).strip("-") or "person"
    digest = hashlib.blake2b(f"{key}{_SEPARATOR}{record_id}".encode(), digest_size=4).hexdigest()
    return f"{slug}-{digest}"


def entries_of(table: FacetTable, labels: Sequence[int]) -> IntArray:
    """The author entries of the names ``labels`` (facet ids)."""
    return np.flatnonzero(np.isin(table.authors.value_ids, np.asarray(labels, dtype=np.int32)))
