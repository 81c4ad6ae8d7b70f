"""Typed author names against recorded ones, on names from the arXiv sample."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pubsearch.names import (
    Name,
    NameIndex,
    ScannedNames,
    _folded_keys,
    _keys,
    exact_name,
    matches,
    quoted_name,
    recorded_name,
    typed_readings,
)
from pubsearch.records import fold
from pubsearch.schema import VALUE_SEP

DATA = Path(__file__).resolve().parent / "data"


@pytest.mark.parametrize(
    ("recorded", "surname", "given"),
    [
        ("Vishal M. Patel", ("patel",), ("vishal", "m")),
        ("Patel, Vishal M.", ("patel",), ("vishal", "m")),
        ("René van Roij", ("van", "roij"), ("rene",)),
        ("Jan-Willem van de Meent", ("van", "de", "meent"), ("jan-willem",)),
        ("H. J. von Bardeleben", ("von", "bardeleben"), ("h", "j")),
        ("Woong-Seob Jeong", ("jeong",), ("woong-seob",)),
        ("J.-P. Bouchaud", ("bouchaud",), ("j-p",)),
        ("David Carrasco-Busturia", ("carrasco-busturia",), ("david",)),
        ("Martin Luther King Jr.", ("king",), ("martin", "luther")),
        ("Van Nguyen", ("nguyen",), ("van",)),  # a particle as the first word is a name
        ("Zi-Kui Liu", ("liu",), ("zi-kui",)),
    ],
)
def test_recorded_names_come_apart(
    recorded: str, surname: tuple[str, ...], given: tuple[str, ...]
) -> None:
    assert recorded_name(recorded) == Name(surname, given)


PATEL = recorded_name("Vishal M. Patel")


@pytest.mark.parametrize(
    ("typed", "found"),
    [
        ("Patel", True),
        ("patel", True),
        ("Vishal Patel", True),
        ("V. Patel", True),
        ("V Patel", True),
        ("V. M. Patel", True),
        ("Vishal M. Patel", True),
        ("Patel, Vishal", True),
        ("Patel V", True),
        ("PATEL VISHAL", True),
        ("M. Patel", False),  # the first given name must agree
        ("Vishal K. Patel", False),
        ("Vikram Patel", False),
        ("Vishal Shah", False),
    ],
)
def test_typed_names_find_vishal_m_patel(typed: str, found: bool) -> None:
    assert any(matches(reading, PATEL) for reading in typed_readings(typed)) is found


@pytest.mark.parametrize(
    ("typed", "recorded", "found"),
    [
        ("van Roij", "René van Roij", True),
        ("Roij", "René van Roij", True),
        ("Rene van Roij", "René van Roij", True),
        ("RENÉ VAN ROIJ", "René van Roij", True),
        ("J.-W. van de Meent", "Jan-Willem van de Meent", True),
        ("Jan-Willem van de Meent", "Jan-Willem van de Meent", True),
        ("Jan van de Meent", "Jan-Willem van de Meent", False),  # not the same given name
        ("Carrasco", "David Carrasco-Busturia", True),
        ("Busturia", "David Carrasco-Busturia", True),
        ("Zi-Kui Liu", "Zi-Kui Liu", True),
        ("Z.-K. Liu", "Zi-Kui Liu", True),
        ("Zi Liu", "Zi-Kui Liu", False),
        ("Liu Zi-Kui", "Zi-Kui Liu", True),  # surname first
        ("Mark van Schilfgaarde", "M. van Schilfgaarde", True),  # a recorded initial
        ("Bardeleben", "H. J. von Bardeleben", True),
    ],
)
def test_particles_hyphens_and_name_order(typed: str, recorded: str, found: bool) -> None:
    name = recorded_name(recorded)
    assert any(matches(reading, name) for reading in typed_readings(typed)) is found


def test_a_one_letter_word_is_never_a_surname() -> None:
    assert typed_readings("Patel V") == [Name(("patel",), ("v",))]
    assert typed_readings("van Roij") == [
        Name(("roij",), ("van",)),
        Name(("van", "roij"), ()),
        Name(("van",), ("roij",)),
    ]
    assert typed_readings("V") == []
    assert typed_readings("") == []


def sample_names() -> list[str]:
    lines = (DATA / "arxiv-2024-2026.sample.jsonl").read_text(encoding="utf-8").splitlines()
    return list(dict.fromkeys(a for line in lines for a in json.loads(line).get("authors", [])))


def test_the_index_finds_names_by_surname_then_surname_first() -> None:
    labels = sample_names()
    index = NameIndex(labels)

    def found(typed: str) -> set[str]:
        return {labels[i] for i in index.find(typed)}

    assert found("Vishal Patel") == {"Vishal M. Patel"}
    assert found("Patel V") == {"Vishal M. Patel"}
    assert found("schilfgaarde") == {"M. van Schilfgaarde", "Mark van Schilfgaarde"}
    assert found("Mark van Schilfgaarde") == {"M. van Schilfgaarde", "Mark van Schilfgaarde"}
    assert found("Jeong") == {"Woong-Seob Jeong", "Min Yong Jeong"}
    assert found("W.-S. Jeong") == {"Woong-Seob Jeong"}
    assert found("Nobody Atall") == set()
    wangs = found("Wang")
    assert len(wangs) > 20 and all(name.split()[-1].lower() == "wang" for name in wangs)
    # Every recorded name finds itself.
    for number, label in enumerate(labels):
        assert number in index.find(label), label


_NAME_PIECES = st.sampled_from(
    [
        "S.",
        "Chen",
        "jr",
        "Jr",
        "III",
        "van",
        "O'Brien",
        "García",
        "-",
        ".-",
        ",",
        " ",
        "  ",
        "Jean-Pierre",
        "J.-P.",
        "x",
        "Wang2",
        "_",
        "\t",
        "ß",
        "Ünal",
        "de la",
        "A.B.",
    ]
)


@given(st.lists(_NAME_PIECES, max_size=6).map(" ".join) | st.text(max_size=30))
def test_a_names_keys_are_the_same_by_the_short_way(label: str) -> None:
    assert _keys(label) == _folded_keys(label)


def test_the_short_way_takes_most_recorded_names() -> None:
    for label in sample_names():
        assert _keys(label) == _folded_keys(label), label


def _scanned(labels: list[str]) -> ScannedNames:
    """A scanning index over ``labels`` as a saved facet table keeps them: folded, joined."""
    folded = VALUE_SEP.join(fold(label) for label in labels).encode("utf-8")
    return ScannedNames(labels, folded, ord(VALUE_SEP))


_ODD_NAMES = [
    "Ana García-Márquez",
    "García, Ana",
    "Seán O'Brien",
    "Jean–Patel",  # an en dash: two words
    "李Patel",
    "Patel2 X",
    "x_patel",
    "J.-P. Dupont",
    "Dupont, J.-P.",
    "Ludwig van Beethoven",
    "Martin Luther King Jr.",
    "Ünal Öztürk",
    "Иван Петров",
    "A. B. Patel-Shah",
    "",
]


def test_scanning_finds_what_the_table_finds() -> None:
    """Every recorded name, and the ways people type names, found by scanning the folded
    names as by the table of surnames, in the same order."""
    labels = sample_names() + _ODD_NAMES
    table, scanned = NameIndex(labels), _scanned(labels)
    typed = [
        *labels,
        *(label.split()[-1] for label in labels if label.split()),
        *(label.upper() for label in labels[:50]),
        "Patel",
        "V. Patel",
        "Patel V",
        "garcia",
        "Marquez",
        "O'Brien",
        "Obrien",
        "Brien",
        "King",
        "Beethoven",
        "van Beethoven",
        "Ozturk",
        "Петров",
        "Shah",
        "J.-P. Dupont",
        "Dupont",
        "wang",
        "Nobody Atall",
        "x",
        "",
    ]
    compared = 0
    for name in typed:
        assert scanned.find(name) == table.find(name), name
        compared += bool(table.find(name))
    assert compared > len(labels) // 2


@given(st.lists(st.lists(_NAME_PIECES, max_size=5).map(" ".join), min_size=1, max_size=12))
def test_scanning_finds_what_the_table_finds_for_any_names(labels: list[str]) -> None:
    table, scanned = NameIndex(labels), _scanned(labels)
    for name in labels:
        assert scanned.find(name) == table.find(name), name
        for word in name.split():
            assert scanned.find(word) == table.find(word), word


YOUS = ["Y. You", "Yang You", "Y You", "You, Y.", "Yu You", "Y. Yu", "Yuan Y. You"]


@pytest.mark.parametrize("make", [NameIndex, _scanned])
def test_a_name_in_quotes_stands_for_its_own_spellings_only(
    make: Callable[[list[str]], NameIndex],
) -> None:
    index = make(YOUS)
    spelt = [YOUS.index(n) for n in ("Y. You", "Y You", "You, Y.")]
    assert index.find('"Y. You"') == index.find("\u201cY You\u201d") == spelt
    assert index.find(exact_name("You, Y.")) == spelt
    assert index.find('"Yang You"') == [YOUS.index("Yang You")]
    # Without quotes, the name rule: every Y. You.
    assert [YOUS[i] for i in index.find("Y. You")] == [
        "Y. You",
        "Yang You",
        "Y You",
        "You, Y.",
        "Yu You",
        "Yuan Y. You",
    ]
    assert index.find('"Nobody"') == index.find('"Y."') == []


def test_quotes_around_a_name() -> None:
    assert quoted_name('"Y. You"') == quoted_name(" \u201cY. You\u201d ") == "Y. You"
    assert quoted_name("Y. You") is None
    assert quoted_name('"Y. You') is None
    assert quoted_name('""') is quoted_name('"  "') is None
    assert quoted_name(exact_name("O'Neil & Sons")) == "O'Neil & Sons"


def test_every_recorded_name_in_quotes_finds_itself() -> None:
    """What a hit's author link asks for always finds that author, by the table and by
    scanning, whatever the name."""
    labels = [label for label in sample_names() + _ODD_NAMES if fold(label)]
    table, scanned = NameIndex(labels), _scanned(labels)
    for number, label in enumerate(labels):
        found = table.find(exact_name(label))
        assert number in found, label
        assert scanned.find(exact_name(label)) == found, label
