"""TeX in titles and abstracts as readable text, for display (search reads TeX as
:func:`pubsearch.ingest.textforms.searchable` writes it, which cuts the same words from
``La$_3$Ni$_2$O$_7$`` as from the ``La₃Ni₂O₇`` shown here, so matches are marked in it).

``$\\alpha$`` is α, ``\\textbf{x}`` and ``\\emph{x}`` are x, ``Fe$_3$GeTe$_2$`` is Fe₃GeTe₂,
``$O(n^2)$`` is O(n²), ``$^{15}$N`` is ¹⁵N; a sub- or superscript Unicode has no
characters for stays written with ``_`` or ``^`` (``x_max``); TeX's quotation marks
(two backquotes, two apostrophes) are curly quotes. The conversion is
pylatexenc's (``LatexNodes2Text``), run on each stretch of text that has TeX in it (a word
with its dollars and braces) rather than on the whole text: each call costs about half a
millisecond whatever its length. Text it cannot read stays as it is.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

# pylatexenc (and the logging it loads) is imported when the first text with TeX is
# converted: a one-shot query whose hits have none never loads it.
if TYPE_CHECKING:
    from pylatexenc.latex2text import LatexNodes2Text

_SUPERSCRIPT = dict(zip("0123456789+-=()ni", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ", strict=True))
_SUBSCRIPT = dict(
    zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True)
)
_SCRIPT_MACROS = {"\\prime": "′", "\\circ": "°", "\\dagger": "†", "\\ast": "*", "\\star": "*"}
# ^ or _ and what it applies to: a braced group without braces inside, a macro, or one
# character.
_SCRIPT = re.compile(r"([\^_])(?:\{([^{}]*)\}|(\\[A-Za-z]+)|([^\s{}\\]))")
_MATH = re.compile(r"\$\$?(.+?)\$\$?|\\\((.+?)\\\)")
# \href{url}{text}: the text (pylatexenc fails on it).
_HREF = re.compile(r"\\href\{[^{}]*\}\{([^{}]*)\}")


# TeX's double quotation marks, ``a'' (a pair that opens and closes on one line).
_DOUBLE_QUOTES = re.compile(r"``((?:(?!''|``)[^\n]){1,300}?)''")


def readable(text: str) -> str:
    """``text`` with its TeX written as text (see the module's doc)."""
    if "``" in text:
        text = _DOUBLE_QUOTES.sub("\u201c\\1\u201d", text)
    if "$" not in text and "\\" not in text:
        return text
    return _readable(text)


@functools.lru_cache(maxsize=4096)
def _readable(text: str) -> str:
    out: list[str] = []
    at = 0
    for start, end in _tex_stretches(text):
        out.append(text[at:start])
        out.append(_convert(text[start:end]))
        at = end
    out.append(text[at:])
    return "".join(out)


def _tex_stretches(text: str) -> Iterator[tuple[int, int]]:
    """Where the TeX is: each run of text without white space that has a ``$`` or a
    ``\\`` in it, stretched over the white space inside its dollars and braces."""
    at = 0
    size = len(text)
    while True:
        found = min((i for i in (text.find("$", at), text.find("\\", at)) if i >= 0), default=-1)
        if found < 0:
            return
        start = found
        while start > at and not text[start - 1].isspace():
            start -= 1
        end = start
        depth = 0
        math = False
        while end < size:
            char = text[end]
            if char == "\\" and end + 1 < size:
                end += 2
                continue
            if char == "$":
                math = not math
            elif char == "{":
                depth += 1
            elif char == "}":
                depth = max(0, depth - 1)
            elif char.isspace() and not math and depth == 0:
                break
            end += 1
        yield start, end
        at = end


@functools.lru_cache(maxsize=16_384)
def _convert(tex: str) -> str:
    """One stretch of TeX as text; the stretch as it is when pylatexenc cannot read it."""
    scripted = _MATH.sub(_math_scripts, _HREF.sub(r"\1", tex))
    try:
        converted = _converter().latex_to_text(scripted)
    except Exception:  # noqa: BLE001 - pylatexenc raises many kinds on text it cannot read
        return tex
    return " ".join(converted.split()) if converted.strip() else tex


def _math_scripts(match: re.Match[str]) -> str:
    body = match.group(1) or match.group(2)
    return match.group(0).replace(body, _scripts(body))


def _scripts(math: str) -> str:
    """Sub- and superscripts Unicode has characters for, written with them."""

    def script(match: re.Match[str]) -> str:
        kind, group, macro, char = match.groups()
        body = group if group is not None else macro if macro is not None else char
        if body in _SCRIPT_MACROS and kind == "^":
            return _SCRIPT_MACROS[body]
        table = _SUPERSCRIPT if kind == "^" else _SUBSCRIPT
        if body and all(c in table for c in body):
            return "".join(table[c] for c in body)
        return match.group(0)

    return _SCRIPT.sub(script, math)


@functools.cache
def _converter() -> LatexNodes2Text:
    from pylatexenc.latex2text import (
        LatexNodes2Text,
        MacroTextSpec,
        get_default_latex_context_db,
    )

    context = get_default_latex_context_db()
    # \texttt{x} is x (pylatexenc drops it).
    context.add_context_category(
        "pubsearch", prepend=True, macros=[MacroTextSpec("texttt", simplify_repl="%(1)s")]
    )
    return LatexNodes2Text(latex_context=context, math_mode="text")
