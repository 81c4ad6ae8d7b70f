"""Matched words marked in titles, abstracts and snippets: the HTML a hit shows (text
escaped, matches in ``<mark>``), and the plain text of it.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any

from whoosh import highlight
from whoosh import query as wq
from whoosh.searching import Hit as WhooshHit

from pubsearch.querying import COMMON_WORDS
from pubsearch.records import MARK_END, MARK_START
from pubsearch.schema import DEFAULT_FIELD

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


def marked_words(query: wq.Query) -> dict[str, frozenset[str]]:
    """The query's words to mark in titles and abstracts: those searched in that field or
    in the combined title-and-abstract field (excluded words are not marked), less the
    common words ("of", "the") unless there is nothing else to mark."""

    def words(fieldname: str) -> frozenset[str]:
        found = frozenset(
            text.decode("utf-8") if isinstance(text, bytes) else text
            for name, text in _positive_terms(query)
            if name in (fieldname, DEFAULT_FIELD)
        )
        # Marks on every "the" and "of" of a snippet would hide the words that matter, and
        # would choose the snippet.
        return found - COMMON_WORDS or found

    return {"title": words("title"), "abstract": words("abstract")}


def _positive_terms(query: wq.Query) -> Iterator[tuple[str, Any]]:
    if isinstance(query, wq.Not):
        return
    if isinstance(query, wq.AndNot):
        yield from _positive_terms(query.a)
        return
    if query.is_leaf():
        yield from query.terms(phrases=True)
        return
    for sub in query.children():
        yield from _positive_terms(sub)


def highlight_field(
    highlighter: highlight.Highlighter,
    hit: WhooshHit,
    fieldname: str,
    words: frozenset[str],
    top: int,
    text: str | None = None,
) -> str:
    """``fieldname``'s text (or ``text``, analysed as that field) with ``words`` (analysed
    forms) marked."""
    text = text if text is not None else hit.get(fieldname) or ""
    if not words or not text:
        return ""
    analyzer = hit.searcher.schema[fieldname].analyzer
    return str(
        highlight.highlight(
            text, words, analyzer, highlighter.fragmenter, highlighter.formatter, top=top
        )
    )


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
