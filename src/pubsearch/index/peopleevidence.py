"""What the records say of their authors, and how likely two groups of one name's records
are one person's (:mod:`pubsearch.index.people` splits and joins with it).

A *group* is a set of one name's records (those linked by shared co-authors, or a
profile). Two groups are compared by:

- their **words** (titles' and abstracts' words, each weighed by its idf, each record's a
  unit vector, a group's the unit vector of their sum; words common in the index, or in
  scientific writing at large (:mod:`pubsearch.index.commonwords`), weigh nothing) and
  **subjects** (codes, and their
  archives at half weight): cosines;
- the **co-authors' written forms** they share: co-authors written as a surname and a first
  initial (``J. Smith`` and ``John Smith`` are one form), each shared form weighed by how
  rare it is (``1 / log(1 + entries of the form)``); the exact names, which link records
  into groups already, are caught here when written differently, too common to link
  (more than :attr:`~pubsearch.index.people.Settings.coauthor_max` records) or on a
  long author list;
- the **co-authors' co-authors**: how often a co-author of one group wrote a record with a
  co-author of the other (each pair of forms weighed as the forms are; forms on more than
  :data:`REACH_MAX` entries left out), a link between two circles that share no one;
- how much each says: their words' and records' counts.

:class:`PairModel` turns these into the probability that the two groups are one person's:
a logistic regression, fitted by ``bench/people.py --fit`` on artificial homonyms (two or
three real authors renamed to one name) drawn apart from the ones it reports on
(docs/people.md).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from pubsearch.core.ranges import gathered
from pubsearch.index.facets import MultiValued
from pubsearch.index.peoplewords import DocWords
from pubsearch.index.rowdots import RowProduct, row_dots, run_dots, run_pairs
from pubsearch.index.wordmatrix import (
    Columns,
    KnownCounts,
    unit_rows,
    word_counts,
    word_matrix,
    word_rows,
)
from pubsearch.ingest.records import fold

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]
Int8Array = npt.NDArray[np.int8]

# The kinds of author names (Evidence.name_kinds).
FULL, INITIALS, ONE_WORD = 0, 1, 2

# Co-authors on records of more authors than this say nothing of who wrote it (the
# default of :attr:`pubsearch.index.people.Settings.max_authors`, and the co-author
# forms' limit).
MAX_AUTHORS = 40
# Groups' words are counted as at least this many: the model is fitted on arXiv records
# (title and abstract: 57 words or more for 95 % of them), and a record of a title alone
# would otherwise look, by its count, like the pairs of little evidence that the fitting
# found mostly one person's.
WORDS_FLOOR = 50

# Co-authors' co-authors: a written form on more entries than this (a common name, many
# people) links no two circles (as a co-author name on more records links no records:
# :attr:`pubsearch.index.people.Settings.coauthor_max`).
REACH_MAX = 100

FEATURES = (
    "words",  # the words' cosine
    "sqrt words",
    "words x 10, at most 1",
    "subjects",  # the subjects' cosine
    "log1p fewer words",  # of the two groups, the one with fewer words: its count (at
    # least :data:`WORDS_FLOOR`)
    "log1p more words",
    "log fewer records",
    "log more records",
    "co-author forms",  # the shared forms' weights, summed
    "any co-author form",
    "log1p co-authors' co-authors",  # pairs of co-authors' forms (one each) on a record
    "any co-authors' co-author",
)


@dataclass(frozen=True)
class PairModel:
    """A logistic regression over :data:`FEATURES`: ``1 / (1 + exp(-(b + w . x)))``.

    The default coefficients are ``bench/people.py --fit 1000``'s (seed 35: 12,595 pairs
    of co-author groups of the tuning half of its 300 sets and of 1,000 more sets, none
    with an author of the reported half; with :mod:`pubsearch.index.commonwords` of one
    in 50 records)."""

    weights: tuple[float, ...] = (
        1.9045,
        0.756,
        2.7896,
        3.7106,
        -0.2168,
        -0.7277,
        -1.8831,
        -0.2948,
        0.0565,
        0.6992,
        0.9354,
        1.3904,
    )
    intercept: float = 2.0601

    def probability(self, features: npt.NDArray[np.float64]) -> FloatArray:
        """Each row of ``features`` (pairs x :data:`FEATURES`): the probability that the
        pair is one person's."""
        logit = features @ np.asarray(self.weights, dtype=np.float64) + self.intercept
        result: FloatArray = (1.0 / (1.0 + np.exp(-logit))).astype(np.float32)
        return result


@dataclass(frozen=True)
class Evidence:
    """What the records of an index say of their authors, as the splitter reads it.

    An update's evidence (``changed``: the names whose records it changed) makes the rows
    of its matrices only for the documents it needs (:attr:`rows`: those of the changed
    names and of the names of their written forms, which they may join); words are still
    weighed by every live document. ``known_keys`` and ``known_kinds``: the names'
    :func:`form_key` and kind (:attr:`name_kinds`) as an earlier build worked them out (the
    first names, by id), so that only the names added since are read. ``known_counts``:
    an earlier generation's :attr:`word_counts` (the buckets counted and their counts)
    and the documents it counted."""

    authors: MultiValued
    subjects: MultiValued
    live: BoolArray
    words: DocWords
    changed: BoolArray | None = None
    known_keys: IntArray | None = None
    known_kinds: Int8Array | None = None
    known_counts: KnownCounts | None = None

    @cached_property
    def word_counts(self) -> npt.NDArray[np.int32]:
        """How many live documents hold a word of each bucket (:mod:`.wordmatrix`)."""
        return word_counts(self.words, self.live, self.known_counts)

    @cached_property
    def word_columns(self) -> Columns:
        """Each word bucket's idf and column (:mod:`.wordmatrix`)."""
        return Columns.of(self.word_counts, self.live)

    @cached_property
    def word_matrix(self) -> Any:
        """Documents x words (:mod:`.wordmatrix`): rows for :attr:`rows`, made once."""
        return word_matrix(self.words, self.live, self.word_columns, self.rows)

    def word_rows(self, docs: IntArray) -> Any:
        """:attr:`word_matrix`'s rows of ``docs`` (ascending, distinct; any live document),
        made for them alone when asked: an update's groups' (its changed names' documents,
        then those of the profiles its joins compare), rather than every document of
        :attr:`rows` at once (820,662 of 1,000,948 at 1M synthetic records)."""
        return word_rows(self.words, self.live, self.word_columns, docs)

    @cached_property
    def subject_matrix(self) -> Any:
        """Documents x subjects (see :func:`_subject_matrix`), made once."""
        return _subject_matrix(self.subjects, len(self.live), self.rows)

    @cached_property
    def labels(self) -> list[str]:
        """The author names by id, decoded once."""
        return list(self.authors.labels)

    @cached_property
    def _names_read(self) -> tuple[IntArray, Int8Array, int]:
        count = len(self.authors.labels)
        keys = np.empty(count, dtype=np.int64)
        kinds = np.empty(count, dtype=np.int8)
        have = 0
        if self.known_keys is not None and self.known_kinds is not None:
            have = min(len(self.known_keys), len(self.known_kinds), count)
            keys[:have] = self.known_keys[:have]
            kinds[:have] = self.known_kinds[:have]
        labels = self.labels
        for label_id in range(have, count):
            label = labels[label_id]
            parsed = name_forms(label)
            keys[label_id] = form_key(label, parsed)
            kinds[label_id] = ONE_WORD if parsed is None else INITIALS if parsed[2] else FULL
        return keys, kinds, count - have

    @property
    def form_keys(self) -> IntArray:
        """Each author name's :func:`form_key` (by name id)."""
        return self._names_read[0]

    @property
    def name_kinds(self) -> Int8Array:
        """Each author name's kind (by name id): :data:`FULL` (``Vishal Patel``),
        :data:`INITIALS` (every given name an initial: ``V. M. Patel``) or
        :data:`ONE_WORD` (``Plato``)."""
        return self._names_read[1]

    @property
    def names_read(self) -> int:
        """How many names were read (rather than known from an earlier build)."""
        return self._names_read[2]

    @cached_property
    def forms(self) -> IntArray:
        """Each author name's written form (by name id): the number of its surname and
        first initial (``J. Smith`` and ``John Smith`` one form), or of the name itself
        when it is one word."""
        result: IntArray = np.unique(self.form_keys, return_inverse=True)[1].astype(np.int64)
        return result

    @cached_property
    def rows(self) -> BoolArray:
        """The documents whose rows the matrices hold: the live ones, and of an update's
        evidence only those of its changed names and of their forms' names."""
        if self.changed is None:
            return self.live
        keys = self.form_keys
        near = np.isin(keys, keys[self.changed])  # (the changed names among them)
        value = self.authors.value_ids.astype(np.int64)
        rows = np.zeros(len(self.live), dtype=np.bool_)
        rows[self.authors.doc_of_entry[near[value]]] = True
        result: BoolArray = rows & self.live
        return result

    @cached_property
    def form_incidence(self) -> Any:
        """Documents x written forms (1 where a form is an author of the document, on
        records of at most :data:`MAX_AUTHORS` authors), each form's column scaled by the
        square root of its weight (``1 / log(1 + its live entries)``); rows only for
        :attr:`rows`."""
        return self._incidence(self.rows, np.inf)

    @cached_property
    def reach_incidence(self) -> Any:
        """Written forms x documents: :attr:`form_incidence`'s entries, transposed, of every
        live document (a co-author's other records may be anywhere, an update's too) and
        of the forms of at most :data:`REACH_MAX` entries only."""
        from scipy.sparse import csr_matrix

        return csr_matrix(self._incidence(self.live, REACH_MAX).T)

    @cached_property
    def has_links(self) -> BoolArray:
        """Each written form: whether it has links (is in :attr:`reach_incidence`)."""
        result: BoolArray = np.diff(self.reach_incidence.indptr) > 0
        return result

    def links(self, forms: IntArray, among: IntArray | None = None) -> Any:
        """How often each two of ``forms`` (sorted, distinct) wrote together: ``forms`` x
        ``forms``, the summed products of the two forms' weights over the records (of
        :attr:`reach_incidence`) they are on together; a form with itself 0. (Only these
        forms' columns: a pair's co-authors' co-authors count only forms that are
        co-authors of the other group; every form's columns made each row as long as all
        its co-authors' co-authors, and the people step at 1M records 3 to 12 % slower.)

        With ``among`` (positions in ``forms``, sorted), only the links of which one form
        is one of those (the others 0): the same numbers where they are made."""
        from scipy.sparse import csr_matrix

        rows = self.reach_incidence[forms]
        if among is None:
            matrix = rows @ rows.T.tocsr()  # (no duplicates)
        else:
            part = (rows[among] @ rows.T.tocsr()).tocoo()
            row, col = among[part.row], part.col
            inside = np.zeros(len(forms), dtype=np.bool_)
            inside[among] = True
            mirror = ~inside[col]  # (a link of two of them is made once already)
            matrix = csr_matrix(
                (
                    np.concatenate([part.data, part.data[mirror]]),
                    (np.concatenate([row, col[mirror]]), np.concatenate([col, row[mirror]])),
                ),
                shape=(len(forms), len(forms)),
            )
        at = np.repeat(np.arange(len(forms)), np.diff(matrix.indptr))
        matrix.data[matrix.indices == at] = 0
        matrix.eliminate_zeros()
        return matrix

    @cached_property
    def _form_counts(self) -> IntArray:
        """Each written form's live entries."""
        docs = self.authors.doc_of_entry.astype(np.int64)
        form = self.forms[self.authors.value_ids.astype(np.int64)]
        count: IntArray = np.bincount(
            form[self.live[docs]], minlength=int(self.forms.max(initial=-1)) + 1
        )
        return count

    def _incidence(self, rows: BoolArray, most: float) -> Any:
        """Documents x forms as :attr:`form_incidence` says, for the documents ``rows``
        and the forms of at most ``most`` entries."""
        from scipy.sparse import csr_matrix

        authors = self.authors
        docs = authors.doc_of_entry.astype(np.int64)
        form = self.forms[authors.value_ids.astype(np.int64)]
        count = self._form_counts
        weight = np.sqrt(1.0 / np.log1p(np.maximum(count, 1)))
        usable = rows[docs] & (np.diff(authors.offsets)[docs] <= MAX_AUTHORS)
        usable &= count[form] <= most
        matrix = csr_matrix(
            (weight[form[usable]].astype(np.float32), (docs[usable], form[usable])),
            shape=(len(self.live), len(count)),
        )
        matrix.sum_duplicates()
        return matrix


@dataclass(frozen=True)
class GroupVectors:
    """Groups' words and subjects as unit vectors (sparse rows), each group's count of
    words and of records; their co-authors' forms when asked for."""

    words: Any  # scipy.sparse.csr_matrix
    subjects: Any
    words_count: IntArray
    records: IntArray
    member: Any = field(repr=False)  # groups x documents
    own_forms: IntArray = field(repr=False)  # each group's name's form
    evidence: Evidence = field(repr=False)
    # The groups one of each pair compared is (None: any): :attr:`reach` then holds only
    # what their pairs read.
    compared: BoolArray | None = field(default=None, repr=False)

    @classmethod
    def of(
        cls,
        evidence: Evidence,
        entries: IntArray,
        group_of: IntArray,
        groups: int,
        compared: BoolArray | None = None,
    ) -> GroupVectors:
        """The vectors of ``groups`` groups, ``entries`` (author entries) being in groups
        ``group_of``; with ``compared`` (by group), only pairs of which one of those
        groups is will be compared (an update's new groups)."""
        from scipy.sparse import csr_matrix

        authors = evidence.authors
        docs = authors.doc_of_entry.astype(np.int64)[entries]
        ndocs = len(evidence.live)
        member = csr_matrix(
            (np.ones(len(entries), dtype=np.float32), (group_of, docs)), shape=(groups, ndocs)
        )
        offsets = evidence.words.offsets  # (these documents' alone: called batch by batch)
        words_count = np.zeros(groups, dtype=np.int64)
        np.add.at(words_count, group_of, offsets[docs + 1] - offsets[docs])
        own_forms = np.full(groups, -1, dtype=np.int64)
        own_forms[group_of] = evidence.forms[authors.value_ids.astype(np.int64)[entries]]
        if evidence.changed is None:
            words = member @ evidence.word_matrix
        else:  # an update's: the rows of these groups' documents alone
            used = np.unique(docs)
            columns = np.searchsorted(used, docs)
            mine = csr_matrix(
                (np.ones(len(entries), dtype=np.float32), (group_of, columns)),
                shape=(groups, len(used)),
            )
            words = mine @ evidence.word_rows(used)
        return cls(
            words=unit_rows(words),
            subjects=unit_rows(member @ evidence.subject_matrix),
            words_count=words_count,
            records=np.bincount(group_of, minlength=groups).astype(np.int64),
            member=member,
            own_forms=own_forms,
            evidence=evidence,
            compared=compared,
        )

    @cached_property
    def coauthor_forms(self) -> Any:
        """Groups x written forms of their co-authors (not their own name's form), each
        the square root of its weight, so that a row's dot product with another is the
        summed weight of the forms they share."""
        from scipy.sparse import csr_matrix

        matrix = csr_matrix(self.member @ self.evidence.form_incidence)
        # Each form's weight once, however many of the group's records name it.
        incidence = self.evidence.form_incidence
        column_weight = np.zeros(incidence.shape[1], dtype=np.float32)
        column_weight[incidence.indices] = incidence.data
        rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
        matrix.data = column_weight[matrix.indices] * (matrix.indices != self.own_forms[rows])
        matrix.eliminate_zeros()
        return matrix

    @cached_property
    def linked_forms(self) -> Any:
        """:attr:`coauthor_forms` of the forms that have links (of at most
        :data:`REACH_MAX` entries), their columns renumbered: column ``k`` is form
        ``linked_numbers[k]``."""
        from scipy.sparse import csr_matrix

        coauthors = self.coauthor_forms
        linked = self.evidence.has_links
        forms = self.linked_numbers
        # (Columns renumbered by hand: scipy's coauthors[:, forms] took 4 times as long.)
        kept = linked[coauthors.indices]
        rows = np.repeat(np.arange(coauthors.shape[0]), np.diff(coauthors.indptr))
        return csr_matrix(
            (
                coauthors.data[kept],
                (rows[kept], np.searchsorted(forms, coauthors.indices[kept])),
            ),
            shape=(coauthors.shape[0], len(forms)),
        )

    @cached_property
    def linked_numbers(self) -> IntArray:
        """The written forms of :attr:`linked_forms`' columns (sorted)."""
        forms = np.unique(self.coauthor_forms.indices)
        result: IntArray = forms[self.evidence.has_links[forms]]
        return result

    @cached_property
    def reach(self) -> RowProduct:
        """Groups x :attr:`linked_forms`' columns, a row worked out when read: the links
        (:meth:`Evidence.links`) of the group's co-authors' forms with the other groups'
        co-authors' forms, so that a row's dot product with another group's
        :attr:`linked_forms` row is the summed weight of the pairs of their co-authors'
        forms (one of each, two forms) on one record."""
        among = None
        if self.compared is not None:
            # Only the links of the compared groups' forms are read (with any form).
            among = np.unique(self.linked_forms[np.flatnonzero(self.compared)].indices)
        return RowProduct(self.linked_forms, self.evidence.links(self.linked_numbers, among))

    def likeness(
        self, left: IntArray, right: IntArray, words_weight: float, words_scale: float
    ) -> FloatArray:
        """How alike each pair of groups is by words and subjects alone:
        ``w * min(words * scale, 1) + (1 - w) * subjects`` (the joiner's measure)."""
        words = np.minimum(row_dots(self.words, left, right) * words_scale, 1)
        subjects = row_dots(self.subjects, left, right)
        result: FloatArray = (words_weight * words + (1 - words_weight) * subjects).astype(
            np.float32
        )
        return result

    def features(self, left: IntArray, right: IntArray) -> npt.NDArray[np.float64]:
        """Each pair's :data:`FEATURES` (pairs x features)."""
        return self._features(left, right, lambda m, o=None: row_dots(m, left, right, o))

    def run_features(
        self, starts: IntArray, sizes: IntArray
    ) -> tuple[IntArray, IntArray, npt.NDArray[np.float64]]:
        """Every pair of each run's groups (``sizes[r]`` consecutive groups from
        ``starts[r]``; :func:`run_pairs`) and their :data:`FEATURES`: a long run's
        products are worked out at once."""
        left, right = run_pairs(starts, sizes)
        found = self._features(
            left, right, lambda m, o=None: run_dots(m, left, right, starts, sizes, o)
        )
        return left, right, found

    def _features(
        self, left: IntArray, right: IntArray, dots: Callable[..., FloatArray]
    ) -> npt.NDArray[np.float64]:
        words = dots(self.words).astype(np.float64)
        subjects = dots(self.subjects).astype(np.float64)
        counted = np.maximum(self.words_count, WORDS_FLOOR)
        few = np.minimum(counted[left], counted[right])
        many = np.maximum(counted[left], counted[right])
        small = np.minimum(self.records[left], self.records[right])
        large = np.maximum(self.records[left], self.records[right])
        shared = dots(self.coauthor_forms).astype(np.float64)
        reach = dots(self.reach, self.linked_forms).astype(np.float64)
        columns = (
            words,
            np.sqrt(np.maximum(words, 0)),
            np.minimum(words * 10, 1),
            subjects,
            np.log1p(few),
            np.log1p(many),
            np.log(np.maximum(small, 1)),
            np.log(np.maximum(large, 1)),
            shared,
            shared > 0,
            np.log1p(reach),
            reach > 0,
        )
        # Filled feature by feature and handed back transposed (column-major): each
        # feature written whole, six times faster than numpy.column_stack's row by row
        # (0.15 s a million pairs, 8 % of the people step at a million records).
        found = np.empty((len(columns), len(left)), dtype=np.float64)
        for number, column in enumerate(columns):
            found[number] = column
        return found.T


def fitted(weights: Sequence[float], intercept: float) -> PairModel:
    """A :class:`PairModel` of ``weights`` (one per feature) and ``intercept``."""
    if len(weights) != len(FEATURES):
        raise ValueError(f"a pair model needs {len(FEATURES)} weights, not {len(weights)}")
    return PairModel(tuple(float(w) for w in weights), float(intercept))


class Compatible:
    """Whether a name of initials stands for a full one by the name rule (``V. M. Patel``
    for ``Vishal M. Patel``, not for ``Vishal K. Patel``), by name id: each name read once.
    Initials against a given name read only its words' (and their parts') first letters
    (``v m`` stands for ``vishal m`` as for ``vikram manu``), so where the surnames are the
    same the answer is kept by those letters: a common surname's initials and full forms
    are millions of pairs."""

    def __init__(self, labels: Sequence[str]) -> None:
        from pubsearch.index.names import matches, recorded_name

        self._labels = labels
        self._matches = matches
        self._read = recorded_name
        self._names: dict[int, tuple[Any, tuple[tuple[str, ...], ...], bool]] = {}
        self._kept: dict[tuple[Any, Any], bool] = {}

    def _name(self, label_id: int) -> tuple[Any, tuple[tuple[str, ...], ...], bool]:
        """The name read, its given names' letters, and whether they are all initials."""
        read = self._names.get(label_id)
        if read is None:
            name = self._read(self._labels[label_id])
            parts = [word.split("-") for word in name.given]
            letters = tuple(tuple(part[:1] for part in word) for word in parts)
            initials = all(len(part) == 1 for word in parts for part in word)
            read = self._names[label_id] = (name, letters, initials)
        return read

    def pairs(
        self, initials: IntArray, initial_keys: IntArray, fulls: IntArray, full_keys: IntArray
    ) -> IntArray:
        """Every (initials' name, full name) of one key (``initials`` and ``fulls``: names,
        by id; their keys: :func:`form_key`) where the one stands for the other (rows
        ``initials, full``): each distinct pair of given names and letters read once,
        whatever the count of pairs (millions, of a common surname's names)."""
        order = np.argsort(full_keys, kind="stable")
        fulls_sorted, keys_sorted = fulls[order], full_keys[order]
        starts = np.searchsorted(keys_sorted, initial_keys, "left")
        counts = np.searchsorted(keys_sorted, initial_keys, "right") - starts
        left = np.repeat(initials.astype(np.int64), counts)
        right = fulls_sorted[gathered(starts, counts)].astype(np.int64)
        if not len(left):
            return np.zeros((0, 2), dtype=np.int64)
        # Each name read once: the numbers of its given names, letters and surname.
        given: dict[Any, int] = {}
        letters: dict[Any, int] = {}
        surnames: dict[Any, int] = {}
        names = np.unique(np.concatenate([left, right]))
        given_of = np.empty(len(names), dtype=np.int64)
        letters_of = np.empty(len(names), dtype=np.int64)
        surname_of = np.empty(len(names), dtype=np.int64)
        only_initials = np.empty(len(names), dtype=np.bool_)
        has_surname = np.empty(len(names), dtype=np.bool_)
        for at, label_id in enumerate(names.tolist()):
            name, its_letters, all_initials = self._name(label_id)
            given_of[at] = given.setdefault(name.given, len(given))
            letters_of[at] = letters.setdefault(its_letters, len(letters))
            surname_of[at] = surnames.setdefault(name.surname, len(surnames))
            only_initials[at] = all_initials
            has_surname[at] = bool(name.surname)
        a, b = np.searchsorted(names, left), np.searchsorted(names, right)
        # Where __call__ keeps its answer by the given names and letters (initials only,
        # one surname), each distinct pair of them is read once.
        kept = only_initials[a] & has_surname[b] & (surname_of[a] == surname_of[b])
        ok = np.zeros(len(left), dtype=np.bool_)
        codes = given_of[a[kept]] * len(letters) + letters_of[b[kept]]
        _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        where = np.flatnonzero(kept)
        answers = np.asarray(
            [self(int(left[where[i]]), int(right[where[i]])) for i in first.tolist()],
            dtype=np.bool_,
        )
        ok[where] = answers[inverse]
        for i in np.flatnonzero(~kept).tolist():
            ok[i] = self(int(left[i]), int(right[i]))
        return np.column_stack([left[ok], right[ok]])

    def __call__(self, initials: int, full: int) -> bool:
        (typed, _, all_initials), (recorded, letters, _) = self._name(initials), self._name(full)
        if not all_initials or not recorded.surname or typed.surname != recorded.surname:
            return bool(self._matches(typed, recorded))
        key = (typed.given, letters)
        known = self._kept.get(key)
        if known is None:
            known = self._kept[key] = bool(self._matches(typed, recorded))
        return known


_GIVEN_PARTS = re.compile(r"[\s.\-]+")


def name_forms(label: str) -> tuple[str, str, bool] | None:
    """A name's surname (its last word, folded), first initial, and whether every given
    name is an initial (``V. M. Patel``): None for a name of one word."""
    text = label if label.isascii() else fold(label)
    if "," not in text and "." not in text and "-" not in text:
        words = text.split()  # the common case: given names whole, no punctuation
        if len(words) < 2:
            return None
        names = words[:-1]
        return words[-1].lower(), names[0][0].lower(), max(map(len, names)) == 1
    if "," in text:
        family, _, given_part = text.partition(",")
        words = [*given_part.split(), *family.split()]
    else:
        words = text.split()
    if len(words) < 2:
        return None
    given = " ".join(words[:-1])
    surname = words[-1].lower().strip(".")
    parts = [p for p in _GIVEN_PARTS.split(given) if p]
    if not parts:
        return None
    return surname, parts[0][0].lower(), all(len(p) == 1 for p in parts)


def form_key(label: str, parsed: tuple[str, str, bool] | None) -> int:
    """A 64-bit number of a name's written form (``parsed``: its :func:`name_forms`), the
    same in every process: of its surname and first initial, or of the name itself (lower
    case) when it has no initial."""
    key = f"{parsed[0]}{_KEY_SEP}{parsed[1]}" if parsed else label.lower()
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


_KEY_SEP = "\x1f"


def _subject_matrix(subjects: MultiValued, ndocs: int, rows: BoolArray | None = None) -> Any:
    """Documents x subjects and their archives (``cs`` of ``cs.LG``, at half weight); with
    ``rows``, only those documents' rows."""
    from scipy.sparse import csr_matrix

    labels = subjects.labels
    archive_ids: dict[str, int] = {}
    archive_of = np.asarray(
        [
            len(labels) + archive_ids.setdefault(label.partition(".")[0].lower(), len(archive_ids))
            for label in labels
        ],
        dtype=np.int64,
    )
    value = subjects.value_ids.astype(np.int64)
    docs = subjects.doc_of_entry.astype(np.int64)
    if rows is not None:
        value, docs = value[rows[docs]], docs[rows[docs]]
    at = np.concatenate([docs, docs])
    cols = np.concatenate([value, archive_of[value] if len(value) else value])
    data = np.concatenate([np.ones(len(value)), np.full(len(value), 0.5)]).astype(np.float32)
    shape = (ndocs, len(labels) + len(archive_ids))
    return unit_rows(csr_matrix((data, (at, cols)), shape=shape))
