"""Records found by an identifier: ``pubsearch show``'s look-up by any id a record has, in
any form people write it, and the notice for an identifier typed in the search box that
no record has.

A record's identity keys (``arxiv:2505.17997``, ``doi:10.1103/...``: every arXiv id and
DOI of a paper merged from several sources) are the terms of its ``keys`` field; see
:mod:`pubsearch.index.documents`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from pubsearch.core.errors import RecordNotFoundError
from pubsearch.index.documents import key_term
from pubsearch.index.postings import term_docs
from pubsearch.ingest.identifiers import read_identifier
from pubsearch.search.compiler import IDENTIFIER_FIELD, TextQuery


def stored_record(searcher: Any, typed: str) -> dict[str, Any]:
    """The stored fields of the record ``typed`` names: its id as shown in results
    (``2505.17997``, ``doi:10.1/x``, ``t808ee125210``), else any arXiv id or DOI it has,
    in any form (``arXiv:2505.17997v2``, ``https://doi.org/10.1/X``). Raises
    :class:`RecordNotFoundError` when none has it."""
    stored: dict[str, Any] | None = searcher.document(id=typed)
    if stored is None and (identifier := read_identifier(typed, strict=False)) is not None:
        docs = live_docs(searcher.reader(), identifier.key)
        stored = searcher.stored_fields(int(docs[0])) if len(docs) else None
    if stored is None:
        raise RecordNotFoundError(f"no record with id {typed!r}")
    return stored


def live_docs(reader: Any, key: str) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The live documents with the identity key ``key``, in order."""
    docs = np.asarray(term_docs(reader, IDENTIFIER_FIELD, key_term(key)), dtype=np.int64)
    return np.array([d for d in docs.tolist() if not reader.is_deleted(d)], dtype=np.int64)


def with_unknown_noted(parsed: TextQuery | None, reader: Any) -> TextQuery | None:
    """``parsed`` with a notice for each identifier it looks for that no live record has
    (so that such a query says why it finds nothing, rather than finding nothing)."""
    if parsed is None or not parsed.identifiers:
        return parsed
    missing = [
        identifier
        for identifier in parsed.identifiers
        if not len(live_docs(reader, identifier.key))
    ]
    if not missing:
        return parsed
    notices = [f"No record in this index has the id {identifier.id}." for identifier in missing]
    return replace(parsed, notices=tuple(dict.fromkeys((*parsed.notices, *notices))))
