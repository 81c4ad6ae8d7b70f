"""Query text as people type and paste it, read into a small syntax tree.

Nothing here knows Whoosh: :func:`read_query` turns text into :class:`Sequence` of nodes, and
:mod:`pubsearch.search.compiler` makes Whoosh queries of them. The rule is that plain text never
fails. Syntax is taken as syntax only where it is unmistakably meant, and anything that
only looks like syntax is read as words, with a notice saying so:

* ``"..."`` is a phrase when it is closed; a lone quote is punctuation. A quotation that
  ends with punctuation inside its quotes, as pasted prose does (``using "artificial
  spermatids."``), is a phrase that relaxes with the bare words around it.
* ``( ... )`` groups when balanced; a stray bracket is punctuation.
* ``name:value`` restricts to a field when ``name`` is one (``title``, ``ti``, ...) and a
  value follows at once; ``Note: this`` and ``permutation:x`` are words.
* ``AND``, ``OR``, ``NOT`` (capitals) are operators where they have something to join, and
  not at all in text written entirely in capitals of more than
  :data:`CAPITALS_MAX_OPERATOR_WORDS` words (a pasted title such as ``ANALYSIS AND DESIGN OF
  ...``).
* ``-word`` excludes and ``+word`` requires at the start of a word, before a letter, a
  quote, a bracket or ``*`` (``2D-3D`` and ``-2`` are text).
* ``*`` and ``?`` are wildcards inside or at the end of a word with at least
  :data:`MIN_WILDCARD_PREFIX` letters before them (``optim*``, ``ba?ch``); ``*`` alone
  matches every record; a ``?`` ending a word is punctuation (``Alzheimer's?``); one
  leading a word, or a pattern with too short a start (``*ing``, ``b*``), is read as the
  word without it.
* Text of more than :data:`PROSE_MIN_WORDS` words is prose, as a pasted abstract is: its
  quotations are phrases that relax with its words, and a ``*`` glued to a word (a
  footnote mark) and a ``-`` or ``+`` before one are punctuation. Fields and AND, OR, NOT
  keep their meaning in it.
* ``^2`` after a word, phrase or group boosts it; ``"..."~3`` lets a phrase's words be up
  to 3 apart. Anywhere else ``^`` and ``~`` are punctuation.
* A word that is an arXiv id or a DOI, in any form people paste (``2505.17997v2``,
  ``arXiv:2505.17997``, ``hep-th/9901001``, an arxiv.org or doi.org link, ``doi:10...``,
  ``DOI: 10...``; see :mod:`pubsearch.ingest.identifiers`), is an :class:`Identifier`; numbers
  that only look like one (``1.5``, ``2021``, ``2024.12345``) stay words.

What is unmistakably meant and wrong is refused with :class:`QuerySyntaxError`: a year that
is not one (``year:abc``), a range left open (``year:[2020 TO``), a range on a field other
than the year.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pubsearch.core.errors import QuerySyntaxError
from pubsearch.ingest.identifiers import MAX_CHARS as MAX_IDENTIFIER_CHARS
from pubsearch.ingest.identifiers import Identifier as PaperId
from pubsearch.ingest.identifiers import identifier_in_word

MIN_WILDCARD_PREFIX = 2  # "op*" is fine; "*ing" or "b*" would scan the whole vocabulary
# A text of more words than this is prose (a pasted paragraph): its quotations relax with
# its words, and a * glued to one of its words is a mark, not a wildcard.
PROSE_MIN_WORDS = 20
# In text with no lower-case letter and more words than this, AND, OR and NOT are words.
CAPITALS_MAX_OPERATOR_WORDS = 4

OPERATORS = frozenset({"AND", "OR", "NOT", "ANDNOT"})

# A word runs to white space, a bracket or a quote.
_STOPS = frozenset('()"\u201c\u201d')
_OPENING_QUOTES = {'"': '"', "\u201c": "\u201d"}
_FIELD_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):")
_BOOST = re.compile(r"\^(\d{1,4}(?:\.\d{1,4})?)$")
_SLOP = re.compile(r"~(\d{1,3})")
_TILDE = re.compile(r"~\d*$")
_YEAR = re.compile(r"\d{1,4}")
_YEAR_SPAN = re.compile(r"(\d{1,4})?\.\.(\d{1,4})?")
_YEAR_COMPARISON = re.compile(r"(>=|<=|>|<)(\d{1,4})")
_RANGE = re.compile(r"\s*(\S*)\s+TO\s+(\S*)\s*", re.IGNORECASE)
_WORD_CHARS = re.compile(r"[^\W_]")
_WILDCARD = re.compile(r"[*?]")
# What a pattern on a text field may hold: word characters, inner dots and apostrophes.
_TEXT_PATTERN = re.compile(r"[\w.'*?]+")


@dataclass(frozen=True)
class Word:
    """A word (which analysis may split, as ``2D-3D`` into ``2d``, ``3d``) in ``field``
    (None: title and abstract). ``start``/``end`` locate it in the query text."""

    text: str
    field: str | None
    start: int
    end: int
    boost: float = 1.0


@dataclass(frozen=True)
class Pattern:
    """A wildcard pattern (``optim*``, ``ba?ch``)."""

    text: str
    field: str | None
    start: int
    end: int
    boost: float = 1.0


@dataclass(frozen=True)
class Everything:
    """``*``: every record, or (``field:*``) every record that has the field."""

    field: str | None


@dataclass(frozen=True)
class Phrase:
    """Words in this order, each at most ``slop`` positions after the one before."""

    text: str
    field: str | None
    start: int
    end: int
    slop: int = 1
    boost: float = 1.0
    prose: bool = False  # a quotation in pasted prose: relaxed like the words around it


@dataclass(frozen=True)
class Identifier:
    """An arXiv id or a DOI: the record that has it. ``start``/``end`` locate it in the
    query text."""

    id: PaperId
    start: int
    end: int

    @property
    def key(self) -> str:
        """The identity key of the records that have it (``arxiv:2505.17997``)."""
        return self.id.key


@dataclass(frozen=True)
class Years:
    """A year or a range of years, either end open (None); ends included."""

    field: str
    first: int | None
    last: int | None


@dataclass(frozen=True)
class Not:
    node: Node


@dataclass(frozen=True)
class Must:
    """``+node``: required even when the bare words around it are relaxed."""

    node: Node


@dataclass(frozen=True)
class AllOf:
    """Explicit AND (``a AND b``), or a group in brackets."""

    items: tuple[Node, ...]
    boost: float = 1.0
    bracketed: bool = False


@dataclass(frozen=True)
class AnyOf:
    """``a OR b``."""

    items: tuple[Node, ...]
    boost: float = 1.0


Node = Word | Pattern | Everything | Phrase | Identifier | Years | Not | Must | AllOf | AnyOf


@dataclass(frozen=True)
class Sequence:
    """The query: its items side by side (all required), and notices of what was read
    as plain text. ``bare`` are the items that are plain words in the default field with
    no operator on them: the ones a long query may relax."""

    items: tuple[Node, ...]
    notices: tuple[str, ...] = ()

    @property
    def bare(self) -> tuple[Word | Phrase, ...]:
        """Plain words (and quotations of prose): what a long query may relax."""
        return tuple(
            item for item in self.items if isinstance(item, Word | Phrase) and is_bare(item)
        )

    @property
    def explicit(self) -> tuple[Node, ...]:
        return tuple(item for item in self.items if not is_bare(item))


def is_bare(node: Node) -> bool:
    """A plain word of the default field, or a quotation of prose."""
    return (isinstance(node, Word) and node.field is None) or (
        isinstance(node, Phrase) and node.prose
    )


@dataclass(frozen=True)
class Fields:
    """The field names a query may use: ``names`` maps what people type (lower case: full
    names and short forms) to the field; ``years`` are the fields that hold a year."""

    names: Mapping[str, str]
    years: frozenset[str] = frozenset()
    # Fields of whole values (subject codes, ids), where a pattern may hold any character.
    keywords: frozenset[str] = frozenset()
    listed: tuple[str, ...] = ()


def read_query(text: str, fields: Fields) -> Sequence:
    """The syntax tree of ``text`` (see the module's doc). Raises QuerySyntaxError only for
    syntax that is unmistakably meant and wrong."""
    return _Reader(text, fields).read()


_BRACKET_BOOST = re.compile(r"\^(\d{1,4}(?:\.\d{1,4})?)(?=[\s()]|$)")
# Brackets, NOT and signs nested deeper than this are read as punctuation.
MAX_DEPTH = 40


@dataclass
class _Reader:
    text: str
    fields: Fields
    pos: int = 0
    depth: int = 0
    notices: list[str] = field(default_factory=list)
    operators: bool = True
    # Where an operator word stands with nothing to join: read as a word there.
    literal: set[int] = field(default_factory=set)
    # A text of more than PROSE_MIN_WORDS words is pasted prose (see the module's doc).
    prose: bool = False

    def read(self) -> Sequence:
        words = self.text.split()
        self.prose = len(words) > PROSE_MIN_WORDS
        if len(words) > CAPITALS_MAX_OPERATOR_WORDS and not any(c.islower() for c in self.text):
            self.operators = False
            if any(w in OPERATORS for w in words):
                self._notice(
                    "In text written in capitals, AND, OR and NOT are searched as words "
                    "(write the other words in lower case to use them as operators)"
                )
        items = self._sequence(None, closing=False)
        # A bracketed group of plain words is plain words ("the (transverse) effect").
        flat: list[Node] = []
        for item in items:
            if isinstance(item, AllOf) and item.bracketed and all(map(is_bare, item.items)):
                flat.extend(item.items)
            else:
                flat.append(item)
        return Sequence(tuple(flat), tuple(dict.fromkeys(self.notices)))

    # -- structure --------------------------------------------------------------------------

    def _sequence(self, fieldname: str | None, closing: bool) -> list[Node]:
        """Items side by side, up to the end (or the closing bracket, consumed)."""
        items: list[Node] = []
        while True:
            self._skip_space()
            if self._at_end():
                if closing:
                    self._notice("A bracket that was not closed was read as punctuation")
                return items
            if self.text[self.pos] == ")":
                self.pos += 1
                if closing:
                    return items
                self._notice("A closing bracket without an opening one was ignored")
                continue
            before = self.pos
            node = self._or_expression(fieldname)
            if node is not None:
                items.append(node)
            elif self.pos == before:  # nothing read: step over the character
                self.pos += 1

    def _or_expression(self, fieldname: str | None) -> Node | None:
        items = [node] if (node := self._and_expression(fieldname)) is not None else []
        while items and self._operator_ahead("OR"):
            start = self.pos
            self._take_word()
            right = self._and_expression(fieldname)
            if right is None:
                self._as_word(start, "OR")
                break
            items.append(right)
        if len(items) > 1:
            return AnyOf(tuple(items))
        return items[0] if items else None

    def _and_expression(self, fieldname: str | None) -> Node | None:
        items = [node] if (node := self._unary(fieldname)) is not None else []
        while items and (self._operator_ahead("AND") or self._operator_ahead("ANDNOT")):
            start = self.pos
            op = self._take_word()
            right = self._unary(fieldname)
            if right is None:
                self._as_word(start, op)
                break
            items.append(Not(right) if op == "ANDNOT" else right)
        if len(items) > 1:
            return AllOf(tuple(items))
        return items[0] if items else None

    def _as_word(self, start: int, op: str) -> None:
        """The operator at ``start`` has nothing after it: go back and read it as a word."""
        self.pos = start
        self.literal.add(start)
        self._notice(f"\u201c{op}\u201d had nothing to join and was searched as a word")

    def _unary(self, fieldname: str | None) -> Node | None:
        self._skip_space()
        if self._at_end() or self.text[self.pos] == ")":
            return None
        if self.depth >= MAX_DEPTH:
            return self._word_or_field(fieldname)
        for op in ("AND", "OR", "ANDNOT"):
            if self._operator_ahead(op):
                # An operator where a word should be ("AND x", "x OR OR y"): a word.
                self._as_word(self.pos, op)
                return self._word_or_field(fieldname)
        if self._operator_ahead("NOT"):
            start = self.pos
            self._take_word()
            self.depth += 1
            operand = self._unary(fieldname)
            self.depth -= 1
            if operand is None:
                self._as_word(start, "NOT")
                return self._word_or_field(fieldname)
            return Not(operand)
        sign = self._sign()
        if sign:
            self.pos += 1
            self.depth += 1
            operand = self._primary(fieldname)
            self.depth -= 1
            if operand is None:
                return None
            return Not(operand) if sign == "-" else Must(operand)
        return self._primary(fieldname)

    def _sign(self) -> str:
        """``+`` or ``-`` when one starts a word and applies to what follows (not in
        prose: a dash before a word of a pasted paragraph is a dash)."""
        if self.prose:
            return ""
        text, pos = self.text, self.pos
        if text[pos] not in "+-" or pos + 1 >= len(text):
            return ""
        if pos > 0 and not (text[pos - 1].isspace() or text[pos - 1] == "("):
            return ""
        after = text[pos + 1]
        return text[pos] if after.isalpha() or after in '(*"\u201c' else ""

    def _primary(self, fieldname: str | None) -> Node | None:
        while True:
            self._skip_space()
            if self._at_end() or self.text[self.pos] == ")":
                return None
            char = self.text[self.pos]
            if char == "(" and self.depth < MAX_DEPTH:
                return self._group(fieldname)
            if char in _OPENING_QUOTES:
                phrase = self._phrase(fieldname)
                if phrase is not None:
                    return phrase
                self._notice("A quote that was not closed was read as punctuation")
                self.pos += 1
                continue
            if char in "(\u201d":
                self.pos += 1  # a closing quote alone; a bracket nested too deep
                continue
            return self._word_or_field(fieldname)

    def _group(self, fieldname: str | None) -> Node | None:
        self.pos += 1
        self.depth += 1
        items = self._sequence(fieldname, closing=True)
        self.depth -= 1
        boost = self._boost()
        if not items:
            return None
        if len(items) == 1 and boost == 1.0:
            return items[0]
        return AllOf(tuple(items), boost, bracketed=True)

    def _phrase(self, fieldname: str | None) -> Node | None:
        opening = self.text[self.pos]
        close = self.text.find(_OPENING_QUOTES[opening], self.pos + 1)
        if close < 0:
            return None
        start = self.pos
        inner = self.text[self.pos + 1 : close]
        self.pos = close + 1
        if fieldname in self.fields.years:
            return _years(fieldname, fieldname, inner.strip())
        if (self.prose or inner.rstrip().endswith(_PROSE_ENDS)) and fieldname is None:
            # A quotation in pasted prose ('using "artificial spermatids."'): a phrase that
            # relaxes with the words around it.
            return Phrase(inner, None, start, close + 1, prose=True)
        slop = 1
        if match := _SLOP.match(self.text, self.pos):
            slop = max(1, int(match.group(1)))
            self.pos = match.end()
        boost = self._boost()
        return Phrase(inner, fieldname, start, close + 1, slop, boost)

    def _boost(self) -> float:
        match = _BRACKET_BOOST.match(self.text, self.pos)
        if match is None:
            return 1.0
        self.pos = match.end()
        return float(match.group(1))

    def _run_end(self, start: int) -> int:
        end = start
        while end < len(self.text) and not (self.text[end].isspace() or self.text[end] in _STOPS):
            end += 1
        return end

    def _word_or_field(self, fieldname: str | None) -> Node | None:
        start = self.pos
        if fieldname is None and (identifier := self._identifier()) is not None:
            return identifier
        end = self._run_end(start)
        run = self.text[start:end]
        prefix = _FIELD_NAME.match(run)
        if prefix is not None and (start == 0 or not _part_of_word(self.text[start - 1])):
            name = prefix.group(1)
            target = self.fields.names.get(name.lower())
            value_at = start + prefix.end()
            value = self.text[value_at] if value_at < len(self.text) else " "
            if target is not None and not value.isspace() and value != ")":
                self.pos = value_at
                node = self._field_value(target, name)
                if node is None:
                    self._notice(f"\u201c{name}:\u201d had nothing to search for; left out")
                return node
            if target is None and not value.isspace() and value != "/":  # not http://
                self._notice(
                    f"\u201c{name}:\u201d is not a field "
                    f"({', '.join(self.fields.listed)}); it was searched as words"
                )
        self.pos = end
        if fieldname in self.fields.years:
            return _years(fieldname, fieldname, run)
        return self._word(run, fieldname, start)

    def _identifier(self) -> Identifier | None:
        """The arXiv id or DOI the word here is (with the punctuation after it left out),
        or None. A label before one (``DOI: 10.1103/...``, ``arXiv: 2505.17997``) is part
        of it."""
        start = self.pos
        if not self.text[start].isalnum():
            return None  # every identifier begins with a letter or a digit
        word = self._identifier_word(start)
        if word.lower() in _LABELS and start + len(word) < len(self.text):
            after = _SPACE.match(self.text, start + len(word)).end()  # type: ignore[union-attr]
            word = self.text[start:after] + self._identifier_word(after)
        found = identifier_in_word(word)
        if found is None:
            return None
        identifier, used = found
        self.pos = start + used
        return Identifier(identifier, start, self.pos)

    def _identifier_word(self, start: int) -> str:
        """The text from ``start`` to the next white space, if an identifier may be that
        long (else a longer text, which is none)."""
        limit = start + MAX_IDENTIFIER_CHARS + 1
        space = _SPACE_AT.search(self.text, start, limit)
        return self.text[start : space.start() if space else limit]

    def _field_value(self, fieldname: str, typed: str) -> Node | None:
        char = self.text[self.pos]
        if char in "[{":
            return self._range(fieldname, typed)
        if fieldname in self.fields.years and char not in '("\u201c':
            end = self._run_end(self.pos)
            text, self.pos = self.text[self.pos : end], end
            return _years(fieldname, typed, text)
        return self._primary(fieldname)

    def _range(self, fieldname: str, typed: str) -> Node:
        opening = self.text[self.pos]
        closing = _RANGE_END.search(self.text, self.pos + 1)
        if closing is None:
            raise QuerySyntaxError(
                f"the range after {typed}: is not closed (write year:[2019 TO 2021])"
            )
        inner = self.text[self.pos + 1 : closing.start()]
        self.pos = closing.end()
        if fieldname not in self.fields.years:
            raise QuerySyntaxError(
                f"ranges work on year only (year:[2019 TO 2021]), not on {typed}"
            )
        match = _RANGE.fullmatch(inner)
        if match is None:
            raise QuerySyntaxError(
                f"{typed}:{opening}{inner}{closing.group()} is not a range "
                "(write year:[2019 TO 2021])"
            )
        first = _year_end(typed, match.group(1))
        last = _year_end(typed, match.group(2))
        if first is not None and opening == "{":
            first += 1
        if last is not None and closing.group() == "}":
            last -= 1
        return _checked_years(fieldname, typed, first, last, f"{opening}{inner}{closing.group()}")

    def _word(self, run: str, fieldname: str | None, start: int) -> Node | None:
        end = start + len(run)
        boost = 1.0
        if match := _BOOST.search(run):
            boost = float(match.group(1))
            run = run[: match.start()]
        if (match := _TILDE.search(run)) and match.start() > 0:
            self._notice(f'\u201c{run}\u201d: ~ works on phrases only ("a b"~2)')
            run = run[: match.start()]
        run = run.rstrip("?")  # a question mark ending a word is punctuation
        if not run:
            return None
        if not _WILDCARD.search(run):
            return Word(run, fieldname, start, end, boost)
        if not run.strip("*?"):
            return Everything(fieldname) if "*" in run else None
        literal = _WILDCARD.split(run, maxsplit=1)[0]
        plain = _WILDCARD.sub(" ", run).strip()
        if self.prose and fieldname is None:
            return Word(plain, None, start, end, boost) if plain else None  # "result*": a mark
        if len(_WORD_CHARS.findall(literal)) < MIN_WILDCARD_PREFIX:
            where = (
                "start a word"
                if not literal
                else f"follow fewer than {MIN_WILDCARD_PREFIX} letters"
            )
            self._notice(
                f"\u201c{run}\u201d: a wildcard cannot {where}; it was searched as "
                f"\u201c{plain}\u201d"
            )
        elif fieldname in self.fields.keywords or _TEXT_PATTERN.fullmatch(run):
            return Pattern(run, fieldname, start, end, boost)
        else:
            self._notice(
                f"\u201c{run}\u201d: a wildcard works within one word; it was searched as "
                f"\u201c{plain}\u201d"
            )
        return Word(plain, fieldname, start, end, boost) if plain else None

    # -- characters -------------------------------------------------------------------------

    def _operator_ahead(self, op: str) -> bool:
        if not self.operators:
            return False
        self._skip_space()
        end = self.pos + len(op)
        if self.text[self.pos : end] != op or self.pos in self.literal:
            return False
        return end == len(self.text) or self.text[end].isspace() or self.text[end] in _STOPS

    def _take_word(self) -> str:
        end = self._run_end(self.pos)
        word, self.pos = self.text[self.pos : end], end
        return word

    def _skip_space(self) -> None:
        if self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def _at_end(self) -> bool:
        return self.pos >= len(self.text)

    def _notice(self, message: str) -> None:
        self.notices.append(message if message.endswith(".") else message + ".")


_RANGE_END = re.compile(r"[\]}]")
_SPACE = re.compile(r"\s*")
_SPACE_AT = re.compile(r"\s+")
# Labels written before an identifier, a space apart from it.
_LABELS = frozenset({"arxiv:", "doi:"})
# A quotation of prose ends with these inside its quotes; a phrase people type does not.
_PROSE_ENDS = (".", ",", ";", "!", "?")


def _part_of_word(char: str) -> bool:
    """Whether ``char`` before a name glues it to a word ("2A:", "x.A:" are no fields)."""
    return char.isalnum() or char in "._"


def _year_end(typed: str, text: str) -> int | None:
    if text in ("", "*"):
        return None
    if not _YEAR.fullmatch(text):
        raise QuerySyntaxError(
            f"{typed}:{text} is not a year (use year:2021, year:2019..2021 or year:>2019)"
        )
    return int(text)


def _years(fieldname: str, typed: str, text: str) -> Node:
    """``year:`` followed by ``2021``, ``2019..2021``, ``2019..``, ``..2021``, ``>2019``,
    ``>=2019``, ``<2019``, ``<=2019`` or ``*``."""
    if text == "*":
        return Everything(fieldname)
    if _YEAR.fullmatch(text):
        year = int(text)
        return Years(fieldname, year, year)
    if match := _YEAR_SPAN.fullmatch(text):
        if match.group(1) or match.group(2):
            first = int(match.group(1)) if match.group(1) else None
            last = int(match.group(2)) if match.group(2) else None
            return _checked_years(fieldname, typed, first, last, text)
    if match := _YEAR_COMPARISON.fullmatch(text):
        op, year = match.group(1), int(match.group(2))
        if op == ">":
            return Years(fieldname, year + 1, None)
        if op == ">=":
            return Years(fieldname, year, None)
        if op == "<":
            return Years(fieldname, None, year - 1)
        return Years(fieldname, None, year)
    raise QuerySyntaxError(
        f"{typed}:{text} is not a year (use year:2021, year:2019..2021 or year:>2019)"
    )


def _checked_years(
    fieldname: str, typed: str, first: int | None, last: int | None, text: str
) -> Years:
    if first is not None and last is not None and first > last:
        raise QuerySyntaxError(f"{typed}:{text} ends before it starts")
    return Years(fieldname, first, last)
