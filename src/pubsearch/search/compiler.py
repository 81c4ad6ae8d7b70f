"""From what people type to a Whoosh query: the only place Whoosh queries are made of text.

:mod:`pubsearch.search.syntax` reads the text (plain text never fails there); this module
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

An arXiv id or a DOI (``2505.17997``, ``doi:10.1103/...``; see
:mod:`pubsearch.search.syntax`) finds the record that has it among its identity keys, ranked
above every match by words (:data:`IDENTIFIER_BOOST`). Beside other words an identifier
adds its record, and narrows nothing: ``2505.17997 2503.18889`` finds both records, and
``2505.17997 transformer`` that record first, then the records about transformers.
Inside explicit syntax it is a term like any other (``2505.17997 AND transformer``,
``NOT 2505.17997``).

Long text is a query like any other: a pasted abstract of 10,000 characters is searched by
its :data:`MAX_BARE_TERMS` most informative words (by idf and how often the text repeats
them). Explicit syntax stays bounded (:data:`MAX_QUERY_TERMS`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from whoosh import query as wq
from whoosh.analysis import STOP_WORDS
from whoosh.fields import Schema

from pubsearch.core.errors import QuerySyntaxError
from pubsearch.index.documents import key_term
from pubsearch.index.schema import DEFAULT_FIELD, FIELD_ALIASES, QUERY_FIELDS, WRITTEN_FIELDS
from pubsearch.ingest.records import fold
from pubsearch.ingest.textforms import greek_compound, greek_words, query_text
from pubsearch.search.request import parse_year
from pubsearch.search.syntax import (
    MIN_WILDCARD_PREFIX,
    AllOf,
    AnyOf,
    Everything,
    Fields,
    Identifier,
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
# MAX_NAME_QUERY_WORDS bare words (a pasted text names no one); or by one word read as a
# surname (pubsearch.search.boxwords says when).
Names = Callable[[str], "wq.Query | None"]
MAX_NAME_WORDS = 4
MAX_NAME_QUERY_WORDS = 8
_NAME_WORD = re.compile(r"[^\W\d_][\w.'\u2019-]*,?")
# What ``subject:`` followed by a value stands for (a code, an archive, a name, a
# pattern: see pubsearch.search.subjectmatch): the query of those subjects' records, and a notice
# about it (or None). Without it, the value is the term it is indexed as.
Subjects = Callable[[str], "tuple[wq.Query, str | None]"]

# What the term of an identifier weighs (a record's identifiers are terms of ``keys``,
# scored by their posting weight, 1): its record ranks above any match by words. Of
# several, each weighs this times how many come after it and itself, so that their
# records come in the order typed.
IDENTIFIER_BOOST = 10_000.0
IDENTIFIER_FIELD = "keys"

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
    # Surnames among other words read as names: the other words required, the papers of
    # the surnames' people (or the words in the text) optional. Searched when ``strict``
    # matches fewer than MIN_STRICT_MATCHES records and this matches more.
    named: wq.Query | None = None
    # The identifiers the query looks for (not those it excludes), in the order typed.
    identifiers: tuple[Identifier, ...] = ()
    bare: tuple[wq.Query, ...] = ()  # what the relaxed reading needs any one of

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
    subjects: Subjects | None = None,
    surnames: Names | None = None,
) -> TextQuery | None:
    """The readings of ``text`` (see the module's doc); ``None`` for blank text, a
    TextQuery whose ``strict`` is None when nothing in it can be searched for (``-``,
    ``title:(``). With ``informativeness``, a text of more than :data:`MAX_BARE_TERMS`
    distinct bare words keeps the most informative; with ``names``, bare words that name
    authors also find those authors' papers; with ``subjects``, ``subject:`` takes what
    it reads; with ``surnames``, single words read as surnames find their people's papers
    too (alone, or in the ``named`` reading). Raises QuerySyntaxError only for
    syntax that is unmistakably meant and wrong, or for a text too long to search."""
    text = text.strip()
    if len(text) > MAX_QUERY_CHARS:
        raise QuerySyntaxError(
            f"query is {len(text):,} characters long; at most {MAX_QUERY_CHARS:,} are allowed"
        )
    if not text:
        return None
    tree = read_query(query_text(text), FIELDS)
    return _Compiler(schema, subjects).text_query(tree, informativeness, names, surnames)


def parse_query(text: str, schema: Schema) -> wq.Query | None:
    """The strict reading of ``text``: every word required. ``None`` for text with nothing
    to search for. Raises QuerySyntaxError for text that cannot be a query."""
    parsed = parse_text_query(text, schema)
    return parsed.strict if parsed is not None else None


def bare_words(text: str) -> list[str] | None:
    """The words of a query made only of bare words, as typed; None when it has any
    explicit syntax (or nothing)."""
    try:
        tree = read_query(query_text(text.strip()), FIELDS)
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
        tree = read_query(query_text(text.strip()), FIELDS)
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
    def __init__(self, schema: Schema, subjects: Subjects | None = None) -> None:
        self.schema = schema
        self.subjects = subjects
        self.notices: list[str] = []

    def text_query(
        self,
        tree: Sequence,
        informativeness: Informativeness | None,
        names: Names | None = None,
        surnames: Names | None = None,
    ) -> TextQuery:
        # Runs of bare words that name authors: each such run is one unit, met by records
        # with its words or by the papers of the people it names; single words read as
        # surnames likewise.
        named, units = self._names(tree, names) if names is not None else (set(), [])
        single = self._surnames(tree, named, surnames) if surnames is not None else {}
        # Identifiers beside the rest find their records whatever the rest finds.
        alongside = [item for item in tree.items if isinstance(item, Identifier)]
        found = self._identified(alongside)
        positive, negative = self._signed(i for i in tree.explicit if i not in alongside)
        explicit_terms = len(alongside) + sum(
            1 for q in positive + negative for leaf in q.leaves() if not _is_everything(leaf)
        )
        if explicit_terms > MAX_QUERY_TERMS:
            raise QuerySyntaxError(
                f"query has {explicit_terms} terms in fields, phrases or operators; "
                f"at most {MAX_QUERY_TERMS} are allowed (plain words have no such limit)"
            )
        others = [w for w in tree.bare if id(w) not in named and id(w) not in single]
        with_surnames: wq.Query | None = None
        if single and not others and not units and not positive:
            # Surnames alone: each is a unit, required as a name is.
            named |= set(single)
            units = units + list(single.values())
        elif single:
            rest = _and_not(
                _or_found(found, self._bare(tree, named | set(single), None) + units + positive),
                negative,
            )
            if rest is not None:
                with_surnames = wq.AndMaybe(rest, _or(list(single.values())))
        bare = self._bare(tree, named, informativeness) + units
        notices = tuple(dict.fromkeys((*tree.notices, *self.notices)))
        words = tuple(dict.fromkeys(w for w in map(_shown, tree.bare) if w))
        sought = tuple(_sought(tree.items))
        strict = _and_not(_or_found(found, bare + positive), negative)
        if strict is None or len(bare) <= STRICT_MAX_TERMS:
            return TextQuery(
                strict, notices=notices, words=words, named=with_surnames, identifiers=sought
            )
        relaxed = _and_not(_or_found(found, [_or(bare), *positive]), negative)
        uncommon = [q for q in bare if not (type(q) is wq.Term and q.text in COMMON_WORDS)]
        loose = None
        if uncommon and len(uncommon) < len(bare):
            loose = _and_not(_or_found(found, [_or(uncommon), *positive]), negative)
        return TextQuery(strict, relaxed, loose, notices, words, with_surnames, sought, tuple(bare))

    def _bare(
        self, tree: Sequence, skipped: set[int], informativeness: Informativeness | None
    ) -> list[wq.Query]:
        """The queries of the bare words but ``skipped`` (by id)."""
        # The bare words' stems, each once, in order (a repeated word does not weigh more:
        # on SciFact's train claims, which repeat words to contrast them, counting them
        # lost 0.009 nDCG@10), with the highest boost given to it.
        boosts: dict[str, float] = {}
        counts: dict[str, int] = {}
        quotations: list[wq.Query] = []
        pairs = self._greek_pairs(tree, skipped)
        for word in tree.bare:
            if id(word) in skipped:
                continue
            if id(word) in pairs:
                if (pair := pairs[id(word)]) is not None:
                    quotations.append(pair)
                continue
            if isinstance(word, Phrase):
                if (quoted := self._phrase(word)) is not None:
                    quotations.append(quoted)
                continue
            if (compound := self._greek_compound(word)) is not None:
                quotations.append(compound)
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
        return bare + quotations[:MAX_QUERY_TERMS]

    def _greek_pairs(self, tree: Sequence, skipped: set[int]) -> dict[int, wq.Query | None]:
        """Two bare words side by side, one (not both) a Greek letter's name (``Lambda CDM``,
        ``Ly alpha``; not ``alpha beta``), in a query of at most :data:`MAX_NAME_QUERY_WORDS`
        bare words: by the words' ids, the pair's unit (both words, or the word they make
        joined) under the first, None under the second."""
        if len(tree.bare) > MAX_NAME_QUERY_WORDS:
            return {}
        field = self.schema[DEFAULT_FIELD]
        greek = greek_words()
        found: dict[int, wq.Query | None] = {}
        items = [
            item
            for item in tree.bare
            if isinstance(item, Word) and id(item) not in skipped and item.boost == 1.0
        ]
        for first, second in zip(items, items[1:], strict=False):
            if id(first) in found or not tree_gap(first, second):
                continue
            words = [
                w
                for item in (first, second)
                for w in field.process_text(item.text, mode="query", no_morph=True)
                if w
            ]
            if len(words) != 2 or (words[0] in greek) == (words[1] in greek):
                continue
            found[id(first)] = self._joined_or_both("".join(words), " ".join(words), 1.0)
            found[id(second)] = None
        return found

    def _joined_or_apart(self, joined: str, apart: str, boost: float) -> wq.Query | None:
        """The word ``joined``, or the words of ``apart`` side by side in a title or an
        abstract."""
        whole = [wq.Term(DEFAULT_FIELD, stem) for stem in self._stems(DEFAULT_FIELD, joined)]
        stems = self._stems(DEFAULT_FIELD, apart)
        side_by_side = [wq.Phrase(name, stems) for name in PHRASE_FIELDS]
        return _boosted(wq.Or([*whole, *side_by_side]), boost)

    def _joined_or_both(self, joined: str, apart: str, boost: float) -> wq.Query | None:
        """The word ``joined``, or every word of ``apart`` (as the words typed apart
        would need)."""
        whole = [wq.Term(DEFAULT_FIELD, stem) for stem in self._stems(DEFAULT_FIELD, joined)]
        both = [wq.Term(DEFAULT_FIELD, stem) for stem in self._stems(DEFAULT_FIELD, apart)]
        return _boosted(wq.Or([*whole, _and_all(both)]), boost)

    def _greek_compound(self, word: Word) -> wq.Query | None:
        """A word that joins a Greek letter's name to another word, written either way
        (``ΛCDM`` or ``LambdaCDM``, and ``Lambda-CDM`` or ``Lambda CDM`` in a text; ``Lyα``
        and ``Ly-alpha``): the word, or its two parts side by side in a title or abstract.
        None for any other word."""
        field = self.schema[DEFAULT_FIELD]
        words = [w for w in field.process_text(word.text, mode="query", no_morph=True) if w]
        greek = greek_words()
        if len(words) == 1 and (parts := greek_compound(words[0])) is not None:
            joined, apart = words[0], " ".join(parts)
        elif len(words) == 2 and (words[0] in greek) != (words[1] in greek):
            return self._joined_or_both("".join(words), " ".join(words), word.boost)
        else:
            return None
        return self._joined_or_apart(joined, apart, word.boost)

    def _surnames(self, tree: Sequence, named: set[int], surnames: Names) -> dict[int, wq.Query]:
        """Single bare words (not of a longer name) read as surnames, in a query of at most
        :data:`MAX_NAME_QUERY_WORDS` bare words: by id, each word's unit (its stems in the
        text, or the papers of the people with that surname)."""
        if len(tree.bare) > MAX_NAME_QUERY_WORDS:
            return {}
        found: dict[int, wq.Query] = {}
        for item in tree.items:
            if not isinstance(item, Word) or item.field is not None or id(item) in named:
                continue
            if not _NAME_WORD.fullmatch(item.text) or item.boost != 1.0:
                continue
            people = surnames(item.text.rstrip(","))
            if people is None:
                continue
            stems = self._stems(DEFAULT_FIELD, item.text)
            in_text = _and_not([wq.Term(DEFAULT_FIELD, t) for t in stems], [])
            found[id(item)] = wq.Or([in_text, people]) if in_text is not None else people
        return found

    def _identified(self, identifiers: list[Identifier]) -> wq.Query | None:
        """The records of ``identifiers`` (None for none), the first typed weighing most."""
        keys = list(dict.fromkeys(identifier.key for identifier in identifiers))
        terms = [
            wq.Term(IDENTIFIER_FIELD, key_term(key), boost=IDENTIFIER_BOOST * (len(keys) - i))
            for i, key in enumerate(keys)
        ]
        return _or(terms) if terms else None

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
        if isinstance(node, Identifier):
            return wq.Term(IDENTIFIER_FIELD, key_term(node.key), boost=IDENTIFIER_BOOST)
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

    def _subject(self, typed: str, boost: float) -> wq.Query | None:
        """``subject:`` and a value, read by :data:`Subjects`."""
        assert self.subjects is not None
        query, notice = self.subjects(typed)
        if notice:
            self.notices.append(notice)
        return _boosted(query, boost)

    def _word(self, word: Word) -> wq.Query | None:
        if word.field == "subject" and self.subjects is not None:
            return self._subject(word.text, word.boost)
        fieldname = word.field or DEFAULT_FIELD
        stems = self._stems(fieldname, word.text)
        if not stems:
            return None
        terms = [wq.Term(fieldname, stem) for stem in stems]
        return _boosted(terms[0] if len(terms) == 1 else wq.And(terms), word.boost)

    def _phrase(self, phrase: Phrase) -> wq.Query | None:
        if phrase.field == "subject" and self.subjects is not None and phrase.text.strip():
            return self._subject(phrase.text, phrase.boost)
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
        if pattern.field == "subject" and self.subjects is not None:
            return self._subject(pattern.text, pattern.boost)
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


def tree_gap(first: Word, second: Word) -> bool:
    """Whether ``second`` follows ``first`` with only white space between."""
    return 0 < second.start - first.end <= 3


def _and_all(parts: list[wq.Query]) -> wq.Query:
    return parts[0] if len(parts) == 1 else wq.And(parts)


def _pattern_query(fieldname: str, text: str) -> wq.Query:
    """A prefix (``optim*``) or wildcard (``ba?ch``, ``ne?ral*``) on ``fieldname``."""
    if re.fullmatch(r"[^*?]+\*", text):
        return wq.Prefix(fieldname, text[:-1])
    return wq.Wildcard(fieldname, text)


def _or(parts: list[wq.Query]) -> wq.Query:
    return parts[0] if len(parts) == 1 else wq.Or(parts)


def _or_found(found: wq.Query | None, required: list[wq.Query]) -> list[wq.Query]:
    """What must match: every one of ``required``, or else a record of the identifiers
    typed beside them (``found``)."""
    if found is None or not required:
        return required if found is None else [found]
    return [wq.Or([found, required[0] if len(required) == 1 else wq.And(required)])]


def _sought(nodes: Iterable[Node]) -> Iterator[Identifier]:
    """The identifiers among ``nodes`` and in them, but those under a NOT."""
    for node in nodes:
        if isinstance(node, Identifier):
            yield node
        elif isinstance(node, Must):
            yield from _sought([node.node])
        elif isinstance(node, (AllOf, AnyOf)):
            yield from _sought(node.items)


def _is_everything(query: wq.Query) -> bool:
    return type(query) is wq.Every and not query.fieldname


def _boosted(query: wq.Query | None, boost: float) -> wq.Query | None:
    if query is None or boost == 1.0:
        return query
    query = query.copy()
    query.boost = boost
    return query
