"""A faster way to run the text analyzer when indexing, with the same tokens.

Whoosh runs an analyzer as a chain of generators, one Python call per token per filter;
for indexing that is most of the analysis time. :class:`FastAnalyzer` is a
``CompositeAnalyzer`` that, for the common chain ``RegexTokenizer | LowercaseFilter |
CharsetFilter | StopFilter | PyStemmerFilter`` and the plain indexing call, works on whole
lists instead (one ``findall``, one ``stemWords``) and yields the very tokens the chain
would. Any other chain or call (queries, highlighting with character offsets, kept stop
words) goes through the chain unchanged.
"""

from __future__ import annotations

import functools
import re
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, repeat
from typing import Any

from whoosh import analysis
from whoosh.analysis.acore import Token
from whoosh.analysis.analyzers import CompositeAnalyzer

from pubsearch.core import speedups
from pubsearch.index.tokenizer import SearchableTokenizer
from pubsearch.ingest.textforms import searchable, searchable_offsets

# Keyword arguments the bulk paths understand; any other one takes the chain. (No filter
# of the supported chain looks at ``mode``.)
_FAST_KWARGS = frozenset(
    {"positions", "boosts", "mode", "removestops", "start_pos", "chars", "start_char"}
)
# Those that need the slower of the two bulk paths (character offsets, stop words kept).
_FULL_KWARGS = frozenset({"chars", "start_char"})

# Stems a Vocabulary numbers before it may start anew (between segments: see trim).
_VOCABULARY_LIMIT = 1_000_000


@dataclass(frozen=True)
class _Plan:
    pattern: re.Pattern[str]
    charmap: Any
    stops: frozenset[str]
    minsize: int
    maxsize: int | None
    renumber: bool
    stemmer: Any  # a Stemmer.Stemmer, or None for no stemming
    ignore: frozenset[str]
    ascii_lower_identity: bool  # the charmap maps no lower-case ASCII character
    drops: bool = True  # the chain has a stop filter (which may drop words)
    normalize: bool = False  # the tokenizer reads the text as textforms.searchable writes it
    # Per-word results for indexing in bulk, shared by equal chains (set once made).
    caches: _WordCaches | None = field(default=None, compare=False)


def _plan_for(items: list[Any]) -> _Plan | None:
    """How to run ``items`` in bulk, or None when they are not a chain this supports:
    ``RegexTokenizer | LowercaseFilter | CharsetFilter`` (or a ``SearchableTokenizer``
    first), then a ``StopFilter`` or not, then a ``PyStemmerFilter`` or not."""
    if len(items) < 3:
        return None
    tokenizer, lower, charset, *rest = items
    stop = rest.pop(0) if rest and type(rest[0]) is analysis.StopFilter else None
    stem = rest.pop(0) if rest and type(rest[0]) is analysis.PyStemmerFilter else None
    ok = (
        not rest
        and type(tokenizer) in (analysis.RegexTokenizer, SearchableTokenizer)
        and not tokenizer.gaps
        and not tokenizer.expression.groups  # findall must return whole matches
        and type(lower) is analysis.LowercaseFilter
        and type(charset) is analysis.CharsetFilter
    )
    if not ok:
        return None
    stemmer = None
    if stem is not None:
        import Stemmer

        stemmer = Stemmer.Stemmer(stem.lang)
        stemmer.maxCacheSize = max(int(stem.cachesize or 0), 0)
    plan = _Plan(
        pattern=tokenizer.expression,
        charmap=charset.charmap,
        # No stop filter: nothing dropped, positions one by one.
        stops=frozenset(stop.stops) if stop else frozenset(),
        minsize=stop.min if stop else 0,
        maxsize=stop.max if stop else None,
        renumber=stop.renumber if stop else True,
        stemmer=stemmer,
        ignore=frozenset(stem.ignore) if stem else frozenset(),
        ascii_lower_identity=all(
            chr(c).translate(charset.charmap) == chr(c) for c in range(128) if not chr(c).isupper()
        ),
        drops=stop is not None,
        normalize=type(tokenizer) is SearchableTokenizer,
    )
    object.__setattr__(plan, "caches", _caches_for(plan, stem.lang if stem else None))
    return plan


class IndexWords:
    """The tokens of one text as indexing sees them: their texts (``stems``) and positions,
    and, computed when asked, their texts before stemming (``no_morph``: what spelling
    keeps). From :meth:`FastAnalyzer.index_ids`, the words come as their numbers in the
    chain's :class:`Vocabulary` (``ids``: 4-byte unsigned integers in the machine's order)
    and ``stems`` is worked out from them when asked."""

    __slots__ = ("_numbered", "_plan", "_stems", "_text", "_unstemmed", "ids", "positions")

    def __init__(
        self,
        stems: list[str] | None,
        positions: Sequence[int],
        unstemmed: list[str] | None = None,
        plan: _Plan | None = None,
        text: str = "",
        ids: bytes | None = None,
        vocabulary: Vocabulary | None = None,
    ) -> None:
        assert stems is not None or (ids is not None and vocabulary is not None)
        # The vocabulary the numbers are in, and its generation (they mean nothing after).
        self._numbered = (vocabulary, vocabulary.generation) if vocabulary is not None else None
        self._stems = stems
        self.positions = positions
        self._unstemmed = unstemmed
        self._plan = plan
        self._text = text
        self.ids = ids

    @property
    def stems(self) -> list[str]:
        if self._stems is None:
            assert self.ids is not None
            self._stems = self._vocabulary().stems_of(self.ids)
        return self._stems

    def _vocabulary(self) -> Vocabulary:
        """The vocabulary ``ids`` are numbers in (still as it numbered them)."""
        assert self._numbered is not None
        vocabulary, generation = self._numbered
        if vocabulary.generation != generation:
            raise RuntimeError("the words' vocabulary was numbered anew since")
        return vocabulary

    def __len__(self) -> int:
        """The number of words."""
        return len(self._stems) if self._stems is not None else len(self.ids or b"") // 4

    def unstemmed(self) -> list[str]:
        if self._unstemmed is None:
            if self.ids is not None and self._numbered is not None:
                # The numbers are the words' as written (see Vocabulary).
                self._unstemmed = self._vocabulary().words_of(self.ids)
                return self._unstemmed
            plan = self._plan
            assert plan is not None and plan.caches is not None
            chunks = plan.caches[2]
            assert chunks is not None  # made by _index_words from the runs' caches
            # The kept words are the non-empty folded ones (the stop filter drops words).
            pieces = map(chunks.__getitem__, self._text.split())
            self._unstemmed = list(filter(None, chain.from_iterable(pieces)))
        return self._unstemmed


class Vocabulary:
    """The words of a chain (folded, not stemmed), numbered in the order they were first
    seen, with each one's stem, for the bulk writer (see :class:`_NumberedRuns`): a word's
    number maps to the term number of a segment's field through an array
    (``_speedups.doc_postings_ids``), where a word took a look-up by its text in the
    field's dict. The same numbers serve a field of stems (``stems[number]``: words of one
    stem map to its one term) and a field of the words as written (``words[number]``).

    :meth:`trim` starts the numbering anew (when it has grown past a limit; between
    segments) and counts a new ``generation``: a map from the numbers made before is
    stale then.
    """

    __slots__ = ("_ids", "generation", "numbers", "stems", "words")

    def __init__(self, stem: Callable[[str], str] | None = None) -> None:
        self.words: list[str] = []
        self.stems: list[str] = []
        self.numbers = _Numbering(self.words, self.stems, stem or str)
        self.generation = 0
        self._ids: _NumberedRuns | None = None

    def number(self, word: str) -> int:
        return self.numbers[word]

    def stems_of(self, ids: bytes) -> list[str]:
        return list(map(self.stems.__getitem__, array("I", ids)))

    def words_of(self, ids: bytes) -> list[str]:
        return list(map(self.words.__getitem__, array("I", ids)))

    def trim(self, limit: int | None = None) -> None:
        """Start anew if more than ``limit`` (:data:`_VOCABULARY_LIMIT`) words are numbered
        (no number given out may be in use but in a stale field map)."""
        if len(self.words) > (_VOCABULARY_LIMIT if limit is None else limit):
            self.numbers.clear()
            self.words.clear()
            self.stems.clear()
            if self._ids is not None:
                self._ids.clear()
                self._ids.leads.clear()
            self.generation += 1


class _Numbering(dict[str, int]):
    """A word -> its number: the next one for a new word (appending it to ``words``, and
    its stem to ``stems``)."""

    def __init__(self, words: list[str], stems: list[str], stem: Callable[[str], str]) -> None:
        super().__init__()
        self._words = words
        self._stems = stems
        self._stem = stem

    def __missing__(self, word: str) -> int:
        number = self[word] = len(self._words)
        self._words.append(word)
        self._stems.append(self._stem(word))
        return number


# Words remembered by each kind of chain (see _WordCaches), past which a cache starts anew.
_CACHE_LIMIT = 200_000


class _FoldedWords(dict[str, str]):
    """A word as the tokenizer found it -> the word after lower-casing, accent folding and
    the stop filter: the folded word, or "" when the stop filter drops it."""

    def __init__(self, plan: _Plan) -> None:
        super().__init__()
        self._plan = plan

    def __missing__(self, word: str) -> str:
        plan = self._plan
        folded: str = word.lower()
        if not (plan.ascii_lower_identity and folded.isascii()):  # else nothing to translate
            folded = folded.translate(plan.charmap)
        size = len(folded)
        kept = (
            size >= plan.minsize
            and (plan.maxsize is None or size <= plan.maxsize)
            and folded not in plan.stops
        )
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        result = self[word] = folded if kept else ""
        return result


class _StemmedWords(dict[str, str]):
    """A folded word -> its stem."""

    def __init__(self, plan: _Plan, stem_lang: str | None) -> None:
        super().__init__()
        self._plan = plan
        self._stem_word = None
        if stem_lang is not None:
            import Stemmer

            # A stemmer of its own, without PyStemmer's cache: every word asked here is new
            # to it, and a full cache sorted itself to make room (three times slower a word).
            stemmer = Stemmer.Stemmer(stem_lang)
            stemmer.maxCacheSize = 0
            self._stem_word = stemmer.stemWord

    def __missing__(self, word: str) -> str:
        plan = self._plan
        stem_word = self._stem_word or plan.stemmer.stemWord
        stem: str = word if word in plan.ignore else stem_word(word)
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        self[word] = stem
        return stem


class _FoldedRuns(dict[str, tuple[str, ...]]):
    """A run of non-space characters -> its words folded (see :class:`_FoldedWords`).

    Only for tokenizer patterns that cannot match white space nor look around a match
    (:data:`_SPACE_FREE_PATTERNS`): then the words of a text are those of its white-space
    separated runs, one run after another, and the same run always gives the same words.
    """

    def __init__(self, plan: _Plan, folds: _FoldedWords) -> None:
        super().__init__()
        self.findall = plan.pattern.findall
        self.folds = folds
        # The same for the finer runs of _speedups.run_stems, every word kept.
        self.runs = _KeptRuns(folds, self.findall)

    def __missing__(self, chunk: str) -> tuple[str, ...]:
        words = tuple(map(self.folds.__getitem__, self.findall(chunk)))
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        self[chunk] = words
        return words


class _StemmedRuns(dict[str, tuple[str, ...]]):
    """A run of non-space characters -> the stems of its kept words; and in ``leads``, the
    run -> its number of words and the index of its first kept word (-1 for none)."""

    def __init__(self, chunks: _FoldedRuns, stems: _StemmedWords) -> None:
        super().__init__()
        self._chunks = chunks
        self._stems = stems
        self.leads: dict[str, tuple[int, int]] = {}
        self.ids: _NumberedRuns | None = None  # its stems numbered, when first asked

    def __missing__(self, chunk: str) -> tuple[str, ...]:
        chunks = self._chunks
        folded = chunks.get(chunk) or tuple(map(chunks.folds.__getitem__, chunks.findall(chunk)))
        kept = [w for w in folded if w]
        stems = tuple(map(self._stems.__getitem__, kept))
        if len(self) >= _CACHE_LIMIT:
            self.clear()
            self.leads.clear()
        self[chunk] = stems
        self.leads[chunk] = (len(folded), folded.index(kept[0]) if kept else -1)
        return stems


class _NumberedRuns(dict[str, bytes]):
    """A run of non-space characters -> its kept words' numbers in ``vocabulary`` (which
    knows their stems); and in ``leads``, the run -> its number of words and the index of
    its first kept word (-1 for none). What :class:`_StemmedRuns` gives, numbered, from
    the same word caches."""

    def __init__(self, plan: _Plan) -> None:
        super().__init__()
        assert plan.caches is not None
        folds, stems, chunks, _ = plan.caches
        assert chunks is not None  # runs are cached for this chain
        self._fold = folds.__getitem__
        self._findall = chunks.findall
        self.vocabulary = Vocabulary(stems.__getitem__)
        self.vocabulary._ids = self
        self._number = self.vocabulary.numbers.__getitem__
        self.leads: dict[str, tuple[int, int]] = {}

    def __missing__(self, chunk: str) -> bytes:
        folded = tuple(map(self._fold, self._findall(chunk)))
        kept = [w for w in folded if w]
        numbers = array("I", map(self._number, kept)).tobytes()
        if len(self) >= _CACHE_LIMIT:
            self.clear()
            self.leads.clear()
        self[chunk] = numbers
        self.leads[chunk] = (len(folded), folded.index(kept[0]) if kept else -1)
        return numbers


class _KeptRuns(dict[str, tuple[str, ...]]):
    """A run of non-space characters -> its words, folded (not stemmed), every one of
    them (for a chain without a stop filter)."""

    def __init__(self, folds: _FoldedWords, findall: Callable[[str], list[str]]) -> None:
        super().__init__()
        self._fold = folds.__getitem__
        self._findall = findall

    def __missing__(self, chunk: str) -> tuple[str, ...]:
        kept = tuple(map(self._fold, self._findall(chunk)))
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        self[chunk] = kept
        return kept


def _any_lead(cache: object, piece: str) -> tuple[int, int]:
    """A lead for ``_speedups.run_stems`` when its first position is not wanted."""
    return 0, 0


def _id_lead(ids: _NumberedRuns, piece: str) -> tuple[int, int]:
    """``ids.leads[piece]`` for ``_speedups.run_ids``, once more after ``ids`` was cleared
    meanwhile."""
    ids.pop(piece, None)
    ids[piece]  # noqa: B018  # computes both
    return ids.leads[piece]


# Characters no word of those patterns starts or ends with (no word character among them).
_EDGE_PUNCTUATION = "()[]{}<>,;:!?\"'.`*&/\\|~^=+-%#@$"

# Tokenizer patterns known to match no white space and to look at nothing around a match.
_SPACE_FREE_PATTERNS = frozenset({r"\w+(?:['.]?\w+)*", r"\w+(?:'\w+)*", r"\w+"})

# Caches shared by the plans of equal chains (title, abstract and content analyzers).
_WordCaches = tuple[_FoldedWords, _StemmedWords, _FoldedRuns | None, _StemmedRuns | None]
_CACHES: dict[tuple[Any, ...], _WordCaches] = {}


def _caches_for(plan: _Plan, stem_lang: str | None) -> _WordCaches:
    charmap = plan.charmap
    charmap_key = frozenset(charmap.items()) if isinstance(charmap, dict) else id(charmap)
    key = (
        plan.pattern.pattern,
        plan.pattern.flags,
        charmap_key,
        plan.stops,
        plan.minsize,
        plan.maxsize,
        stem_lang,
        plan.ignore,
        plan.drops,
    )
    caches = _CACHES.get(key)
    if caches is None:
        folds = _FoldedWords(plan)
        space_free = plan.pattern.pattern in _SPACE_FREE_PATTERNS and not (
            plan.pattern.flags & re.VERBOSE
        )
        stems = _StemmedWords(plan, stem_lang)
        chunks = _FoldedRuns(plan, folds) if space_free else None
        stem_chunks = (
            _StemmedRuns(chunks, stems)
            if chunks is not None and plan.drops and plan.minsize >= 1 and plan.stemmer
            else None
        )
        caches = _CACHES[key] = (folds, stems, chunks, stem_chunks)
    return caches


def _index_words(plan: _Plan, value: str) -> IndexWords:
    """The tokens :meth:`FastAnalyzer._bulk` yields for ``value`` (``start_pos`` 0), both
    with and without stemming, without a Token per word.

    Each word's folding, stop test and stem are looked up in caches (the same per word
    wherever it occurs), which turns the per-word work into C-level ``map`` calls; for a
    pattern that cannot span white space, per white-space separated run. A dropped word
    folds to "", so the kept ones are the non-empty ones: right when the stop filter's
    ``minsize`` is at least 1 (else an empty word could be kept; such a chain takes
    :func:`_index_words_plain`).
    """
    if plan.normalize:
        value = searchable(value)
    if (plan.drops and plan.minsize < 1) or plan.caches is None:
        return _index_words_plain(plan, value)
    folds, stems, chunks, stem_chunks = plan.caches
    if stem_chunks is not None and plan.renumber:
        # Stems straight from each run; the first position is the number of words before
        # the first kept one.
        # Punctuation at a run's ends is never in a word (a word starts and ends with a
        # word character): without it, "model", "(model)," and "model." share an entry.
        compiled = speedups.active()
        if compiled is not None:  # the same, in one C call, from finer runs: of word
            # characters, apostrophes and dots (no word spans another character), so that
            # "model-based" shares "model" and "based" (172k -> 105k runs in 30k records)
            found, first = compiled.run_stems(
                value, stem_chunks, stem_chunks.leads, _EDGE_PUNCTUATION, _lead
            )
            return IndexWords(found, range(first, first + len(found)), plan=plan, text=value)
        pieces = list(map(str.strip, value.split(), repeat(_EDGE_PUNCTUATION)))
        found = list(chain.from_iterable(map(stem_chunks.__getitem__, pieces)))
        first = 0
        if found:
            leads = stem_chunks.leads
            for piece in pieces:
                count, lead = leads.get(piece) or _lead(stem_chunks, piece)
                if lead >= 0:
                    first += lead
                    break
                first += count
        return IndexWords(found, range(first, first + len(found)), plan=plan, text=value)
    compiled = speedups.active()
    if chunks is not None and compiled is not None and not plan.drops:
        # Every word kept (author names): each run's folded words, in one C call, from the
        # finer runs of run_stems (no word spans a character they end at).
        folded = compiled.run_stems(value, chunks.runs, {}, _EDGE_PUNCTUATION, _any_lead)[0]
    elif chunks is not None:
        folded = list(chain.from_iterable(map(chunks.__getitem__, value.split())))
    else:
        folded = list(map(folds.__getitem__, plan.pattern.findall(value)))
    positions: Sequence[int]
    if not plan.drops:  # no stop filter: every word kept, even one folded to nothing
        kept = folded
        positions = range(len(kept))
    elif plan.renumber:
        kept = list(filter(None, folded))
        first = 0
        if kept:
            while not folded[first]:
                first += 1
        positions = range(first, first + len(kept))
    else:
        kept = list(filter(None, folded))
        positions = [pos for pos, word in enumerate(folded) if word]
    if plan.stemmer is None:
        return IndexWords(kept, positions, unstemmed=kept)
    return IndexWords(list(map(stems.__getitem__, kept)), positions, unstemmed=kept)


def _lead(stem_chunks: _StemmedRuns, piece: str) -> tuple[int, int]:
    """``stem_chunks.leads[piece]``, once more after the cache was cleared meanwhile."""
    stem_chunks.pop(piece, None)
    stem_chunks[piece]  # noqa: B018  # computes both
    return stem_chunks.leads[piece]


def _id_cache(plan: _Plan) -> _NumberedRuns | None:
    """``plan``'s run -> word numbers cache, when its words can come as numbers: its runs'
    stems are cached (see :func:`_index_words`) and the C loops are built."""
    if plan.caches is None or not plan.renumber or speedups.active() is None:
        return None
    stem_chunks = plan.caches[3]
    if stem_chunks is None or (plan.drops and plan.minsize < 1):
        return None
    if stem_chunks.ids is None:
        stem_chunks.ids = _NumberedRuns(plan)
    return stem_chunks.ids


def _vocabulary_of(plan: _Plan) -> Vocabulary | None:
    ids = _id_cache(plan)
    return ids.vocabulary if ids is not None else None


def _index_ids(plan: _Plan, value: str) -> IndexWords | None:
    """:func:`_index_words` with the words as their numbers in ``plan``'s
    :class:`Vocabulary`; None where they cannot come so."""
    ids = _id_cache(plan)
    compiled = speedups.active()
    if ids is None or compiled is None:
        return None
    if plan.normalize:
        value = searchable(value)
    found, first = compiled.run_ids(value, ids, ids.leads, _EDGE_PUNCTUATION, _id_lead)
    count = len(found) // 4
    return IndexWords(
        None,
        range(first, first + count),
        plan=plan,
        text=value,
        ids=found,
        vocabulary=ids.vocabulary,
    )


def _index_words_plain(plan: _Plan, value: str) -> IndexWords:
    """:func:`_index_words` word by word, as :meth:`FastAnalyzer._bulk` does it."""
    if value.isascii() and plan.ascii_lower_identity:
        words = plan.pattern.findall(value.lower())
    else:
        charmap = plan.charmap
        words = [w.lower().translate(charmap) for w in plan.pattern.findall(value)]
    stops, minsize, maxsize = plan.stops, plan.minsize, plan.maxsize
    pairs = [
        (pos, word)
        for pos, word in enumerate(words)
        if len(word) >= minsize and (maxsize is None or len(word) <= maxsize) and word not in stops
    ]
    kept = [w for _, w in pairs]
    positions: Sequence[int]
    if plan.renumber:
        first = pairs[0][0] if pairs else 0
        positions = range(first, first + len(kept))
    else:
        positions = [pos for pos, _ in pairs]
    if plan.stemmer is None:
        stems = kept
    elif plan.ignore:
        ignore = plan.ignore
        stems = [w if w in ignore else plan.stemmer.stemWord(w) for w in kept]
    else:
        stems = plan.stemmer.stemWords(kept)
    return IndexWords(stems, positions, unstemmed=kept)


def _stems(plan: _Plan, words: list[str]) -> list[str]:
    """``words`` stemmed as the plan's stem filter would (its ignored words left alone)."""
    if plan.stemmer is None:
        return words
    if plan.ignore:
        return [w if w in plan.ignore else plan.stemmer.stemWord(w) for w in words]
    stems: list[str] = plan.stemmer.stemWords(words)
    return stems


def _full_words(
    plan: _Plan, value: str, no_morph: bool
) -> tuple[list[int], list[int], list[str], list[bool], list[str]]:
    """Where the tokenizer's words start and end in ``value``, the words (lower case,
    characters mapped), whether each is stopped (a stop word, or too short or long), and
    the stems of those that are not, in order."""
    offsets = None
    if plan.normalize:
        value, *offsets = searchable_offsets(value)
    ascii_lower = value.isascii() and plan.ascii_lower_identity
    matches = list(plan.pattern.finditer(value.lower() if ascii_lower else value))
    if offsets is None:
        starts = [m.start() for m in matches]
        ends = [m.end() for m in matches]
    else:  # where each word's first and last characters came from
        starts = [offsets[0][m.start()] for m in matches]
        ends = [offsets[1][m.end() - 1] for m in matches]
    if ascii_lower:
        words = [m.group() for m in matches]
    else:
        words = [m.group().lower().translate(plan.charmap) for m in matches]
    stops, minsize, maxsize = plan.stops, plan.minsize, plan.maxsize
    stopped = [
        not (len(w) >= minsize and (maxsize is None or len(w) <= maxsize) and w not in stops)
        for w in words
    ]
    kept = [w for w, stop in zip(words, stopped, strict=True) if not stop]
    if not no_morph:
        kept = _stems(plan, kept)
    return starts, ends, words, stopped, kept


class FastAnalyzer(CompositeAnalyzer):  # type: ignore[misc]  # whoosh is Any to mypy
    """The chain of ``composables``, run in bulk where that gives the same tokens."""

    @functools.cached_property
    def _plan(self) -> _Plan | None:
        """How to run the chain in bulk: made when first used, not when a schema is
        unpickled (as Whoosh does each time it reads an index's table of contents)."""
        return _plan_for(list(self.items))

    def __getstate__(self) -> dict[str, Any]:
        # The plan holds a Stemmer, which does not pickle; it is made again when used.
        return {k: v for k, v in self.__dict__.items() if k != "_plan"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __call__(self, value: str, no_morph: bool = False, **kwargs: Any) -> Iterator[Token]:
        plan = self._plan
        if plan is None or not isinstance(value, str) or not _FAST_KWARGS.issuperset(kwargs):
            chain: Iterator[Token] = super().__call__(value, no_morph=no_morph, **kwargs)
            return chain
        if kwargs.get("removestops", True) and not kwargs.keys() & _FULL_KWARGS:
            return self._bulk(plan, value, no_morph, **kwargs)
        return self._bulk_full(plan, value, no_morph, **kwargs)

    def index_words(self, value: str) -> IndexWords | None:
        """What indexing ``value`` (``mode="index"``, with positions) yields, as lists: or
        None when this analyzer cannot do it in bulk."""
        plan = self._plan
        if plan is None:
            return None
        return _index_words(plan, value)

    def index_ids(self, value: str) -> IndexWords | None:
        """:meth:`index_words` with the words as their numbers in :meth:`vocabulary`
        (``ids``; ``stems`` worked out when asked): or None where they cannot come so."""
        plan = self._plan
        if plan is None:
            return None
        return _index_ids(plan, value)

    def vocabulary(self) -> Vocabulary | None:
        """The numbering of :meth:`index_ids`, shared by analyzers of equal chains."""
        plan = self._plan
        return _vocabulary_of(plan) if plan is not None else None

    def index_key(self) -> tuple[int, bool] | None:
        """Equal for analyzers whose :meth:`index_words` are the same for every text (they
        share their caches): None when :meth:`index_words` cannot run in bulk."""
        plan = self._plan
        if plan is None or plan.caches is None:
            return None
        return id(plan.caches), plan.renumber

    def unstemmed_of(self, other: Any) -> bool:
        """Whether this analyzer's words are ``other``'s before stemming (the same chain,
        less ``other``'s stemmer): then the :meth:`IndexWords.unstemmed` of ``other``'s
        :meth:`index_words` are this one's, positions and all."""
        mine, theirs = self._plan, getattr(other, "_plan", None)
        if mine is None or not isinstance(theirs, _Plan) or mine.stemmer is not None:
            return False
        stemless = replace(theirs, stemmer=None, ignore=frozenset())
        return theirs.stemmer is not None and stemless == mine

    def splits_at_spaces(self) -> bool:
        """Whether no word can span a line: then a text's words are those of its lines,
        one after another. (Its pattern matches no white space; a SearchableTokenizer's
        TeX may join words across a space, never across a line.)"""
        plan = self._plan
        return plan is not None and plan.caches is not None and plan.caches[2] is not None

    def spans(self, value: str) -> tuple[list[str], list[int], list[int]] | None:
        """Each token of ``value`` as a query sees it with its stop words kept (what
        ``self(value, chars=True, mode="query", removestops=False)`` yields, as highlighting
        asks): its text, first character and end, as three lists. None when this analyzer
        cannot do it in bulk."""
        found = self.written_spans(value)
        return found[:3] if found is not None else None

    def written_spans(self, value: str) -> tuple[list[str], list[int], list[int], list[str]] | None:
        """:meth:`spans`, and each token's word as written (what ``no_morph=True`` gives:
        folded, not stemmed), as a fourth list. None when this analyzer cannot do it in
        bulk."""
        plan = self._plan
        if plan is None:
            return None
        starts, ends, words, stopped, kept = _full_words(plan, value, False)
        stems = iter(kept)
        texts = [word if stop else next(stems) for word, stop in zip(words, stopped, strict=True)]
        return texts, starts, ends, words

    def words(self, value: str, no_morph: bool = False) -> list[str]:
        """The token texts for ``value``, in order (what indexing would see)."""
        return [t.text for t in self(value, no_morph=no_morph, mode="index")]

    @staticmethod
    def _bulk(
        plan: _Plan,
        value: str,
        no_morph: bool,
        positions: bool = False,
        start_pos: int = 0,
        removestops: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        charmap = plan.charmap
        stops = plan.stops
        minsize = plan.minsize
        maxsize = plan.maxsize
        if plan.normalize:
            value = searchable(value)
        if value.isascii() and plan.ascii_lower_identity:
            # Lower-casing ASCII text first changes no token boundary, and the charmap
            # leaves lower-case ASCII alone.
            words = plan.pattern.findall(value.lower())
        else:
            words = [w.lower().translate(charmap) for w in plan.pattern.findall(value)]
        kept = [
            (pos, word)
            for pos, word in enumerate(words)
            if len(word) >= minsize
            and (maxsize is None or len(word) <= maxsize)
            and word not in stops
        ]
        if not kept:
            return
        texts = [w for _, w in kept]
        if not no_morph:
            texts = _stems(plan, texts)
        t = Token(positions, False, removestops=removestops, mode=mode, **kwargs)
        t.boost = 1.0
        t.stopped = False
        first = start_pos + kept[0][0]
        for i, text in enumerate(texts):
            t.text = text
            if positions:
                t.pos = first + i if plan.renumber else start_pos + kept[i][0]
            yield t

    @staticmethod
    def _bulk_full(
        plan: _Plan,
        value: str,
        no_morph: bool,
        positions: bool = False,
        chars: bool = False,
        start_pos: int = 0,
        start_char: int = 0,
        removestops: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        """Like :meth:`_bulk`, with character offsets and stop words kept (stopped), as
        highlighting asks; what the chain does token by token, done list by list."""
        starts, ends, words, stopped, kept = _full_words(plan, value, no_morph)
        stems = iter(kept)
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        t.boost = 1.0
        pos: int | None = None
        for i, (word, stop) in enumerate(zip(words, stopped, strict=True)):
            if stop:
                if removestops:
                    continue
                t.text = word
                t.stopped = True
                if positions:
                    t.pos = start_pos + i
            else:
                t.text = next(stems)
                t.stopped = False
                if positions:
                    if plan.renumber:
                        pos = start_pos + i if pos is None else pos + 1
                        t.pos = pos
                    else:
                        t.pos = start_pos + i
            if chars:
                t.startchar = start_char + starts[i]
                t.endchar = start_char + ends[i]
            yield t
