"""What a request's author and subject filters stand for, the documents they let through,
and the facet counts around them.

An author filter stands for recorded names (:mod:`pubsearch.index.names`), a subject filter for
recorded subjects (:mod:`pubsearch.search.subjectmatch`): a :class:`Selection` holds the facet
ids of both, with the notices the subjects gave. Facet counts are disjunctive: each facet
is counted with every filter but its own, and lists its selected values first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from whoosh import query as wq
from whoosh.fields import Schema

from pubsearch.core.errors import ParameterError
from pubsearch.index.facets import BoolArray, FacetTable, MultiValued
from pubsearch.ingest.records import fold
from pubsearch.search.generation import Generation
from pubsearch.search.masks import DocumentSet
from pubsearch.search.profiles import person_docs
from pubsearch.search.request import SearchRequest
from pubsearch.search.results import FacetValue
from pubsearch.search.subjectmatch import SubjectIndex


@dataclass(frozen=True)
class Selection:
    """Each author filter as typed -> the ids of the recorded names it stands for; each
    subject filter as typed -> the ids of the recorded subjects; and what to say of them."""

    authors: dict[str, list[int]]
    subjects: dict[str, tuple[int, ...]]
    notices: tuple[str, ...] = ()
    person: BoolArray | None = None  # the documents of the request's person

    def masks(self, request: SearchRequest, table: FacetTable) -> dict[str, BoolArray]:
        """Each filter's documents, by facet name."""
        masks: dict[str, BoolArray] = {}
        if request.authors:
            masks["author"] = table.authors.docs_with_ids(_ids(self.authors))
        if request.subjects:
            masks["subject"] = table.subjects.docs_with_ids(_ids(self.subjects))
        if request.year is not None:
            masks["year"] = table.year_mask(request.year.start, request.year.end)
        if self.person is not None:
            masks["person"] = self.person
        return masks

    def authors_found(self, table: FacetTable) -> dict[str, tuple[str, ...]]:
        """Each author filter as typed -> the names as recorded that it stands for."""
        return _found(self.authors, table.authors)

    def subjects_found(self, table: FacetTable) -> dict[str, tuple[str, ...]]:
        """Each subject filter as typed -> the subjects as recorded that it stands for."""
        return _found(self.subjects, table.subjects)


def select(
    gen: Generation, table: FacetTable, request: SearchRequest, directory: Path
) -> Selection:
    """What the author and subject filters of ``request`` stand for in ``gen`` (whose
    files are in ``directory``)."""
    authors: dict[str, list[int]] = {}
    if request.authors:
        names = gen.names(table, directory)
        authors = {typed: names.find(typed) for typed in request.authors}
    subjects: dict[str, tuple[int, ...]] = {}
    notices: list[str] = []
    if request.subjects:
        index = gen.subjects(table)
        for typed in request.subjects:
            match = index.find(typed)
            subjects[typed] = match.ids
            if match.notice:
                notices.append(match.notice)
    person = None
    if request.person is not None:
        people = gen.people(table, directory)
        number = people.number(request.person)
        if number is None:
            raise ParameterError(
                "person",
                f"no person {request.person!r} in the index "
                "(`pubsearch author NAME` lists the people of a name and their ids)",
            )
        person = person_docs(table, people, number)
    return Selection(authors, subjects, tuple(dict.fromkeys(notices)), person)


def subject_query(
    index: SubjectIndex, table: FacetTable, schema: Schema, typed: str
) -> tuple[wq.Query, str | None]:
    """``subject:`` followed by ``typed`` in a query: the Whoosh query of the records of
    the subjects it stands for, and a notice about it (see :mod:`pubsearch.search.subjectmatch`).
    A subject recorded as typed is the term it is indexed as; several subjects are their
    records, scored as their terms score them; none, a term no record has."""
    match = index.find(typed)
    if not match.ids:
        return wq.Term("subject", fold(typed)), match.notice
    labels = [table.subjects.labels[i] for i in match.ids]
    terms: list[wq.Query] = []
    for label in labels:
        parts = [wq.Term("subject", t) for t in schema["subject"].process_text(label) if t]
        if parts:
            terms.append(parts[0] if len(parts) == 1 else wq.And(parts))
    if len(labels) == 1 and len(terms) == 1 and fold(typed) == fold(labels[0]):
        return terms[0], match.notice
    docs = np.flatnonzero(table.subjects.docs_with_ids(list(match.ids)))
    scoring = wq.Or(terms) if len(terms) > 1 else terms[0] if terms else wq.Every()
    return DocumentSet(docs, scoring), match.notice


def facet_base(matched: BoolArray, filters: dict[str, BoolArray], name: str) -> BoolArray:
    """The documents the facet ``name`` counts: ``matched`` with every filter but its own."""
    mask = matched.copy()
    for other, fmask in filters.items():
        if other != name:
            mask &= fmask
    return mask


def facet_counts(
    request: SearchRequest,
    table: FacetTable,
    matched: BoolArray,
    filters: dict[str, BoolArray],
    selection: Selection,
) -> dict[str, tuple[FacetValue, ...]]:
    """Disjunctive counts: each facet counted over ``matched`` with every filter but its
    own applied."""

    def base_for(name: str) -> BoolArray:
        return facet_base(matched, filters, name)

    size = request.facet_size
    out: dict[str, tuple[FacetValue, ...]] = {}
    out["author"] = multi_facet(
        table.authors,
        base_for("author"),
        _ids(selection.authors),
        size,
        unknown=[typed for typed, found in selection.authors.items() if not found],
    )
    years = table.count_years(base_for("year"))
    yr = request.year
    out["year"] = tuple(
        FacetValue(
            str(y),
            c,
            yr is not None
            and (yr.start is None or y >= yr.start)
            and (yr.end is None or y <= yr.end),
        )
        for y, c in sorted(years.items(), reverse=True)
    )
    out["subject"] = multi_facet(
        table.subjects,
        base_for("subject"),
        _ids(selection.subjects),
        size,
        unknown=[typed for typed, found in selection.subjects.items() if not found],
    )
    return out


def multi_facet(
    values: MultiValued,
    docs: BoolArray,
    selected_ids: list[int],
    size: int,
    unknown: list[str] | None = None,
) -> tuple[FacetValue, ...]:
    """The ``size`` values with most ``docs``, after every selected one: selected values
    come first (then by count, then by label), so that a ticked value stays in view even
    when it would be far down the list or off it. Selected values the index does not know
    (``unknown``) show too, with no documents, so they can be removed."""
    counts = values.count(docs)
    order = np.flatnonzero(counts)
    # Highest count first, then by label; only the top `size`, plus every selected value.
    if len(order) > size:
        top = order[np.argpartition(-counts[order], size - 1)[:size]]
    else:
        top = order
    selected = set(selected_ids)
    ranked = sorted(
        set(top.tolist()) | selected,
        key=lambda v: (v not in selected, -int(counts[v]), values.labels[v].casefold()),
    )
    shown = [FacetValue(values.labels[v], int(counts[v]), v in selected) for v in ranked]
    missing = [FacetValue(value, 0, True) for value in unknown or ()]
    return tuple(shown[: len(selected)] + missing + shown[len(selected) :])


def _ids(found: dict[str, list[int]] | dict[str, tuple[int, ...]]) -> list[int]:
    """Every facet id some filter stands for, in order."""
    return sorted({i for ids in found.values() for i in ids})


def _found(
    found: dict[str, list[int]] | dict[str, tuple[int, ...]], values: MultiValued
) -> dict[str, tuple[str, ...]]:
    return {typed: tuple(values.labels[i] for i in ids) for typed, ids in found.items()}
