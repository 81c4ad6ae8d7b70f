"""Field values shared by the JSON readers: author lists, subjects, years, ids."""

from __future__ import annotations

import datetime
import email.utils
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pubsearch.ingest.identifiers import arxiv_id_of_doi as arxiv_id_of_doi
from pubsearch.ingest.readers.tex import normalize_author
from pubsearch.ingest.records import normalize_arxiv_id

_SEPARATORS = re.compile(r"\s*(?:,|;|\band\b|&)\s*(?:\band\b\s*)?")
_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
_ET_AL = re.compile(r"\bet\.?\s+al\b\.?", re.IGNORECASE)
_YEAR = re.compile(r"(?<!\d)(1[6-9]\d\d|2\d\d\d)(?!\d)")
_ARXIV_URL = re.compile(r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/", re.IGNORECASE)


def strip_parentheses(text: str) -> str:
    """``A. One (1), B. Two ((1) Univ. X)`` -> ``A. One , B. Two``: drop bracketed text,
    nested or not (affiliations and their numbers)."""
    out: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(char)
    return "".join(out)


def split_authors(text: str) -> list[str]:
    """``"A. One, B. Two and C. Three"`` -> ``["A. One", "B. Two", "C. Three"]``.

    Names are separated by commas, semicolons, ``and`` or ``&``; text in parentheses
    (affiliations) and a closing ``et al`` are dropped; a suffix such as ``Jr.`` stays
    with the name before it.
    Each name is passed through :func:`normalize_author`.
    """
    names: list[str] = []
    for part in _SEPARATORS.split(_ET_AL.sub(",", strip_parentheses(text))):
        name = normalize_author(part)
        if not name:
            continue
        if names and name.casefold() in _SUFFIXES:
            names[-1] = f"{names[-1]} {name}"
        else:
            names.append(name)
    return names


def author_from_mapping(value: Mapping[str, Any]) -> str:
    """A name from ``{"name": ...}`` or ``{"keyname": ..., "forenames": ...}`` (also
    ``given``/``family`` and ``first``/``last``); ``""`` when there is none."""
    name = value.get("name")
    if isinstance(name, str) and name.strip():
        return normalize_author(name)
    first = _first_string(value, ("forenames", "given", "first", "first_name"))
    last = _first_string(value, ("keyname", "family", "last", "last_name"))
    suffix = _first_string(value, ("suffix",))
    return normalize_author(" ".join(p for p in (first, last, suffix) if p))


def _first_string(value: Mapping[str, Any], keys: Iterable[str]) -> str:
    for key in keys:
        item = value.get(key)
        if isinstance(item, str) and item.strip():
            return item
    return ""


def authors_from(value: object) -> list[str] | None:
    """Author names from a list of strings, a list of name mappings, or one string of
    names; ``None`` when ``value`` is none of those."""
    if isinstance(value, str):
        return split_authors(value)
    if not isinstance(value, list):
        return None
    names: list[str] = []
    for item in value:
        if isinstance(item, str):
            names.append(normalize_author(item))
        elif isinstance(item, Mapping):
            names.append(author_from_mapping(item))
        else:
            return None
    return [name for name in names if name]


def subjects_from(value: object) -> list[str] | None:
    """Subjects from a list of strings or one space- (or comma-) separated string;
    ``None`` when ``value`` is neither."""
    if isinstance(value, str):
        return [s for s in re.split(r"[\s,;]+", value) if s]
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return [s.strip() for s in value if s.strip()]
    return None


def year_from(value: object) -> int | None:
    """A year from an integer, or the first four-digit year in a date string
    (``2007-04-02``, ``Mon, 2 Apr 2007 19:18:42 GMT``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 1600 <= value <= 2999 else None
    if isinstance(value, str):
        match = _YEAR.search(value)
        return int(match.group(1)) if match else None
    return None


def date_from(value: object) -> str | None:
    """The day of an ISO date or timestamp (``2024-03-15``, ``2024-03-15T10:00:00Z``) or
    of an e-mail style date (``Mon, 2 Apr 2007 19:18:42 GMT``), as ``YYYY-MM-DD``; None
    for anything else (a year alone, a month)."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    match = _ISO_DAY.match(text)
    if match:
        try:
            return datetime.date.fromisoformat(match.group(0)).isoformat()
        except ValueError:
            return None
    try:
        parsed = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return parsed.date().isoformat()


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}(?![\d-])")
_ISO_MONTH = re.compile(r"(\d{4})-(\d{2})")


def month_from(value: object) -> str | None:
    """``2007-05`` (an ISO month, as BibLaTeX's ``date`` may give) as it is; None for
    anything else."""
    if not isinstance(value, str) or not (match := _ISO_MONTH.fullmatch(value.strip())):
        return None
    return match.group(0) if 1 <= int(match.group(2)) <= 12 else None


def id_string(value: object) -> str | None:
    """An id as text: strings as they are, integers written out; else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    return None


def arxiv_id_of(value: str | None) -> str | None:
    """The normalised arXiv id in ``value`` (``arXiv:2101.00001v2``, an abs/pdf URL, or
    an old-style ``hep-th/9901001``), or ``None``."""
    if value is None:
        return None
    return normalize_arxiv_id(_ARXIV_URL.sub("", value.strip()).removesuffix(".pdf"))


def first_doi(value: object) -> str | None:
    """The first DOI of a DOI field (arXiv's may list several, space-separated)."""
    if not isinstance(value, str):
        return None
    parts = value.split()
    return parts[0] if parts else None


# A given name's initial written without its dot: "S" in "Christian S Hardtke".
_BARE_INITIAL = re.compile(r"(?<![\w.'\u2019-])([^\W\d_])(?![\w.'\u2019-])")


def dotted_initials(given: str) -> str:
    """``Christian S`` -> ``Christian S.``: every initial of given names ends in a dot, as
    most sources write it, so that one person's names agree across sources (the facets
    count them as one)."""
    return _BARE_INITIAL.sub(r"\1.", given)


def person_name(given: str, family: str, particle: str = "", suffix: str = "") -> str:
    """One author's name, given names first, from its parts (CSL's ``given``, ``family``,
    ``non-dropping-particle``, ``suffix``; BibTeX's first, von, last, jr), normalized."""
    parts = (dotted_initials(given.strip()), particle.strip(), family.strip(), suffix.strip())
    return normalize_author(" ".join(p for p in parts if p))


def display_name_author(name: str) -> str:
    """A name written whole, given names first (OpenAlex's ``display_name``), with the
    dots of its initials as :func:`dotted_initials` writes them."""
    words = name.split()
    if len(words) < 2:
        return normalize_author(name)
    return person_name(" ".join(words[:-1]), words[-1])


def keywords_from(text: str) -> list[str]:
    """Keywords of one field, in order, each trimmed: separated by semicolons when there
    are any (a keyword may hold commas: ``Computer Science - Computational Engineering,
    Finance, and Science``), else by commas."""
    return [k.strip() for k in text.split(";" if ";" in text else ",") if k.strip()]


def date_parts(value: object) -> tuple[int | None, str | None]:
    """The year and day of a CSL (and Crossref) date: ``{"date-parts": [[2024, 5, 29]]}``
    (numbers or digit strings), else its ``raw`` or ``literal`` text."""
    if not isinstance(value, Mapping):
        return None, None
    parts = value.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        numbers: list[int] = []
        for part in parts[0][:3]:
            text = str(part).strip()
            if isinstance(part, bool) or not text.isdigit():
                break
            numbers.append(int(text))
        year = year_from(numbers[0]) if numbers else None
        if year is not None and len(numbers) == 3:
            try:
                return year, datetime.date(*numbers).isoformat()
            except ValueError:
                return year, None
        if year is not None and len(numbers) == 2 and 1 <= numbers[1] <= 12:
            return year, f"{year:04d}-{numbers[1]:02d}"  # a month
        return year, None
    for key in ("raw", "literal"):
        written = value.get(key)
        if isinstance(written, str) and written.strip():
            return year_from(written), date_from(written)
    return None, None
