"""From what people type to a Whoosh query: the only place query text is parsed.

Plain words must just work; the syntax is Whoosh's (AND, OR, NOT, ``-word``, "phrases",
``field:value``, ``year:[2019 TO 2021]``, ``year:>2019``, wildcards) plus ``year:2019..2021``
and arXiv's short field names (``ti:``, ``abs:``, ``au:``, ``cat:``).

What words without operators mean (measured on SciFact with ``bench/relevance.py``):

* one or two words: every word is required (``batch size``);
* three or more: every word is required when at least :data:`MIN_STRICT_MATCHES` records
  have them all; otherwise any of them may be missing and records are ranked by BM25, so a
  pasted sentence ("Does APOE4 increase risk of Alzheimer's?") never finds nothing just
  because one of its words is absent.

Operators keep their meaning either way: ``-word`` and ``NOT`` exclude, ``+word`` and
``AND`` require, ``OR`` offers a choice, ``field:`` restricts, quotes match a phrase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from whoosh import qparser
from whoosh import query as wq
from whoosh.analysis import STOP_WORDS
from whoosh.fields import Schema
from whoosh.qparser.common import QueryParserError

from pubsearch.errors import ParameterError, QuerySyntaxError
from pubsearch.schema import DEFAULT_FIELD, FIELD_ALIASES, QUERY_FIELDS

# Bounds on the work one query may cause.
MAX_QUERY_CHARS = 1000
MAX_QUERY_TERMS = 64
MIN_WILDCARD_PREFIX = 2  # "op*" is fine; "*ing" or "b*" would scan the whole vocabulary

_YEAR_SPAN = re.compile(r"\byear:(\d{4})\.\.(\d{4})\b")
# A field prefix starts a word and is followed by its value ("Note: this" and "2A:" are
# not fields). The text check and the parser share it.
_FIELD_START = r"(?<![\w.])"
_FIELD_PREFIX = re.compile(_FIELD_START + r"([A-Za-z_]\w*):(?=[^\s/])")
_YEAR_VALUE = re.compile(r"\byear:(?![\[{<>=(\"]|\d{4}\b)(\S*)")

SEARCHABLE_FIELDS = (*QUERY_FIELDS, "id")

# Phrases of plain words are matched here (the combined field keeps no positions).
PHRASE_FIELDS = ("title", "abstract")
# The fields a parsed query may name: what people can type, and where plain words go.
_PARSED_FIELDS = frozenset((*SEARCHABLE_FIELDS, DEFAULT_FIELD, *PHRASE_FIELDS))
# Fields whose words did-you-mean suggestions come from (they keep unstemmed words).
SPELLING_FIELDS = ("title",)  # only the title keeps unstemmed words (schema.py)

# Queries of at most this many terms always need all of them ("batch size").
STRICT_MAX_TERMS = 2
# Words indexed and searched, but not enough for a record to match a sentence read with any
# of its words (see TextQuery.matching), nor marked in snippets: Whoosh's stop words.
COMMON_WORDS = frozenset(STOP_WORDS)
# A longer query needs all its words only when at least this many records have them all.
MIN_STRICT_MATCHES = 10

# What Whoosh's query parser raises on input it cannot take apart.
_PARSER_FAILURES = (
    IndexError,
    ValueError,
    TypeError,
    AttributeError,
    KeyError,
    RecursionError,
    NotImplementedError,  # a lone operator in a group: "(-)x"
    QueryParserError,  # a field value it cannot convert: 'year:""'
)
_NOT_WORD = re.compile(r"[^\w\s]+")
# A question mark that ends a word is punctuation ("Alzheimer's?", "(or why)?"); only one
# inside a word is a wildcard ("ba?ch").
_QUESTION_MARK = re.compile(r"\?+(?=[\s)\]}\"'.,;:!?]|$)")


def _words_only(text: str) -> str:
    """``text`` with every operator character removed, for a plain-words fallback."""
    return _NOT_WORD.sub(" ", text)


@dataclass(frozen=True)
class YearRange:
    """Inclusive range of years; either end may be open."""

    start: int | None
    end: int | None

    def __str__(self) -> str:
        if self.start == self.end and self.start is not None:
            return str(self.start)
        return f"{self.start or ''}..{self.end or ''}"


def parse_year(text: str, name: str = "year") -> YearRange:
    """``2021``, ``2019..2021``, ``2019..`` or ``..2021``; raises ParameterError otherwise."""
    text = text.strip()
    match = re.fullmatch(r"(\d{4})?(?:(\.\.)(\d{4})?)?", text)
    if not match or (match.group(1) is None and match.group(3) is None):
        raise ParameterError(
            name, f"expected a year like 2021 or a range like 2019..2021, got {text!r}"
        )
    start = int(match.group(1)) if match.group(1) else None
    end = start if match.group(2) is None else (int(match.group(3)) if match.group(3) else None)
    if start is not None and end is not None and start > end:
        raise ParameterError(name, f"range {text!r} ends before it starts")
    return YearRange(start, end)


def _plugins_parser(
    schema: Schema,
    group: type[qparser.syntax.GroupNode],
    fields: tuple[str, ...] = (DEFAULT_FIELD,),
) -> qparser.QueryParser:
    parser = qparser.MultifieldParser(list(fields), schema, group=group)
    # A field prefix as the text check sees one (see _FIELD_PREFIX).
    parser.replace_plugin(
        qparser.FieldsPlugin(
            expr=_FIELD_START + r"(?P<text>[A-Za-z_]\w*|[*]):(?=[^\s/])", remove_unknown=False
        )
    )
    # "-word" excludes, "+word" requires. A hyphen inside a word ("2D-3D") is not an operator,
    # nor is a sign before a number or a bracket ("+1 nucleosomes", "-2", "alpha (+)-").
    parser.replace_plugin(
        qparser.PlusMinusPlugin(
            plusexpr=r"(?:^|(?<=[\s(]))\+(?=[^\W\d_]|[\"(])",
            minusexpr=r"(?:^|(?<=[\s(]))-(?=[^\W\d_]|[\"(])",
        )
    )
    parser.add_plugin(qparser.GtLtPlugin())
    aliases: dict[str, list[str]] = {}
    for short, full in FIELD_ALIASES.items():
        aliases.setdefault(full, []).append(short)
    parser.add_plugin(qparser.FieldAliasPlugin(aliases))
    return parser


def check_query_text(text: str) -> None:
    """Reject text no query can come from, with a message that says why."""
    if len(text) > MAX_QUERY_CHARS:
        raise QuerySyntaxError(
            f"query is {len(text)} characters long; at most {MAX_QUERY_CHARS} are allowed"
        )
    for match in _FIELD_PREFIX.finditer(text):
        field = match.group(1)
        if field.lower() not in SEARCHABLE_FIELDS and field.lower() not in FIELD_ALIASES:
            raise QuerySyntaxError(
                f"unknown field {field!r} in query (fields: {', '.join(QUERY_FIELDS)})"
            )
    if text.count("[") != text.count("]") or text.count("{") != text.count("}"):
        raise QuerySyntaxError("unbalanced range brackets in query (e.g. year:[2019 TO 2021])")
    for match in _YEAR_VALUE.finditer(text):
        raise QuerySyntaxError(
            f"year:{match.group(1)} is not a year (use year:2021, year:2019..2021 or year:>2019)"
        )


@dataclass(frozen=True)
class TextQuery:
    """The two readings of a query's text.

    ``strict`` requires every word; ``relaxed`` (``None`` when there is no other reading)
    lets any word without an operator be missing. Search with ``strict`` when it matches at
    least :data:`MIN_STRICT_MATCHES` records, else with ``relaxed``: see :func:`choose`.
    """

    strict: wq.Query
    relaxed: wq.Query | None = None

    def choose(self, strict_matches: int) -> wq.Query:
        """The query to search with, given how many records ``strict`` matches."""
        if self.relaxed is None or strict_matches >= MIN_STRICT_MATCHES:
            return self.strict
        return self.relaxed

    def matching(self, query: wq.Query) -> wq.Query:
        """Which records ``query`` (one of the two readings) finds. For the relaxed reading,
        a record must have one of its words other than the common ones ("the", "of"): they
        still count in its score, but a sentence would otherwise find nearly every record
        (at 102k records, 21,237 -> 102,207 for a question)."""
        if query is not self.relaxed or not isinstance(query, wq.Or):
            return query
        kept = [q for q in query.subqueries if not _common_word(q)]
        if not kept or len(kept) == len(query.subqueries):
            return query
        return wq.Or(kept)


def _common_word(query: wq.Query) -> bool:
    return (
        isinstance(query, wq.Term)
        and query.fieldname == DEFAULT_FIELD
        and query.text in COMMON_WORDS
    )


def _parse(
    text: str,
    schema: Schema,
    group: type[qparser.syntax.GroupNode],
    fields: tuple[str, ...] = (DEFAULT_FIELD,),
) -> wq.Query | None:
    parser = _plugins_parser(schema, group, fields)
    try:
        query = parser.parse(text)
    except _PARSER_FAILURES:
        # Whoosh's parser trips over some operator soup ("<0", ...): search the words.
        query = parser.parse(_words_only(text))
    if query is wq.NullQuery or isinstance(query, type(wq.NullQuery)):
        return None
    if DEFAULT_FIELD in fields:
        query = query.accept(_phrase_in_title_and_abstract)
    check_query(query)
    return query


def _phrase_in_title_and_abstract(query: wq.Query) -> wq.Query:
    if isinstance(query, wq.Phrase) and query.fieldname == DEFAULT_FIELD:
        return wq.Or(
            [
                wq.Phrase(name, query.words, slop=query.slop, boost=query.boost)
                for name in PHRASE_FIELDS
            ]
        )
    return query


def _prepare(text: str) -> str:
    text = text.strip()
    if text:
        check_query_text(text)
    text = _QUESTION_MARK.sub("", text)
    return _YEAR_SPAN.sub(r"year:[\1 TO \2]", text)


def parse_text_query(text: str, schema: Schema) -> TextQuery | None:
    """Both readings of ``text`` (see the module's doc); ``None`` when there is nothing to
    search for. Raises QuerySyntaxError for text that cannot be a query."""
    text = _prepare(text)
    if not text:
        return None
    strict = _parse(text, schema, qparser.AndGroup)
    if strict is None:
        return None
    if sum(1 for _ in strict.leaves()) <= STRICT_MAX_TERMS:
        return TextQuery(strict)
    relaxed = _parse(text, schema, qparser.OrGroup)
    if relaxed is None or relaxed == strict:
        return TextQuery(strict)
    return TextQuery(strict, relaxed)


def parse_query(text: str, schema: Schema) -> wq.Query | None:
    """The strict reading of ``text``: every word required. ``None`` for text with nothing
    to search for. Raises QuerySyntaxError for text that cannot be a query."""
    parsed = parse_text_query(text, schema)
    return parsed.strict if parsed is not None else None


def spelling_query(text: str, schema: Schema) -> wq.Query | None:
    """``text`` parsed over :data:`SPELLING_FIELDS`, for did-you-mean suggestions (the
    combined field holds only stems)."""
    text = _prepare(text)
    return _parse(text, schema, qparser.AndGroup, SPELLING_FIELDS) if text else None


def check_query(query: wq.Query) -> None:
    """Refuse parsed queries that are unbounded work or that Whoosh cannot run."""
    leaves = list(query.leaves())
    if len(leaves) > MAX_QUERY_TERMS:
        raise QuerySyntaxError(
            f"query has {len(leaves)} terms; at most {MAX_QUERY_TERMS} are allowed"
        )
    for leaf in leaves:
        field = getattr(leaf, "fieldname", None)
        if field is not None and field not in _PARSED_FIELDS:
            # Never reached through parse_text_query (the parser's field prefixes are the
            # text check's); a query on a field the index lacks fails in Whoosh (a 500).
            raise QuerySyntaxError(
                f"unknown field {field!r} in query (fields: {', '.join(QUERY_FIELDS)})"
            )
        if isinstance(leaf, wq.TermRange) and not isinstance(leaf, wq.NumericRange):
            raise QuerySyntaxError(
                f"ranges work on year only (year:[2019 TO 2021]), not on {leaf.fieldname}"
            )
        if isinstance(leaf, (wq.Wildcard, wq.Prefix)):
            pattern = leaf.text + ("*" if isinstance(leaf, wq.Prefix) else "")
            literal = re.split(r"[*?]", pattern, maxsplit=1)[0]
            if len(literal) < MIN_WILDCARD_PREFIX:
                raise QuerySyntaxError(
                    f"wildcard {pattern!r} needs at least {MIN_WILDCARD_PREFIX} characters "
                    "before * or ?"
                )
