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

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from whoosh import analysis
from whoosh.analysis.acore import Token
from whoosh.analysis.analyzers import CompositeAnalyzer

# Keyword arguments the bulk paths understand; any other one takes the chain. (No filter
# of the supported chain looks at ``mode``.)
_FAST_KWARGS = frozenset(
    {"positions", "boosts", "mode", "removestops", "start_pos", "chars", "start_char"}
)
# Those that need the slower of the two bulk paths (character offsets, stop words kept).
_FULL_KWARGS = frozenset({"chars", "start_char"})


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


def _plan_for(items: list[Any]) -> _Plan | None:
    """How to run ``items`` in bulk, or None when they are not the chain this supports."""
    if len(items) != 5:
        return None
    tokenizer, lower, charset, stop, stem = items
    ok = (
        type(tokenizer) is analysis.RegexTokenizer
        and not tokenizer.gaps
        and not tokenizer.expression.groups  # findall must return whole matches
        and type(lower) is analysis.LowercaseFilter
        and type(charset) is analysis.CharsetFilter
        and type(stop) is analysis.StopFilter
        and type(stem) is analysis.PyStemmerFilter
    )
    if not ok:
        return None
    import Stemmer

    stemmer = Stemmer.Stemmer(stem.lang)
    stemmer.maxCacheSize = max(int(stem.cachesize or 0), 0)
    return _Plan(
        pattern=tokenizer.expression,
        charmap=charset.charmap,
        stops=frozenset(stop.stops),
        minsize=stop.min,
        maxsize=stop.max,
        renumber=stop.renumber,
        stemmer=stemmer,
        ignore=frozenset(stem.ignore),
        ascii_lower_identity=all(
            chr(c).translate(charset.charmap) == chr(c) for c in range(128) if not chr(c).isupper()
        ),
    )


class FastAnalyzer(CompositeAnalyzer):  # type: ignore[misc]  # whoosh is Any to mypy
    """The chain of ``composables``, run in bulk where that gives the same tokens."""

    def __init__(self, *composables: Any) -> None:
        super().__init__(*composables)
        self._plan = _plan_for(list(self.items))

    def __getstate__(self) -> dict[str, Any]:
        # The plan holds a Stemmer, which does not pickle; it is rebuilt on load.
        return {k: v for k, v in self.__dict__.items() if k != "_plan"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._plan = _plan_for(list(self.items))

    def __call__(self, value: str, no_morph: bool = False, **kwargs: Any) -> Iterator[Token]:
        plan = self._plan
        if plan is None or not isinstance(value, str) or not _FAST_KWARGS.issuperset(kwargs):
            chain: Iterator[Token] = super().__call__(value, no_morph=no_morph, **kwargs)
            return chain
        if kwargs.get("removestops", True) and not kwargs.keys() & _FULL_KWARGS:
            return self._bulk(plan, value, no_morph, **kwargs)
        return self._bulk_full(plan, value, no_morph, **kwargs)

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
        if not no_morph and plan.stemmer is not None:
            ignore = plan.ignore
            if ignore:
                stems = [w if w in ignore else plan.stemmer.stemWord(w) for w in texts]
            else:
                stems = plan.stemmer.stemWords(texts)
            texts = stems
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
        ascii_lower = value.isascii() and plan.ascii_lower_identity
        matches = list(plan.pattern.finditer(value.lower() if ascii_lower else value))
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
        if not no_morph and plan.stemmer is not None:
            ignore = plan.ignore
            if ignore:
                kept = [w if w in ignore else plan.stemmer.stemWord(w) for w in kept]
            else:
                kept = plan.stemmer.stemWords(kept)
        stems = iter(kept)
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        t.boost = 1.0
        pos: int | None = None
        for i, (match, word, stop) in enumerate(zip(matches, words, stopped, strict=True)):
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
                t.startchar = start_char + match.start()
                t.endchar = start_char + match.end()
            yield t
