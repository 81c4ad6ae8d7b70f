"""From what people type to a Whoosh query: the only place Whoosh queries are made of text.

:mod:`pubsearch.querysyntax` reads the text (plain text never fails there); this module
makes Whoosh queries of what it read, with the field analyzers of the schema.

What words without operators mean (measured on SciFact with ``bench/relevance.py``):

* one or two bare words: every word is required (``batch size``);
* three or more: every word is required when at least :data:`MIN_STRICT_MATCHES` records
  have them all; otherwise any of them may be missing and records are ranked by BM25, so a
  pasted sentence ("Does APOE4 increase risk of Alzheimer's?") never finds nothing just
  because one of its words is absent.

Only bare words relax: plain words of the title and abstract with no operator on them.
Everything explicit keeps its meaning in both readings: ``field:value``, phrases, year
ranges, wildcards, ``-word`` and ``NOT`` exclude, ``+word``, ``AND`` and ``OR`` join
(``author:patel graph neural network`` always requires the author).

Long text is a query like any other: a pasted abstract of 10,000 characters is searched by
its :data:`MAX_BARE_TERMS` most informative words (by idf and how often the text repeats
them). Explicit syntax stays bounded (:data:`MAX_QUERY_TERMS`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from whoosh import query as wq
from whoosh.analysis import STOP_WORDS
from whoosh.fields import Schema

from pubsearch.errors import QuerySyntaxError
from pubsearch.querysyntax import (
    MIN_WILDCARD_PREFIX,
    AllOf,
    AnyOf,
    Everything,
    Fields,
    Must,
    Node,
    Not,
    Pattern,
    Phrase,
    Sequence,
    Word,
    Years,
    read_query,
)
from pubsearch.records import fold
from pubsearch.request import parse_year
from pubsearch.schema import DEFAULT_FIELD, FIELD_ALIASES, QUERY_FIELDS, WRITTEN_FIELDS

__all__ = ["MIN_WILDCARD_PREFIX", "TextQuery", "parse_query", "parse_text_query", "parse_year"]

# Bounds on the work one query may cause.
MAX_QUERY_CHARS = 20_000
MAX_QUERY_TERMS = 64  # terms of explicit syntax (fields, phrases, operators, wildcards)
MAX_BARE_TERMS = 64  # distinct bare words scored; a longer text keeps its most informative

SEARCHABLE_FIELDS = (*QUERY_FIELDS, "id")
FIELDS = Fields(
    names={**{name: name for name in SEARCHABLE_FIELDS}, **FIELD_ALIASES},
    years=frozenset({"year"}),
    keywords=frozenset({"subject", "id"}),
    listed=QUERY_FIELDS,
)

# Phrases of plain words are matched here (the combined field keeps no positions).
PHRASE_FIELDS = ("title", "abstract")
# Fields whose words did-you-mean suggestions come from (they keep unstemmed words).
SPELLING_FIELDS = ("title",)  # only the title keeps unstemmed words (schema.py)

# In a query of at least FUNCTION_WORDS_FROM distinct bare words (a question, a claim, a
# paragraph), these words weigh FUNCTION_WORD_WEIGHT of the others: "What is the effect
# of ... on ...?" is about its other words. Chosen with bench/relevance.py on SciFact train
# and the Cranfield, NPL and ADI collections together (docs/ranking.md): +0.0030 nDCG@10
# over their 1,162 queries (paired randomization p 0.03), no collection worse; weights
# 0.4 to 0.6 and thresholds 6 to 10 words all gained 0.0019 to 0.0030.
FUNCTION_WORDS_FROM = 8
FUNCTION_WORD_WEIGHT = 0.5
FUNCTION_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if
    in into is it its itself just may me might more most must my myself no nor not now of
    off on once only or other our ours ourselves out over own same shall she should so some
    such than that the their theirs them themselves then there these they this those
    through to too under until up us very was we were what when where whether which while
    who whom why will with would yet you your yours yourself yourselves""".split()
)
# A name in the search box (see _Compiler._names): the papers of the people named by
# bare words side by side, at most MAX_NAME_WORDS of them, in a query of at most
# MAX_NAME_QUERY_WORDS bare words (a pasted text names no one).
Names = Callable[[str], "wq.Query | None"]
MAX_NAME_WORDS = 4
MAX_NAME_QUERY_WORDS = 8
_NAME_WORD = re.compile(r"[^\W\d_][\w.'\u2019-]*,?")

# Queries of at most this many bare words always need all of them ("batch size").
STRICT_MAX_TERMS = 2
# Words indexed and searched, but not enough for a record to match a sentence read with any
# of its words (see TextQuery.matching), nor marked in snippets: Whoosh's stop words.
COMMON_WORDS = frozenset(STOP_WORDS)
# A longer query needs all its words only when at least this many records have them all.
MIN_STRICT_MATCHES = 10


# How informative each of some bare words' stems is (its idf; 0 for a word no record
# has), asked of all a long text's stems at once.
Informativeness = Callable[[list[str]], list[float]]


@dataclass(frozen=True)
class TextQuery:
    """The readings of a query's text.

    ``strict`` requires every word; ``relaxed`` (``None`` when there is no other reading)
    lets any bare word be missing, explicit syntax kept. Search with ``strict`` when it
    matches at least :data:`MIN_STRICT_MATCHES` records, else with ``relaxed``: see
    :func:`choose`. ``notices`` say what of the text was read as plain words, or left out;
    ``words`` are the bare words as typed.
    """

    strict: wq.Query | None  # None: nothing to search for (every record)
    relaxed: wq.Query | None = None
    loose: wq.Query | None = None  # which records the relaxed reading finds
    notices: tuple[str, ...] = ()
    words: tuple[str, ...] = ()

    def choose(self, strict_matches: int) -> wq.Query | None:
        """The query to search with, given how many records ``strict`` matches."""
        if self.relaxed is None or strict_matches >= MIN_STRICT_MATCHES:
            return self.strict
        return self.relaxed

    def matching(self, query: wq.Query | None) -> wq.Query | None:
        """Which records ``query`` (one of the readings) finds. For the relaxed reading, a
        record must have one of its bare words other than the common ones ("the", "of"):
        they still count in its score, but a sentence would otherwise find nearly every
        record (at 102k records, 21,237 -> 102,207 for a question)."""
        if query is self.relaxed and self.loose is not None:
            return self.loose
        return query


def parse_text_query(
    text: str,
    schema: Schema,
    informativeness: Informativeness | None = None,
    names: Names | None = None,
) -> TextQuery | None:
    """The readings of ``text`` (see the module's doc); ``None`` for blank text, a
    TextQuery whose ``strict`` is None when nothing in it can be searched for (``-``,
    ``title:(``). With ``informativeness``, a text of more than :data:`MAX_BARE_TERMS`
    distinct bare words keeps the most informative; with ``names``, bare words that name
    authors also find those authors' papers. Raises QuerySyntaxError only for
    syntax that is unmistakably meant and wrong, or for a text too long to search."""
    text = text.strip()
    if len(text) > MAX_QUERY_CHARS:
        raise QuerySyntaxError(
            f"query is {len(text):,} characters long; at most {MAX_QUERY_CHARS:,} are allowed"
        )
    if not text:
        return None
    tree = read_query(text, FIELDS)
    return _Compiler(schema).text_query(tree, informativeness, names)


def parse_query(text: str, schema: Schema) -> wq.Query | None:
    """The strict reading of ``text``: every word required. ``None`` for text with nothing
    to search for. Raises QuerySyntaxError for text that cannot be a query."""
    parsed = parse_text_query(text, schema)
    return parsed.strict if parsed is not None else None


def bare_words(text: str) -> list[str] | None:
    """The words of a query made only of bare words, as typed; None when it has any
    explicit syntax (or nothing)."""
    try:
        tree = read_query(text.strip(), FIELDS)
    except QuerySyntaxError:
        return None
    if not tree.items or tree.explicit:
        return None
    return [word.text for word in tree.bare]


def query_words(text: str) -> list[Word]:
    """Every word of the text's query that searches titles and abstracts (bare or in a
    ``title:``/``abstract:`` clause), with where it stands: what spelling suggestions
    may correct."""
    try:
        tree = read_query(text.strip(), FIELDS)
    except QuerySyntaxError:
        return []
    found: list[Word] = []

    def visit(node: Node) -> None:
        if isinstance(node, Word):
            if node.field in (None, *PHRASE_FIELDS):
                found.append(node)
        elif isinstance(node, (Not, Must)):
            if isinstance(node, Must):
                visit(node.node)
        elif isinstance(node, (AllOf, AnyOf)):
            for item in node.items:
                visit(item)

    for item in tree.items:
        visit(item)
    return found


def _shown(word: Node) -> str:
    """A bare word as the user typed it, without the punctuation that made it plain
    (``permutation:`` is shown as ``permutation``)."""
    return str(getattr(word, "text", "")).strip(_PUNCTUATION_AROUND)


_PUNCTUATION_AROUND = ":;,.!?()[]{}\"'“”‘’"


class _Compiler:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.notices: list[str] = []

    def text_query(
        self,
        tree: Sequence,
        informativeness: Informativeness | None,
        names: Names | None = None,
    ) -> TextQuery:
        # Runs of bare words that name authors: each such run is one unit, met by records
        # with its words or by the papers of the people it names.
        named, units = self._names(tree, names) if names is not None else (set(), [])
        # The bare words' stems, each once, in order (a repeated word does not weigh more:
        # on SciFact's train claims, which repeat words to contrast them, counting them
        # lost 0.009 nDCG@10), with the highest boost given to it.
        boosts: dict[str, float] = {}
        counts: dict[str, int] = {}
        quotations: list[wq.Query] = []
        for word in tree.bare:
            if id(word) in named:
                continue
            if isinstance(word, Phrase):
                if (quoted := self._phrase(word)) is not None:
                    quotations.append(quoted)
                continue
            for stem in self._stems(DEFAULT_FIELD, word.text):
                boosts[stem] = max(boosts.get(stem, 0.0), word.boost)
                counts[stem] = counts.get(stem, 0) + 1
        if informativeness is not None and len(boosts) > MAX_BARE_TERMS:
            boosts = self._most_informative(boosts, counts, informativeness)
        if len(boosts) >= FUNCTION_WORDS_FROM:
            function = self._function_stems()
            boosts = {
                s: b * FUNCTION_WORD_WEIGHT if s in function else b for s, b in boosts.items()
            }
        bare: list[wq.Query] = [wq.Term(DEFAULT_FIELD, stem, boost=b) for stem, b in boosts.items()]
        bare += quotations[:MAX_QUERY_TERMS] + units

        positive, negative = self._signed(tree.explicit)
        explicit_terms = sum(
            1 for q in positive + negative for leaf in q.leaves() if not _is_everything(leaf)
        )
        if explicit_terms > MAX_QUERY_TERMS:
            raise QuerySyntaxError(
                f"query has {explicit_terms} terms in fields, phrases or operators; "
                f"at most {MAX_QUERY_TERMS} are allowed (plain words have no such limit)"
            )
        notices = tuple(dict.fromkeys((*tree.notices, *self.notices)))
        words = tuple(dict.fromkeys(w for w in map(_shown, tree.bare) if w))
        strict = _and_not(bare + positive, negative)
        if strict is None or len(bare) <= STRICT_MAX_TERMS:
            return TextQuery(strict, notices=notices, words=words)
        relaxed = _and_not([_or(bare), *positive], negative)
        uncommon = [q for q in bare if not (type(q) is wq.Term and q.text in COMMON_WORDS)]
        loose = None
        if uncommon and len(uncommon) < len(bare):
            loose = _and_not([_or(uncommon), *positive], negative)
        return TextQuery(strict, relaxed, loose, notices, words)

    def _names(self, tree: Sequence, names: Names) -> tuple[set[int], list[wq.Query]]:
        """Runs of 2 to :data:`MAX_NAME_WORDS` bare words side by side that name authors
        (``Vishal Patel``, ``Patel V``, ``V. M. Patel``), longest first, in a query of at
        most :data:`MAX_NAME_QUERY_WORDS` bare words: the words taken (by id) and, for
        each run, its words in the text OR the papers of the people it names."""
        if len(tree.bare) > MAX_NAME_QUERY_WORDS:
            return set(), []
        runs: list[list[Word]] = [[]]
        for item in tree.items:
            if isinstance(item, Word) and item.field is None and _NAME_WORD.fullmatch(item.text):
                runs[-1].append(item)
            elif runs[-1]:
                runs.append([])
        taken: set[int] = set()
        units: list[wq.Query] = []
        for run in runs:
            at = 0
            while at < len(run) - 1:
                for size in range(min(MAX_NAME_WORDS, len(run) - at), 1, -1):
                    span = run[at : at + size]
                    people = names(" ".join(word.text for word in span))
                    if people is None:
                        continue
                    stems = [t for w in span for t in self._stems(DEFAULT_FIELD, w.text)]
                    in_text = _and_not([wq.Term(DEFAULT_FIELD, t) for t in stems], [])
                    units.append(wq.Or([in_text, people]) if in_text is not None else people)
                    taken.update(id(word) for word in span)
                    at += size
                    break
                else:
                    at += 1
        return taken, units

    def _most_informative(
        self, boosts: dict[str, float], counts: dict[str, int], informativeness: Informativeness
    ) -> dict[str, float]:
        """The :data:`MAX_BARE_TERMS` stems that say most: by idf, times 1 + the log of
        how often the text has them."""
        stems = list(boosts)
        score = {
            stem: said * (1 + math.log(counts[stem]))
            for stem, said in zip(stems, informativeness(stems), strict=True)
        }
        kept = set(sorted(boosts, key=lambda s: (-score[s], s))[:MAX_BARE_TERMS])
        self.notices.append(
            f"The text has {len(boosts):,} different words; it was searched by the "
            f"{MAX_BARE_TERMS} that say most about it."
        )
        return {stem: b for stem, b in boosts.items() if stem in kept}

    def node(self, node: Node) -> wq.Query | None:
        if isinstance(node, Word):
            return self._word(node)
        if isinstance(node, Phrase):
            return self._phrase(node)
        if isinstance(node, Pattern):
            return self._pattern(node)
        if isinstance(node, Everything):
            return wq.Every(node.field) if node.field else wq.Every()
        if isinstance(node, Years):
            return self._years(node)
        if isinstance(node, Must):
            return self.node(node.node)
        if isinstance(node, Not):
            inner = self.node(node.node)
            return None if inner is None else wq.AndNot(wq.Every(), inner)
        if isinstance(node, AllOf):
            positive, negative = self._signed(node.items)
            return _boosted(_and_not(positive, negative), node.boost)
        if isinstance(node, AnyOf):
            parts = [q for q in map(self.node, node.items) if q is not None]
            return _boosted(_or(parts) if parts else None, node.boost)
        raise TypeError(f"not a query node: {node!r}")  # pragma: no cover

    def _signed(self, items: Iterable[Node]) -> tuple[list[wq.Query], list[wq.Query]]:
        """The queries of ``items`` that must match, and of those that must not (``Not``)."""
        positive: list[wq.Query] = []
        negative: list[wq.Query] = []
        for item in items:
            target = negative if isinstance(item, Not) else positive
            compiled = self.node(item.node if isinstance(item, Not) else item)
            if compiled is not None:
                target.append(compiled)
        return positive, negative

    def _function_stems(self) -> frozenset[str]:
        return frozenset(
            stem for word in FUNCTION_WORDS for stem in self._stems(DEFAULT_FIELD, word)
        )

    def _stems(self, fieldname: str, text: str) -> list[str]:
        field = self.schema[fieldname]
        return [t for t in field.process_text(text, mode="query") if t]

    def _word(self, word: Word) -> wq.Query | None:
        fieldname = word.field or DEFAULT_FIELD
        stems = self._stems(fieldname, word.text)
        if not stems:
            return None
        terms = [wq.Term(fieldname, stem) for stem in stems]
        return _boosted(terms[0] if len(terms) == 1 else wq.And(terms), word.boost)

    def _phrase(self, phrase: Phrase) -> wq.Query | None:
        fieldname = phrase.field or DEFAULT_FIELD
        stems = self._stems(fieldname, phrase.text)
        if not stems:
            return None
        if len(stems) == 1:
            return wq.Term(fieldname, stems[0], boost=phrase.boost)
        if fieldname == DEFAULT_FIELD:
            return wq.Or(
                [
                    wq.Phrase(name, stems, slop=phrase.slop, boost=phrase.boost)
                    for name in PHRASE_FIELDS
                ]
            )
        if not self.schema[fieldname].format.supports("positions"):
            # Subject codes, ids: a quoted value is the value.
            return wq.And([wq.Term(fieldname, s) for s in stems], boost=phrase.boost)
        return wq.Phrase(fieldname, stems, slop=phrase.slop, boost=phrase.boost)

    def _pattern(self, pattern: Pattern) -> wq.Query | None:
        fieldname = pattern.field or DEFAULT_FIELD
        text = pattern.text if fieldname == "id" else fold(pattern.text)
        # In titles and abstracts (both, for a bare pattern), the words as written, not
        # their stems: transformer* finds "transformers", not "transformation".
        names = tuple(WRITTEN_FIELDS) if fieldname == DEFAULT_FIELD else (fieldname,)
        parts = [_pattern_query(WRITTEN_FIELDS.get(name, name), text) for name in names]
        return _boosted(_or(parts), pattern.boost)

    def _years(self, years: Years) -> wq.Query:
        field = self.schema[years.field]
        if years.first is not None and years.first == years.last:
            return field.parse_query(years.field, str(years.first))
        return field.parse_range(years.field, years.first, years.last, False, False)


def _and_not(positive: list[wq.Query], negative: list[wq.Query]) -> wq.Query | None:
    """``positive`` all required, none of ``negative``; ``*`` among others requires nothing."""
    kept = [q for q in positive if not _is_everything(q)]
    if not kept and positive:
        kept = [wq.Every()]
    if not kept and not negative:
        return None
    base = wq.Every() if not kept else kept[0] if len(kept) == 1 else wq.And(kept)
    if not negative:
        return base
    return wq.AndNot(base, negative[0] if len(negative) == 1 else wq.Or(negative))


def _pattern_query(fieldname: str, text: str) -> wq.Query:
    """A prefix (``optim*``) or wildcard (``ba?ch``, ``ne?ral*``) on ``fieldname``."""
    if re.fullmatch(r"[^*?]+\*", text):
        return wq.Prefix(fieldname, text[:-1])
    return wq.Wildcard(fieldname, text)


def _or(parts: list[wq.Query]) -> wq.Query:
    return parts[0] if len(parts) == 1 else wq.Or(parts)


def _is_everything(query: wq.Query) -> bool:
    return type(query) is wq.Every and not query.fieldname


def _boosted(query: wq.Query | None, boost: float) -> wq.Query | None:
    if query is None or boost == 1.0:
        return query
    query = query.copy()
    query.boost = boost
    return query
