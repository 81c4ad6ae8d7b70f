"""TeX accents to Unicode, and author-name normal form."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pubsearch.ingest.readers import tex
from pubsearch.ingest.readers.tex import (
    _PLAIN_NAME,
    _normalize_author_fully,
    normalize_author,
    tex_to_unicode,
)


@pytest.mark.parametrize(
    ("tex", "expected"),
    [
        (r"Bal\'azs", "Balázs"),
        (r"{\"o}", "ö"),
        (r"\"{o}", "ö"),
        (r"\"o", "ö"),
        (r"\c{c}", "ç"),
        (r"Fran\c cois", "François"),
        (r"\v{s}", "š"),
        (r"\v{S}r\'amek", "Šrámek"),
        (r"\ss", "ß"),
        (r"Stra{\ss}e", "Straße"),
        (r"\o", "ø"),
        (r"{\O}bro", "Øbro"),
        (r"Bj\o rn", "Bjørn"),
        (r"\aa", "å"),
        (r"\AA{}ngstr\"om", "Ångström"),
        (r"\l", "ł"),
        (r"\L{}\'od\'z", "Łódź"),
        (r"\~n", "ñ"),
        (r"\^e", "ê"),
        (r"\`e", "è"),
        (r"\=a", "ā"),
        (r"\.z", "ż"),
        (r"\u{a}", "ă"),
        (r"\H{o}", "ő"),
        (r"\k{a}", "ą"),
        (r"\d{o}", "ọ"),
        (r"\r{A}", "Å"),
        (r"\'\i", "í"),
        (r"na\"{\i}ve", "naïve"),
        (r"\t{oo}", "o\u0361o"),
        # Accent on an already accented letter, composed where Unicode has one.
        (r"Nguy\~ên", "Nguyễn"),
        # An accent and its letter written apart: TeX takes the next letter.
        (r"Nik\v{s}i\' c", "Nikšić"),
        # A backslash before a letter that is already accented is dropped.
        (r"M\ériot", "Mériot"),
        (r"Q\&A, 5\%, a\_b, \#1", "Q&A, 5%, a_b, #1"),
        (r"http://x.org/\~{}me", "http://x.org/~me"),
    ],
)
def test_tex_to_unicode(tex: str, expected: str) -> None:
    assert tex_to_unicode(tex) == unicodedata.normalize("NFC", expected)


@pytest.mark.parametrize(
    "text",
    [
        r"the $(k,\ell)$-pebble game",
        r"$\"a + \v{x}$ stays math",
        r"\la r^2\ra^\pi_s = 0.75\pm 0.07 fm^2",  # math without dollars: not accents
        r"\bar\theta and \rho, \chi, \cdot, \delta, \tau, \upsilon, \omega, \left(",
        r"{\em Lorentzian} and \cite{hajac} and \textit{ab initio}",
        r"\c{hi}_3",  # a typo for \chi, not a cedilla over two letters
        "already Unicode: Balázs, Øbro",
    ],
)
def test_tex_to_unicode_leaves_math_and_other_commands(text: str) -> None:
    assert tex_to_unicode(text) == text


def test_tex_to_unicode_decodes_around_math() -> None:
    assert tex_to_unicode(r"Schr\"odinger $\"a$ and K\"ahler") == r"Schrödinger $\"a$ and Kähler"
    assert tex_to_unicode(r"costs \$5 for G\"odel") == r"costs \$5 for Gödel"


def test_tex_to_unicode_composes_to_nfc() -> None:
    decomposed = "Bala\u0301zs"
    assert tex_to_unicode(decomposed) == "Balázs"
    assert unicodedata.is_normalized("NFC", tex_to_unicode(r"Bal\'azs"))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (r"C. Bal\'azs", "C. Balázs"),
        ("C.  Balázs", "C. Balázs"),
        (r"{C.~Bal\'{a}zs}", "C. Balázs"),
        ("  C. Balázs ,", "C. Balázs"),
        ("C. -P. Yuan", "C.-P. Yuan"),
        ("C.-P. Yuan", "C.-P. Yuan"),
        ("E.L. Berger", "E. L. Berger"),
        ("J.P.Hague", "J. P. Hague"),
        ("Yu.N. Kosovtsov", "Yu. N. Kosovtsov"),
        ("N.d'Ambrumenil", "N. d'Ambrumenil"),
        (r"Mikkel {\O}bro", "Mikkel Øbro"),
        ("Eric~Granger", "Eric Granger"),
        (r"\\Ajinkya Umesh Mulik", "Ajinkya Umesh Mulik"),
        ("Chris Gordon\\", "Chris Gordon"),
        ("Peter St\\ütz", "Peter Stütz"),
        ("Neal J. Evans II", "Neal J. Evans II"),
    ],
)
def test_normalize_author(name: str, expected: str) -> None:
    assert normalize_author(name) == expected


def test_tex_and_unicode_spellings_of_a_name_are_equal() -> None:
    spellings = [r"C. Bal\'azs", "C. Balázs", "C.  Balázs", r"C. Bal\'{a}zs", r"C. Bal{\'a}zs"]
    assert {normalize_author(s) for s in spellings} == {"C. Balázs"}


# Name-like text built from the characters TeX names are made of.
_NAME_TEXT = st.text(alphabet=st.sampled_from(list("aAeiOsSlLcvuHkdbrt.{}\\'\"`^~=-, $ñé\u0301ß")))


@settings(max_examples=500, derandomize=True, database=None)
@given(_NAME_TEXT)
def test_normalize_author_is_idempotent_and_nfc(name: str) -> None:
    once = normalize_author(name)
    assert normalize_author(once) == once
    assert unicodedata.is_normalized("NFC", once)


def test_normalize_author_composes_after_dropping_braces() -> None:
    assert normalize_author("A{\u0301}") == "\u00c1"


@settings(max_examples=1000, deadline=None)
@given(
    name=st.lists(
        st.sampled_from(
            ["A", "b", "Yu", ".", " ", "  ", "\t", "\x1f", "-", ",", ";", "'", "~", "{", "\\'"]
        ),
        max_size=14,
    ).map("".join)
)
def test_plain_names_take_a_short_cut_to_the_same_spelling(name: str) -> None:
    """The short cut for names with nothing to decode gives what every step gives."""
    assert normalize_author.__wrapped__(name) == _normalize_author_fully(name)


@pytest.mark.parametrize(
    ("name", "plain"),
    [
        ("John  Smith ,", True),
        ("A. B. Smith", True),
        ("Smith J.", True),
        ("E.L. Berger", False),  # initials to space
        ("C. -P. Yuan", False),  # a spaced hyphen to join
        ("C.~Bal\\'azs", False),  # TeX
        ("José Núñez", False),  # not ASCII: NFC
    ],
)
def test_which_names_take_the_short_cut(name: str, plain: bool) -> None:
    assert (name.isascii() and _PLAIN_NAME.fullmatch(name) is not None) is plain


# The patterns as first written (each tried at every position): the definition the faster
# ones must agree with.
_MATH_AS_WRITTEN = re.compile(
    r"\$\$.*?\$\$|(?<!\\)\$(?:[^$\\]|\\.)*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL
)
_ACCENT_AS_WRITTEN = re.compile(
    tex._ACCENT.pattern.replace(r"(?:(?P<open>\{)\\|\\)", r"(?P<open>\{)?\\", 1)
)

# Characters and pieces the TeX patterns care about.
_TEX_PIECES = [*"$\\{}()[]'\"`^~=.,-_&%# aeioulcvHtdbrkOs\n", "ss", "aa", "\\i", "é", "\u0301"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(_TEX_PIECES), max_size=30).map("".join))
def test_faster_patterns_match_as_first_written(text: str) -> None:
    assert _ACCENT_AS_WRITTEN.pattern != tex._ACCENT.pattern
    assert [m.span() for m in tex._MATH.finditer(text)] == [
        m.span() for m in _MATH_AS_WRITTEN.finditer(text)
    ]
    assert tex._ACCENT.sub(tex._accent, text) == _ACCENT_AS_WRITTEN.sub(tex._accent, text)
    if "\\" not in text:  # the short cut: no pattern of the decoder matches
        for pattern in (tex._TIE, tex._ACCENT, tex._LETTER_COMMAND, tex._ESCAPE):
            assert pattern.search(text) is None
        assert tex._STRAY_BEFORE_ACCENTED.search(text) is None
