"""A page's hits made from Whoosh's: the record's text made readable (TeX as text) with
the query's words marked in its title, a snippet and the whole abstract."""

from __future__ import annotations

import html

from whoosh import highlight
from whoosh.searching import Hit as WhooshHit

from pubsearch.index.documents import record_from_stored
from pubsearch.ingest.readable import readable
from pubsearch.search.highlighting import (
    SNIPPET_CHARS,
    MarkFormatter,
    Marks,
    TextTokens,
    highlight_field,
    lead,
    marked_to_html,
)
from pubsearch.search.request import SearchRequest
from pubsearch.search.results import Hit


class HitMaker:
    """Makes :class:`Hit` from Whoosh hits (one per search service: its highlighters)."""

    def __init__(self) -> None:
        self._snippets = highlight.Highlighter(
            fragmenter=highlight.ContextFragmenter(maxchars=SNIPPET_CHARS, surround=40),
            formatter=MarkFormatter(),
        )
        self._whole = highlight.Highlighter(
            fragmenter=highlight.WholeFragmenter(), formatter=MarkFormatter()
        )

    def make(
        self,
        hit: WhooshHit,
        rank: int,
        marks: dict[str, Marks] | None,
        request: SearchRequest,
    ) -> Hit:
        record = record_from_stored(hit.fields())
        if not request.highlight:
            title_html = html.escape(record.display_title)
            snippet = abstract_html = ""
        else:
            # What the page shows: TeX written as text, matched words marked in it.
            title = readable(record.display_title)
            abstract = readable(record.abstract)
            title_html = snippet = abstract_html = ""
            if marks is not None:
                words = marks["abstract"]
                analyzer = hit.searcher.schema["abstract"].analyzer
                tokens = (
                    TextTokens.of(analyzer, abstract, words.terms, words.patterns)
                    if words and abstract
                    else None
                )  # the snippet's and the whole abstract's
                snippet = highlight_field(
                    self._snippets, hit, "abstract", words, 2, abstract, tokens
                )
                title_field = "title" if record.title else "abstract"
                title_html = marked_to_html(
                    highlight_field(self._whole, hit, title_field, marks[title_field], 1, title)
                )
                abstract_html = marked_to_html(
                    highlight_field(self._whole, hit, "abstract", words, 1, abstract, tokens)
                )
            snippet = marked_to_html(snippet) if snippet else html.escape(lead(abstract))
            title_html = title_html or html.escape(title)
            abstract_html = abstract_html or html.escape(abstract)
        return Hit(
            rank=rank,
            id=record.id,
            title=record.title,
            abstract=record.abstract,
            authors=record.authors,
            year=record.year,
            subjects=record.subjects,
            source=record.source,
            url=record.url,
            score=round(float(hit.score), 4) if isinstance(hit.score, (int, float)) else None,
            snippet=snippet,
            title_html=title_html,
            untitled=not record.title,
            date=record.date,
            cited_by=record.cited_by,
            arxiv_ids=record.arxiv_ids,
            dois=record.dois,
            listed=record.listed,
            doc=hit.docnum,
            abstract_html=abstract_html,
        )
