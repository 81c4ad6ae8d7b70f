"""TeX accents to Unicode, and one normal form for author names.

arXiv metadata writes non-ASCII letters as TeX accent commands: ``Bal\\'azs``,
``{\\"o}``, ``\\v{S}r\\'amek``, ``{\\O}bro``. :func:`tex_to_unicode` turns those into the
letters they stand for (an accent becomes a Unicode combining mark, then the text is
composed to NFC) and leaves everything else, math in particular, as it was.

:func:`normalize_author` goes further for names: it also drops stray braces and
backslashes and evens out the spacing of initials, so ``C. Bal\\'azs``, ``C.  Balázs``
and ``{C. Bal\\'{a}zs}`` all become ``C. Balázs``.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Accent commands and the combining mark each puts over (or under) its letter.
_SYMBOL_ACCENTS: dict[str, str] = {
    "'": "\u0301",  # acute
    "`": "\u0300",  # grave
    "^": "\u0302",  # circumflex
    '"': "\u0308",  # diaeresis
    "~": "\u0303",  # tilde
    "=": "\u0304",  # macron
    ".": "\u0307",  # dot above
}
_WORD_ACCENTS: dict[str, str] = {
    "u": "\u0306",  # breve
    "v": "\u030c",  # caron
    "H": "\u030b",  # double acute
    "c": "\u0327",  # cedilla
    "k": "\u0328",  # ogonek
    "d": "\u0323",  # dot below
    "b": "\u0331",  # macron below
    "r": "\u030a",  # ring above
}
# An accent with an empty argument (``\~{}``) stands for the accent character itself.
_SPACING_ACCENTS: dict[str, str] = {
    "'": "\u00b4",
    "`": "`",
    "^": "^",
    '"': "\u00a8",
    "~": "~",
    "=": "\u00af",
    ".": "\u02d9",
}
# Commands that are letters of their own.
_LETTERS: dict[str, str] = {
    "ss": "\u00df",
    "SS": "SS",
    "o": "\u00f8",
    "O": "\u00d8",
    "aa": "\u00e5",
    "AA": "\u00c5",
    "ae": "\u00e6",
    "AE": "\u00c6",
    "oe": "\u0153",
    "OE": "\u0152",
    "l": "\u0142",
    "L": "\u0141",
    "i": "\u0131",
    "j": "\u0237",
    "dh": "\u00f0",
    "DH": "\u00d0",
    "th": "\u00fe",
    "TH": "\u00de",
    "ng": "\u014b",
    "NG": "\u014a",
}
# Escaped characters that are not math: ``\&`` is ``&``.
_ESCAPES = "&%#_"

_LETTER = r"[^\W\d_]"
# What an accent applies to: one letter (or dotless \i, \j), bare or in braces; ``{}`` too.
_ONE = r"(?:\\[ij](?![A-Za-z])|" + _LETTER + r")"
_ARG = r"(?:\{\s*(?P<braced>" + _ONE + r"?)\s*\}|\s*(?P<bare>" + _ONE + r"))"
_SYMBOL_NAMES = "".join(re.escape(c) for c in _SYMBOL_ACCENTS)
_WORD_NAMES = "|".join(_WORD_ACCENTS)
_LETTER_NAMES = "|".join(sorted(_LETTERS, key=len, reverse=True))

# ``(?P<open>\{)`` ... ``(?(open)\})``: braces around a whole accent (``{\"o}``) go too.
# Both ways in start with a character, which lets ``re`` skip to a ``{`` or a backslash
# (``(?P<open>\{)?\\`` was tried at every position: 1.4x as slow on abstracts).
_ACCENT = re.compile(
    r"(?:(?P<open>\{)\\|\\)(?:(?P<symbol>[" + _SYMBOL_NAMES + r"])"
    r"|(?P<word>" + _WORD_NAMES + r")(?![A-Za-z]))" + _ARG + r"(?(open)\})"
)
# The tie joins two letters: ``\t{oo}``.
_TIE = re.compile(r"\\t\{\s*(" + _LETTER + r")(" + _LETTER + r")\s*\}")
# A letter command swallows the spaces or ``{}`` after it, as TeX does: ``\o rsted``.
_LETTER_COMMAND = re.compile(
    r"\{\\(?P<inner>" + _LETTER_NAMES + r")\}"
    r"|\\(?P<name>" + _LETTER_NAMES + r")(?![A-Za-z])(?:\{\}|[ \t]+)?"
)
_ESCAPE = re.compile(r"\\([" + re.escape(_ESCAPES) + r"])")
# A backslash before a letter that is already accented (``M\ériot``) is a typo.
_STRAY_BEFORE_ACCENTED = re.compile(r"\\(?=[^\W\d_A-Za-z])")
# Math is left alone: $...$, $$...$$, \(...\) and \[...\].
# Every alternative starts with ``$`` or a backslash (the test that a ``$`` is not escaped
# looks behind it), which lets ``re`` skip to those characters: 3x as fast on abstracts.
_MATH = re.compile(r"\$\$.*?\$\$|\$(?<!\\\$)(?:[^$\\]|\\.)*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL)


def _base_letter(arg: str) -> str:
    """The letter an accent applies to, with ``\\i``/``\\j`` as plain i/j (they lose
    their dot only to make room for the accent)."""
    return arg.replace("\\i", "i").replace("\\j", "j")


def _accent(match: re.Match[str]) -> str:
    """The letter (with its combining mark) that one :data:`_ACCENT` match stands for."""
    symbol = match.group("symbol")
    mark = _SYMBOL_ACCENTS[symbol] if symbol else _WORD_ACCENTS[match.group("word")]
    arg = match.group("braced")
    if arg is None:
        arg = match.group("bare")
    base = _base_letter(arg)
    if not base:
        return _SPACING_ACCENTS.get(symbol, "") if symbol else ""
    return base + mark


def _letter(match: re.Match[str]) -> str:
    """The letter that one :data:`_LETTER_COMMAND` match stands for."""
    return _LETTERS[match.group("inner") or match.group("name")]


def _decode_text(text: str) -> str:
    """Decode accents in text that holds no math."""
    if "\\" not in text:  # every pattern below starts at a backslash
        return text
    text = _TIE.sub("\\1\u0361\\2", text)
    text = _ACCENT.sub(_accent, text)
    text = _LETTER_COMMAND.sub(_letter, text)
    text = _ESCAPE.sub(r"\1", text)
    return _STRAY_BEFORE_ACCENTED.sub("", text)


def tex_to_unicode(text: str) -> str:
    """``Bal\\'azs`` -> ``Balázs``: TeX accents and letter commands become Unicode.

    Only accents, letter commands (``\\ss``, ``\\o``, ``\\aa``, ``\\l``...) and escaped
    ``& % # _`` are decoded; other commands (``\\emph``, ``\\cite``) and math between
    ``$`` signs or ``\\( \\)`` stay as they were. The result is in NFC.
    """
    if "\\" not in text:
        return unicodedata.normalize("NFC", text)
    pieces: list[str] = []
    last = 0
    for math in _MATH.finditer(text):
        pieces.append(_decode_text(text[last : math.start()]))
        pieces.append(math.group())
        last = math.end()
    pieces.append(_decode_text(text[last:]))
    return unicodedata.normalize("NFC", "".join(pieces))


_SPACES = re.compile(r"\s+")
# ``E.L. Berger`` -> ``E. L. Berger``, ``Yu.N.`` -> ``Yu. N.``: a space after an initial
# (one letter, or a capital and a small one) that a letter follows.
_JOINED_INITIALS = re.compile(r"\b(" + _LETTER + r"|[A-Z][a-z])\.(?=" + _LETTER + r")")
# ``C. -P. Yuan`` (as arXiv's parsed names write it) -> ``C.-P. Yuan``.
_SPACED_HYPHEN = re.compile(r"\.\s+-\s*")
_LEFTOVER_COMMAND = re.compile(r"\\+")
# An ASCII name that normalize_author only collapses the white space of: no TeX (no
# backslash, brace or tie), and every dot at the end or before white space not followed
# by a hyphen (so no initials to space, no spaced hyphen to join).
_PLAIN_NAME = re.compile(r"(?:[^\\{}~.]|\.(?=\s|$)(?!\s+-))*")


# Names recur across papers: the 102,289 arXiv records of the speed benchmark list 642,342
# names, 264,534 distinct, and this cache answers 44% of them.
@functools.lru_cache(maxsize=1 << 16)
def normalize_author(name: str) -> str:
    """One spelling for one author: TeX decoded, braces and backslashes dropped,
    initials spaced the usual way, white space collapsed.

    ``C. Bal\\'azs``, ``C.  Balázs`` and ``{C.~Bal\\'{a}zs}`` all give ``C. Balázs``.
    """
    if name.isascii() and _PLAIN_NAME.fullmatch(name):
        # Nothing to decode, drop or space (most names): only white space to collapse.
        return " ".join(name.split()).strip(" ,;")
    return _normalize_author_fully(name)


def _normalize_author_fully(name: str) -> str:
    """:func:`normalize_author` step by step, for any name."""
    text = tex_to_unicode(name).replace("~", " ")
    text = _LEFTOVER_COMMAND.sub(" ", text.replace("{", "").replace("}", ""))
    text = _SPACES.sub(" ", text)
    text = _SPACED_HYPHEN.sub(".-", text)
    text = _JOINED_INITIALS.sub(r"\1. ", text)
    return unicodedata.normalize("NFC", text.strip(" ,;"))
