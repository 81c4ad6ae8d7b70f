"""Identifiers of papers as people write them: arXiv ids and DOIs.

Two readings. :func:`normalize_arxiv_id` and :func:`normalize_doi` take what a source's
id field holds and give the form records keep (``arXiv:2101.00001v2`` -> ``2101.00001``;
``https://doi.org/10.1000/XYZ`` -> ``10.1000/xyz``). :func:`read_identifier` is stricter:
it decides whether a word typed in the search box (or given to ``pubsearch show``) *is*
an identifier, in any of the forms people paste, so that a number such as ``1.5``,
``2021`` or ``2024.12345`` (no month 24) is never taken for one:

* arXiv, new style: ``2505.17997``, ``2505.17997v2``, ``arXiv:2505.17997``: YYMM.NNNNN,
  the month 01 to 12, from April 2007 (0704), four digits after the dot before 2015 and
  five from 1501 on;
* arXiv, old style: ``hep-th/9901001``, ``math.GT/0309136`` (the subject class is not part
  of the id: it reads as ``math/0309136``), YYMM from 1991 to 2007;
* either in an arxiv.org link: ``https://arxiv.org/abs/2505.17997v1``,
  ``arxiv.org/pdf/2505.17997``, ``.../pdf/2505.17997v1.pdf``;
* a DOI: ``10.1103/PhysRevLett.123.456``, ``doi:10...``, ``https://doi.org/10...``,
  ``dx.doi.org/10...``; arXiv's own DOI (``10.48550/arXiv.2505.17997``) is the arXiv id.

The ``idutils`` library (inveniosoftware) detects these schemes too, but it takes any
``NNNN.NNNN`` for an arXiv id (``2024.12345``, ``1234.5678``), does not read arxiv.org
links, keeps a DOI's case, imports all its modules and entry points on import (about a
second) and brings ``isbnlib2``: the rules above are a few regular expressions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# As sources write ids (lenient: any four digits, a dot and four or five).
_ARXIV_NEW = re.compile(r"^(?:arxiv:)?(\d{4}\.\d{4,5})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_OLD = re.compile(r"^(?:arxiv:)?([a-z\-]+)(?:\.[a-z]{2})?/(\d{7})(?:v\d+)?$", re.IGNORECASE)
_DOI_PREFIXES = (
    "https://doi.org/",
    "http://doi.org/",
    "https://dx.doi.org/",
    "http://dx.doi.org/",
    "doi.org/",
    "dx.doi.org/",
    "doi:",
)
# An arxiv.org page or file, before the id.
_ARXIV_LINK = re.compile(
    r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/", re.IGNORECASE
)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)
# What a typed identifier must look like (see the module's doc).
_TYPED_NEW = re.compile(r"(\d\d)(\d\d)\.(\d{4,5})(?:v\d+)?", re.IGNORECASE)
_TYPED_OLD = re.compile(r"([a-z]+(?:-[a-z]+)?)(?:\.[a-z]{2})?/(\d\d)(\d\d)\d{3}(?:v\d+)?", re.I)
_TYPED_DOI = re.compile(r"10\.\d{4,9}(?:\.\d+)*/\S+")
_ARXIV_LABEL = re.compile(r"^arxiv:\s*", re.IGNORECASE)
# Punctuation that ends a pasted identifier but is not part of it ("see 2505.17997.").
_TRAILING = ".,;:!?'\"\u201d\u2019"
_CLOSING = {")": "(", "]": "[", "}": "{", ">": "<"}
_DIGIT = re.compile(r"\d")

Kind = Literal["arxiv", "doi"]
# No identifier is longer (the longest DOIs registered run to about 200 characters).
MAX_CHARS = 300


@dataclass(frozen=True)
class Identifier:
    """An arXiv id or a DOI, normalised (``2505.17997``, ``10.1103/physrevlett.123.456``)."""

    kind: Kind
    value: str

    @property
    def key(self) -> str:
        """The record identity key it is (``arxiv:2505.17997``, ``doi:10.1/x``)."""
        return f"{self.kind}:{self.value}"

    def __str__(self) -> str:
        return f"arXiv:{self.value}" if self.kind == "arxiv" else f"doi:{self.value}"


def normalize_arxiv_id(value: str | None) -> str | None:
    """``arXiv:2101.00001v2`` -> ``2101.00001``; ``hep-th/9901001v1`` -> ``hep-th/9901001``;
    ``math.GT/0309136`` -> ``math/0309136`` (arXiv's form: the subject class is no part of
    an old id)."""
    if not value:
        return None
    value = value.strip()
    match = _ARXIV_NEW.match(value)
    if match:
        return match.group(1)
    match = _ARXIV_OLD.match(value)
    if match:
        return f"{match.group(1).lower()}/{match.group(2)}"
    return None


def normalize_doi(value: str | None) -> str | None:
    """Lower-case DOI without a resolver prefix, or ``None``."""
    if not value:
        return None
    value = value.strip().lower()
    for prefix in _DOI_PREFIXES:
        if value.startswith(prefix):
            value = value[len(prefix) :].lstrip()
            break
    return value if value.startswith("10.") and "/" in value else None


def arxiv_id_of_doi(doi: str | None) -> str | None:
    """The arXiv id of an arXiv DOI (``10.48550/arXiv.2405.18986``), or ``None``."""
    found = normalize_doi(doi)
    match = _ARXIV_DOI.match(found) if found else None
    return normalize_arxiv_id(match.group(1)) if match else None


def read_identifier(text: str, strict: bool = True) -> Identifier | None:
    """The identifier ``text`` is, whole, in any form the module's doc lists; None when
    it is not one (or only looks like one: ``2024.12345``, ``1.5``). Not ``strict``
    (an id asked for by name, as ``pubsearch show`` is), any id a source may give is
    taken, as :func:`normalize_arxiv_id` and :func:`normalize_doi` take them."""
    text = text.strip()
    arxiv, doi = (_typed_arxiv, _typed_doi) if strict else (_source_arxiv, _source_doi)
    link = _ARXIV_LINK.match(text)
    if link:
        text = text[link.end() :].removesuffix(".pdf").rstrip("/")
        return arxiv(text)
    label = _ARXIV_LABEL.match(text)
    if label:
        return arxiv(text[label.end() :])
    lowered = text.lower()
    for prefix in _DOI_PREFIXES:
        if lowered.startswith(prefix):
            return doi(text[len(prefix) :].lstrip())
    return arxiv(text) or doi(text)


def _source_arxiv(text: str) -> Identifier | None:
    found = normalize_arxiv_id(text)
    return Identifier("arxiv", found) if found else None


def _source_doi(text: str) -> Identifier | None:
    found = normalize_doi(text)
    if found is None:
        return None
    arxiv = arxiv_id_of_doi(found)
    return Identifier("arxiv", arxiv) if arxiv else Identifier("doi", found)


def _typed_arxiv(text: str) -> Identifier | None:
    if match := _TYPED_NEW.fullmatch(text):
        yymm = int(match.group(1) + match.group(2))
        digits = len(match.group(3))
        if 1 <= int(match.group(2)) <= 12 and yymm >= 704 and (digits == 5) == (yymm >= 1501):
            return Identifier("arxiv", f"{match.group(1)}{match.group(2)}.{match.group(3)}")
        return None
    if match := _TYPED_OLD.fullmatch(text):
        year = int(match.group(2))
        if 1 <= int(match.group(3)) <= 12 and (year >= 91 or year <= 7):
            found = normalize_arxiv_id(text)
            return Identifier("arxiv", found) if found else None
    return None


def _typed_doi(text: str) -> Identifier | None:
    if not _TYPED_DOI.fullmatch(text):
        return None
    arxiv = arxiv_id_of_doi(text)
    if arxiv is not None:
        return Identifier("arxiv", arxiv)
    return Identifier("doi", text.lower())


def identifier_in_word(word: str) -> tuple[Identifier, int] | None:
    """The identifier a word of pasted text is, and how many of the word's characters it
    takes: punctuation after it (``2505.17997.``, ``(see 10.1000/xyz)``) is not part of
    it, but a DOI's own brackets are (``10.1016/S0140-6736(20)30183-5``). A word of more
    than :data:`MAX_CHARS` characters, or one that does not begin with a letter or a
    digit, is none."""
    if len(word) > MAX_CHARS or not word[:1].isalnum() or not _DIGIT.search(word):
        return None
    end = len(word)
    while end:
        last = word[end - 1]
        if last in _TRAILING:
            end -= 1
        elif last in _CLOSING and word.count(last, 0, end) > word.count(_CLOSING[last], 0, end):
            end -= 1
        else:
            break
    found = read_identifier(word[:end]) if end else None
    return (found, end) if found is not None else None


def submission_month(arxiv_id: str) -> tuple[int, int] | None:
    """The year and month an arXiv id was given (its YYMM): ``0705.1862`` -> (2007, 5),
    ``hep-th/9901001`` -> (1999, 1); None for anything else."""
    match = re.fullmatch(r"(?:[a-z\-]+/)?(\d\d)(\d\d)(?:\.\d{4,5}|\d{3})", arxiv_id)
    if match is None:
        return None
    yy, month = int(match.group(1)), int(match.group(2))
    if not 1 <= month <= 12:
        return None
    return (1900 + yy if yy >= 91 else 2000 + yy), month


# A record's further ids in a note of an export (BibTeX and CSL JSON have one place for
# each kind of id): "Also arXiv:2506.03038; doi:10.1103/physrevlett.123.456".
_ALSO = "Also "
_NOTE_PART = re.compile(r"(arxiv|doi):(\S+)", re.IGNORECASE)


def note_of_ids(arxiv_ids: tuple[str, ...], dois: tuple[str, ...]) -> str:
    """The note that lists further ids (``""`` for none): what :func:`ids_of_note` reads."""
    parts = [f"arXiv:{a}" for a in arxiv_ids] + [f"doi:{d}" for d in dois]
    return _ALSO + "; ".join(parts) if parts else ""


def ids_of_note(note: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The arXiv ids and DOIs a note written by :func:`note_of_ids` lists; none for a note
    that holds anything else (it may name other papers)."""
    if not note.startswith(_ALSO):
        return (), ()
    arxiv_ids: list[str] = []
    dois: list[str] = []
    for part in note[len(_ALSO) :].split("; "):
        match = _NOTE_PART.fullmatch(part.strip())
        found = None
        if match is not None and match.group(1).lower() == "arxiv":
            found = normalize_arxiv_id(match.group(2))
            arxiv_ids += [found] if found else []
        elif match is not None:
            found = normalize_doi(match.group(2))
            dois += [found] if found else []
        if found is None:
            return (), ()
    return tuple(arxiv_ids), tuple(dois)
