"""The tokenizer of pubsearch's analyzers: Whoosh's regular-expression tokenizer run on the
text as :func:`pubsearch.ingest.textforms.searchable` writes it (TeX as it reads), with each
token's character offsets in the text it was given (what highlighting marks)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from whoosh.analysis import RegexTokenizer, Token

from pubsearch.ingest.textforms import searchable, searchable_offsets

# How an index's words were made. A generation whose tokenizer says another version was
# analysed otherwise: its words would not meet today's queries, so it is rebuilt
# (pubsearch.index.storage). 2: TeX read as it reads, letters folded by pubsearch.ingest.textforms.
ANALYSIS_VERSION = 2


class SearchableTokenizer(RegexTokenizer):  # type: ignore[misc]  # whoosh is Any to mypy
    """``RegexTokenizer(expression)`` over :func:`~pubsearch.ingest.textforms.searchable` text."""

    def __init__(self, expression: str) -> None:
        super().__init__(expression)
        self.version = ANALYSIS_VERSION

    def __call__(
        self,
        value: str,
        chars: bool = False,
        start_char: int = 0,
        tokenize: bool = True,
        **kwargs: Any,
    ) -> Iterator[Token]:
        if not tokenize or not isinstance(value, str):
            yield from super().__call__(
                value, chars=chars, start_char=start_char, tokenize=tokenize, **kwargs
            )
            return
        if not chars:
            yield from super().__call__(searchable(value), **kwargs)
            return
        text, starts, ends = searchable_offsets(value)
        for token in super().__call__(text, chars=True, **kwargs):
            # Offsets in ``text`` -> offsets in ``value``.
            first, last = token.startchar, token.endchar
            token.startchar = start_char + starts[first]
            token.endchar = start_char + ends[last - 1]
            yield token
