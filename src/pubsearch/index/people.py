"""People, not name strings: one name's records split into the people who wrote them, and
an initial's form of a name (``V. Patel``) joined to the person of the full one (``Vishal
Patel``) when the records agree.

The evidence is what the records say (docs/people.md has the method and its figures):

1. **Co-authors.** Two records of a name that share a co-author (any other name, on
   records with at most :attr:`Settings.max_authors` authors; not a name so common that
   many people have it: more than :attr:`Settings.coauthor_max` records) are one person's:
   the records linked so, directly or through others, are a *group*.
2. **Words, subjects and co-authors' forms.** Groups of one name are joined when they are
   likely one person's: :class:`~pubsearch.index.peopleevidence.PairModel` weighs how
   alike their titles' and abstracts' words (tf-idf) and subjects are, the co-authors'
   written forms they share (``J. Smith`` for ``John Smith``) and how much each says, into
   a probability; groups are joined, the likeliest first, while the average probability
   of the two profiles' groups is at least :attr:`Settings.threshold`.
3. **Little evidence.** A record alone in its profile with few words goes to the profile
   most like it (``nearest``): a profile is not made of a record that says too little.

Each record's author entry gets its profile, how it got there (:data:`HOW`) and a
confidence. A name whose records never split is one profile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from pubsearch.core.ranges import ranges
from pubsearch.index.peopleevidence import (
    FULL,
    INITIALS,
    MAX_AUTHORS,
    Compatible,
    Evidence,
    GroupVectors,
    PairModel,
    name_forms,
)
from pubsearch.index.rowdots import run_pairs_of

__all__ = ["HOW", "Evidence", "Settings", "Split", "join", "name_forms", "name_pairs", "split"]

IntArray = npt.NDArray[np.int64]
UInt32Array = npt.NDArray[np.uint32]
UInt8Array = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]

# How a record's author entry came to its profile.
ONLY, COAUTHORS, WORDS, NEAREST = 0, 1, 2, 3
HOW = ("only", "coauthors", "words", "nearest")


@dataclass(frozen=True)
class Settings:
    """The splitter's constants, tuned on half of the artificial homonyms of
    bench/people.py (docs/people.md)."""

    coauthor_max: int = 100  # a co-author name on more records links nothing
    max_authors: int = MAX_AUTHORS  # a record with more authors links by none of them
    model: PairModel = field(default_factory=PairModel)  # how likely two groups are one
    threshold: float = 0.4  # profiles at least this likely one person's are joined
    # A name of many co-author groups (a common name: many people) asks more likeness:
    # the threshold rises by ``crowd_slope`` for each doubling of its groups past
    # ``crowd_from`` (see :meth:`threshold_for`; groups of records that name a co-author).
    crowd_from: int = 8
    crowd_slope: float = 0.2
    few_words: int = 12  # a lone record with fewer words goes to the nearest profile
    # An initial's form (V. Patel) is the person of a full form (Vishal Patel) when they
    # share a co-author, or are at least this alike and the next full form is not close
    # (alike: ``w * min(words * scale, 1) + (1 - w) * subjects``, cosines).
    words_weight: float = 0.7
    words_scale: float = 10.0
    join_threshold: float = 0.95
    join_margin: float = 0.1
    join_choices: int = 3  # initials of more full names than this join by co-authors only
    # A name's groups are compared pair by pair: a name of more groups than
    # ``compare_block`` (a common name at millions of records: thousands of groups, and
    # their pairs' features tens of gigabytes) is compared in blocks of at most that many,
    # its groups ordered by their commonest subject, and no two blocks' groups are joined.
    # Pairs are worked out ``pair_batch`` at a time (names whole), which bounds the memory
    # they take whatever the size of the index; the result does not depend on it.
    compare_block: int = 400
    pair_batch: int = 1_000_000

    def threshold_for(self, groups: int) -> float:
        """The likeness that joins profiles of a name of ``groups`` co-author groups."""
        if groups <= self.crowd_from or not self.crowd_slope:
            return self.threshold
        return self.threshold + self.crowd_slope * math.log2(groups / self.crowd_from)


@dataclass(frozen=True)
class Split:
    """Each author entry's profile (numbered from 0; -1 for a deleted document's entry),
    how it got there (:data:`HOW`) and how sure that is (0 to 1)."""

    group: IntArray
    how: UInt8Array
    confidence: FloatArray

    @cached_property
    def groups(self) -> int:
        """How many profiles (worked out once: a scan of every entry)."""
        return int(self.group.max(initial=-1)) + 1


def split(
    evidence: Evidence,
    settings: Settings | None = None,
    labels: BoolArray | None = None,
    earlier: IntArray | None = None,
) -> Split:
    """Every author name of ``evidence`` split into people (see the module's doc); with
    ``labels`` (by name id), only those names are split, the other names' entries being
    in no profile (-1: an update keeps their earlier people).

    ``earlier`` (an update's): the person of each of the first entries in the generation
    it extends (-1: none). A split name's earlier people stay as they were, each one group:
    its new records join them (by a shared co-author, which can join two of them, or by
    likeness) or make people of their own, and no two earlier people are compared."""
    settings = settings or Settings()
    authors = evidence.authors
    n_labels = len(authors.labels)
    docs = authors.doc_of_entry.astype(np.int64)
    value = authors.value_ids.astype(np.int64)
    alive = evidence.live[docs]
    per_label = np.bincount(value[alive], minlength=n_labels)
    splitting = per_label >= 2
    if labels is not None:
        splitting &= labels
        alive = alive & labels[value]
    held = np.zeros(len(value), dtype=np.bool_)  # entries in an earlier person
    if earlier is not None:
        held[: len(earlier)] = earlier >= 0
        held &= alive
    component = _components(evidence, alive, splitting, per_label, settings, earlier, held)
    group, how, confidence = _grouped(evidence, component, alive, held, settings)
    return Split(group, how, confidence)


def _components(
    evidence: Evidence,
    alive: BoolArray,
    splitting: BoolArray,
    per_label: IntArray,
    settings: Settings,
    earlier: IntArray | None = None,
    held: BoolArray | None = None,
) -> IntArray:
    """Each entry's group by co-authors (entries of a name not split: one group; those of
    one earlier person, ``held``: one group)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    authors = evidence.authors
    offsets = authors.offsets
    value = authors.value_ids.astype(np.int64)
    docs = authors.doc_of_entry.astype(np.int64)
    entries = len(value)
    sizes = np.diff(offsets)
    # Every (entry, co-author entry) of a record of a name being split.
    usable = alive & splitting[value] & (sizes[docs] <= settings.max_authors)
    left = np.flatnonzero(usable)
    counts = sizes[docs[left]]
    lefts = np.repeat(left, counts)
    starts = np.cumsum(counts) - counts
    rights = offsets[docs[lefts]] + (np.arange(len(lefts)) - np.repeat(starts, counts))
    coauthor = value[rights]
    keep = (rights != lefts) & (per_label[coauthor] <= settings.coauthor_max)
    lefts, coauthor = lefts[keep], coauthor[keep]
    key = value[lefts] * len(per_label) + coauthor
    order = np.lexsort((lefts, key))
    key, lefts = key[order], lefts[order]
    same = key[1:] == key[:-1]
    edge_a, edge_b = [lefts[:-1][same]], [lefts[1:][same]]
    # A name not split: its entries one group (a chain of edges).
    whole = np.flatnonzero(alive & ~splitting[value])
    whole = whole[np.argsort(value[whole], kind="stable")]
    chained = value[whole][1:] == value[whole][:-1]
    edge_a.append(whole[:-1][chained])
    edge_b.append(whole[1:][chained])
    if earlier is not None and held is not None:
        # An earlier person's entries of one name: a chain too.
        kept = np.flatnonzero(held)
        key = earlier[kept] * len(per_label) + value[kept]
        order = np.argsort(key, kind="stable")
        kept = kept[order]
        same_person = np.diff(key[order]) == 0
        edge_a.append(kept[:-1][same_person])
        edge_b.append(kept[1:][same_person])
    a, b = np.concatenate(edge_a), np.concatenate(edge_b)
    graph = coo_matrix((np.ones(len(a), dtype=np.int8), (a, b)), shape=(entries, entries))
    _, component = connected_components(graph, directed=False)
    result: IntArray = component.astype(np.int64)
    return result


def _grouped(
    evidence: Evidence,
    component: IntArray,
    alive: BoolArray,
    held: BoolArray,
    settings: Settings,
) -> tuple[IntArray, UInt8Array, FloatArray]:
    """The co-author groups of each name joined by their words and subjects into
    profiles (see the module's doc); groups holding an entry of an earlier person
    (``held``) are not compared with each other."""
    authors = evidence.authors
    value = authors.value_ids.astype(np.int64)
    entries = len(value)
    how = np.full(entries, ONLY, dtype=np.uint8)
    confidence = np.ones(entries, dtype=np.float32)
    live_entries = np.flatnonzero(alive)
    comps, comp_of = np.unique(component[live_entries], return_inverse=True)
    comp_label = np.zeros(len(comps), dtype=np.int64)
    comp_label[comp_of] = value[live_entries]
    comp_size = np.bincount(comp_of, minlength=len(comps))
    per_label_comps = np.bincount(comp_label, minlength=len(authors.labels))
    several = per_label_comps[comp_label] >= 2  # comps of names with several groups
    how[live_entries[several[comp_of] & (comp_size[comp_of] >= 2)]] = COAUTHORS
    final = np.arange(len(comps), dtype=np.int64)
    if several.any():
        fixed = np.zeros(len(comps), dtype=np.bool_)
        fixed[comp_of[held[live_entries]]] = True
        final, comp_how, comp_conf = _join_groups(
            evidence, live_entries, comp_of, comp_label, comp_size, several, settings, fixed
        )
        moved = comp_how[comp_of] != ONLY
        how[live_entries[moved]] = comp_how[comp_of][moved]
        confidence[live_entries] = np.where(
            several[comp_of] & (comp_size[comp_of] < 2) | moved,
            comp_conf[comp_of],
            confidence[live_entries],
        )
    _, final = np.unique(final, return_inverse=True)
    group = np.full(entries, -1, dtype=np.int64)
    group[live_entries] = final[comp_of]
    confidence[~alive] = 0
    return group, how, confidence


def _join_groups(
    evidence: Evidence,
    live_entries: IntArray,
    comp_of: IntArray,
    comp_label: IntArray,
    comp_size: IntArray,
    several: BoolArray,
    settings: Settings,
    fixed: BoolArray,
) -> tuple[IntArray, UInt8Array, FloatArray]:
    """Which profile each co-author group is in (a group's number: the first group of
    it), how it got there, how sure; for the groups of names with several. Two ``fixed``
    groups (earlier people) are never joined by likeness, nor compared."""
    ncomps = len(comp_label)
    wanted = np.flatnonzero(several)
    chosen = several[comp_of]
    entry_of, group_of = live_entries[chosen], comp_of[chosen]
    entry_docs = evidence.authors.doc_of_entry.astype(np.int64)[entry_of]
    words_count = np.zeros(ncomps, dtype=np.int64)
    np.add.at(words_count, group_of, np.diff(evidence.words.offsets)[entry_docs])
    # The groups of each name, name by name.
    order = wanted[np.argsort(comp_label[wanted], kind="stable")]
    labels = comp_label[order]
    starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    sizes = np.diff(np.r_[starts, len(order)])
    # A name's crowd: its groups whose records name a co-author (a record alone on its
    # author list, as on a profile page, is a group of its own that says nothing of how
    # many people share the name).
    authors = evidence.authors
    docs = authors.doc_of_entry.astype(np.int64)[live_entries]
    with_others = np.diff(authors.offsets)[docs] > 1
    accompanied = np.bincount(comp_of[with_others], minlength=ncomps) > 0
    crowds = np.add.reduceat(accompanied[order], starts) if len(order) else starts
    # The runs of groups compared pair by pair: each name's, or its blocks.
    if (sizes > settings.compare_block).any():
        subjects = _group_rows(evidence.subject_matrix, entry_docs, group_of, ncomps)
        order, starts, sizes, crowds = _blocks(
            order, starts, sizes, crowds, subjects, settings.compare_block
        )
    run_of = np.full(ncomps, -1, dtype=np.int64)
    run_of[order] = np.repeat(np.arange(len(starts)), sizes)
    final = np.arange(ncomps, dtype=np.int64)
    how = np.full(ncomps, ONLY, dtype=np.uint8)
    conf = np.ones(ncomps, dtype=np.float32)
    best = np.zeros(ncomps, dtype=np.float32)
    # A lone record that says too little goes to the profile most like it.
    few = (comp_size == 1) & several & (words_count < settings.few_words) & ~fixed
    # A batch's groups numbered from 0, their vectors made for the batch alone.
    position = np.full(ncomps, -1, dtype=np.int64)
    counts = sizes * (sizes - 1) // 2
    if fixed.any():
        # Pairs of two earlier people are listed, not compared: they weigh an eighth.
        held = np.add.reduceat(fixed[order].astype(np.int64), starts)
        counts = counts - held * (held - 1) // 2 + held * (held - 1) // 16
    first = 0
    while first < len(starts):
        # Runs whole, as many as make at most ``pair_batch`` pairs (one at least).
        last = first + max(
            1, int(np.searchsorted(np.cumsum(counts[first:]), settings.pair_batch, "right"))
        )
        batch = slice(first, last)
        batch_groups = order[starts[first] : starts[last - 1] + sizes[last - 1]]
        position[batch_groups] = np.arange(len(batch_groups))
        mine = position[group_of] >= 0
        run_first = starts[batch] - starts[first]
        new_groups = ~fixed[batch_groups]
        if new_groups.all():
            vectors = GroupVectors.of(
                evidence, entry_of[mine], position[group_of[mine]], len(batch_groups)
            )
            at_left, at_right, features = vectors.run_features(run_first, sizes[batch])
        else:
            # Only the pairs of a new group: two earlier people never join by likeness,
            # and are not listed (thousands of a common name's, for a few new groups).
            vectors = GroupVectors.of(
                evidence, entry_of[mine], position[group_of[mine]], len(batch_groups), new_groups
            )
            at_left, at_right = run_pairs_of(run_first, sizes[batch], new_groups)
            features = vectors.features(at_left, at_right)
        sims = settings.model.probability(features)
        left, right = batch_groups[at_left], batch_groups[at_right]
        position[batch_groups] = -1
        del vectors, features
        np.maximum.at(best, left, sims)
        np.maximum.at(best, right, sims)
        # Two groups: one comparison. More: average linkage, run by run (a run's pairs
        # are those whose left group is in it).
        edges: IntArray = np.asarray(np.searchsorted(at_left, np.r_[run_first, len(batch_groups)]))
        bounds = [int(edge) for edge in edges]
        for run, (start, size, crowd) in enumerate(
            zip(run_first.tolist(), sizes[batch].tolist(), crowds[batch].tolist(), strict=True)
        ):
            at, end = bounds[run], bounds[run + 1]
            if at == end:
                continue
            members = batch_groups[start : start + size]
            if size == 2:
                if sims[at] >= settings.threshold:
                    final[members[1]] = members[0]
                    how[members] = WORDS
                    conf[members] = sims[at]
            else:
                _average_linkage(
                    members,
                    at_left[at:end] - start,
                    at_right[at:end] - start,
                    sims[at:end],
                    comp_size,
                    final,
                    how,
                    conf,
                    settings.threshold_for(crowd),
                )
        # The batch's lone groups that nothing joined into (joins stay within a run).
        kept = batch_groups[final[batch_groups] == batch_groups]
        joined_into = final[batch_groups][final[batch_groups] != batch_groups]
        alone = kept[few[kept] & np.isin(kept, joined_into, invert=True)]
        if len(alone):
            _to_nearest(alone, left, right, sims, run_of, comp_size, final)
            moved = alone[final[alone] != alone]
            how[moved] = NEAREST
            conf[moved] = best[moved]
        first = last
    separate = several & (how == ONLY)
    conf[separate] = 1 - best[separate]
    # Chains of joins (a -> b -> c) resolved to their root.
    for _ in range(64):
        up = final[final]
        if np.array_equal(up, final):
            break
        final = up
    return final, how, conf


def _blocks(
    order: IntArray,
    starts: IntArray,
    sizes: IntArray,
    crowds: IntArray,
    subjects: Any,
    block: int,
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """The runs of ``order`` (groups, name by name: ``starts``, ``sizes``, ``crowds``) cut
    so that none is longer than ``block``: a longer name's groups ordered by their
    commonest subject (rows of ``subjects``, by group; then by number) and cut into runs of nearly
    equal length, each keeping its name's crowd."""
    big = np.flatnonzero(sizes > block)
    if not len(big):
        return order, starts, sizes, crowds
    order = order.copy()
    new_starts: list[int] = []
    new_sizes: list[int] = []
    new_crowds: list[int] = []
    cut = np.zeros(len(starts), dtype=np.bool_)
    cut[big] = True
    for run, (start, size, crowd) in enumerate(
        zip(starts.tolist(), sizes.tolist(), crowds.tolist(), strict=True)
    ):
        if not cut[run]:
            new_starts.append(start)
            new_sizes.append(size)
            new_crowds.append(crowd)
            continue
        members = order[start : start + size]
        rows = subjects[members]
        commonest = np.asarray(rows.argmax(axis=1)).ravel()
        commonest[np.diff(rows.indptr) == 0] = -1  # no subject: first
        order[start : start + size] = members[np.lexsort((members, commonest))]
        pieces = -(-size // block)
        bounds = np.linspace(0, size, pieces + 1).round().astype(np.int64)
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            new_starts.append(start + a)
            new_sizes.append(b - a)
            new_crowds.append(crowd)
    as_array = np.asarray
    return (
        order,
        as_array(new_starts, dtype=np.int64),
        as_array(new_sizes, dtype=np.int64),
        as_array(new_crowds, dtype=np.int64),
    )


def _group_rows(matrix: Any, docs: IntArray, group_of: IntArray, groups: int) -> Any:
    """The sums of ``matrix``'s rows (documents) by group: ``docs[i]`` is in group
    ``group_of[i]`` (scipy CSR, groups x columns)."""
    from scipy.sparse import csr_matrix

    member = csr_matrix(
        (np.ones(len(docs), dtype=np.float32), (group_of, docs)), shape=(groups, matrix.shape[0])
    )
    return csr_matrix(member @ matrix)


def _average_linkage(
    members: IntArray,
    i: IntArray,
    j: IntArray,
    sims: FloatArray,
    comp_size: IntArray,
    final: IntArray,
    how: UInt8Array,
    conf: FloatArray,
    threshold: float,
) -> None:
    """Join the groups ``members`` of one name, the most alike first, while two profiles'
    average probability (over their groups' pairs, weighed by records) is at least
    ``threshold``; ``sims`` are the pairs' (``i``, ``j``: positions in ``members``), a pair
    not given never alike enough."""
    size = len(members)
    if float(sims.max()) < threshold:
        return  # no two alike enough: nothing joins
    matrix = np.full((size, size), -np.inf, dtype=np.float64)
    matrix[i, j] = sims
    matrix[j, i] = sims
    weights = comp_size[members].astype(np.float64)
    active = np.ones(size, dtype=np.bool_)
    while True:
        flat = int(np.argmax(matrix))
        a, b = divmod(flat, size)
        value = matrix[a, b]
        if value < threshold:
            break
        # b into a: a's row the weighted average of both.
        total = weights[a] + weights[b]
        row = (matrix[a] * weights[a] + matrix[b] * weights[b]) / total
        matrix[a], matrix[:, a] = row, row
        matrix[a, a] = -np.inf
        matrix[b], matrix[:, b] = -np.inf, -np.inf
        weights[a] = total
        active[b] = False
        final[members[b]] = members[a]
        if how[members[a]] != WORDS:
            conf[members[a]] = value
        conf[members[b]] = value
        how[members[[a, b]]] = WORDS


def _to_nearest(
    lone: IntArray,
    left: IntArray,
    right: IntArray,
    sims: FloatArray,
    run_of: IntArray,
    comp_size: IntArray,
    final: IntArray,
) -> None:
    """Each of the ``lone`` groups into the profile of the group most like it (of its
    run: its name's groups, or their block; not lone itself); where none is like it at
    all, into its run's first lone group."""
    is_lone = np.zeros(len(final), dtype=np.bool_)
    is_lone[lone] = True
    a = np.concatenate([left, right])
    b = np.concatenate([right, left])
    s = np.concatenate([sims, sims]).astype(np.float64)
    usable = is_lone[a] & ~is_lone[b]
    a, b, s = a[usable], b[usable], s[usable]
    # Ties (nothing alike) go to the larger group.
    s = s + comp_size[b] * 1e-9
    order = np.lexsort((-s, a))
    a, b = a[order], b[order]
    if len(a):
        first = np.r_[True, a[1:] != a[:-1]]
        final[a[first]] = final[b[first]]
    # Those of a run with nothing else: together, in the first of them.
    left_alone = lone[np.isin(lone, a, invert=True)]
    labels = run_of[left_alone]
    _, first_of = np.unique(labels, return_index=True)
    heads = dict(zip(labels[first_of].tolist(), left_alone[first_of].tolist(), strict=True))
    for comp, label in zip(left_alone.tolist(), labels.tolist(), strict=True):
        final[comp] = heads[label]


def name_pairs(
    evidence: Evidence,
    live: BoolArray,
    changed: BoolArray | None = None,
    known: npt.NDArray[np.integer[Any]] | None = None,
) -> IntArray:
    """Every (initials' name, full name) of the ``live`` names (by name id) where the one
    stands for the other (rows ``initials, full``, in order): what :func:`join` pairs.
    With ``known`` (the pairs of an earlier generation's live names) and ``changed`` (the
    names whose records changed since), only the pairs of a changed name are read anew:
    a name whose records did not change was live then as now, and whether two names stand
    for each other depends on the two names alone (at 1M synthetic records, 1.6 s rather
    than about 7 s for every name of the changed names' forms: docs/people.md)."""
    keys, kinds = evidence.form_keys, evidence.name_kinds
    size = len(evidence.labels)
    live = live[:size]
    initials_of = live & (kinds == INITIALS)
    fulls_of = live & (kinds == FULL)
    compatible = Compatible(evidence.labels)
    if known is None or changed is None:
        initials, fulls = np.flatnonzero(initials_of), np.flatnonzero(fulls_of)
        found = [compatible.pairs(initials, keys[initials], fulls, keys[fulls])]
    else:
        changed = changed[:size]
        known = np.asarray(known, dtype=np.int64).reshape(-1, 2)
        left, right = known[:, 0], known[:, 1]
        kept = (left < size) & (right < size)
        left, right = left[kept], right[kept]
        kept = initials_of[left] & fulls_of[right] & ~changed[left] & ~changed[right]
        found = [np.column_stack([left[kept], right[kept]])]
        # A changed initials' name against every full name of its form, then the other
        # initials' names of a changed full name's form against the changed full names.
        new_initials = np.flatnonzero(initials_of & changed)
        fulls = np.flatnonzero(fulls_of)
        fulls = fulls[np.isin(keys[fulls], keys[new_initials])]
        found.append(compatible.pairs(new_initials, keys[new_initials], fulls, keys[fulls]))
        new_fulls = np.flatnonzero(fulls_of & changed)
        initials = np.flatnonzero(initials_of & ~changed)
        initials = initials[np.isin(keys[initials], keys[new_fulls])]
        found.append(compatible.pairs(initials, keys[initials], new_fulls, keys[new_fulls]))
    pairs = np.concatenate(found).astype(np.int64)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def join(
    evidence: Evidence,
    split_of: Split,
    settings: Settings | None = None,
    labels: BoolArray | None = None,
    pairs: IntArray | None = None,
) -> IntArray:
    """Each profile of ``split_of`` -> the profile it is one person with (itself, for most):
    a profile of a name written with initials (``V. Patel``) is joined to the profile of
    a full form of the name (``Vishal Patel``, ``Vishal M. Patel``) that shares a co-author
    with it, else to the one most like it, when that is alike enough and the next full
    form's is not nearly as alike. With ``labels`` (by name id: the names an update
    changed), only the initials forms that are such a name or stand for one are joined
    anew (the others' profiles, kept, hold their earlier joins). ``pairs``: the live
    names' :func:`name_pairs`, when already made."""
    from scipy.sparse import csr_matrix

    settings = settings or Settings()
    authors = evidence.authors
    names = evidence.labels
    value = authors.value_ids.astype(np.int64)
    group = split_of.group
    target = np.arange(split_of.groups, dtype=np.int64)
    live_labels = np.flatnonzero(np.bincount(value[group >= 0], minlength=len(names)))
    keys, kinds = evidence.form_keys, evidence.name_kinds
    if labels is not None:  # only the names of a changed name's form can join anew
        changed = np.flatnonzero(labels[: len(names)])
        live_labels = live_labels[np.isin(keys[live_labels], keys[changed])]
    initials = live_labels[kinds[live_labels] == INITIALS]
    fulls = live_labels[kinds[live_labels] == FULL]
    if labels is not None:
        # Initials changed, or of a key one of whose full names changed.
        touched = np.unique(keys[fulls[labels[fulls]]])
        initials = initials[labels[initials] | np.isin(keys[initials], touched)]
    if pairs is None:
        pairs = Compatible(names).pairs(initials, keys[initials], fulls, keys[fulls])
    else:  # those of these initials and full names
        chosen = np.zeros((2, len(names)), dtype=np.bool_)
        chosen[0, initials] = chosen[1, fulls] = True
        pairs = pairs[chosen[0, pairs[:, 0]] & chosen[1, pairs[:, 1]]]
    if not len(pairs):
        return target
    # The profiles of the names involved (name by name, each name's in order).
    involved = np.unique(pairs.ravel())
    entries = np.flatnonzero(np.isin(value, involved) & (group >= 0))
    groups = split_of.groups
    codes = np.unique(value[entries] * groups + group[entries])
    profile_name, profile = np.divmod(codes, groups)
    name_of = np.full(groups, -1, dtype=np.int64)
    name_of[profile] = profile_name
    # Likeness only where the initials stand for few full names (Y. Liu's dozens of Yang,
    # Yi and Yu Liu: a shared co-author or nothing).
    choices = np.bincount(pairs[:, 0])
    alike = choices[pairs[:, 0]] <= settings.join_choices
    entry_docs = authors.doc_of_entry.astype(np.int64)[entries]
    member = csr_matrix(
        (np.ones(len(entries), dtype=np.float32), (group[entries], entry_docs)),
        shape=(groups, len(evidence.live)),
    )
    shared = _shared_coauthors(evidence, member, entries, group[entries], settings)
    # Co-authors shared, by every initials' profile with every full's profile of its key
    # (surname and initial): the product holds only the pairs that share one.
    name_key = evidence.forms  # (a key's number)
    lefts = np.unique(profile[np.isin(profile_name, pairs[:, 0])])
    rights = np.unique(profile[np.isin(profile_name, pairs[:, 1])])
    product = _shared_within_keys(
        shared, lefts, rights, name_key[name_of[lefts]], name_key[name_of[rights]]
    )
    # Every (initials' profile, full's profile) of the names alike, read in it.
    pair_left, pair_right = _profile_pairs(profile_name, profile, pairs[alike])
    together = np.asarray(
        product[np.searchsorted(lefts, pair_left), np.searchsorted(rights, pair_right)]
    ).ravel()
    # The other names' pairs count only where they share a co-author: those alone are
    # made (a common name's initials and full forms: millions of pairs otherwise).
    others = pairs[~alike]
    if len(others):
        found = product.tocoo()
        left_found, right_found = lefts[found.row], rights[found.col]
        width = len(names)
        wanted = np.isin(
            name_of[left_found] * width + name_of[right_found],
            others[:, 0] * width + others[:, 1],
        )
        pair_left = np.concatenate([pair_left, left_found[wanted]])
        pair_right = np.concatenate([pair_right, right_found[wanted]])
        together = np.concatenate([together, found.data[wanted]])
    if not len(pair_left):
        return target
    # How alike each pair is by words and subjects (the vectors of their profiles alone).
    # Of the others' pairs, it only orders those that share as many co-authors.
    needed = np.unique(np.concatenate([pair_left, pair_right]))
    position = np.full(groups, -1, dtype=np.int64)
    position[needed] = np.arange(len(needed))
    mine = position[group[entries]] >= 0
    vectors = GroupVectors.of(evidence, entries[mine], position[group[entries][mine]], len(needed))
    sims = vectors.likeness(
        position[pair_left], position[pair_right], settings.words_weight, settings.words_scale
    )
    # A shared co-author counts above any likeness; as many shared: the likelier, then
    # the lower number.
    score = np.where(together > 0, 1 + together, sims).astype(np.float64)
    order = np.lexsort((pair_right, -sims, -score, pair_left))
    pair_left, pair_right, score = pair_left[order], pair_right[order], score[order]
    first = np.flatnonzero(np.r_[True, pair_left[1:] != pair_left[:-1]])
    second = first + 1
    has_second = np.r_[second[:-1] < first[1:], second[-1:] < len(pair_left)]
    runner_up = np.zeros(len(first))
    runner_up[has_second] = score[second[has_second]]
    best = score[first]
    joined = (best > 1) | (
        (best >= settings.join_threshold) & (best - runner_up >= settings.join_margin)
    )
    target[pair_left[first][joined]] = pair_right[first][joined]
    return target


def _shared_within_keys(
    shared: Any, lefts: IntArray, rights: IntArray, left_keys: IntArray, right_keys: IntArray
) -> Any:
    """How many co-authors (columns of ``shared``) each of the profiles ``lefts`` shares
    with each of ``rights`` of the same key (``left_keys``, ``right_keys``): a sparse
    matrix, lefts x rights. Keyed columns (key, co-author), so that a co-author of many
    names makes pairs only within each name's key."""
    from scipy.sparse import csr_matrix

    left_rows, right_rows = shared[lefts].tocoo(), shared[rights].tocoo()
    width = shared.shape[1]
    codes = np.concatenate(
        [
            left_keys[left_rows.row] * width + left_rows.col,
            right_keys[right_rows.row] * width + right_rows.col,
        ]
    )
    _, columns = np.unique(codes, return_inverse=True)
    count = int(columns.max(initial=-1)) + 1
    split = len(left_rows.row)
    ones = np.ones(len(codes), dtype=np.float32)
    left_matrix = csr_matrix(
        (ones[:split], (left_rows.row, columns[:split])), shape=(len(lefts), count)
    )
    right_matrix = csr_matrix(
        (ones[split:], (right_rows.row, columns[split:])), shape=(len(rights), count)
    )
    return (left_matrix @ right_matrix.T).tocsr()


def _profile_pairs(
    profile_name: IntArray, profile: IntArray, pairs: IntArray
) -> tuple[IntArray, IntArray]:
    """Every (profile of ``a``, profile of ``b``) of the name pairs ``pairs`` (rows ``a,
    b``), pair by pair; ``profile_name`` (sorted) and ``profile``: each name's profiles."""
    if not len(pairs):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    starts = np.searchsorted(profile_name, pairs, side="left")
    counts = np.searchsorted(profile_name, pairs, side="right") - starts
    sizes = counts[:, 0] * counts[:, 1]
    which = np.repeat(np.arange(len(pairs)), sizes)
    within = ranges(sizes)
    across = counts[which, 1]
    left = profile[starts[which, 0] + within // across]
    right = profile[starts[which, 1] + within % across]
    return left, right


def _shared_coauthors(
    evidence: Evidence, member: Any, entries: IntArray, group_of: IntArray, settings: Settings
) -> Any:
    """Groups x co-author names (0 or 1), the names on at most ``coauthor_max`` records;
    ``member`` is groups x documents (:attr:`GroupVectors.member`), ``entries`` the groups'
    author entries, in groups ``group_of``."""
    from scipy.sparse import csr_matrix

    authors = evidence.authors
    value = authors.value_ids.astype(np.int64)
    docs = authors.doc_of_entry.astype(np.int64)
    alive = evidence.live[docs]
    per_label = np.bincount(value[alive], minlength=len(authors.labels))
    sizes = np.diff(authors.offsets)
    usable = (
        evidence.rows[docs]
        & (per_label[value] <= settings.coauthor_max)
        & (sizes[docs] <= settings.max_authors)
    )
    incidence = csr_matrix(
        (np.ones(int(usable.sum()), dtype=np.float32), (docs[usable], value[usable])),
        shape=(len(evidence.live), len(authors.labels)),
    )
    coauthors = csr_matrix(member @ incidence)
    # Not the profile's own names.
    own_names = csr_matrix(
        (np.ones(len(entries), dtype=np.float32), (group_of, value[entries])),
        shape=coauthors.shape,
    )
    coauthors = coauthors - coauthors.multiply(own_names > 0)
    coauthors.eliminate_zeros()
    coauthors.data[:] = 1
    return coauthors
