"""Related papers by their words: Whoosh's more-like-this over a record's key terms, and
which of those words a related record shares (``Hit.shared``)."""

from __future__ import annotations

from typing import Any

from whoosh import query as wq
from whoosh.searching import Searcher

from pubsearch.core.errors import RecordNotFoundError
from pubsearch.ingest.readable import readable
from pubsearch.search.highlighting import written_words
from pubsearch.search.results import Hit

# (field, weight, key terms taken from it) for the query of related records.
RELATED_FIELDS = (("title", 2.0, 6), ("abstract", 1.0, 12))


def more_like(searcher: Searcher, record_id: str) -> tuple[wq.Query, dict[str, str]]:
    """The query of the records like ``record_id``, and its key words (stem -> the
    word as the record writes it)."""
    stored = searcher.document(id=record_id)
    if stored is None:
        raise RecordNotFoundError(f"no record with id {record_id!r}")
    terms: list[wq.Query] = []
    words: dict[str, str] = {}
    for fieldname, boost, numterms in RELATED_FIELDS:
        text = stored.get(fieldname) or ""
        if not text:
            continue
        key_terms = searcher.key_terms_from_text(fieldname, text, numterms=numterms * 2)
        # Short and numeric terms ("al", "2018") say little about what a paper is about.
        kept = [(w, s) for w, s in key_terms if len(w) > 2 and not w.isdigit()]
        written = written_words(searcher.schema[fieldname].analyzer, readable(text))
        for word, weight in kept[:numterms]:
            terms.append(wq.Term(fieldname, word, boost=float(weight) * boost))
            words.setdefault(word, written.get(word, word))
    if not terms:
        return wq.NullQuery, {}
    return wq.AndNot(wq.Or(terms), wq.Term("id", record_id)), words


def shared_words(analyzer: Any, hit: Hit, key_words: dict[str, str]) -> tuple[str, ...]:
    """The key words (``key_words``: term -> word) that ``hit``'s title or abstract has,
    in the order of the key words."""
    have = set(analyzer.words(f"{hit.title}\n{hit.abstract}"))
    return tuple(word for term, word in key_words.items() if term in have)
