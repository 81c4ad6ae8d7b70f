"""One normalisation for search: TeX as it reads, letters folded (pubsearch.ingest.textforms)."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pubsearch.index.schema import name_analyzer, text_analyzer
from pubsearch.ingest import textforms
from pubsearch.ingest.readable import readable
from pubsearch.ingest.textforms import (
    fold,
    query_text,
    searchable,
    searchable_offsets,
    transliterations,
)


@pytest.mark.parametrize(
    ("tex", "plain"),
    [
        ("La$_3$Ni$_2$O$_7$", "La3Ni2O7"),
        ("La$_{3}$Ni$_{2}$O$_{7-\\delta}$", "La3Ni2O7-δ"),
        ("$\\mathrm{La_3Ni_2O_7}$", "La3Ni2O7"),
        ("${\\rm MoS_2}$ flakes", "MoS2 flakes"),
        ("$\\mathrm{MoS}_2$", "MoS2"),
        ("MoTe$_{2-x}$", "MoTe2-x"),
        ("$\\Lambda$CDM", "ΛCDM"),
        ("$Λ$CDM", "ΛCDM"),
        ("Ly$\\alpha$", "Lyα"),
        ("$\\rm Ly\\alpha$ forest", "Lyα forest"),
        ("$T_{\\rm c}$", "Tc"),
        ("$^{3}$He", "3He"),
        ("$\\alpha$-synuclein", "α-synuclein"),
        ("{B}ayesian {GAN}s", "Bayesian GANs"),
        ("50\\% of \\emph{all}", "50% of all"),
        ("O’Brien", "O'Brien"),
        ("at $0.5\\,\\mu m$", "at 0.5 μm"),  # spaces in math mean nothing
        ("\\LambdaCDM and", "ΛCDM and"),
        ('Schr\\"odinger', "Schrödinger"),
        ("no TeX at all", "no TeX at all"),
    ],
)
def test_searchable_writes_tex_as_it_reads(tex: str, plain: str) -> None:
    assert searchable(tex) == plain


def test_commands_and_operators_part_words() -> None:
    assert searchable("$\\frac{1}{2}$").split() == ["1", "2"]
    assert searchable("$\\sqrt{s}=13$ TeV").split() == ["s=13", "TeV"]
    assert searchable("$\\log n$").split() == ["log", "n"]
    assert searchable("$a\\,b$").split() == ["a", "b"]


def test_a_lone_dollar_is_dropped_and_an_escaped_one_kept() -> None:
    assert searchable("costs $5 a day").split() == ["costs", "$5", "a", "day"]
    assert searchable("\\$5 and \\$6") == "$5 and $6"


@given(st.text(alphabet=st.characters(blacklist_characters="\n")), st.text())
@example("\\", "")  # a backslash ending a line escapes nothing
@example("$a", "b$")
def test_a_line_reads_alone(first: str, rest: str) -> None:
    """The combined field is analysed line by line: nothing joins across a line."""
    assert searchable(first + "\n" + rest) == searchable(first) + "\n" + searchable(rest)


@given(st.text())
def test_offsets_point_into_the_text(text: str) -> None:
    out, starts, ends = searchable_offsets(text)
    assert len(starts) == len(ends) == len(out)
    for i in range(len(out)):
        assert 0 <= starts[i] < ends[i] <= len(text)
    for i in range(1, len(out)):
        assert starts[i] >= starts[i - 1]


@pytest.mark.parametrize(
    ("written", "folded"),
    [
        ("Przemysław", "przemyslaw"),
        ("Łukasz", "lukasz"),
        ("Sørensen", "sorensen"),
        ("Işık", "isik"),
        ("Straße", "strasse"),
        ("Æsir", "aesir"),
        ("Œuvre", "oeuvre"),
        ("Þór", "thor"),
        ("Đorđe", "dorde"),
        ("ħ", "h"),
        ("Schölkopf", "scholkopf"),
        ("O'Brien", "obrien"),
        ("O’Brien", "obrien"),
        ("ΛCDM", "lambdacdm"),
        ("Lyα", "lyalpha"),
        ("La₃Ni₂O₇", "la3ni2o7"),
        ("x²", "x2"),
        ("ﬁnance", "finance"),
        ("Ａｂｃ", "abc"),
        ("μ and µ", "mu and mu"),
        ("ϵ ε ϕ φ ϑ θ ς σ", "epsilon epsilon phi phi theta theta sigma sigma"),
        ("άλφα", "alphalambdaphialpha"),
    ],
)
def test_fold(written: str, folded: str) -> None:
    assert fold(written) == folded


def test_the_shipped_folding_table_is_what_the_libraries_give() -> None:
    """folding.json is build_folding's output (regenerate it with
    ``python -m pubsearch.ingest.textforms`` after upgrading anyascii or pylatexenc)."""
    assert textforms.folding() == textforms.build_folding()


def test_greek_names_are_spelt_as_tex_spells_them() -> None:
    names = textforms.greek_names()
    assert names["λ"] == names["Λ"] == "lambda"  # Unicode's name is LAMDA
    assert names["ϵ"] == names["ε"] == "epsilon"
    assert names["ς"] == "sigma"


@pytest.mark.parametrize(
    ("name", "spelled"),
    [
        ("Schölkopf", "Schoelkopf"),
        ("Sørensen", "Soerensen"),
        ("Übler", "Uebler"),
        ("Ångström", "Aangstroem"),
        ("Strauß", "Strauss"),
        ("García", "García"),  # no German or Scandinavian letter: as it is
        ("Smith", "Smith"),
    ],
)
def test_transliterations(name: str, spelled: str) -> None:
    assert transliterations(name) == spelled


@pytest.mark.parametrize(
    "forms",
    [
        ["La$_3$Ni$_2$O$_7$", "La3Ni2O7", "La₃Ni₂O₇", "$\\mathrm{La_{3}Ni_{2}O_{7}}$"],
        ["$\\Lambda$CDM", "$Λ$CDM", "ΛCDM", "LambdaCDM", "λCDM"],
        ["Ly$\\alpha$", "Lyα", "Lyalpha", "Ly$\\rm \\alpha$"],
        ["MoS$_2$", "MoS2", "MoS₂"],
        ["O'Brien", "O’Brien", "OBrien"],
    ],
)
def test_every_typed_form_is_one_word(forms: list[str]) -> None:
    analyzer = text_analyzer()
    words = {tuple(analyzer.words(form)) for form in forms}
    assert len(words) == 1, words


def test_highlighting_finds_the_word_in_readable_text() -> None:
    """The page shows TeX made readable (La₃Ni₂O₇): its words are the index's, and each
    word's offsets are in the text shown."""
    analyzer = text_analyzer()
    raw = "Superconductivity in La$_3$Ni$_2$O$_7$ under pressure"
    shown = readable(raw)
    texts, starts, ends = analyzer.spans(shown)
    indexed = analyzer.words(raw)
    assert [t for t in texts if t in indexed] == indexed
    at = texts.index(analyzer.words("La3Ni2O7")[0])
    assert shown[starts[at] : ends[at]] == "La₃Ni₂O₇"


def test_offsets_of_tex_cover_its_source() -> None:
    """Marks in text that still has TeX (a query's words in an unconverted stretch)."""
    analyzer = text_analyzer()
    text = "on $\\Lambda$CDM fits"
    texts, starts, ends = analyzer.spans(text)
    at = texts.index("lambdacdm")
    assert text[starts[at] : ends[at]] == "$\\Lambda$CDM"


def test_names_fold_their_letters_and_apostrophes() -> None:
    analyzer = name_analyzer()
    assert analyzer.words("Przemysław Spurek") == ["przemyslaw", "spurek"]
    assert analyzer.words("Conor O’Brien") == ["conor", "obrien"]
    assert analyzer.words("Gülçin Işık") == ["gulcin", "isik"]


def test_a_query_reads_its_math_whole_and_keeps_its_syntax() -> None:
    """Math is one stretch however many spaces it holds (a pasted abstract's
    ``\\(\\sqrt{s_{\\rm NN}}\\)`` is the index's ``sNN``); the query syntax's braces, ties
    and carets outside math are left to the query reader."""
    assert query_text("energies (\\(\\sqrt{s_{\\rm NN}}\\)) of") == "energies ( sNN) of"
    assert query_text("$\\Lambda$CDM fits") == "ΛCDM fits"
    for syntax in ["year:{2019 TO 2021]", '"batch size"~3', "batch^2 size", "no TeX"]:
        assert query_text(syntax) == syntax
    analyzer = text_analyzer()
    assert analyzer.words(query_text("\\(\\sqrt{s_{\\rm NN}}\\)")) == analyzer.words(
        "$\\sqrt{s_{\\rm NN}}$"
    )
