"""Spelling corrections: the nearest word of the titles, the most used among the nearest."""

from __future__ import annotations

import pytest

from pubsearch.spelling import MAX_WORDS, RARE, RARITY, Spelling

WORDS = [
    "diffusion",
    "models",
    "segmentation",
    "language",
    "retrieval",
    "augmented",
    "generation",
    "neural",
    "networks",
    "size",
    "wise",
    "batch",
    "sizes",
    "2021",
]
USE = {
    "diffusion": 900,
    "models": 5000,
    "segmentation": 700,
    "language": 3000,
    "retrieval": 400,
    "augmented": 300,
    "generation": 800,
    "neural": 2000,
    "networks": 2500,
    "size": 4000,
    "wise": 300,
    "batch": 200,
    "sizes": 150,
}


def usage(word: str) -> int:
    return USE.get(word, 0)


SPELLING = Spelling(WORDS)


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("difusion", "diffusion"),  # a letter left out
        ("segmantation", "segmentation"),  # one replaced
        ("langauge", "language"),  # two swapped
        ("retreival", "retrieval"),
        ("generaton", "generation"),
        ("neurral", "neural"),  # one added
        ("Difusion", "diffusion"),  # case
        ("sise", "size"),  # "wise" is as near, but less used
    ],
)
def test_a_typo_is_corrected_to_the_most_used_nearest_word(typed: str, meant: str) -> None:
    assert SPELLING.correct(typed, usage) == meant


@pytest.mark.parametrize(
    "typed",
    [
        "diffusion",  # a word records use
        "qwertyuiop",  # nothing near
        "nn",  # too short
        "2022",  # digits
        "sizzzles",  # three edits away
    ],
)
def test_what_is_left_alone(typed: str) -> None:
    assert SPELLING.correct(typed, usage) is None


def test_a_rare_word_is_corrected_only_to_a_much_more_used_one() -> None:
    uses = {**USE, "langauge": 6}
    assert SPELLING.correct("langauge", uses.get) == "language"  # 3,000 against 6
    uses["langauge"] = RARE + 1
    assert SPELLING.correct("langauge", uses.get) is None  # used by too many to be a typo
    uses = {**USE, "batchs": 3}
    assert 3 * RARITY > uses["batch"]  # "batch" is not used RARITY times as much
    assert SPELLING.correct("batchs", uses.get) is None


def test_corrections_say_where_and_skip_pasted_text() -> None:
    words = [(0, 8, "difusion"), (9, 15, "models")]
    fixes = SPELLING.corrections(words, usage)
    assert [(f.start, f.end, f.word) for f in fixes] == [(0, 8, "diffusion")]
    many = [(i, i + 1, "difusion") for i in range(MAX_WORDS + 1)]
    assert SPELLING.corrections(many, usage) == []
