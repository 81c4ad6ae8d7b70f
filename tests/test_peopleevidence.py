"""pubsearch.index.peopleevidence: what two groups of a name's records have in common (the
pair model's features) and the probability the model makes of it. Made-up records."""

from __future__ import annotations

import numpy as np
import pytest

from pubsearch.index import people, peopleevidence, peoplewords, rowdots
from pubsearch.index.facets import MultiValued

FEATURES = {name: i for i, name in enumerate(peopleevidence.FEATURES)}
# A record of more words than the floor: 70 made-up ones.
LONG = " ".join(f"zq{a}{b}x" for a in "abcdefghij" for b in "klmnopq")


def evidence(records: list[tuple[list[str], list[str], str]]) -> peopleevidence.Evidence:
    """Evidence of made-up records: (authors, subjects, title) each."""
    return peopleevidence.Evidence(
        authors=MultiValued.from_values([a for a, _, _ in records]),
        subjects=MultiValued.from_values([s for _, s, _ in records]),
        live=np.ones(len(records), dtype=np.bool_),
        words=peoplewords.DocWords.of((f"r{i}", t, "") for i, (_, _, t) in enumerate(records)),
    )


def filler(count: int) -> list[tuple[list[str], list[str], str]]:
    """Records of other people, so that words have document frequencies to weigh by."""
    topics = ["galaxy survey redshift", "protein folding dynamics", "graph coloring bounds"]
    return [
        ([f"Other Person{i}"], ["astro-ph.GA"], f"{topics[i % 3]} study number {i}")
        for i in range(count)
    ]


def one_group_per_record(ev: peopleevidence.Evidence, name: str) -> peopleevidence.GroupVectors:
    """Vectors of ``name``'s records, each a group (numbered in record order)."""
    label = ev.authors.ids_by_key[name.lower()]
    entries = np.flatnonzero(ev.authors.value_ids == label)
    return peopleevidence.GroupVectors.of(
        ev, entries, np.arange(len(entries), dtype=np.int64), len(entries)
    )


def test_a_co_author_written_two_ways_is_one_form_its_weight_shared_once() -> None:
    ev = evidence(
        [
            (["Ana Ruiz", "John Smith"], ["cs.LG"], "sparse attention kernels"),
            (["Ana Ruiz", "J. Smith", "Mei Tanaka"], ["cs.LG"], "sparse attention kernels again"),
            (["Ana Ruiz", "Karl Weber"], ["cs.LG"], "sparse attention kernels once more"),
            # Another A. Ruiz: the name's own form is no co-author of it.
            (["A. Ruiz", "Karl Weber"], ["cs.LG"], "sparse attention kernels at last"),
            *filler(10),
        ]
    )
    vectors = one_group_per_record(ev, "Ana Ruiz")
    features = vectors.features(np.array([0, 0, 1]), np.array([1, 2, 2]))
    shared = features[:, FEATURES["co-author forms"]]
    # J. Smith is one form with John Smith, named on 2 entries: 1 / log(1 + 2).
    assert shared[0] == pytest.approx(1 / np.log(3), rel=1e-5)
    assert shared[1] == shared[2] == 0
    assert features[:, FEATURES["any co-author form"]].tolist() == [1, 0, 0]
    # The own name's form (A. Ruiz on record 3) is not counted as a co-author's.
    coauthors = vectors.coauthor_forms.toarray()
    assert coauthors[:, ev.forms[ev.authors.ids_by_key["a. ruiz"]]].sum() == 0


def test_features_say_how_much_each_group_says() -> None:
    ev = evidence(
        [
            (["Ana Ruiz"], ["cs.LG"], "sparse attention kernels for long sequences"),
            (["Ana Ruiz"], ["cs.LG", "cs.DC"], "sparse attention kernels"),
            (["Ana Ruiz"], ["math.NT"], "elliptic curves"),
            (["Ana Ruiz"], ["math.NT"], LONG),
            *filler(10),
        ]
    )
    vectors = one_group_per_record(ev, "Ana Ruiz")
    features = vectors.features(np.array([0, 0, 0]), np.array([1, 2, 3]))
    assert features[0, FEATURES["words"]] > 0.5
    assert features[1, FEATURES["words"]] == 0
    assert features[0, FEATURES["subjects"]] > 0.5
    assert features[1, FEATURES["subjects"]] == 0
    few, many = FEATURES["log1p fewer words"], FEATURES["log1p more words"]
    # A title alone counts as the floor's words (the model knows records of an abstract).
    floor = np.log1p(peopleevidence.WORDS_FLOOR)
    assert features[0, few] == features[0, many] == pytest.approx(floor)
    assert features[2, few] == pytest.approx(floor)
    assert features[2, many] == pytest.approx(np.log1p(vectors.words_count[3]))
    assert vectors.words_count[3] > peopleevidence.WORDS_FLOOR
    assert features[:, FEATURES["log fewer records"]].tolist() == [0, 0, 0]


def test_the_pair_model_is_a_logistic_regression_of_its_features() -> None:
    model = peopleevidence.fitted([1.0] + [0.0] * (len(FEATURES) - 1), -0.5)
    x = np.zeros((2, len(FEATURES)))
    x[1, 0] = 0.5
    assert model.probability(x).tolist() == pytest.approx([1 / (1 + np.exp(0.5)), 0.5], rel=1e-6)
    with pytest.raises(ValueError, match="needs 12 weights"):
        peopleevidence.fitted([1.0], 0.0)


def test_the_shipped_model_joins_alike_groups_and_not_unlike_ones() -> None:
    model = people.Settings().model
    ev = evidence(
        [
            (["Ana Ruiz", "Bo Li"], ["cs.LG"], "sparse attention kernels for long sequences"),
            (["Ana Ruiz", "Cy Ng"], ["cs.LG"], "sparse attention kernels for long documents"),
            (["Ana Ruiz", "Di Wu"], ["math.NT"], "elliptic curves over function fields"),
            *filler(30),
        ]
    )
    vectors = one_group_per_record(ev, "Ana Ruiz")
    alike, unlike = model.probability(vectors.features(np.array([0, 0]), np.array([1, 2])))
    threshold = people.Settings().threshold
    assert alike > threshold > unlike


def test_words_common_in_scientific_writing_weigh_nothing_even_in_a_small_index() -> None:
    from pubsearch.index.commonwords import WORDS

    assert {"train", "model", "network"} <= set(WORDS)
    ev = evidence(
        [
            (["Ana Ruiz"], ["cs.LG"], "training neural network models"),
            (["Ana Ruiz"], ["cs.LG"], "models trained as networks"),
            (["Ana Ruiz"], ["cs.LG"], "neural models of calorimeters"),
            (["Ana Ruiz"], ["cs.LG"], "calorimeters trained"),
            *filler(10),
        ]
    )
    vectors = one_group_per_record(ev, "Ana Ruiz")
    words = vectors.features(np.array([0, 2]), np.array([1, 3]))[:, FEATURES["words"]]
    # Only common words shared: nothing; a calorimeter shared: something.
    assert words[0] == 0
    assert words[1] > 0.3


@pytest.mark.parametrize(("rows_at_once", "dense"), [(10_000, 1 << 22), (1, 1 << 22), (1, 0)])
def test_features_of_runs_equal_those_of_the_pairs_one_by_one(
    monkeypatch: pytest.MonkeyPatch, rows_at_once: int, dense: int
) -> None:
    # Long runs' rows read together, or one run at a time; multiplied as dense matrices
    # of their columns, or as scipy's sparse ones.
    monkeypatch.setattr(rowdots, "RUN_ROWS", rows_at_once)
    monkeypatch.setattr(rowdots, "DENSE_GRAM", dense)
    # A run long enough to be worked out as one product and short ones beside it.
    long = rowdots.RUN_PRODUCT + 3
    records = filler(40) + [(["Co Author0", "Co Author1"], ["cs.LG"], "elsewhere together")]
    records += [
        (
            [f"Co Author{i % 4}", "Sam Same"],
            ["cs.LG" if i % 2 else "math.PR"],
            f"{LONG} topic{i % 3} w{i}",
        )
        for i in range(long + 5)
    ]
    ev = evidence(records)
    vectors = one_group_per_record(ev, "Sam Same")
    starts = np.array([0, 2, 2 + long])
    sizes = np.array([2, long, 3])
    left, right, by_runs = vectors.run_features(starts, sizes)
    assert len(left) == 1 + long * (long - 1) // 2 + 3
    one_by_one = vectors.features(left, right)
    np.testing.assert_allclose(by_runs, one_by_one, rtol=1e-5, atol=1e-6)
    assert by_runs[:, FEATURES["words"]].max() > 0
    assert by_runs[:, FEATURES["co-author forms"]].max() > 0
    assert by_runs[:, FEATURES["log1p co-authors' co-authors"]].max() > 0


def test_co_authors_who_wrote_together_link_two_circles() -> None:
    ev = evidence(
        [
            (["Ana Ruiz", "Bo Chen"], ["cs.LG"], "sparse attention kernels"),
            (["Ana Ruiz", "Cy Diaz"], ["cs.LG"], "sparse attention kernels again"),
            (["Ana Ruiz", "Di Eng"], ["cs.LG"], "sparse attention kernels once more"),
            (["Ana Ruiz", "Bo Chen"], ["cs.LG"], "sparse attention kernels at last"),
            # Ana Ruiz's co-authors Bo Chen and Cy Diaz wrote together, without her.
            (["Bo Chen", "Cy Diaz"], ["cs.LG"], "a paper of theirs"),
            *filler(10),
        ]
    )
    vectors = one_group_per_record(ev, "Ana Ruiz")
    features = vectors.features(np.array([0, 0, 1, 0]), np.array([1, 2, 2, 3]))
    reach = features[:, FEATURES["log1p co-authors' co-authors"]]
    # Bo Chen (3 entries) and Cy Diaz (2) on one record: the product of their weights.
    expected = (1 / np.log(4)) * (1 / np.log(3))
    assert reach[0] == pytest.approx(np.log1p(expected), rel=1e-5)
    # Di Eng wrote with neither; Bo Chen shared is a co-author form, not a link of two.
    assert reach[1:].tolist() == [0, 0, 0]
    assert features[:, FEATURES["any co-authors' co-author"]].tolist() == [1, 0, 0, 0]
    assert features[3, FEATURES["any co-author form"]] == 1


def test_a_common_co_author_links_no_circles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(peopleevidence, "REACH_MAX", 2)  # Bo Chen has 3 entries
    ev = evidence(
        [
            (["Ana Ruiz", "Bo Chen"], ["cs.LG"], "sparse attention kernels"),
            (["Ana Ruiz", "Cy Diaz"], ["cs.LG"], "sparse attention kernels again"),
            (["Bo Chen", "Cy Diaz"], ["cs.LG"], "a paper of theirs"),
            (["Bo Chen"], ["cs.LG"], "another paper of his"),
            *filler(10),
        ]
    )
    vectors = one_group_per_record(ev, "Ana Ruiz")
    features = vectors.features(np.array([0]), np.array([1]))
    assert features[0, FEATURES["log1p co-authors' co-authors"]] == 0


def test_the_links_of_some_forms_are_how_often_each_two_of_them_wrote_together() -> None:
    ev = evidence(
        [
            (["Ana Ruiz", "Bo Chen", "Cy Diaz"], ["cs.LG"], "one"),
            (["Bo Chen", "Cy Diaz"], ["cs.LG"], "two"),
            (["Bo Chen", "Di Eng", "Ed Fox"], ["cs.LG"], "three"),
            (["Cy Diaz", "Ed Fox"], ["cs.LG"], "four"),
            *filler(6),
        ]
    )
    forms = ev.forms
    ids = ev.authors.ids_by_key
    chosen = np.unique([forms[ids[n]] for n in ("bo chen", "cy diaz", "ed fox")])
    found = ev.links(chosen).toarray()
    # Brute force: each two of the chosen forms, their weights' products summed over the
    # records they are both on; a form with itself 0, the other forms left out.
    by_document = ev.reach_incidence.T.toarray()
    expected = by_document[:, chosen].T @ by_document[:, chosen]
    np.fill_diagonal(expected, 0)
    assert found.shape == (3, 3)
    np.testing.assert_allclose(found, expected, rtol=1e-6)
    bo, cy = (int(np.searchsorted(chosen, forms[ids[n]])) for n in ("bo chen", "cy diaz"))
    # Bo Chen (3 entries) and Cy Diaz (3) wrote two records together.
    assert found[bo, cy] == pytest.approx(2 / np.log(4), rel=1e-5)
    # Only the links of Ed Fox (an update's new group's form): his with each form, the
    # very numbers of the whole, and none between the two others.
    ed = int(np.searchsorted(chosen, forms[ids["ed fox"]]))
    some = ev.links(chosen, np.array([ed])).toarray()
    assert np.array_equal(some[ed], found[ed]) and np.array_equal(some[:, ed], found[:, ed])
    assert some[bo, cy] == some[cy, bo] == 0
    assert np.array_equal(ev.links(chosen, np.arange(3)).toarray(), found)


def test_words_counted_from_an_earlier_count_are_those_counted_again() -> None:
    records = [*filler(30), *[(["Ana Ruiz"], ["cs.LG"], f"{LONG} {i}") for i in range(6)]]
    ev = evidence(records)
    earlier = np.ones(len(records), dtype=np.bool_)
    earlier[[3, 31]] = False  # removed before
    first = evidence(records[:-4])
    before = peopleevidence.Evidence(first.authors, first.subjects, earlier[:-4], first.words)
    # Since: two documents removed, one of them restored, and four new.
    now = np.ones(len(records), dtype=np.bool_)
    now[[5, 12, 31]] = False
    buckets = np.flatnonzero(before.word_counts).astype(np.uint32)
    known = (buckets, before.word_counts[buckets], earlier[:-4])
    counted = peopleevidence.Evidence(ev.authors, ev.subjects, now, ev.words, known_counts=known)
    again = peopleevidence.Evidence(ev.authors, ev.subjects, now, ev.words)
    assert counted.word_counts.tolist() == again.word_counts.tolist()
    assert counted.word_counts.tolist() != before.word_counts.tolist()
    assert int(again.word_counts.max()) == 28  # a word of every filler: 30 less 2 removed
    assert (counted.word_matrix != again.word_matrix).nnz == 0
    # Counts that do not fit the documents (another generation's) are counted again.
    wrong = (buckets, np.zeros(len(buckets), dtype=np.int32), earlier[:-4])
    fresh = peopleevidence.Evidence(ev.authors, ev.subjects, now, ev.words, known_counts=wrong)
    assert fresh.word_counts.tolist() == again.word_counts.tolist()
