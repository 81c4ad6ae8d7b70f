"""Typed author names against recorded ones, on names from the arXiv sample."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pubsearch.index.names import (
    Documents,
    Name,
    NameIndex,
    _folded_keys,
    _keys,
    exact_name,
    matches,
    name_variants,
    quoted_name,
    recorded_name,
    typed_readings,
)
from pubsearch.ingest.records import fold

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
    index = NameIndex.build(labels)

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

# Names written with the letters German and Scandinavian spell out, and as spelled out.
_SPELLED_NAMES = [
    "Bernhard Schölkopf",
    "B. Schoelkopf",
    "Kristine Sørensen",
    "Kristine Soerensen",
    "Jonas Übler",
    "Hannah Uebler",
    "Jörg Müller-Lüdenscheid",
    "Åsa Ångström",
    "Łukasz Borchmann",
    "Przemysław Spurek",
    "Mehmet Işık",
    "Henrik Bærentzen",
]


def test_names_written_two_ways_share_one_form() -> None:
    variants = name_variants(_SPELLED_NAMES)
    assert variants["scholkopf"] == variants["schoelkopf"] == "schoelkopf"
    assert variants["sorensen"] == variants["soerensen"]
    assert variants["luedenscheid"] == variants["ludenscheid"]  # part by part
    assert "borchmann" not in variants and "lukasz" not in variants  # one way only
    assert "baerentzen" not in variants  # æ is ae either way


@pytest.mark.parametrize(
    ("typed", "found"),
    [
        ("Schölkopf", {"Bernhard Schölkopf", "B. Schoelkopf"}),
        ("Schoelkopf", {"Bernhard Schölkopf", "B. Schoelkopf"}),
        ("Scholkopf", {"Bernhard Schölkopf", "B. Schoelkopf"}),
        ("Bernhard Schoelkopf", {"Bernhard Schölkopf", "B. Schoelkopf"}),  # B. is Bernhard
        ("Soerensen", {"Kristine Sørensen", "Kristine Soerensen"}),
        ("K. Sørensen", {"Kristine Sørensen", "Kristine Soerensen"}),
        ("Uebler", {"Jonas Übler", "Hannah Uebler"}),
        ("Jonas Uebler", {"Jonas Übler"}),
        ("Mueller", {"Jörg Müller-Lüdenscheid"}),
        ("Joerg Ludenscheid", {"Jörg Müller-Lüdenscheid"}),
        ("Aangstroem", {"Åsa Ångström"}),
        ("Lukasz Borchmann", {"Łukasz Borchmann"}),
        ("Przemyslaw Spurek", {"Przemysław Spurek"}),
        ("Isik", {"Mehmet Işık"}),
        ("Baerentzen", {"Henrik Bærentzen"}),
    ],
)
def test_names_are_found_however_their_letters_are_written(typed: str, found: set[str]) -> None:
    index = NameIndex.build(_SPELLED_NAMES)
    assert {_SPELLED_NAMES[i] for i in index.find(typed)} == found


# The letters of _SPELLED_NAMES as people type them without their marks.
_PLAIN = str.maketrans(
    {
        "ö": "o",
        "ø": "o",
        "ü": "u",
        "Ü": "U",
        "Å": "A",
        "å": "a",
        "ł": "l",
        "Ł": "L",
        "ı": "i",
        "ş": "s",
        "æ": "ae",
    }
)


def test_a_folded_name_finds_exactly_what_the_name_as_written_finds() -> None:
    index = NameIndex.build(_SPELLED_NAMES + sample_names())
    for written in _SPELLED_NAMES:
        assert index.find(written), written
        folded = written.translate(_PLAIN)
        assert folded.isascii()
        assert index.find(folded) == index.find(written), written


def test_a_surname_counts_the_records_its_people_wrote() -> None:
    labels = ["Vishal M. Patel", "A. Patel", "Bernhard Schölkopf", "B. Schoelkopf"]
    # Documents 0..3: Patel twice on document 0 counts once; document 3 is deleted.
    entries = [(0, 0), (0, 1), (1, 1), (2, 2), (3, 3), (3, 0)]
    documents = Documents(
        value_ids=np.asarray([v for _, v in entries], dtype=np.int32),
        doc_of_entry=np.asarray([d for d, _ in entries], dtype=np.int32),
        live=np.asarray([True, True, True, False]),
    )
    index = NameIndex.build(labels, documents)
    assert index.papers("patel") == 2
    assert index.papers("Schoelkopf") == index.papers("Schölkopf") == 1
    assert index.papers("nobody") == 0
    assert index.papers("Vishal Patel") == 0  # one word only
    assert dict(index.surnames()) == {"patel": 2, "schoelkopf": 1}


def test_a_saved_table_finds_what_the_built_one_finds(tmp_path: Path) -> None:
    labels = sample_names() + _ODD_NAMES + _SPELLED_NAMES
    built = NameIndex.build(labels)
    built.save(tmp_path, 7)
    saved = NameIndex.load(tmp_path, labels, 7)
    assert saved is not None
    assert NameIndex.load(tmp_path, labels, 8) is None  # another generation's
    assert NameIndex.load(tmp_path, labels[:-1], 7) is None  # other names
    assert NameIndex.load(tmp_path / "missing", labels, 7) is None
    broken = tmp_path / "broken"  # (the saved file stays: it is mapped)
    broken.mkdir()
    (broken / "names.npz").write_bytes(b"not a table")
    assert NameIndex.load(broken, labels, 7) is None
    typed = [*labels, *(w for label in labels for w in label.split()), "Soerensen", "x", ""]
    for name in typed:
        assert saved.find(name) == built.find(name), name
    assert saved.surnames() == built.surnames()


YOUS = ["Y. You", "Yang You", "Y You", "You, Y.", "Yu You", "Y. Yu", "Yuan Y. You"]


def test_a_name_in_quotes_stands_for_its_own_spellings_only() -> None:
    index = NameIndex.build(YOUS)
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
    """What a hit's author link asks for always finds that author, whatever the name."""
    labels = [label for label in sample_names() + _ODD_NAMES if fold(label)]
    table = NameIndex.build(labels)
    for number, label in enumerate(labels):
        assert number in table.find(exact_name(label)), label
