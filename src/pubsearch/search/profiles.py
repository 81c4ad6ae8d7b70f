"""Author profiles: the people a name stands for (pubsearch.index.people's split and joins,
read from the generation's people table), each with its written forms, records, subjects,
years and co-authors, as ``pubsearch author NAME`` and the JSON show them."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from pubsearch.core.ranges import gathered
from pubsearch.index.facets import FacetTable, labels_at
from pubsearch.index.names import NameIndex
from pubsearch.index.people import HOW
from pubsearch.index.peopletable import PeopleTable
from pubsearch.ingest.records import fold
from pubsearch.search.results import FacetValue, PersonValue

# How many co-authors and subjects a profile lists.
TOP = 10


@dataclass(frozen=True)
class ProfileRecord:
    """One record of a profile: its id, title and date, and how it came to the person."""

    id: str
    title: str
    year: int | None
    date: str
    assigned_by: str
    confidence: float


@dataclass(frozen=True)
class Person:
    """One person of a name."""

    id: str
    names: tuple[str, ...]  # the written forms, commonest first
    records: tuple[ProfileRecord, ...]  # newest first
    subjects: tuple[tuple[str, int], ...]
    coauthors: tuple[tuple[str, int], ...]
    years: tuple[tuple[int, int], ...]  # year -> records, oldest first
    confidence: float

    @property
    def first_year(self) -> int | None:
        return self.years[0][0] if self.years else None

    @property
    def last_year(self) -> int | None:
        return self.years[-1][0] if self.years else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "names": list(self.names),
            "records": [r.id for r in self.records],
            "subjects": dict(self.subjects),
            "coauthors": dict(self.coauthors),
            "years": {str(y): n for y, n in self.years},
            "confidence": round(self.confidence, 3),
            "assigned_by": {r.id: r.assigned_by for r in self.records},
        }


@dataclass(frozen=True)
class AuthorProfiles:
    """The people a typed name stands for, most records first."""

    name: str
    people: tuple[Person, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "people": [p.to_dict() for p in self.people]}


def people_numbers(
    name: str, table: FacetTable, names: NameIndex, people: PeopleTable
) -> list[int]:
    """The people (numbers of ``people``) of the name ``name``: those of its own written
    forms (``Y. You``, ``You, Y.``), else of every name the name rule finds."""
    labels = names.same_person(name) or names.find(name)
    if not labels:
        return []
    entries = np.flatnonzero(np.isin(table.authors.value_ids, np.asarray(labels, dtype=np.int32)))
    found = people.person[entries]
    return sorted(set(found[found >= 0].tolist()))


def person_docs(table: FacetTable, people: PeopleTable, number: int) -> np.ndarray:
    """The live documents of person ``number``: a boolean mask."""
    mask = np.zeros(table.size, dtype=np.bool_)
    entries = np.flatnonzero(people.person == number)
    mask[table.authors.doc_of_entry[entries]] = True
    return mask & table.live


def profile(table: FacetTable, people: PeopleTable, number: int, stored: Any) -> Person:
    """Person ``number``'s profile; ``stored(docnum)`` gives a document's stored fields."""
    authors = table.authors
    entries = np.flatnonzero(people.person == number)
    entries = entries[table.live[authors.doc_of_entry[entries]]]
    docs = authors.doc_of_entry[entries].astype(np.int64)
    own = authors.value_ids[entries]
    forms = Counter(authors.labels[v] for v in own.tolist())
    coauthors: Counter[str] = Counter()
    own_set = set(own.tolist())
    for doc in sorted(set(docs.tolist())):
        values = authors.value_ids[authors.offsets[doc] : authors.offsets[doc + 1]].tolist()
        coauthors.update(authors.labels[v] for v in values if v not in own_set)
    subjects: Counter[str] = Counter()
    for doc in sorted(set(docs.tolist())):
        values = table.subjects.value_ids[
            table.subjects.offsets[doc] : table.subjects.offsets[doc + 1]
        ].tolist()
        subjects.update(table.subjects.labels[v] for v in values)
    years = Counter(int(table.years[d]) for d in set(docs.tolist()) if table.years[d] > 0)
    # Newest first: by date, then year, then record id.
    records = []
    for entry, doc in zip(entries.tolist(), docs.tolist(), strict=True):
        fields = stored(doc)
        records.append(
            ProfileRecord(
                id=fields.get("id", ""),
                title=fields.get("title", ""),
                year=int(table.years[doc]) or None,
                date=str(int(table.dates[doc])) if table.dates[doc] else "",
                assigned_by=HOW[int(people.how[entry])],
                confidence=float(people.confidence[entry]),
            )
        )
    records.sort(key=lambda r: (r.date or str(r.year or 0), r.year or 0, r.id), reverse=True)
    unique = tuple({r.id: r for r in records}.values())
    confidence = float(np.mean(people.confidence[entries])) if len(entries) else 0.0
    return Person(
        id=people.ids[number],
        names=tuple(name for name, _ in forms.most_common()),
        records=unique,
        subjects=tuple(subjects.most_common(TOP)),
        coauthors=tuple(coauthors.most_common(TOP)),
        years=tuple(sorted(years.items())),
        confidence=confidence,
    )


def people_of_record(
    table: FacetTable, people: PeopleTable, doc: int, authors: tuple[str, ...]
) -> tuple[str, ...]:
    """The person id of each of ``authors`` (a record's, document ``doc``), "" where the
    people table has none (a name the facet does not hold)."""
    column = table.authors
    start, stop = int(column.offsets[doc]), int(column.offsets[doc + 1])
    # By the folded labels of the document's own entries (a label's key is its folded
    # form), not the table's key -> id dict: a one-shot query would build all of it (the
    # 261,836 names of the arXiv records: 0.17 s) to look up ten records' authors.
    by_key = {
        fold(column.labels[int(column.value_ids[entry])]): int(people.person[entry])
        for entry in range(start, min(stop, len(people.person)))
    }
    found: list[str] = []
    for author in authors:
        number = by_key.get(fold(author), -1)
        found.append(people.ids[number] if number >= 0 else "")
    return tuple(found)


class PeopleIndex:
    """A generation's people as a results page reads them, made once: the author entries of
    each name and of each person (sorted, so that a name's are a slice), and each person's
    id and hint, worked out when first shown."""

    def __init__(self, table: FacetTable, people: PeopleTable) -> None:
        self.table = table
        self.people = people
        entries = len(people.person)
        value = table.authors.value_ids[:entries]
        # The build's orders where it saved them (sorting is most of the time of a
        # one-shot query's author facet), else made here.
        by_name = people.by_name
        self._by_name = np.argsort(value, kind="stable") if by_name is None else by_name
        # Where each name's entries start in that order: how many entries have a smaller id.
        self._name_starts = np.concatenate(
            [[0], np.cumsum(np.bincount(value, minlength=len(table.authors.labels)))]
        )
        person = people.person
        by_person = people.by_person
        self._by_person = np.argsort(person, kind="stable") if by_person is None else by_person
        # The same by person; a deleted record's entries (person -1) come first.
        self._person_starts = np.cumsum(np.bincount(person + 1, minlength=len(people.ids) + 1))
        # Each person shown: id, commonest subject and co-author (a broad query's facet
        # lists some 26,000 people at a million records, whose ids were decoded anew by
        # every search).
        self._shown: dict[int, tuple[str, str, str]] = {}
        self._lock = threading.Lock()

    def entries_of_name(self, label: int) -> npt.NDArray[np.integer[Any]]:
        start, stop = self._name_starts[label], self._name_starts[label + 1]
        return self._by_name[start:stop]

    def shown(self, numbers: list[int], label: int) -> list[tuple[str, str, str]]:
        """Each person's of ``numbers`` id, commonest subject and co-author (not
        ``label``, the name they share), worked out together for those not seen before."""
        with self._lock:
            missing = [n for n in numbers if n not in self._shown]
        if missing:
            # Each person's entries, one after another (their slices of the order by person).
            wanted = np.asarray(missing, dtype=np.int64)
            starts = self._person_starts[wanted]
            sizes = self._person_starts[wanted + 1] - starts
            owners = np.repeat(np.arange(len(missing)), sizes)
            entries = self._by_person[gathered(starts, sizes)]
            docs = self.table.authors.doc_of_entry[entries].astype(np.int64)
            subjects = _tops(self.table.subjects, docs, owners, len(missing), -1)
            coauthors = _tops(self.table.authors, docs, owners, len(missing), label)
            ids = labels_at(self.people.ids, missing)
            with self._lock:
                for n, person_id, subject, coauthor in zip(
                    missing, ids, subjects, coauthors, strict=True
                ):
                    self._shown[n] = (person_id, subject, coauthor)
        with self._lock:
            return [self._shown[n] for n in numbers]


def facet_people(
    index: PeopleIndex,
    values: tuple[FacetValue, ...],
    counted: npt.NDArray[np.bool_],
    chosen: str | None,
) -> tuple[FacetValue, ...]:
    """The author facet's ``values`` with, for each name whose records among ``counted``
    (the documents its counts are of) are of several people, those people: id, a hint
    (their top subject, or top co-author where the name's people share it), count."""
    table, people = index.table, index.people
    column = table.authors
    docs = column.doc_of_entry
    person = people.person
    out: list[FacetValue] = []
    for facet in values:
        label = column.ids_by_key.get(fold(facet.value))
        if label is None:
            out.append(facet)
            continue
        mine = index.entries_of_name(label)
        mine = mine[counted[docs[mine]] & (person[mine] >= 0)]
        numbers, counts = np.unique(person[mine], return_counts=True)
        if len(numbers) < 2:
            out.append(facet)
            continue
        order = np.lexsort((numbers, -counts))
        numbers, counts = numbers[order], counts[order]
        shown = index.shown(numbers.tolist(), label)
        subjects = Counter(subject for _, subject, _ in shown)
        found = tuple(
            PersonValue(
                person_id,
                subject
                if subject and subjects[subject] == 1
                else (f"with {co}" if co else subject),
                int(c),
                person_id == chosen,
            )
            for (person_id, subject, co), c in zip(shown, counts.tolist(), strict=True)
        )
        out.append(replace(facet, people=found))
    return tuple(out)


def _tops(
    column: Any, docs: npt.NDArray[np.int64], owners: npt.NDArray[Any], count: int, leave_out: int
) -> list[str]:
    """For each of ``count`` owners, the commonest value of ``column`` on its documents
    (``docs[i]`` is ``owners[i]``'s; ties: the value first numbered; not ``leave_out``), or
    ""."""
    starts = column.offsets[docs].astype(np.int64)
    sizes = column.offsets[docs + 1].astype(np.int64) - starts
    total = int(sizes.sum())
    out = [""] * count
    if not total:
        return out
    values = column.value_ids[gathered(starts, sizes)].astype(np.int64)
    whose = np.repeat(owners.astype(np.int64), sizes)
    keep = values != leave_out
    values, whose = values[keep], whose[keep]
    if not len(values):
        return out
    width = int(values.max()) + 1
    keys, counts = np.unique(whose * width + values, return_counts=True)
    owner_of, value_of = keys // width, keys % width
    # Keys are in order of owner, then value: each owner's are a run, and the first of
    # its largest counts is its commonest value first numbered (a lexsort of the three
    # took 20 ms a name of a thousand people at 1M records).
    starts = np.flatnonzero(np.r_[True, owner_of[1:] != owner_of[:-1]])
    most = np.maximum.reduceat(counts, starts)
    top = np.flatnonzero(counts == np.repeat(most, np.diff(np.r_[starts, len(counts)])))
    winning = top[np.r_[True, owner_of[top][1:] != owner_of[top][:-1]]]
    found = labels_at(column.labels, value_of[winning].tolist())
    for owner, label in zip(owner_of[winning].tolist(), found, strict=True):
        out[owner] = str(label)
    return out
