"""Matched words marked in titles, abstracts and snippets: the HTML a hit shows (text
escaped, matches in ``<mark>``), and the plain text of it.
"""

from __future__ import annotations

import html
import re
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from whoosh import highlight
from whoosh import query as wq
from whoosh.analysis import Token
from whoosh.searching import Hit as WhooshHit

from pubsearch.index.schema import DEFAULT_FIELD, WRITTEN_FIELDS
from pubsearch.ingest.records import MARK_END, MARK_START
from pubsearch.search.compiler import COMMON_WORDS
from pubsearch.search.wildcards import PATTERN_QUERIES, word_pattern

SNIPPET_CHARS = 160


def marked_to_html(text: str) -> str:
    """Escape ``text`` and turn highlight marks into ``<mark>`` elements."""
    return html.escape(text).replace(MARK_START, "<mark>").replace(MARK_END, "</mark>")


def html_to_plain(fragment: str) -> str:
    """The text of a snippet produced by :func:`marked_to_html`, without markup."""
    return html.unescape(fragment.replace("<mark>", "").replace("</mark>", ""))


class MarkFormatter(highlight.Formatter):  # type: ignore[misc]  # whoosh is Any to mypy
    """Wraps matched words in private-use marks; escaping is left to the renderer. A
    fragment starts and ends at a word's edge, not inside one ("ntinuous")."""

    between = " \u2026 "

    def format_token(self, text: str, token: Any, replace: bool = False) -> str:
        return MARK_START + str(highlight.get_text(text, token, replace)) + MARK_END

    def format_fragment(self, fragment: Any, replace: bool = False) -> str:
        text = fragment.text
        matches = [t for t in fragment.matches if t.startchar is not None]
        first = min((t.startchar for t in matches), default=fragment.endchar)
        last = max((t.endchar for t in matches), default=fragment.startchar)
        start = fragment.startchar
        if 0 < start < first and _inside_word(text, start):
            space = text.find(" ", start, first)
            fragment.startchar = space + 1 if space >= 0 else first
        end = fragment.endchar
        if last < end < len(text) and _inside_word(text, end):
            space = text.rfind(" ", last, end)
            fragment.endchar = space if space >= 0 else last
        return str(super().format_fragment(fragment, replace))


def _inside_word(text: str, at: int) -> bool:
    """Whether position ``at`` falls between two characters of one word."""
    return text[at - 1].isalnum() and text[at].isalnum()


@dataclass(frozen=True)
class Marks:
    """What to mark in a field's text: its words whose terms (stems) are ``terms``, and
    those whose form as written (cut and folded, not stemmed) is a word one of
    ``patterns`` stands for (:func:`pubsearch.search.wildcards.word_pattern`), but the common
    words ("of", "the")."""

    terms: frozenset[str] = frozenset()
    patterns: tuple[re.Pattern[str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.terms or self.patterns)


def marked_words(query: wq.Query) -> dict[str, Marks]:
    """What to mark in titles and abstracts: the query's words searched in that field or
    in the combined title-and-abstract field (excluded words are not marked), less the
    common words ("of", "the") unless there is nothing else to mark; and the words as
    written that its wildcards and prefixes on that field stand for."""
    leaves = list(_positive_leaves(query))

    def marks(fieldname: str) -> Marks:
        found = frozenset(
            text.decode("utf-8") if isinstance(text, bytes) else text
            for leaf in leaves
            if not isinstance(leaf, PATTERN_QUERIES)
            for name, text in leaf.terms(phrases=True)
            if name in (fieldname, DEFAULT_FIELD)
        )
        written = WRITTEN_FIELDS[fieldname]
        patterns = tuple(
            word_pattern(leaf)
            for leaf in leaves
            if isinstance(leaf, PATTERN_QUERIES) and leaf.fieldname == written
        )
        # Marks on every "the" and "of" of a snippet would hide the words that matter, and
        # would choose the snippet.
        return Marks(found - COMMON_WORDS or found, patterns)

    return {"title": marks("title"), "abstract": marks("abstract")}


def _positive_leaves(query: wq.Query) -> Iterator[wq.Query]:
    if isinstance(query, wq.Not):
        return
    if isinstance(query, wq.AndNot):
        yield from _positive_leaves(query.a)
        return
    if query.is_leaf():
        yield query
        return
    for sub in query.children():
        yield from _positive_leaves(sub)


def highlight_field(
    highlighter: highlight.Highlighter,
    hit: WhooshHit,
    fieldname: str,
    marks: Marks,
    top: int,
    text: str | None = None,
    tokens: TextTokens | None = None,
) -> str:
    """``fieldname``'s text (or ``text``, analysed as that field) with the words of
    ``marks`` marked: Whoosh's ``highlight`` (its fragments chosen and formatted the
    same), with the text analysed once (``tokens``, when the caller has them: a hit's
    abstract gives its snippet and its whole text) and its tokens as lists, not a token
    object passed through three generators a word."""
    text = text if text is not None else hit.get(fieldname) or ""
    if not marks or not text:
        return ""
    if tokens is None:
        analyzer = hit.searcher.schema[fieldname].analyzer
        tokens = TextTokens.of(analyzer, text, marks.terms, marks.patterns)
    return marked(highlighter, tokens, top)


def marked(highlighter: highlight.Highlighter, tokens: TextTokens, top: int) -> str:
    """The ``top`` fragments of ``highlighter`` in the text of ``tokens``, its matched
    tokens marked, as Whoosh's ``highlight`` chooses and formats them."""
    text = tokens.text
    fragmenter = highlighter.fragmenter
    if type(fragmenter) is highlight.ContextFragmenter:
        fragments = tokens.context_fragments(
            fragmenter.maxchars, fragmenter.surround, fragmenter.charlimit
        )
    elif type(fragmenter) is highlight.WholeFragmenter:
        fragments = tokens.whole_fragment(fragmenter.charlimit)
    else:
        fragments = list(fragmenter.fragment_tokens(text, tokens.as_whoosh_tokens()))
    best = highlight.top_fragments(
        fragments, top, highlight.BasicFragmentScorer(), highlight.FIRST, minscore=1
    )
    return str(highlighter.formatter(text, best))


class Span:
    """A matched token: what Whoosh's fragments, scorer and formatters read of one."""

    __slots__ = ("text", "startchar", "endchar", "boost", "matched")

    def __init__(self, text: str, startchar: int, endchar: int, boost: float) -> None:
        self.text = text
        self.startchar = startchar
        self.endchar = endchar
        self.boost = boost
        self.matched = True

    def copy(self) -> Span:
        return Span(self.text, self.startchar, self.endchar, self.boost)


@dataclass
class TextTokens:
    """A text's tokens as its field's analyzer makes them for a query (stop words kept,
    with character offsets), each marked when it is one of the words to mark."""

    text: str
    texts: list[str]
    starts: list[int]
    ends: list[int]
    boosts: list[float] | None  # None: every token's boost is 1
    matched: list[bool]

    @classmethod
    def of(
        cls,
        analyzer: Any,
        text: str,
        words: frozenset[str],
        patterns: Sequence[re.Pattern[str]] = (),
    ) -> TextTokens:
        """``text``'s tokens, those whose terms are ``words`` marked, and those whose
        form as written one of ``patterns`` matches whole (but the common words)."""
        # With the forms as written (for patterns) from the same pass, where it can.
        spans = getattr(analyzer, "written_spans" if patterns else "spans", None)
        found = spans(text) if spans is not None else None
        written: list[str] | None = None
        if found is not None:
            texts, starts, ends = found[:3]
            written = found[3] if patterns else None
            boosts = None
        else:
            tokens = [
                (t.text, t.startchar, t.endchar, t.boost)
                for t in analyzer(text, chars=True, mode="query", removestops=False)
            ]
            texts = [t[0] for t in tokens]
            starts = [t[1] for t in tokens]
            ends = [t[2] for t in tokens]
            boosts = [t[3] for t in tokens]
        matched = [t in words for t in texts]
        if patterns:
            if written is None:  # the same tokens, not stemmed
                written = [
                    t.text
                    for t in analyzer(
                        text, chars=True, mode="query", removestops=False, no_morph=True
                    )
                ]
            fits = _either(patterns).fullmatch
            for i, word in enumerate(written):
                if not matched[i] and word not in COMMON_WORDS and fits(word):
                    matched[i] = True
        return cls(text, texts, starts, ends, boosts, matched)

    def _span(self, i: int) -> Span:
        boost = 1.0 if self.boosts is None else self.boosts[i]
        return Span(self.texts[i], self.starts[i], self.ends[i], boost)

    def whole_fragment(self, charlimit: int) -> list[highlight.Fragment]:
        """The text as one fragment with every match up to ``charlimit`` characters in it
        (Whoosh's WholeFragmenter)."""
        picked = []
        for i, matched in enumerate(self.matched):
            if charlimit and self.ends[i] > charlimit:
                break
            if matched:
                picked.append(self._span(i))
        return [highlight.Fragment(self.text, picked)]

    def context_fragments(
        self, maxchars: int, surround: int, charlimit: int
    ) -> list[highlight.Fragment]:
        """Runs of matches with ``surround`` characters of context each side, at most
        ``maxchars`` characters of tokens long (Whoosh's ContextFragmenter: a fragment
        starts at the earliest token within ``surround`` characters before its first match,
        and ends once ``surround`` characters of tokens have followed its last match or it
        would grow past ``maxchars``)."""
        text, starts, ends, matched = self.text, self.starts, self.ends, self.matched
        fragments: list[highlight.Fragment] = []
        before: deque[int] = deque()  # starts of the unmatched tokens just before
        first: int | None = None  # where the open fragment starts
        left = -1  # characters of tokens the open fragment has still to take; < 0: none open
        size = 0  # characters of tokens in the open fragment
        picked: list[Span] = []
        end = 0
        for i in range(len(starts)):
            start, end = starts[i], ends[i]
            length = end - start
            if charlimit and end > charlimit:
                break
            if left < 0 and not matched[i]:
                before.append(start)
                while before and end - before[0] > surround:
                    before.popleft()
            elif size + length > maxchars:
                left = 0  # full: close it with this token
            elif matched[i]:
                left = surround
                if first is None:
                    if before:
                        first = before[0]
                    else:
                        first = start
                        left += surround  # no context before it: more after
                picked.append(self._span(i))
            if left >= 0:
                size += length
                left -= length
                if left <= 0:
                    fragments.append(_fragment(text, picked, first, end))
                    picked, before, first, size = [], deque(), None, 0
        if picked:
            fragments.append(_fragment(text, picked, first, end))
        return fragments

    def as_whoosh_tokens(self) -> Iterator[Any]:
        """The tokens one at a time, as Whoosh's fragmenters read them."""
        token = Token(chars=True)
        for i, text in enumerate(self.texts):
            token.text = text
            token.startchar, token.endchar = self.starts[i], self.ends[i]
            token.boost = 1.0 if self.boosts is None else self.boosts[i]
            token.matched = self.matched[i]
            yield token


def _either(patterns: Sequence[re.Pattern[str]]) -> re.Pattern[str]:
    """One expression whose full matches are those of any of ``patterns``."""
    if len(patterns) == 1:
        return patterns[0]
    return re.compile("|".join(f"(?:{p.pattern})" for p in patterns), re.DOTALL)


def _fragment(text: str, picked: list[Span], first: int | None, end: int) -> highlight.Fragment:
    """Whoosh's ``mkfrag``: a fragment with no start of its own starts at its first match
    (or the text's start), and it lies within the text."""
    if first is None:
        first = picked[0].startchar if picked else 0
    return highlight.Fragment(text, picked, max(0, first), min(len(text), end))


def written_words(analyzer: Any, text: str) -> dict[str, str]:
    """Each term of ``text`` (as ``analyzer`` makes it) and the word that first gave it,
    as written (lower case unless it is an acronym)."""
    out: dict[str, str] = {}
    for token in analyzer(text, chars=True, mode="index"):
        if token.text not in out:
            word = text[token.startchar : token.endchar]
            out[token.text] = word if word.isupper() else word.lower()
    return out


def lead(text: str, limit: int = SNIPPET_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > 0 else limit] + " \u2026"
