"""pubsearch.index.people and pubsearch.index.peopletable: names split into people, initials
joined to full names, the people table saved with a generation and its ids kept across
updates. Made-up records, written here; and the real seeds."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from people_support import saved_tables

from pubsearch.core import forked
from pubsearch.core.errors import IndexCorruptError
from pubsearch.index import build, people, peopleevidence, peoplewords, storage
from pubsearch.index.build import build_index, update_index
from pubsearch.index.facets import FacetTable, MultiValued
from pubsearch.index.peopletable import PeopleTable, person_id
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.ingest.records import Record

DATA = Path(__file__).parent / "data"

BATCH = "large batch training of deep networks with adaptive optimizers on supercomputers"
CALORIMETER = "calorimeter trigger electronics readout for the liquid argon detector upgrade"
FACES = (
    "face recognition and verification of unconstrained images with deep convolutional "
    "features learned from millions of identities across pose illumination and expression"
)
GENOMES = (
    "genome assembly and annotation pipeline for polyploid crop plants with long sequencing reads"
)


def evidence(
    records: list[tuple[list[str], list[str], str]],
) -> people.Evidence:
    """Evidence of made-up records: (authors, subjects, title) each."""
    return people.Evidence(
        authors=MultiValued.from_values([a for a, _, _ in records]),
        subjects=MultiValued.from_values([s for _, s, _ in records]),
        live=np.ones(len(records), dtype=np.bool_),
        words=peoplewords.DocWords.of((f"r{i}", t, "") for i, (_, _, t) in enumerate(records)),
    )


def profiles_of(ev: people.Evidence, split: people.Split, name: str) -> list[int]:
    """Each record's profile of ``name`` (in record order)."""
    label = ev.authors.ids_by_key[name.lower()]
    entries = np.flatnonzero(ev.authors.value_ids == label)
    return split.group[entries].tolist()


def filler(count: int) -> list[tuple[list[str], list[str], str]]:
    """Records of other people, so that words have document frequencies to weigh by."""
    topics = ["galaxy survey redshift", "protein folding dynamics", "graph coloring bounds"]
    return [
        ([f"Other Person{i}"], ["astro-ph.GA"], f"{topics[i % 3]} study number {i}")
        for i in range(count)
    ]


def test_one_name_of_two_people_is_split_by_coauthors_subjects_and_words() -> None:
    records = [
        (["Yang You", "James Demmel"], ["cs.LG"], f"{BATCH} one"),
        (["Yang You", "James Demmel", "Kurt Keutzer"], ["cs.LG"], f"{BATCH} two"),
        (["Yang You", "Kurt Keutzer"], ["cs.LG", "cs.DC"], f"{BATCH} three"),
        (["Yang You", "Nikolaos Dimopoulos"], ["physics.ins-det"], f"{CALORIMETER} one"),
        (["Yang You", "Nikolaos Dimopoulos", "Le Xiao"], ["physics.ins-det"], CALORIMETER),
        *filler(40),
    ]
    ev = evidence(records)
    split = people.split(ev)
    groups = profiles_of(ev, split, "Yang You")
    assert len(set(groups[:3])) == 1 and len(set(groups[3:])) == 1
    assert groups[0] != groups[3]
    label = ev.authors.ids_by_key["yang you"]
    entries = np.flatnonzero(ev.authors.value_ids == label)
    assert {people.HOW[h] for h in split.how[entries]} == {"coauthors"}


def test_a_name_of_one_person_stays_one_profile() -> None:
    records = [
        (["Ana Ruiz", "Bo Li"], ["cs.LG"], f"{BATCH} a"),
        (["Ana Ruiz", "Bo Li"], ["physics.ins-det"], f"{CALORIMETER} b"),
        (["Ana Ruiz"], ["cs.LG"], f"{BATCH} c"),
        *filler(40),
    ]
    ev = evidence(records)
    assert len(set(profiles_of(ev, people.split(ev), "Ana Ruiz"))) == 1


def test_a_record_with_too_little_evidence_goes_to_the_nearest_profile() -> None:
    records = [
        (["Yang You", "James Demmel"], ["cs.LG"], f"{BATCH} one"),
        (["Yang You", "James Demmel"], ["cs.LG"], f"{BATCH} two"),
        (["Yang You", "Le Xiao"], ["physics.ins-det"], f"{CALORIMETER} one"),
        (["Yang You", "Le Xiao"], ["physics.ins-det"], f"{CALORIMETER} two"),
        # Two words, no co-author, a subject of the calorimeter's archive (not its code:
        # that alone would make the two likely one person's).
        (["Yang You"], ["physics.acc-ph"], "A note"),
        *filler(40),
    ]
    ev = evidence(records)
    split = people.split(ev)
    groups = profiles_of(ev, split, "Yang You")
    assert groups[4] == groups[2] != groups[0]
    label = ev.authors.ids_by_key["yang you"]
    entry = np.flatnonzero(ev.authors.value_ids == label)[4]
    assert people.HOW[split.how[entry]] == "nearest"
    assert 0 < split.confidence[entry] <= 1


def test_initials_join_the_full_name_when_they_share_a_coauthor_not_otherwise() -> None:
    records = [
        (["Vishal Patel", "Rama Chellappa"], ["cs.CV"], f"{FACES} under pose"),
        (["V. Patel", "Rama Chellappa"], ["cs.CV"], f"{FACES} with sparse dictionaries"),
        (["V. Patel", "Sun Kim"], ["q-bio.GN"], f"{GENOMES} of wheat"),
        (["V. Patel", "Sun Kim"], ["q-bio.GN"], f"{GENOMES} of barley"),
        *filler(40),
    ]
    ev = evidence(records)
    split = people.split(ev)
    target = people.join(ev, split)
    full = profiles_of(ev, split, "Vishal Patel")
    initials = profiles_of(ev, split, "V. Patel")
    assert target[initials[0]] == target[full[0]]
    assert target[initials[1]] != target[full[0]]
    assert initials[1] == initials[2]
    # An update joins anew only the initials forms of the names it changed (or that stand
    # for one): neither changed, nothing joins here; either, the same join as above.
    nothing = np.zeros(len(ev.authors.labels), dtype=np.bool_)
    kept = people.join(ev, split, labels=nothing)
    assert kept[initials[0]] != kept[full[0]]
    for name in ("V. Patel", "Vishal Patel"):
        changed = nothing.copy()
        changed[ev.authors.ids_by_key[name.lower()]] = True
        assert np.array_equal(people.join(ev, split, labels=changed), target)


def test_an_updates_evidence_reads_only_what_its_names_need_and_finds_the_same() -> None:
    records = [
        (["Yang You", "James Demmel"], ["cs.LG"], f"{BATCH} one"),
        (["Yang You", "James Demmel", "Kurt Keutzer"], ["cs.LG"], f"{BATCH} two"),
        (["Yang You", "Nikolaos Dimopoulos"], ["physics.ins-det"], f"{CALORIMETER} one"),
        (["Yang You", "Le Xiao"], ["physics.ins-det"], f"{CALORIMETER} two"),
        (["Y. You", "Le Xiao"], ["physics.ins-det"], f"{CALORIMETER} three"),
        (["Vishal Patel", "Rama Chellappa"], ["cs.CV"], f"{FACES} one"),
        (["V. Patel", "Rama Chellappa"], ["cs.CV"], f"{FACES} two"),
        (["Vishal Patel", "Ana Ruiz"], ["q-bio.GN"], GENOMES),
        *filler(40),
    ]
    whole = evidence(records)
    changed = np.zeros(len(whole.authors.labels), dtype=np.bool_)
    changed[whole.authors.ids_by_key["yang you"]] = True
    scoped = people.Evidence(
        whole.authors, whole.subjects, whole.live, whole.words, changed=changed
    )
    # The rows made: the records of Yang You and of the names of its form (Y. You).
    assert scoped.rows.tolist() == [True] * 5 + [False] * (len(records) - 5)
    assert scoped.word_matrix[5:].nnz == scoped.subject_matrix[5:].nnz == 0
    assert scoped.word_matrix[:5].nnz == whole.word_matrix[:5].nnz
    # The same groups and joins for the names it splits as from every row.
    split, split_whole = people.split(scoped, labels=changed), people.split(whole, labels=changed)
    entries = np.flatnonzero(changed[whole.authors.value_ids])
    assert np.array_equal(split.group, split_whole.group)
    assert (split.group[entries] >= 0).all()
    assert (np.delete(split.group, entries) == -1).all()  # (an update keeps the others)
    assert np.array_equal(
        people.join(scoped, split, labels=changed), people.join(whole, split, labels=changed)
    )
    # The names' forms an earlier build worked out are not read again, and are the same.
    known = people.Evidence(
        whole.authors,
        whole.subjects,
        whole.live,
        whole.words,
        known_keys=whole.form_keys[:-3],
        known_kinds=whole.name_kinds[:-3],
    )
    assert np.array_equal(known.forms, whole.forms)
    assert np.array_equal(known.name_kinds, whole.name_kinds)
    assert known.names_read == 3 and whole.names_read == len(whole.labels)


def _with_earlier(
    records: list[tuple[list[str], list[str], str]], first: int, name: str
) -> tuple[people.Evidence, people.Split, list[int]]:
    """The split of ``records`` as an update sees it: the people of the ``first`` records'
    entries found by a split of those alone, and ``name`` changed; and ``name``'s earlier
    profiles."""
    before = evidence(records[:first])
    split_before = people.split(before)
    ev = evidence(records)
    earlier = np.full(len(before.authors.value_ids), -1, dtype=np.int64)
    earlier[:] = split_before.group
    changed = np.zeros(len(ev.authors.labels), dtype=np.bool_)
    changed[ev.authors.ids_by_key[name.lower()]] = True
    split = people.split(ev, labels=changed, earlier=earlier)
    return ev, split, profiles_of(before, split_before, name)


def test_an_updates_new_records_join_the_earlier_people_or_make_their_own() -> None:
    batch = [
        (["Yang You", "James Demmel"], ["cs.LG"], f"{BATCH} one"),
        (["Yang You", "James Demmel", "Kurt Keutzer"], ["cs.LG"], f"{BATCH} two"),
        (["Yang You", "Kurt Keutzer"], ["cs.LG", "cs.DC"], f"{BATCH} three"),
    ]
    calorimeter = [
        (["Yang You", "Nikolaos Dimopoulos"], ["physics.ins-det"], f"{CALORIMETER} one"),
        (["Yang You", "Nikolaos Dimopoulos", "Le Xiao"], ["physics.ins-det"], CALORIMETER),
    ]
    records = [*batch, *calorimeter, *filler(40)]
    first = len(records)
    records += [
        # A shared co-author: the first person's.
        (["Yang You", "Kurt Keutzer", "Ana Ruiz"], ["cs.LG"], f"{BATCH} four"),
        # No co-author shared, the words and subject of the second.
        (["Yang You", "Rita Moreno"], ["physics.ins-det"], f"{CALORIMETER} three"),
        # Neither: a person of its own.
        (["Yang You", "Pablo Neruda"], ["q-bio.GN"], f"{GENOMES} one"),
        (["Yang You", "Pablo Neruda"], ["q-bio.GN"], f"{GENOMES} two"),
    ]
    ev, split, earlier = _with_earlier(records, first, "Yang You")
    groups = profiles_of(ev, split, "Yang You")
    assert len(set(earlier[:3])) == len(set(earlier[3:])) == 1 and earlier[0] != earlier[3]
    assert len(set(groups[:3])) == 1 and len(set(groups[3:5])) == 1
    assert groups[0] != groups[3]
    assert groups[5] == groups[0]
    assert groups[6] == groups[3]
    assert groups[7] == groups[8] and groups[7] not in (groups[0], groups[3])


def test_an_update_never_joins_two_earlier_people_by_likeness() -> None:
    alike = [(["Yang You", f"Coauthor Number{i}"], ["cs.LG"], f"{BATCH} {i}") for i in range(4)]
    records = [*alike, *filler(40)]
    whole = evidence(records)
    assert len(set(profiles_of(whole, people.split(whole), "Yang You"))) == 1
    # Earlier split in two (as a build with other evidence might have), and a record added.
    before = people.split(whole)
    records.append((["Yang You", "Coauthor Number9"], ["cs.LG"], f"{BATCH} again"))
    ev = evidence(records)
    earlier = np.asarray(before.group, dtype=np.int64).copy()
    entries = np.flatnonzero(whole.authors.value_ids == whole.authors.ids_by_key["yang you"])
    earlier[entries[2:]] = int(before.group.max()) + 1
    changed = np.zeros(len(ev.authors.labels), dtype=np.bool_)
    changed[ev.authors.ids_by_key["yang you"]] = True
    groups = profiles_of(ev, people.split(ev, labels=changed, earlier=earlier), "Yang You")
    assert groups[0] == groups[1] and groups[2] == groups[3] and groups[0] != groups[2]
    assert groups[4] in (groups[0], groups[2])  # the new record joins one of them


def test_the_initials_and_full_names_that_stand_for_each_other_are_found_at_once() -> None:
    names = [
        "V. Patel", "V. M. Patel", "V. K. Patel", "Patel, V.", "Vishal Patel",
        "Vishal M. Patel", "Vikram Manu Patel", "Vishal K. Patel", "Vera Patel",
        "J.-P. Dupont", "J. Dupont", "Jean-Pierre Dupont", "Jean Paul Dupont", "Jean Dupont",
        "Y. Liu", "Yang Liu", "Yi Liu", "Y. L. Liu", "Ying-Lan Liu", "Plato",
        "W. van der Berg", "Willem van der Berg",
    ]  # fmt: skip
    compatible = peopleevidence.Compatible(names)
    initials: list[tuple[int, tuple[str, str]]] = []
    full_by_key: dict[tuple[str, str], list[int]] = {}
    for label_id, label in enumerate(names):
        forms = people.name_forms(label)
        if forms is None:
            continue
        if forms[2]:
            initials.append((label_id, forms[:2]))
        else:
            full_by_key.setdefault(forms[:2], []).append(label_id)
    one_by_one = {
        (label_id, full)
        for label_id, key in initials
        for full in full_by_key.get(key, ())
        if peopleevidence.Compatible(names)(label_id, full)
    }
    ev = evidence([([name], [], "") for name in names])
    keys, kinds = ev.form_keys, ev.name_kinds
    assert [label for label, kind in zip(names, kinds, strict=True) if kind == 2] == ["Plato"]
    short = np.flatnonzero(kinds == peopleevidence.INITIALS)
    full = np.flatnonzero(kinds == peopleevidence.FULL)
    assert short.tolist() == [label_id for label_id, _ in initials]
    found = compatible.pairs(short, keys[short], full, keys[full])
    assert sorted(map(tuple, found.tolist())) == sorted(one_by_one)
    assert (names.index("V. M. Patel"), names.index("Vikram Manu Patel")) in one_by_one
    assert (names.index("V. K. Patel"), names.index("Vishal M. Patel")) not in one_by_one
    assert len(one_by_one) >= 10


def test_an_updates_name_pairs_from_the_earlier_ones_are_those_worked_out_whole() -> None:
    names = [
        "V. Patel", "V. M. Patel", "Vishal Patel", "Vishal M. Patel", "Vikram Manu Patel",
        "Vishal K. Patel", "Y. Liu", "Yang Liu", "Yi Liu", "Y. L. Liu", "Ying-Lan Liu",
        "J. Dupont", "Jean Dupont", "Plato",
    ]  # fmt: skip
    ev = evidence([([name], [], "") for name in names])
    every = np.ones(len(names), dtype=np.bool_)
    whole = people.name_pairs(ev, every)
    assert len(whole) >= 8
    assert whole.tolist() == sorted(whole.tolist())
    # Earlier, some names were not live (no record yet, or all removed) and so had no
    # pairs; since then they are (changed), and some others lost every record (changed).
    before = every.copy()
    before[[names.index("V. M. Patel"), names.index("Yi Liu"), names.index("Jean Dupont")]] = False
    known = people.name_pairs(ev, before)
    now = every.copy()
    now[[names.index("Vishal Patel"), names.index("Y. L. Liu")]] = False
    changed = before != now
    updated = people.name_pairs(ev, now, changed, known)
    assert updated.tolist() == people.name_pairs(ev, now).tolist()
    assert updated.tolist() != whole.tolist() != known.tolist()
    # Pairs of names not live, or of ids past the names (a stale table), are dropped.
    stale = np.concatenate([known, [[0, len(names) + 3]]])
    assert people.name_pairs(ev, now, changed, stale).tolist() == updated.tolist()


@pytest.mark.parametrize(
    ("label", "forms"),
    [
        ("Vishal M. Patel", ("patel", "v", False)),
        ("V. M. Patel", ("patel", "v", True)),
        ("Patel, V.", ("patel", "v", True)),
        ("J.-P. Dupont", ("dupont", "j", True)),
        ("Plato", None),
    ],
)
def test_name_forms(label: str, forms: tuple[str, str, bool] | None) -> None:
    assert people.name_forms(label) == forms


def _ids_of(table: FacetTable, found: PeopleTable, name: str) -> Counter[str]:
    label = table.authors.ids_by_key[name.lower()]
    entries = np.flatnonzero((table.authors.value_ids == label) & (found.person >= 0))
    return Counter(found.ids[p] for p in found.person[entries].tolist())


def test_a_build_saves_the_people_and_an_update_keeps_their_ids(
    tmp_path: Path, seeds_dir: Path
) -> None:
    index_dir = tmp_path / "ix"
    build_index(index_dir, read_paths([seeds_dir], ReadReport()))
    table, before = saved_tables(index_dir)
    yang_you = _ids_of(table, before, "Yang You")
    wei_lin = _ids_of(table, before, "Wei Lin")
    # The seed page's records are all under its name, and its people split it.
    assert sum(yang_you.values()) == 18 and len(yang_you) >= 2
    other = Record(
        title="Large batch optimization for deep learning at scale",
        abstract=BATCH,
        authors=("Ana Ruiz", "James Demmel"),
        year=2022,
        subjects=("cs.LG",),
        source="test",
    )
    update_index(index_dir, [other])
    table, after = saved_tables(index_dir)
    # Their records did not change: the same people, the same ids.
    assert _ids_of(table, after, "Yang You") == yang_you
    assert _ids_of(table, after, "Wei Lin") == wei_lin
    assert _ids_of(table, after, "Ana Ruiz").total() == 1
    mine = Record(
        title="Radiation tolerance of the calorimeter trigger transmitter",
        abstract=CALORIMETER,
        authors=("Yang You", "Le Xiao", "A. Ruiz"),
        year=2022,
        subjects=("physics.ins-det",),
        source="test",
    )
    update_index(index_dir, [mine])
    table, after = saved_tables(index_dir)
    # Yang You's records changed: split again, every record still under the name.
    assert sum(_ids_of(table, after, "Yang You").values()) == 19
    assert _ids_of(table, after, "Wei Lin") == wei_lin
    # The pairs of initials and full names it kept for the next update are those of
    # every live name worked out whole.
    whole = people.Evidence(table.authors, table.subjects, table.live, _no_words(table.size))
    live_names = np.zeros(len(table.authors.labels), dtype=np.bool_)
    live_names[table.authors.value_ids[after.person >= 0]] = True
    assert after.name_pairs is not None and len(after.name_pairs) > 0
    assert after.name_pairs.tolist() == people.name_pairs(whole, live_names).tolist()
    # Each generation keeps its words, which the next update reads rather than every
    # changed name's records: they are those of its stored texts, document by document.
    generation = storage.current_generation(index_dir)
    assert generation is not None
    ix = storage.open_index(generation)
    with ix.reader() as reader:
        saved = peoplewords.load(generation, ix.latest_generation())
        fresh = peoplewords.DocWords.of_reader(reader)
        deleted = [reader.is_deleted(d) for d in range(reader.doc_count_all())]
    ix.close()
    assert saved is not None and len(saved) == len(fresh) == len(deleted)
    # The words' counts it kept (updated by the records changed) are those counted again.
    assert after.word_buckets is not None and after.bucket_counts is not None
    assert after.counted is not None
    recounted = people.Evidence(table.authors, table.subjects, table.live, saved).word_counts
    assert after.word_buckets.tolist() == np.flatnonzero(recounted).tolist()
    assert after.bucket_counts.tolist() == recounted[recounted > 0].tolist()
    assert after.counted.tolist() == [not gone for gone in deleted]
    for doc, gone in enumerate(deleted):
        if not gone:
            assert saved.ids[doc] == fresh.ids[doc]
            mine_saved = saved.hashes[saved.offsets[doc] : saved.offsets[doc + 1]]
            mine_fresh = fresh.hashes[fresh.offsets[doc] : fresh.offsets[doc + 1]]
            assert set(mine_saved) == set(mine_fresh)
    # An identical rebuild gives identical ids.
    build_index(tmp_path / "again", read_paths([seeds_dir], ReadReport()))
    table, again = saved_tables(tmp_path / "again")
    assert _ids_of(table, again, "Yang You") == yang_you


def test_a_builds_people_made_in_a_fresh_process_are_those_made_in_a_forked_one(
    tmp_path: Path, seeds_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From build.SPAWN_PEOPLE_FROM documents the people table is made by a fresh
    interpreter from the files the build saved (not a forked child holding its tables):
    the same table, array for array."""
    build_index(tmp_path / "forked", read_paths([seeds_dir], ReadReport()))
    monkeypatch.setattr(build, "SPAWN_PEOPLE_FROM", 0)
    spawned: list[tuple[object, ...]] = []
    started = forked.Spawned.__init__

    def noted(self: forked.Spawned, function: Any, args: Any, name: str) -> None:
        spawned.append((function, *args))
        started(self, function, args, name)

    monkeypatch.setattr(forked.Spawned, "__init__", noted)
    build_index(tmp_path / "spawned", read_paths([seeds_dir], ReadReport()))
    assert len(spawned) == 1 and spawned[0][0] is build.people_from_files
    _, one = saved_tables(tmp_path / "forked")
    _, other = saved_tables(tmp_path / "spawned")
    assert list(one.ids) == list(other.ids) and len(one.ids) >= 4
    for field in ("person", "how", "confidence", "by_name", "by_person", "name_keys"):
        assert np.array_equal(getattr(one, field), getattr(other, field)), field


def test_a_fresh_process_refuses_a_build_without_its_saved_words(
    tmp_path: Path, seeds_dir: Path
) -> None:
    build_index(tmp_path / "ix", read_paths([seeds_dir], ReadReport()))
    generation = storage.current_generation(tmp_path / "ix")
    assert generation is not None
    (generation / peoplewords.WORDS_FILE).unlink()
    ix = storage.open_index(generation)
    number = ix.latest_generation()
    ix.close()
    with pytest.raises(IndexCorruptError, match="words of generation"):
        build.people_from_files(str(generation), number)


def _no_words(documents: int) -> peoplewords.DocWords:
    """Words for evidence that reads none (names' forms and pairs alone)."""
    return peoplewords.DocWords.of((f"r{doc}", "", "") for doc in range(documents))


def test_person_ids_are_the_name_and_the_smallest_record_id() -> None:
    assert person_id("Yang You", "2401.00001") == person_id("yang you", "2401.00001")
    assert person_id("Yang You", "2401.00001") != person_id("Yang You", "2401.00002")
    assert person_id("Yang You", "2401.00001").startswith("yang-you-")


def test_records_of_a_name_that_all_say_too_little_stay_together() -> None:
    # Two records of one name, no co-author in common, a few words each: each is a lone
    # record with nothing else of its name to go to, so they are one profile.
    records = [
        (["Kim Sorensen"], ["cs.LG"], "sparse models"),
        (["Kim Sorensen"], ["q-bio.GN"], "crop genomes"),
        *filler(40),
    ]
    ev = evidence(records)
    split = people.split(ev)
    groups = profiles_of(ev, split, "Kim Sorensen")
    assert len(set(groups)) == 1


def _words_both_ways(
    reader: Any, kept: Any
) -> tuple[peoplewords.DocWords, peoplewords.DocWords | None]:
    return peoplewords.DocWords.of_reader(reader), (
        None if kept is None else peoplewords.segment_words(reader, kept)
    )


@pytest.mark.speedups  # the writer derives content (and keeps its terms) on the C path only
def test_a_builds_words_are_those_of_its_stored_titles_and_abstracts(tmp_path: Path) -> None:
    """The words a build's writer kept of each document (its content terms, made once)
    are those read back from its stored title and abstract and analysed again: record by
    record, over segments of 70 (DATA's CC0 arXiv records)."""
    from pubsearch.index.documents import record_fields
    from pubsearch.index.segments.writer import write_segments

    records = list(read_paths([DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))
    ix = storage.create_index(tmp_path)
    summaries: list[tuple[peoplewords.DocWords, peoplewords.DocWords | None]] = []
    segments = write_segments(ix, map(record_fields, records), 70, _words_both_ways, summaries)
    ix.close()
    assert len(segments) == len(summaries) == 5
    for read_back, kept in summaries:
        assert kept is not None
        assert kept.ids == read_back.ids and all(kept.ids)
        assert np.array_equal(kept.offsets, read_back.offsets)
        for doc in range(len(kept)):
            start, stop = kept.offsets[doc], kept.offsets[doc + 1]
            assert set(kept.hashes[start:stop]) == set(read_back.hashes[start:stop])
    assert sum(len(k.hashes) for _, k in summaries if k is not None) > 20 * len(records)
    # Words of a title: stems (as the index has them), not the commonest nor short ones.
    assert peoplewords.text_words("Using Transformers for the Proteins", "") == {
        "transform",
        "protein",
    }


def test_a_name_of_many_groups_asks_more_likeness_to_join_them() -> None:
    """The crowd prior: a common name (many co-author groups, many people) joins groups
    only when they are more alike than a rare name's must be."""
    settings = people.Settings()
    base = settings.threshold
    assert settings.threshold_for(2) == settings.threshold_for(settings.crowd_from) == base
    assert settings.threshold_for(16) == pytest.approx(base + settings.crowd_slope)
    assert settings.threshold_for(64) > settings.threshold_for(16)

    def joined(groups: int, likeness: float, threshold: float) -> int:
        members = np.arange(groups, dtype=np.int64)
        final = members.copy()
        sims = np.full(groups * (groups - 1) // 2, likeness, dtype=np.float32)
        how = np.zeros(groups, dtype=np.uint8)
        conf = np.ones(groups, dtype=np.float32)
        sizes = np.ones(groups, dtype=np.int64)
        i, j = np.triu_indices(groups, k=1)
        people._average_linkage(members, i, j, sims, sizes, final, how, conf, threshold)
        return int((final != members).sum())

    # Twenty groups, each pair a little likelier than the threshold: a rare name's
    # threshold joins them all, a crowded one's none.
    assert settings.threshold_for(20) > base + 0.1
    assert joined(20, base + 0.1, settings.threshold) == 19
    assert joined(20, base + 0.1, settings.threshold_for(20)) == 0


def test_records_without_co_authors_do_not_make_a_name_crowded() -> None:
    """A profile page's records name their author alone: each is a group of its own, which
    says nothing of how many people share the name; the crowd prior leaves them be."""
    import random

    pool = sorted(set(f"{FACES} {GENOMES} {BATCH} {CALORIMETER}".split()))
    rng = random.Random(5)
    records = [(["Solo Author"], ["cs.LG"], " ".join(rng.sample(pool, 16))) for _ in range(20)]
    steep = people.Settings(crowd_slope=2.0)  # a crowd of 20 would join nothing
    ev = evidence([*records, *filler(40)])
    groups = profiles_of(ev, people.split(ev, steep), "Solo Author")
    assert len(set(groups)) == 1
    # The same records, each with a co-author of its own: twenty groups, a crowd.
    crowded = [([a[0], f"Helper Number{i}"], s, t) for i, (a, s, t) in enumerate(records)]
    ev = evidence([*crowded, *filler(40)])
    split = people.split(ev, steep)
    assert len(set(profiles_of(ev, split, "Solo Author"))) > 1


def _solo_records(count: int, subject: str, seed: int) -> list[tuple[list[str], list[str], str]]:
    """``count`` records of "Solo Author" alone on its author list (each a group of its
    own), in ``subject``, their titles alike (words drawn from one pool)."""
    import random

    pool = sorted(set(f"{FACES} {GENOMES} {BATCH} {CALORIMETER}".split()))
    rng = random.Random(seed)
    return [(["Solo Author"], [subject], " ".join(rng.sample(pool, 16))) for _ in range(count)]


def test_pairs_worked_out_a_few_at_a_time_change_nothing() -> None:
    """Pairs of groups are made a batch at a time (names whole), which bounds their
    memory: the smallest batches give the same people, how and confidence."""
    records = [
        (["Yang You", "James Demmel"], ["cs.LG"], f"{BATCH} one"),
        (["Yang You", "James Demmel"], ["cs.LG"], f"{BATCH} two"),
        (["Yang You", "Le Xiao"], ["physics.ins-det"], f"{CALORIMETER} one"),
        (["Yang You", "Le Xiao"], ["physics.ins-det"], f"{CALORIMETER} two"),
        (["Yang You"], ["physics.acc-ph"], "A note"),
        (["Ana Ruiz", "Bo Li"], ["cs.LG"], f"{BATCH} a"),
        (["Ana Ruiz", "Bo Li"], ["physics.ins-det"], f"{CALORIMETER} b"),
        (["Ana Ruiz"], ["cs.LG"], f"{BATCH} c"),
        *_solo_records(12, "cs.LG", 5),
        *filler(40),
    ]
    ev = evidence(records)
    whole = people.split(ev)
    for batch in (1, 2, 7):
        bit = people.split(ev, people.Settings(pair_batch=batch))
        assert bit.group.tolist() == whole.group.tolist()
        assert bit.how.tolist() == whole.how.tolist()
        assert bit.confidence.tolist() == whole.confidence.tolist()
    assert len(set(profiles_of(ev, whole, "Solo Author"))) == 1
    assert len(set(profiles_of(ev, whole, "Yang You"))) == 2


def test_a_name_of_more_groups_than_a_block_is_compared_in_blocks_by_subject() -> None:
    """A common name's groups (thousands at millions of records) are not compared all
    with all: in blocks of at most ``compare_block``, ordered by their commonest subject;
    groups of two blocks are never joined."""
    records = [*_solo_records(10, "physics.ins-det", 6), *_solo_records(10, "cs.LG", 7)]
    ev = evidence([*records, *filler(40)])
    # Alike enough that, compared all with all, the twenty are one profile.
    assert len(set(profiles_of(ev, people.split(ev), "Solo Author"))) == 1
    # Blocks of ten: one of each subject.
    groups = profiles_of(ev, people.split(ev, people.Settings(compare_block=10)), "Solo Author")
    assert len(set(groups[:10])) == 1 and len(set(groups[10:])) == 1
    assert groups[0] != groups[10]
    # Blocks of five (twenty groups: four blocks), each joined whole, none with another.
    groups = profiles_of(ev, people.split(ev, people.Settings(compare_block=5)), "Solo Author")
    assert sorted(Counter(groups).values()) == [5, 5, 5, 5]
    assert len(set(groups[:10]) & set(groups[10:])) == 0


def test_saved_person_ids_read_back_one_at_a_time_and_all_at_once(tmp_path: Path) -> None:
    """A loaded table's ids are decoded as asked (a page shows a few): each by number,
    negative numbers too, all in order, each found by its id, the first of a repeat; a
    file whose ids do not match their count is not read."""
    ids = ("yang-you-1", "wei-lin-2", "", "łukasz-ó-3", "yang-you-1", "x")
    person = np.asarray([0, 1, 1, 3, -1, 5, 4, 2], dtype=np.int32)
    table = PeopleTable(
        person,
        np.zeros(len(person), dtype=np.uint8),
        np.ones(len(person), dtype=np.float32),
        ids,
    )
    table.save(tmp_path, 7)
    assert PeopleTable.load(tmp_path, 8, len(person)) is None  # another generation's
    loaded = PeopleTable.load(tmp_path, 7, len(person))
    assert loaded is not None
    assert len(loaded.ids) == len(ids)
    assert [loaded.ids[n] for n in (3, 0, -1, 2, 5)] == ["łukasz-ó-3", ids[0], "x", "", "x"]
    assert tuple(loaded.ids) == ids and loaded.ids == ids and loaded.ids[1:3] == ids[1:3]
    with pytest.raises(IndexError):
        loaded.ids[len(ids)]
    assert [loaded.number(i) for i in ("wei-lin-2", "yang-you-1", "x", "nobody")] == [
        1,
        0,
        5,
        None,
    ]
    # One id fewer than the table says: not this table.
    short = PeopleTable(table.person, table.how, table.confidence, ids[:-1])
    short.save(tmp_path, 7)
    data = dict(np.load(tmp_path / "people.npz"))
    np.savez(tmp_path / "people.npz", **data)  # written as numpy writes it: still read
    read_short = PeopleTable.load(tmp_path, 7, len(person))
    assert read_short is not None and tuple(read_short.ids) == ids[:-1]
    data["meta"] = np.asarray([data["meta"][0], 7, len(person), len(ids)], dtype=np.int64)
    np.savez(tmp_path / "people.npz", **data)
    assert PeopleTable.load(tmp_path, 7, len(person)) is None


def test_initials_stand_for_the_same_full_names_read_once_or_again() -> None:
    from pubsearch.index.names import matches, recorded_name

    names = [
        "V. Patel",
        "V. M. Patel",
        "V.-M. Patel",
        "Vishal Patel",
        "Vishal M. Patel",
        "Vishal K. Patel",
        "Vikram Manu Patel",
        "Vi-Min Patel",
        "Wei Patel",
        "J.-P. Dupont",
        "Jean-Pierre Dupont",
        "Jean Dupont",
    ]
    compatible = peopleevidence.Compatible(names)
    for _ in range(2):  # the second time from what the first kept
        for i, typed in enumerate(names):
            for j, recorded in enumerate(names):
                expected = matches(recorded_name(typed), recorded_name(recorded))
                assert compatible(i, j) == expected, (typed, recorded)
    assert compatible(1, 4) and not compatible(1, 5) and compatible(1, 6)
    assert compatible(2, 7) and not compatible(2, 6) and compatible(9, 10)


def test_ids_assembled_from_kept_bytes_and_new_ones_are_those_ids() -> None:
    """An update's ids (peopletable._PackedIds.assembled): the kept people's copied as
    bytes from the earlier table's, the new ones written, the table saved as it is."""
    from pubsearch.index import peopletable

    earlier = ["ana-ruiz-1a2b3c4d", "bo-chen-00ff00ff", "łukasz-ø-9", "cy-diaz-0"]
    packed = np.frombuffer(peopletable._SEPARATOR.join(earlier).encode("utf-8"), dtype=np.uint8)
    old = peopletable._PackedIds(packed, len(earlier))
    at, taken = np.array([4, 0, 2]), np.array([2, 3, 0])
    made = {1: "dee-eng-12345678", 3: "person-3", 5: "émile-ł-1"}
    found = peopletable._PackedIds.assembled(6, old, at, taken, made)
    expected = ["cy-diaz-0", "dee-eng-12345678", "ana-ruiz-1a2b3c4d", "person-3"]
    expected += ["łukasz-ø-9", "émile-ł-1"]
    assert list(found) == expected and found.many([5, 0]) == [expected[5], expected[0]]
    assert np.array_equal(found.ends, peopletable.string_ends(found.packed, 6))


def test_a_person_made_again_of_exactly_an_earlier_persons_entries_is_found() -> None:
    """peopletable._unchanged: an update makes the people of a changed name again; one of
    exactly an earlier person's entries keeps that person (and so its id)."""
    from pubsearch.index import peopletable

    # Earlier: entries 0-6 in people 0, 0, 1, 1, 2, -1 (a removed record's), 2.
    before = np.asarray([0, 0, 1, 1, 2, -1, 2], dtype=np.int64)
    # Now (entries 7-8 new): person 5 is earlier person 0 whole; person 6 is earlier
    # person 1 and a new entry; person 7 is part of earlier person 2 (entry 6 removed);
    # person 8 is new entries alone.
    person = np.asarray([5, 5, 6, 6, 7, -1, -1, 6, 8], dtype=np.int64)
    entries = np.flatnonzero(person >= 0)
    at, taken = peopletable._unchanged(person, entries, before, 9)
    assert at.tolist() == [5] and taken.tolist() == [0]
    # Earlier person 2 whole again (its entry 6 still live):
    person[6] = 7
    at, taken = peopletable._unchanged(person, np.flatnonzero(person >= 0), before, 9)
    assert at.tolist() == [5, 7] and taken.tolist() == [0, 2]
