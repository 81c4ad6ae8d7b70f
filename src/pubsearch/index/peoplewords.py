"""The words of records that tell who wrote them (pubsearch.index.people's evidence): each
document's title and abstract terms as the index's ``content`` field has them (folded,
lower case, stemmed), as 32-bit hashes; kept by a build's segment writer, or read back and
analysed again."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
UInt32Array = npt.NDArray[np.uint32]
BoolArray = npt.NDArray[np.bool_]

# The commonest words of titles and abstracts (and, analysed, their stems) say nothing of
# who wrote them.
_STOP = frozenset(
    """the and for with from that this these those are was were have has had been being
    which their there than then into onto over under using use used based via our its can
    may also such both each other more most less many much new two one not but all any
    paper propose proposed show shows shown present study approach method methods results
    result work well while when where how what who will further however here""".split()
)


def text_words(title: str, abstract: str, analyzer: Any = None) -> set[str]:
    """The words of a record's title and abstract that tell its subject: the terms the
    index's ``content`` field has for them (``analyzer``'s, by default the schema's text
    analyzer: folded, lower case, stemmed), but for the commonest words, those of fewer
    than three letters and those that do not begin with a letter."""
    if analyzer is None:
        analyzer = _default_analyzer()
    found: set[str] = set()
    for text in (title, abstract):
        if not text:
            continue
        words = analyzer.index_words(text) if hasattr(analyzer, "index_words") else None
        found.update(words.stems if words is not None else (t.text for t in analyzer(text)))
    stops = _stop_terms(analyzer)
    return {w for w in found if _kept(w, stops)}


def _kept(term: str, stops: frozenset[str]) -> bool:
    return len(term) > 2 and term[0].isalpha() and term not in stops


def _default_analyzer() -> Any:
    global _ANALYZER
    if _ANALYZER is None:
        from pubsearch.index.schema import text_analyzer

        _ANALYZER = text_analyzer()
    return _ANALYZER


_ANALYZER: Any = None
_STOPS: dict[int, frozenset[str]] = {}


def _stop_terms(analyzer: Any) -> frozenset[str]:
    """:data:`_STOP`'s words as ``analyzer`` indexes them (``using`` is ``use``)."""
    key = id(analyzer)
    stops = _STOPS.get(key)
    if stops is None:
        stems = {t.text for t in analyzer(" ".join(sorted(_STOP)))}
        stops = _STOPS[key] = frozenset(stems | _STOP)
    return stops


def term_hashes(terms: Sequence[bytes | str], analyzer: Any = None) -> UInt32Array:
    """Each term's 32-bit hash (the same in every process), 0 for a term :func:`text_words`
    leaves out."""
    stops = _stop_terms(analyzer if analyzer is not None else _default_analyzer())
    out = np.zeros(len(terms), dtype=np.uint32)
    for number, term in enumerate(terms):
        text = term.decode("utf-8") if isinstance(term, bytes) else term
        if _kept(text, stops):
            out[number] = zlib.crc32(text.encode("utf-8")) or 1
    return out


@dataclass(frozen=True)
class DocWords:
    """Each document's record id and words (as 32-bit hashes, the same in every process),
    CSR: document ``d``'s are ``hashes[offsets[d]:offsets[d + 1]]``."""

    ids: tuple[str, ...]
    offsets: IntArray
    hashes: UInt32Array

    @classmethod
    def of(cls, docs: Iterable[tuple[str, str, str]], analyzer: Any = None) -> DocWords:
        """From each document's (record id, title, abstract), by :func:`text_words`."""
        vocabulary: dict[str, int] = {}
        ids: list[str] = []
        lengths: list[int] = []
        codes: list[int] = []
        for record_id, title, abstract in docs:
            ids.append(record_id)
            words = text_words(title, abstract, analyzer)
            lengths.append(len(words))
            codes.extend([vocabulary.setdefault(w, len(vocabulary)) for w in words])
        table = np.fromiter(
            ((zlib.crc32(w.encode("utf-8")) or 1) for w in vocabulary),
            dtype=np.uint32,
            count=len(vocabulary),
        )
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls(tuple(ids), offsets, table[np.asarray(codes, dtype=np.int64)])

    @classmethod
    def of_terms(
        cls,
        ids: Sequence[str],
        docs: npt.NDArray[np.uint32],
        termnums: npt.NDArray[np.uint32],
        terms: Sequence[bytes | str],
        analyzer: Any = None,
    ) -> DocWords:
        """From a segment's (document, term number) pairs, sorted by document, and its
        terms by number (what the index's writer made of each document: no text is read
        again); ``ids`` by document."""
        hashes = term_hashes(terms, analyzer)[termnums.astype(np.int64)]
        keep = hashes != 0
        counts = np.bincount(docs[keep].astype(np.int64), minlength=len(ids))
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return cls(tuple(ids), offsets, hashes[keep])

    @classmethod
    def of_reader(cls, reader: Any, start: int = 0, only: BoolArray | None = None) -> DocWords:
        """Of the documents an index reader reads, from ``start`` on (deleted ones, and
        with ``only`` those it leaves out, have no words and no id), from their stored
        titles and abstracts, analysed as the schema's ``content`` field."""
        analyzer = _content_analyzer(reader)

        def docs() -> Iterable[tuple[str, str, str]]:
            for docnum in range(start, reader.doc_count_all()):
                if reader.is_deleted(docnum) or (only is not None and not only[docnum]):
                    yield "", "", ""
                    continue
                stored = reader.stored_fields(docnum)
                yield stored.get("id", ""), stored.get("title", ""), stored.get("abstract", "")

        return cls.of(docs(), analyzer)

    @classmethod
    def joined(cls, parts: Sequence[DocWords]) -> DocWords:
        """The documents of ``parts``, one after another."""
        ids = tuple(i for part in parts for i in part.ids)
        lengths = [np.diff(part.offsets) for part in parts]
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        if ids:
            np.cumsum(np.concatenate(lengths), out=offsets[1:])
        hashes = [part.hashes for part in parts]
        joined = np.concatenate(hashes) if hashes else np.zeros(0, dtype=np.uint32)
        return cls(ids, offsets, joined.astype(np.uint32))

    def __len__(self) -> int:
        return len(self.ids)


def _content_analyzer(reader: Any) -> Any:
    from pubsearch.index.schema import DEFAULT_FIELD

    schema = reader.schema
    return schema[DEFAULT_FIELD].analyzer if DEFAULT_FIELD in schema else _default_analyzer()


def segment_words(reader: Any, kept: Any = None) -> DocWords:
    """The words of a segment's documents (run by the worker that wrote it): from the
    terms its writer kept (``kept``, a pubsearch.index.segments.writer.DocumentTerms), else
    from the stored titles and abstracts."""
    if kept is not None and len(kept.ids) == reader.doc_count_all():
        return DocWords.of_terms(
            kept.ids, kept.docs, kept.termnums, kept.terms, _content_analyzer(reader)
        )
    return DocWords.of_reader(reader)


# Each generation's words, saved beside its people table: an update reads them rather than
# every changed name's records again (an update of 1,000 records took 48 s that way).
WORDS_FILE = "people-words.npz"
WORDS_VERSION = 1
_SEPARATOR = "\x1f"


def save(words: DocWords, directory: Path, generation: int) -> None:
    """Write ``words`` (of every document of Whoosh generation ``generation``) into
    ``directory`` (a new file, renamed into place)."""
    from pubsearch.core import npzfiles

    packed = _SEPARATOR.join(words.ids).encode("utf-8")
    npzfiles.save_arrays(
        directory / WORDS_FILE,
        {
            "meta": np.asarray([WORDS_VERSION, generation, len(words)], dtype=np.int64),
            "offsets": words.offsets,
            "hashes": words.hashes,
            "ids": np.frombuffer(packed, dtype=np.uint8),
        },
    )


def load(directory: Path, generation: int) -> DocWords | None:
    """The words saved in ``directory`` for Whoosh generation ``generation``, or None (none
    saved, or saved for another)."""
    import zipfile

    from pubsearch.core import npzfiles

    try:
        data = npzfiles.load_arrays(directory / WORDS_FILE)
        meta = data["meta"]
        if int(meta[0]) != WORDS_VERSION or int(meta[1]) != generation:
            return None
        count = int(meta[2])
        ids = bytes(data["ids"]).decode("utf-8").split(_SEPARATOR) if count else []
        if len(ids) != count or len(data["offsets"]) != count + 1:
            return None
        return DocWords(tuple(ids), data["offsets"], data["hashes"])
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None
