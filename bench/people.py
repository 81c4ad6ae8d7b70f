"""People, not name strings: how well pubsearch.index.people splits a name into people and
joins an initial's form to the full name, on the arXiv records (docs/people.md).

A script, not a test. The records are read with pubsearch's own reader. True identities
are unknown, so the splitting is measured the standard way, on artificial homonyms: sets
of two or three distinct authors with different, uncommon names who never wrote together,
whose records are renamed to one name (the first's); the splitter then sees one name and
its profiles are scored against who really wrote each record with B-cubed precision,
recall and F1 (over every record of the sets). Beside it: one name string as one person
(the baseline), and groups by shared co-authors alone.

Uncommon: a name with a full given name, on 3 to 40 records, whose surname no other name
of the records has. The sets are drawn at random (``--seed``), no author in two sets and
no record with two of the sets' authors; half of them (seeded) tune the settings, the other
half report.

Common names are emulated the same way with larger sets (40 names of 10 authors, 20 of 25):
the prior that a name of many co-author groups asks more likeness before joining them
(``Settings.crowd_slope``, ``crowd_from``) is tuned on half of them and reported on the other.

Joining is measured on artificial forms too: for an author with a full given name, some
of their records are rewritten with the initial's form (``Vishal Patel`` -> ``V. Patel``),
which should join them (a positive); for another author, every record is rewritten with
the initial's form of an unrelated author of the same initial whose surname it takes
(``Vikram Rao``'s records as ``V. Patel`` beside ``Vishal Patel``), which should not (a
negative). Then, on the forms as the records write them: among the pairs of an initial's
form and a full form of one surname and initial that share a co-author on different
records (taken as one person), the share joined when that co-author is hidden from the
joiner; and among pairs with no co-author and no arXiv archive in common (taken as two
people), the share joined (wrong).

    .venv/bin/python bench/people.py                    # tune on half, report the other
    .venv/bin/python bench/people.py --sets 400 --seed 7
    .venv/bin/python bench/people.py --fit 1000         # fit the pair model first
    .venv/bin/python bench/people.py --common-words     # write index/commonwords.py
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from pubsearch.index import people, peopleevidence, peoplewords
from pubsearch.index.facets import MultiValued
from pubsearch.index.names import recorded_name
from pubsearch.ingest.readers import ReadReport, read_paths

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"


@dataclass(frozen=True)
class Row:
    id: str
    authors: tuple[str, ...]
    subjects: tuple[str, ...]
    year: int
    title: str
    abstract: str


def load(data: Path, cache: Path | None) -> list[Row]:
    """The records, read with pubsearch's reader (kept in ``cache`` when given)."""
    if cache is not None and cache.exists():
        with cache.open("rb") as fh:
            rows: list[Row] = pickle.load(fh)
            return rows
    rows = [
        Row(r.id, r.authors, r.subjects, r.year or 0, r.title, r.abstract)
        for r in read_paths([data], ReadReport())
    ]
    if cache is not None:
        with cache.open("wb") as fh:
            pickle.dump(rows, fh)
    return rows


def surname(name: str) -> str:
    parsed = recorded_name(name)
    return parsed.surname[-1] if parsed.surname else ""


def given(name: str) -> tuple[str, ...]:
    return recorded_name(name).given


def homonym_sets(
    rows: Sequence[Row],
    count: int,
    seed: int,
    size_of: Callable[[int], int] | None = None,
    used_records: set[int] | None = None,
) -> list[tuple[str, ...]]:
    """Sets of two or three authors (a third triples), as described in the module's doc;
    with ``size_of``, set ``n`` has ``size_of(n)`` authors, none on ``used_records``."""
    records: dict[str, list[int]] = defaultdict(list)
    for number, row in enumerate(rows):
        for author in row.authors:
            records[author].append(number)
    by_surname: Counter[str] = Counter(surname(a) for a in records)
    pool = sorted(
        a
        for a, found in records.items()
        if 3 <= len(found) <= 40
        and by_surname[surname(a)] == 1
        and len(given(a)) >= 1
        and len(given(a)[0]) >= 2
    )
    rng = random.Random(seed)
    rng.shuffle(pool)
    used_records = set() if used_records is None else used_records
    sets: list[tuple[str, ...]] = []
    at = 0
    while len(sets) < count and at < len(pool):
        size = size_of(len(sets)) if size_of else (3 if len(sets) % 3 == 2 else 2)
        members: list[str] = []
        while len(members) < size and at < len(pool):
            author = pool[at]
            at += 1
            mine = set(records[author])
            if mine & used_records:
                continue
            if any(given(author)[0] == given(m)[0] for m in members):
                continue  # different names
            members.append(author)
            used_records |= mine
        if len(members) == size:
            sets.append(tuple(members))
    return sets


def renamed(rows: Sequence[Row], mapping: dict[str, str]) -> list[tuple[str, ...]]:
    """Each record's authors with ``mapping`` applied."""
    return [tuple(mapping.get(a, a) for a in row.authors) for row in rows]


def evidence(
    rows: Sequence[Row], authors: list[tuple[str, ...]], words: peoplewords.DocWords
) -> people.Evidence:
    return people.Evidence(
        authors=MultiValued.from_values([list(a) for a in authors]),
        subjects=MultiValued.from_values([list(r.subjects) for r in rows]),
        live=np.ones(len(rows), dtype=np.bool_),
        words=words,
    )


def bcubed(truth: Sequence[str], predicted: Sequence[int]) -> tuple[float, float]:
    """B-cubed precision and recall summed over the elements (divide by their count)."""
    pairs = Counter(zip(truth, predicted, strict=True))
    by_truth = Counter(truth)
    by_pred = Counter(predicted)
    precision = sum(n * n / by_pred[p] for (_, p), n in pairs.items())
    recall = sum(n * n / by_truth[t] for (t, _), n in pairs.items())
    return precision, recall


@dataclass(frozen=True)
class Score:
    precision: float
    recall: float

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def __str__(self) -> str:
        return f"P {self.precision:.3f}  R {self.recall:.3f}  F1 {self.f1:.3f}"


def score(
    sets: Sequence[tuple[str, ...]],
    ev: people.Evidence,
    groups: np.ndarray,
    truth_of: dict[tuple[int, str], str],
) -> Score:
    """B-cubed over every record of ``sets``, with ``groups`` each author entry's profile."""
    authors = ev.authors
    p_sum = r_sum = 0.0
    n = 0
    for members in sets:
        name = members[0]
        label = authors.ids_by_key[_key(name)]
        entries = np.flatnonzero(authors.value_ids == label)
        docs = authors.doc_of_entry[entries]
        truth = [truth_of[(int(d), name)] for d in docs]
        p, r = bcubed(truth, groups[entries].tolist())
        p_sum, r_sum, n = p_sum + p, r_sum + r, n + len(entries)
    return Score(p_sum / n, r_sum / n)


def _key(name: str) -> str:
    from pubsearch.ingest.records import fold

    return fold(name)


def homonyms(
    rows: Sequence[Row], words: peoplewords.DocWords, sets: list[tuple[str, ...]]
) -> tuple[people.Evidence, dict[tuple[int, str], str]]:
    """The records with each set renamed to its first name, and who wrote each renamed
    (record, name)."""
    mapping = {m: members[0] for members in sets for m in members}
    truth_of: dict[tuple[int, str], str] = {}
    for number, row in enumerate(rows):
        for author in row.authors:
            if author in mapping:
                truth_of[(number, mapping[author])] = author
    return evidence(rows, renamed(rows, mapping), words), truth_of


def pair_data(
    sets: Sequence[tuple[str, ...]], ev: people.Evidence, truth_of: dict[tuple[int, str], str]
) -> tuple[np.ndarray, np.ndarray]:
    """The pair model's features of every two co-author groups of each set's name, and
    whether they are one author's (a group's author: the one of most of its records)."""
    authors = ev.authors
    value = authors.value_ids.astype(np.int64)
    per_label = np.bincount(value, minlength=len(authors.labels))
    alive = np.ones(len(value), dtype=np.bool_)
    component = people._components(ev, alive, per_label >= 2, per_label, people.Settings())
    entries: list[np.ndarray] = []
    group_of: list[np.ndarray] = []
    left: list[int] = []
    right: list[int] = []
    same: list[bool] = []
    groups = 0
    for members in sets:
        name = members[0]
        mine = np.flatnonzero(value == authors.ids_by_key[_key(name)])
        comps, local = np.unique(component[mine], return_inverse=True)
        docs = authors.doc_of_entry[mine].tolist()
        wrote = [Counter() for _ in comps]
        for g, d in zip(local.tolist(), docs, strict=True):
            wrote[g][truth_of[(d, name)]] += 1
        author = [c.most_common(1)[0][0] for c in wrote]
        for i, j in itertools.combinations(range(len(comps)), 2):
            left.append(groups + i)
            right.append(groups + j)
            same.append(author[i] == author[j])
        entries.append(mine)
        group_of.append(groups + local)
        groups += len(comps)
    vectors = peopleevidence.GroupVectors.of(
        ev, np.concatenate(entries), np.concatenate(group_of), groups
    )
    features = vectors.features(np.asarray(left), np.asarray(right))
    return features, np.asarray(same)


def fit(
    rows: Sequence[Row],
    words: peoplewords.DocWords,
    tune: Sequence[tuple[str, ...]],
    test: Sequence[tuple[str, ...]],
    seed: int,
    extra: int,
) -> peopleevidence.PairModel:
    """A pair model fitted (scikit-learn's logistic regression) on the tuning half's sets
    and ``extra`` more drawn with other seeds, none with an author of the reported half."""
    from sklearn.linear_model import LogisticRegression

    held = {a for members in test for a in members}
    ev, truth_of = homonyms(rows, words, list(tune))
    parts = [pair_data(tune, ev, truth_of)]
    drawn = 0
    for offset in itertools.count(100):
        if drawn >= extra:
            break
        more = [m for m in homonym_sets(rows, 300, seed + offset) if not held & set(m)]
        more = more[: extra - drawn]
        drawn += len(more)
        ev, truth_of = homonyms(rows, words, more)
        parts.append(pair_data(more, ev, truth_of))
    features = np.vstack([f for f, _ in parts])
    same = np.concatenate([y for _, y in parts])
    model = LogisticRegression(C=1.0, max_iter=10_000).fit(features, same)
    fitted = peopleevidence.fitted(
        model.coef_[0].round(4).tolist(), round(float(model.intercept_[0]), 4)
    )
    print(
        f"pair model fitted on {len(same):,} pairs ({int(same.sum()):,} one author's) of "
        f"{len(tune) + drawn} sets; PairModel(weights={fitted.weights}, "
        f"intercept={fitted.intercept})"
    )
    return fitted


def bench_splitting(
    rows: Sequence[Row], words: peoplewords.DocWords, sets_wanted: int, seed: int, extra: int
) -> people.Settings:
    sets = homonym_sets(rows, sets_wanted, seed)
    ev, truth_of = homonyms(rows, words, sets)
    order = list(range(len(sets)))
    random.Random(seed + 1).shuffle(order)
    tune = [sets[i] for i in order[: len(sets) // 2]]
    test = [sets[i] for i in order[len(sets) // 2 :]]
    pairs = sum(len(s) == 2 for s in sets)
    records = len(truth_of)
    print(
        f"artificial homonyms: {len(sets)} sets ({pairs} pairs, {len(sets) - pairs} triples), "
        f"{records:,} records; tuning on {len(tune)}, reporting on {len(test)}"
    )
    model = people.Settings().model
    if extra:
        fitted = fit(rows, words, tune, test, seed, extra)
        if fitted != model:
            print("  (not the shipped model: the figures below are the fitted one's)")
        model = fitted
    label_count = len(ev.authors.labels)
    one = np.asarray(ev.authors.value_ids, dtype=np.int64)  # one name, one person
    coauthors_only = replace(people.Settings(), threshold=9.0, few_words=0)
    grid = [
        # The crowd prior is tuned after, on names of many people (bench_crowds).
        replace(people.Settings(), model=model, threshold=t, crowd_slope=0.0)
        for t in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
    ]
    best: tuple[float, people.Settings] | None = None
    for settings in grid:
        groups = people.split(ev, settings).group
        s = score(tune, ev, groups, truth_of)
        print(f"  tune threshold {settings.threshold:.2f}: {s}", file=sys.stderr)
        if best is None or s.f1 > best[0]:
            best = (s.f1, settings)
    assert best is not None
    chosen = best[1]
    print(f"chosen on the tuning half: threshold {chosen.threshold} (F1 {best[0]:.3f})")
    started = time.perf_counter()
    split = people.split(ev, chosen)
    took = time.perf_counter() - started
    results = {
        "one name, one person": score(test, ev, one, truth_of),
        "shared co-authors alone": score(
            test, ev, people.split(ev, coauthors_only).group, truth_of
        ),
        "pubsearch.index.people": score(test, ev, split.group, truth_of),
    }
    for half, chosen_sets in (("pairs", [s for s in test if len(s) == 2]), ("triples", None)):
        subset = chosen_sets or [s for s in test if len(s) == 3]
        results[f"  of which {half}"] = score(subset, ev, split.group, truth_of)
    print(f"reported on the other half ({len(test)} sets), B-cubed:")
    for name, s in results.items():
        print(f"  {name:<28} {s}")
    how = Counter(people.HOW[h] for h in split.how[split.group >= 0].tolist())
    print(f"split of all {label_count:,} names of {len(rows):,} records: {took:.1f} s; {dict(how)}")
    return chosen


def bench_crowds(
    rows: Sequence[Row], words: peoplewords.DocWords, seed: int, chosen: people.Settings
) -> people.Settings:
    """Common names, emulated: 40 sets of 10 uncommon authors and 20 of 25 (the same rules
    as the pairs), each renamed to one name; B-cubed with the crowd prior tuned on a seeded
    half (threshold rising by a slope per doubling of a name's groups past 8) and reported
    on the other, beside the pairs and triples of ``seed`` (names of few groups, which it
    hardly moves)."""
    small = homonym_sets(rows, 300, seed)
    taken = {a for members in small for a in members}
    used = {n for n, row in enumerate(rows) if taken & set(row.authors)}
    crowds = homonym_sets(rows, 40, seed + 64, lambda n: 10, used)
    crowds += homonym_sets(rows, 20, seed + 65, lambda n: 25, used)
    sets = small + crowds
    mapping = {m: members[0] for members in sets for m in members}
    truth_of = {
        (number, mapping[a]): a
        for number, row in enumerate(rows)
        for a in row.authors
        if a in mapping
    }
    ev = evidence(rows, renamed(rows, mapping), words)
    order = list(range(len(crowds)))
    random.Random(seed + 66).shuffle(order)
    tune = [crowds[i] for i in order[: len(order) // 2]]
    test = [crowds[i] for i in order[len(order) // 2 :]]
    print(
        f"crowds: {len(crowds)} names of 10 or 25 authors, {sum(map(len, crowds))} authors; "
        f"tuning on {len(tune)}, reporting on {len(test)}"
    )
    best: tuple[float, people.Settings] | None = None
    splitting = chosen
    for slope, start in itertools.product((0.0, 0.1, 0.2, 0.3), (4, 8, 16)):
        settings = replace(splitting, crowd_slope=slope, crowd_from=start)
        groups = people.split(ev, settings).group
        s = score(tune, ev, groups, truth_of)
        print(f"  tune slope {slope} from {start}: {s}", file=sys.stderr)
        if best is None or s.f1 > best[0]:
            best = (s.f1, settings)
    assert best is not None
    chosen = best[1]
    print(f"chosen: slope {chosen.crowd_slope} from {chosen.crowd_from} (F1 {best[0]:.3f})")
    for name, settings in (
        ("no crowd prior", replace(chosen, crowd_slope=0.0)),
        ("the chosen prior", chosen),
    ):
        groups = people.split(ev, settings).group
        print(
            f"  {name:<18} crowds {score(test, ev, groups, truth_of)}  "
            f"pairs and triples {score(small, ev, groups, truth_of)}"
        )
    return chosen


def bench_one_person(
    rows: Sequence[Row], words: peoplewords.DocWords, settings: people.Settings
) -> None:
    """The names taken as one person each (every uncommon name of the records, as the
    homonym sets choose them): how many the splitter keeps as one profile."""
    ev = evidence(rows, [r.authors for r in rows], words)
    split = people.split(ev, settings)
    records: dict[str, list[int]] = defaultdict(list)
    for number, row in enumerate(rows):
        for author in row.authors:
            records[author].append(number)
    by_surname: Counter[str] = Counter(surname(a) for a in records)
    pool = [
        a
        for a, found in records.items()
        if 3 <= len(found) <= 40
        and by_surname[surname(a)] == 1
        and len(given(a)) >= 1
        and len(given(a)[0]) >= 2
    ]
    whole = 0
    recall = 0.0
    count = 0
    for author in pool:
        label = ev.authors.ids_by_key[_key(author)]
        groups = split.group[np.flatnonzero(ev.authors.value_ids == label)].tolist()
        whole += len(set(groups)) == 1
        recall += bcubed(["one"] * len(groups), groups)[1]
        count += len(groups)
    print(
        f"one person's names (the {len(pool):,} uncommon names, unchanged): {whole:,} kept as "
        f"one profile ({whole / len(pool):.1%}), B-cubed recall {recall / count:.3f} over their "
        f"{count:,} records; {split.groups:,} people of {len(ev.authors.labels):,} names"
    )


def initial_form(name: str) -> str:
    """``Vishal M. Patel`` -> ``V. M. Patel``."""
    words = name.split()
    return " ".join([*(w[0] + "." for w in words[:-1]), words[-1]])


def bench_joining(
    rows: Sequence[Row],
    words: peoplewords.DocWords,
    count: int,
    seed: int,
    settings: people.Settings,
) -> None:
    """Artificial forms (positives and negatives), then the forms as the data writes them."""
    records: dict[str, list[int]] = defaultdict(list)
    for number, row in enumerate(rows):
        for author in row.authors:
            records[author].append(number)
    by_surname: Counter[str] = Counter(surname(a) for a in records)
    by_initial: Counter[tuple[str, str]] = Counter()
    for a in records:
        forms = people.name_forms(a)
        if forms is not None:
            by_initial[forms[:2]] += 1
    pool = sorted(
        a
        for a, found in records.items()
        if 4 <= len(found) <= 40
        and by_surname[surname(a)] == 1
        and (forms := people.name_forms(a)) is not None
        and not forms[2]
        and a.isascii()
        and by_initial[forms[:2]] == 1
    )
    rng = random.Random(seed)
    rng.shuffle(pool)
    positives = pool[:count]
    mapping_by_doc: dict[tuple[int, str], str] = {}
    truth: dict[str, str] = {}  # the initials' form -> the full form it is (or is not)
    for author in positives:
        mine = records[author][:]
        rng.shuffle(mine)
        form = initial_form(author)
        for number in mine[: len(mine) // 2]:
            mapping_by_doc[(number, author)] = form
        truth[form] = author
    negatives: dict[str, str] = {}
    others = pool[count:]
    used: set[int] = {n for a in positives for n in records[a]}
    at = 0
    for target in others[: count * 2 : 2]:
        # Another author's records written as the target's initials' form.
        while at < len(others):
            other = others[1 + at * 2] if 1 + at * 2 < len(others) else None
            at += 1
            if other is None:
                break
            if set(records[other]) & set(records[target]) or set(records[other]) & used:
                continue
            form = initial_form(target)
            for number in records[other]:
                mapping_by_doc[(number, other)] = form
            negatives[form] = target
            used |= set(records[other]) | set(records[target])
            break
    authors = [
        tuple(mapping_by_doc.get((n, a), a) for a in row.authors) for n, row in enumerate(rows)
    ]
    ev = evidence(rows, authors, words)
    split = people.split(ev, settings)
    target = people.join(ev, split, settings)

    def person_of(name: str) -> set[int]:
        label = ev.authors.ids_by_key[_key(name)]
        entries = np.flatnonzero(ev.authors.value_ids == label)
        return set(target[split.group[entries]].tolist())

    joined = sum(bool(person_of(f) & person_of(full)) for f, full in truth.items())
    wrong = sum(bool(person_of(f) & person_of(full)) for f, full in negatives.items())
    print(
        f"joining, artificial forms: {joined}/{len(truth)} authors whose records were half "
        f"rewritten as initials joined ({joined / max(len(truth), 1):.1%}); "
        f"{wrong}/{len(negatives)} another author's records under the initials wrongly joined "
        f"({wrong / max(len(negatives), 1):.1%})"
    )
    natural_joins(rows, words, settings)


def natural_joins(
    rows: Sequence[Row], words: peoplewords.DocWords, settings: people.Settings
) -> None:
    """The initials' and full forms as the records write them (see the module's doc)."""
    ev = evidence(rows, [r.authors for r in rows], words)
    split = people.split(ev, settings)
    labels = ev.authors.labels
    value = ev.authors.value_ids
    docs_of: dict[int, list[int]] = defaultdict(list)
    for entry, label in enumerate(value.tolist()):
        docs_of[label].append(int(ev.authors.doc_of_entry[entry]))
    full_by_key: dict[tuple[str, str], list[int]] = defaultdict(list)
    initials: list[tuple[int, tuple[str, str]]] = []
    for label_id, label in enumerate(labels):
        forms = people.name_forms(label)
        if forms is None:
            continue
        (
            initials.append((label_id, forms[:2]))
            if forms[2]
            else full_by_key[forms[:2]].append(label_id)
        )
    coauthors = {
        label: Counter(a for d in docs for a in rows[d].authors if a != labels[label])
        for label, docs in docs_of.items()
    }
    archives = {
        label: {s.partition(".")[0] for d in docs for s in rows[d].subjects}
        for label, docs in docs_of.items()
    }
    positive: list[tuple[int, int, str]] = []
    negative: list[tuple[int, int]] = []
    compatible = peopleevidence.Compatible(labels)
    for label_id, key in initials:
        fulls = [f for f in full_by_key.get(key, ()) if compatible(label_id, f)]
        if len(fulls) != 1:
            continue  # one full form: the pair is one person or two
        full = fulls[0]
        if set(docs_of[label_id]) & set(docs_of[full]):
            continue  # on one record: two people
        shared = set(coauthors[label_id]) & set(coauthors[full])
        if shared:
            positive.append((label_id, full, sorted(shared)[0]))
        elif not archives[label_id] & archives[full]:
            negative.append((label_id, full))
    # Positives: joined with the shared co-authors hidden (renamed on the full form's records).
    hidden: dict[tuple[int, str], str] = {}
    for label_id, full, _ in positive:
        for d in docs_of[full]:
            for a in rows[d].authors:
                if a in coauthors[label_id] and a != labels[full]:
                    hidden[(d, a)] = f"{a} (hidden {d})"
    authors = [tuple(hidden.get((n, a), a) for a in row.authors) for n, row in enumerate(rows)]
    hid = evidence(rows, authors, words)
    hid_split = people.split(hid, settings)
    hid_target = people.join(hid, hid_split, settings)
    target = people.join(ev, split, settings)

    def together(e: people.Evidence, sp: people.Split, tg: np.ndarray, a: str, b: str) -> bool:
        found = []
        for name in (a, b):
            label = e.authors.ids_by_key.get(_key(name))
            if label is None:
                return False
            entries = np.flatnonzero(e.authors.value_ids == label)
            found.append(set(tg[sp.group[entries]].tolist()))
        return bool(found[0] & found[1])

    pos_joined = sum(
        together(hid, hid_split, hid_target, labels[i], labels[f]) for i, f, _ in positive
    )
    pos_plain = sum(together(ev, split, target, labels[i], labels[f]) for i, f, _ in positive)
    neg_joined = sum(together(ev, split, target, labels[i], labels[f]) for i, f in negative)
    print(
        f"joining, forms in the data (one full form of the initial and surname): "
        f"{len(positive)} pairs sharing a co-author on different records: {pos_plain} joined "
        f"({pos_plain / max(len(positive), 1):.1%}), {pos_joined} with the shared co-authors "
        f"hidden ({pos_joined / max(len(positive), 1):.1%}); {len(negative)} pairs with no "
        f"co-author and no arXiv archive in common: {neg_joined} joined "
        f"({neg_joined / max(len(negative), 1):.1%})"
    )


COMMON_WORDS_MODULE = REPO / "src" / "pubsearch" / "index" / "commonwords.py"
COMMON_WORDS_SHARE = 50  # a word on more than one record in this many is common


def write_common_words(rows: Sequence[Row], path: Path = COMMON_WORDS_MODULE) -> None:
    """Write :mod:`pubsearch.index.commonwords` from the records: the words (as
    :func:`peoplewords.text_words` gives them) on more than one in
    :data:`COMMON_WORDS_SHARE` of them."""
    import textwrap

    df: Counter[str] = Counter()
    for row in rows:
        df.update(peoplewords.text_words(row.title, row.abstract))
    common = sorted(w for w, c in df.items() if c > len(rows) / COMMON_WORDS_SHARE)
    doc, _, _ = path.read_text(encoding="utf-8").partition("WORDS = tuple(")
    doc = re.sub(r"\(CC0 metadata; [\d,]+ words\)", f"(CC0 metadata; {len(common):,} words)", doc)
    lines = "\n".join(textwrap.wrap(" ".join(common), 88))
    path.write_text(f'{doc}WORDS = tuple(\n    """\n{lines}\n""".split()\n)\n', encoding="utf-8")
    print(f"{len(common):,} common words of {len(rows):,} records written to {path}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sets", type=int, default=300)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--cache", type=Path, help="keep the records read in this pickle")
    parser.add_argument(
        "--fit",
        type=int,
        default=0,
        metavar="SETS",
        help="fit the pair model on the tuning half and SETS more (none of the reported "
        "half's authors) and report with it, printing its coefficients",
    )
    parser.add_argument(
        "--common-words",
        action="store_true",
        help="write pubsearch.index.commonwords from the records, and stop",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = load(args.data, args.cache)
    print(f"{len(rows):,} records read in {time.perf_counter() - started:.0f} s")
    if args.common_words:
        write_common_words(rows)
        return 0
    started = time.perf_counter()
    words = peoplewords.DocWords.of((r.id, r.title, r.abstract) for r in rows)
    print(f"their words: {time.perf_counter() - started:.1f} s")
    settings = bench_splitting(rows, words, args.sets, args.seed, args.fit)
    settings = bench_crowds(rows, words, args.seed, settings)
    bench_one_person(rows, words, settings)
    bench_joining(rows, words, args.sets, args.seed, settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
