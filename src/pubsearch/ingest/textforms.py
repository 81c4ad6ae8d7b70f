"""One normalisation of text for search: TeX read as it reads, letters folded to their base.

Scientists write the same thing many ways: ``La$_3$Ni$_2$O$_7$``, ``La3Ni2O7`` and
``La₃Ni₂O₇``; ``$\\Lambda$CDM``, ``ΛCDM`` and ``LambdaCDM``; ``Przemysław`` and
``Przemyslaw``; ``O’Brien`` and ``O'Brien``. Two steps make them one word:

* :func:`searchable` rewrites TeX as the text it reads as, before words are cut: math
  loses its dollars, a sub- or superscript joins its base (``La$_3$`` is ``La3``), a
  Greek letter's command is the letter (``\\alpha`` is α), font commands vanish
  (``\\mathrm{MoS}_2`` is ``MoS2``), other commands and operators part words; outside
  math, accents become letters (:func:`pubsearch.ingest.readers.tex.tex_to_unicode`) and
  protective braces go. A typographic apostrophe is an apostrophe.
* :data:`folding` (a ``str.translate`` table, applied to each word after lower-casing)
  folds every letter to its plain form: a Latin letter with a diacritic or a stroke to its
  base (ł, ø, ı, đ, ħ, ß, æ, œ, þ ...: anyascii's tables), a Greek letter to its name as
  TeX spells it (λ is ``lambda``: pylatexenc's table of TeX commands), sub- and
  superscripts, ligatures and other compatibility forms to what Unicode says they stand
  for (NFKC: ₃ is 3); apostrophes and underscores inside a word are dropped (``o'brien``
  is ``obrien``, ``T_c`` is ``tc``) and combining marks with them.

The analyzers of :mod:`pubsearch.index.schema` run both on every text they are given, so that
indexing, queries, highlighting and spelling read words alike; :func:`fold` is the same
folding for whole strings (names, titles, subject labels).

:func:`transliterations` gives the German and Scandinavian spellings of a name's letters
(``Schölkopf`` is also ``Schoelkopf``, ``Sørensen`` ``Soerensen``): the diaeresis written
as an ``e`` after its vowel (the rule of Unicode's decomposition, ö = o + ◌̈), ø as oe, å
as aa.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

# Code points the folding table covers: Latin letters with marks (Latin-1 to Latin
# Extended Additional, IPA, phonetic extensions), Greek and Coptic (with Greek Extended),
# combining marks, sub- and superscripts, letterlike symbols, number forms, mathematical
# alphanumerics, ligatures and full-width forms. Other characters are left as they are.
_FOLDED_BLOCKS = (
    (0x00A0, 0x024F),  # Latin-1 Supplement, Latin Extended-A and -B
    (0x0250, 0x02FF),  # IPA extensions, spacing modifier letters
    (0x0300, 0x036F),  # combining diacritical marks
    (0x0370, 0x03FF),  # Greek and Coptic
    (0x1AB0, 0x1AFF),  # combining diacritical marks extended
    (0x1D00, 0x1DFF),  # phonetic extensions, combining marks supplement
    (0x1E00, 0x1FFF),  # Latin Extended Additional, Greek Extended
    (0x2070, 0x209F),  # superscripts and subscripts
    (0x20D0, 0x20FF),  # combining marks for symbols
    (0x2100, 0x218F),  # letterlike symbols, number forms
    (0x2C60, 0x2C7F),  # Latin Extended-C
    (0xA720, 0xA7FF),  # Latin Extended-D
    (0xAB30, 0xAB6F),  # Latin Extended-E
    (0xFB00, 0xFB06),  # Latin ligatures
    (0xFE20, 0xFE2F),  # combining half marks
    (0xFF01, 0xFF5E),  # full-width ASCII
    (0x1D400, 0x1D7FF),  # mathematical alphanumeric symbols
)

# The folding table, beside this module (see build_folding).
FOLDING_FILE = "folding.json"

# Characters dropped inside a word: the apostrophe (``o'brien``, ``alzheimer's``) and the
# underscore (``T_c``, ``x_max``).
_DROPPED = "'_"

# The diaeresis that German and the Scandinavian languages write as an ``e``, and the
# letters they spell out (ø, å, æ, œ, ß).
_DIAERESIS = "\u0308"
_SPELLED = {"ø": "oe", "Ø": "Oe", "å": "aa", "Å": "Aa", "æ": "ae", "Æ": "Ae", "ß": "ss"}


@functools.cache
def greek_names() -> dict[str, str]:
    """Each Greek letter (both cases, and the variant forms ϵ, ϑ, ϕ, ϖ, ϱ, ς, ϰ) -> its
    name as TeX spells it (``lambda``, not Unicode's ``lamda``), from pylatexenc's table
    of the commands that write them."""
    from pylatexenc.latex2text import get_default_latex_context_db

    names: dict[str, str] = {}
    db = get_default_latex_context_db()
    specs = sorted(
        db.iter_macro_specs(), key=lambda spec: (spec.macroname.startswith(("var", "text")),)
    )
    for spec in specs:
        letter = spec.simplify_repl
        if not isinstance(letter, str) or len(letter) != 1:
            continue
        if not unicodedata.name(letter, "").startswith("GREEK "):
            continue
        name = spec.macroname.lower()
        for prefix in ("var", "text"):
            name = name.removeprefix(prefix)
        if name.isalpha() and name.isascii():
            names.setdefault(letter, name)
            names.setdefault(letter.lower(), name)
    return names


@functools.cache
def folding() -> dict[int, str]:
    """The ``str.translate`` table of the module's doc, as :func:`build_folding` made it
    (read from the package's ``folding.json``: building it imports two libraries, 0.2 s)."""
    raw = Path(__file__).with_name(FOLDING_FILE).read_text(encoding="utf-8")
    return {ord(char): folded for char, folded in json.loads(raw).items()}


def build_folding() -> dict[int, str]:
    """The folding table, from anyascii's and pylatexenc's tables and Unicode's
    decompositions (see the module's doc). ``python -m pubsearch.ingest.textforms`` writes it to
    ``folding.json``; a test checks that the file is what this builds."""
    from anyascii import anyascii

    greek = greek_names()
    table: dict[int, str] = {ord(c): "" for c in _DROPPED}
    for first, last in _FOLDED_BLOCKS:
        for code in range(first, last + 1):
            char = chr(code)
            folded = _fold_char(char, greek, anyascii)
            if folded is not None and folded != char:
                table[code] = folded
    return table


def _fold_char(char: str, greek: dict[str, str], anyascii: Callable[[str], str]) -> str | None:
    """What ``char`` folds to, or None to leave it."""
    if unicodedata.combining(char):
        return ""
    name = greek.get(char)
    if name is not None:
        return name
    compat = unicodedata.normalize("NFKC", char)
    if compat != char:
        # Sub- and superscripts, ligatures, full-width and mathematical letters, µ.
        folded = "".join(_fold_char(c, greek, anyascii) or c for c in compat)
        if _plain(folded):
            return folded.lower()
    decomposed = unicodedata.normalize("NFD", char)
    if len(decomposed) > 1 and decomposed[0] in greek:  # ά, ῷ: the letter's name
        return greek[decomposed[0]]
    if unicodedata.name(char, "").startswith("LATIN "):
        # anyascii's letters ("ŀ" is "l", "ẚ" is "a'"): its punctuation is no letter.
        letters = "".join(c for c in anyascii(char).lower() if c.isalnum())
        if letters.isascii() and letters:
            return letters
    return None


def _plain(text: str) -> bool:
    return bool(text) and text.isascii() and all(c.isalnum() or c in " .-'" for c in text)


@functools.cache
def greek_words() -> frozenset[str]:
    """The names Greek letters fold to (``alpha`` ... ``omega``), from the folding table."""
    greek = range(0x0370, 0x0400)
    return frozenset(
        folded for code, folded in folding().items() if code in greek and folded.isalpha()
    )


def greek_compound(word: str) -> tuple[str, str] | None:
    """A folded word that is a Greek letter's name joined to another word of at least two
    letters or digits (``lambdacdm``: ``lambda`` and ``cdm``; ``lyalpha``: ``ly`` and
    ``alpha``), as its two parts; None for any other word. Names of four letters or more
    only (``pi`` and ``nu`` begin too many words)."""
    for name in sorted(greek_words(), key=len, reverse=True):
        if len(name) < 4:
            break
        if word.startswith(name) and len(word) - len(name) >= 2:
            return name, word[len(name) :]
        if word.endswith(name) and len(word) - len(name) >= 2:
            return word[: -len(name)], name
    return None


def fold_word(word: str) -> str:
    """One word as the analyzers fold it: lower case, then :func:`folding`."""
    return word.lower().translate(folding())


def fold(text: str) -> str:
    """Case- and accent-insensitive form of ``text``, for comparing names, titles and
    labels: lower case (``casefold``), every letter folded as words are, white space
    collapsed."""
    if text.isascii() and "'" not in text and "_" not in text:
        return " ".join(text.lower().split())
    text = unicodedata.normalize("NFC", text.replace("\u2019", "'"))
    return " ".join(text.casefold().translate(folding()).split())


def transliterations(text: str) -> str:
    """``text`` with the German and Scandinavian spellings of its letters (``Schölkopf``
    -> ``Schoelkopf``, ``Sørensen`` -> ``Soerensen``, ``Ångström`` -> ``Aangstroem``);
    ``text`` itself when it has none of them."""
    if text.isascii():
        return text
    out: list[str] = []
    for char in unicodedata.normalize("NFC", text):
        spelled = _SPELLED.get(char)
        if spelled is None:
            decomposed = unicodedata.normalize("NFD", char)
            if len(decomposed) == 2 and decomposed[1] == _DIAERESIS and decomposed[0] in "aouAOU":
                spelled = decomposed[0] + "e"
        out.append(spelled if spelled is not None else char)
    return "".join(out)


# -- TeX --------------------------------------------------------------------------------

# Quick test for text with nothing to rewrite (most titles and abstracts).
# Math: $$...$$, $...$ (not an escaped \$), \(...\), \[...\]; never across a line, so
# that a text's lines read as the text does (the combined field is analysed by lines).
# Every alternative starts with ``$`` or a backslash (the test that a ``$`` is not escaped
# looks behind it), which lets ``re`` skip to those characters.
_MATH = re.compile(
    r"\$\$(?P<display>.+?)\$\$|\$(?<!\\\$)(?P<inline>(?:[^$\\\n]|\\.)+?)\$"
    r"|\\\((?P<paren>.+?)\\\)|\\\[(?P<bracket>.+?)\\\]"
)
# TeX accents and letter commands (pubsearch.ingest.readers.tex decodes them): records come
# decoded from their readers, so this is for queries typed in TeX.
_ACCENT_HINT = re.compile(
    r"\\(?:[\'\"^`~=.]|[uvHckdbrt]\{|(?:ss|aa|AA|ae|AE|oe|OE|dh|DH|th|TH|ng|NG|[oOlLij])"
    r"(?![A-Za-z]))"
)
# A command: a backslash and letters (and the spaces TeX lets it swallow), or a
# backslash and one other character.
_COMMAND = re.compile(r"\\(?:(?P<name>[A-Za-z]+)[ \t]*|(?P<symbol>[^A-Za-z\n]))")
# What prose rewrites: commands, braces, ties, dollars left over, typographic apostrophes.
_PROSE_MARKS = re.compile(r"\\(?:[A-Za-z]+[ \t]*|.)|[{}~\u2019]")
# Two braced arguments side by side (\frac{a}{b}): the words part there.
_ARGUMENTS_MEET = re.compile(r"\}\s*\{")

# Commands that only set the look of their argument: they vanish, the argument stays.
_FONT_COMMANDS = frozenset(
    """mathrm mathbf mathit mathsf mathtt mathcal mathbb mathfrak mathscr mathnormal
    boldsymbol bm pmb rm bf it sf tt cal textrm textbf textit textsf texttt textsc textmd
    textup textsl textnormal emph text mbox hbox operatorname mathop mathord mathrel
    mathbin ensuremath displaystyle textstyle scriptstyle scriptscriptstyle left right big
    Big bigg Bigg bigl bigr Bigl Bigr textsubscript textsuperscript underline overline
    widehat widetilde hat tilde bar vec dot ddot check breve acute grave mathring
    textcolor color""".split()
)
# Spacing and discretionary commands: \, \; \: \! \  and \- .
_SPACING_SYMBOLS = frozenset(",;:! -/")


def searchable(text: str) -> str:
    """``text`` with its TeX written as the text it reads as (see the module's doc): the
    form in which words are cut for the index and for queries. A line's words are its own:
    ``searchable(a + "\\n" + b) == searchable(a) + "\\n" + searchable(b)``."""
    if not _has_tex(text):
        return text
    return _read_tex(text, _prose_text)


def query_text(text: str) -> str:
    """A query's TeX written as :func:`searchable` writes it, before its syntax is read:
    math (``$\\sqrt{s_{\\rm NN}}$`` is one word, ``sNN``, however many spaces it holds)
    and commands. Braces, ties, carets and quotes outside math stay as typed: they are the
    query syntax's (``year:{2019 TO 2021]``, ``"a b"~3``, ``word^2``); the analyzers read
    what is left of TeX in each word."""
    if "$" not in text and "\\" not in text:
        return text
    return _read_tex(text, _query_prose)


def _read_tex(text: str, prose: Callable[[str], str]) -> str:
    """``text`` with its accents decoded, its math read as :func:`_math` reads it and the
    rest as ``prose`` does."""
    if "\\" in text and _ACCENT_HINT.search(text):
        # Accents and letter commands outside math (tex_to_unicode leaves math alone).
        from pubsearch.ingest.readers.tex import tex_to_unicode

        text = "\n".join(map(tex_to_unicode, text.split("\n")))
    out: list[str] = []
    at = 0
    for start, end, inner_start, inner_end in _math_spans(text):
        out.append(prose(text[at:start]))
        out.append(_math(text[inner_start:inner_end]))
        at = end
    out.append(prose(text[at:]))
    return "".join(out)


def _query_prose(text: str) -> str:
    return _COMMAND.sub(_command, text) if "\\" in text else text


def searchable_offsets(text: str) -> tuple[str, list[int], list[int]]:
    """:func:`searchable` with, for each character of the result, where in ``text`` the
    stretch it came from starts and ends (for marking matched words in ``text``). Accent
    commands are not decoded here: this is for text already made readable, which has
    none."""
    if not _has_tex(text):
        return text, list(range(len(text))), list(range(1, len(text) + 1))
    starts: list[int] = []
    ends: list[int] = []
    out: list[str] = []
    for piece, start, end in _pieces(text):
        out.append(piece)
        if end - start == len(piece):  # kept as it was: character by character
            starts.extend(range(start, end))
            ends.extend(range(start + 1, end + 1))
        else:
            starts.extend([start] * len(piece))
            ends.extend([end] * len(piece))
    return "".join(out), starts, ends


def _has_tex(text: str) -> bool:
    # (``in`` tests: a regular expression's scan of an abstract took 26 us, these 2.)
    return (
        "$" in text or "\\" in text or "{" in text or "}" in text or "~" in text or "\u2019" in text
    )


def _math_spans(text: str) -> list[tuple[int, int, int, int]]:
    """Where the math is: (start, end) of each stretch with its delimiters, and of what is
    inside them. ``$...$`` and ``$$...$$`` are found with ``str.find`` (a regular
    expression took ten times as long on abstracts); ``\\( \\)`` and ``\\[ \\]`` by
    :data:`_MATH`. None spans a line."""
    spans: list[tuple[int, int, int, int]] = []
    at = 0
    while (dollar := text.find("$", at)) >= 0:
        at = dollar + 1
        if dollar and text[dollar - 1] == "\\":
            continue  # \$: a dollar sign
        mark = "$$" if text.startswith("$$", dollar) else "$"
        inner = dollar + len(mark)
        close = inner
        while (close := text.find(mark, close)) >= 0 and text[close - 1] == "\\":
            close += 1
        if close < 0 or close == inner or text.find("\n", inner, close) >= 0:
            at = inner
            continue
        spans.append((dollar, close + len(mark), inner, close))
        at = close + len(mark)
    if "\\(" in text or "\\[" in text:
        taken = [(start, end) for start, end, _, _ in spans]
        for match in _MATH.finditer(text):
            if match.group("paren") is None and match.group("bracket") is None:
                continue
            if any(start < match.end() and match.start() < end for start, end in taken):
                continue
            inner_start = match.start() + 2
            spans.append((match.start(), match.end(), inner_start, match.end() - 2))
        spans.sort()
    return spans


def _pieces(text: str) -> Iterator[tuple[str, int, int]]:
    """:func:`searchable`'s text in pieces, each with the stretch of ``text`` it stands
    for (accent commands left as they are)."""
    at = 0
    for start, end, inner_start, inner_end in _math_spans(text):
        yield from _prose(text, at, start)
        yield _math(text[inner_start:inner_end]), start, end
        at = end
    yield from _prose(text, at, len(text))


def _prose_text(text: str) -> str:
    """Text outside math: commands as text, braces dropped, ``~`` a space, ’ an '. (A
    pattern that starts with a backslash, which ``re`` finds as fast as ``str.find``, and
    ``str.replace``: a pattern of any of the marks took 130 us an abstract, and
    ``str.translate`` as long on text with a character beyond ASCII.)"""
    if "\\" in text:
        text = _COMMAND.sub(_command, text)
    for mark, replacement in _PROSE_MARKS_TO:
        if mark in text:
            text = text.replace(mark, replacement)
    return text


# What prose's marks become (a leftover $ is left: it parts words as any sign does).
_PROSE_MARKS_TO = (("{", ""), ("}", ""), ("~", " "), ("\u2019", "'"))


def _prose_mark(match: re.Match[str]) -> str:
    found = match.group()
    if found.startswith("\\"):
        return _command(_COMMAND.fullmatch(found))
    return _prose_text(found)


def _prose(text: str, start: int, end: int) -> Iterator[tuple[str, int, int]]:
    """:func:`_prose_text`, piece by piece with where each came from."""
    at = start
    for match in _PROSE_MARKS.finditer(text, start, end):
        begin, finish = match.start(), match.end()
        if begin > at:
            yield text[at:begin], at, begin
        yield _prose_mark(match), begin, finish
        at = finish
    if at < end:
        yield text[at:end], at, end


# Math bodies recur ($_2$, $\\alpha$, $\\sim$): 1,300 cover most of an arXiv abstract's.
@functools.lru_cache(maxsize=1 << 14)
def _math(body: str) -> str:
    """Math as text: commands as text, scripts joined to their base, braces dropped."""
    if "\\" in body:
        body = _COMMAND.sub(_math_command, body)
    if "}" in body:
        body = _ARGUMENTS_MEET.sub(" ", body)
    for mark, replacement in _MATH_MARKS_TO:
        if mark in body:
            body = body.replace(mark, replacement)
    return body


# What math's marks become: scripts join their base, braces go, a tie is a space.
_MATH_MARKS_TO = (("_", ""), ("^", ""), ("{", ""), ("}", ""), ("$", ""), ("~", " "))


def _math_command(match: re.Match[str]) -> str:
    """A command in math, where spaces mean nothing (``$10\\,\\mu m$`` is 10 μm)."""
    return _command(match, spaced=False)


def _command(match: re.Match[str] | None, spaced: bool = True) -> str:
    """What one command stands for in running text (``spaced``: where a space after it
    parts words, as in prose)."""
    if match is None:
        return " "
    name = match.group("name")
    if name is None:
        symbol = match.group("symbol")
        if symbol in _SPACING_SYMBOLS:
            return " " if symbol != "-" else ""
        return symbol if symbol in "&%#_$'" else " "
    text = _command_text(name)
    # The spaces after a command are its own (``\\rm Ly`` is ``Ly``), but those after a
    # letter it writes part that letter from the next word (``\\alpha decay``).
    if spaced and text and not text.endswith(" ") and match.group().endswith((" ", "\t")):
        return text + " "
    return text


@functools.cache
def _command_text(name: str) -> str:
    if name in _FONT_COMMANDS:
        return ""
    replacement = _command_table().get(name)
    if replacement is None:
        return _glued_command(name)
    if len(replacement) == 1 and not replacement.isascii():
        return replacement  # a letter (α, ø, ħ, ℓ) or a symbol: joins as written
    return f" {replacement} " if replacement.isalpha() else " "


def _glued_command(name: str) -> str:
    """An unknown command that starts with a Greek letter's (``\\LambdaCDM``, written for
    ``\\Lambda CDM``): the letter and the rest; else a space."""
    table = _command_table()
    for end in range(len(name) - 1, 1, -1):
        letter = table.get(name[:end])
        if (
            letter is not None
            and len(letter) == 1
            and unicodedata.name(letter, "").startswith("GREEK ")
        ):
            return letter + name[end:]
    return " "


@functools.cache
def _command_table() -> dict[str, str]:
    """TeX commands -> the text pylatexenc writes for them, where that is a constant."""
    from pylatexenc.latex2text import get_default_latex_context_db

    table: dict[str, str] = {}
    for spec in get_default_latex_context_db().iter_macro_specs():
        replacement = spec.simplify_repl
        if isinstance(replacement, str) and "%" not in replacement:
            table.setdefault(spec.macroname, replacement)
    return table


def _write_folding() -> None:
    """Write :func:`build_folding`'s table to ``folding.json`` beside this module."""
    table = {chr(code): folded for code, folded in sorted(build_folding().items())}
    path = Path(__file__).with_name(FOLDING_FILE)
    path.write_text(json.dumps(table, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {len(table):,} characters to {path}", file=sys.stderr)


if __name__ == "__main__":
    _write_folding()
