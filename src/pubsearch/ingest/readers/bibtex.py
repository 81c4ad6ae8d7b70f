"""BibTeX and BibLaTeX files (``.bib``), as Zotero, JabRef, Google Scholar, arXiv and DBLP
export them.

Parsing is bibtexparser's (2.x): entries, ``@string`` macros, quoted and braced values,
name lists (``and``-separated, ``First von Last`` or ``von Last, Jr, First``). The file is
streamed one entry at a time: a line that starts with ``@`` starts a new block, and each
block is parsed with the macros defined above it, so that a broken entry is reported with
its line and the entries after it are read.

Fields read::

    title                     TeX accents decoded, protective braces dropped ({BERT})
    author (else editor)      each name given names first: "Lee, Minji" -> "Minji Lee"
    abstract
    year, else date           BibLaTeX's date (2024-05-29) gives the day too
    keywords                  subjects, as written ("Computer Science - Machine Learning")
    primaryClass              an arXiv category, a subject too
    eprint + archivePrefix    (or eprinttype) = arXiv: the arXiv id; so do an arXiv DOI,
                              an arxiv.org URL and Google Scholar's "arXiv preprint
                              arXiv:2405.18986" journal
    doi, url
    note                      "Also arXiv:...; doi:...": further ids (pubsearch's export)
    journal, journaltitle, booktitle, publisher    the record's source

``@comment``, ``@preamble`` and ``@string`` blocks make no records. An entry without a
title or abstract is reported and skipped.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping

from bibtexparser.entrypoint import parse_string
from bibtexparser.library import Library
from bibtexparser.middlewares.names import (
    InvalidNameError,
    parse_single_name_into_parts,
    split_multiple_persons_names,
)
from bibtexparser.model import Entry, ParsingFailedBlock, String

from pubsearch.ingest.identifiers import ids_of_note
from pubsearch.ingest.readers.fields import (
    arxiv_id_of,
    arxiv_id_of_doi,
    date_from,
    keywords_from,
    month_from,
    person_name,
    year_from,
)
from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.readers.tex import normalize_author, tex_to_unicode
from pubsearch.ingest.records import Record

_BLOCK_START = re.compile(r"^\s*@\s*[A-Za-z]+\s*[{(]")
_ARXIV_IN_TEXT = re.compile(r"arxiv[:\s]+([\w.\-/]+\d)", re.IGNORECASE)
_SOURCE_FIELDS = ("journal", "journaltitle", "booktitle", "publisher", "howpublished")
# One piece of a concatenation bibtexparser leaves as written (``cs # " Letters"``).
_PIECE = r'\s*(?:"[^"]*"|\{(?:[^{}]|\{[^{}]*\})*\}|[A-Za-z][\w:+-]*|\d+)\s*'
_CONCATENATION = re.compile(f"(?:{_PIECE}#)+{_PIECE}")
_MONTHS = "january february march april may june july august september october november december"
# BibTeX's own macros: jan -> January, ...
MONTH_MACROS = {name[:3]: name.capitalize() for name in _MONTHS.split()}
# A block longer than this is not an entry (a brace never closed swallows the file).
_MAX_BLOCK_LINES = 20_000


def looks_like_bibtex(first_lines: list[str]) -> bool:
    """True when a line among the opening ones starts a BibTeX block (``@article{``)."""
    return any(_BLOCK_START.match(line) for line in first_lines)


def _blocks(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """``(first line number, text)`` of each block: a block runs from a line starting with
    ``@`` to the line before the next one (text before the first block is a comment)."""
    start = 0
    held: list[str] = []
    for number, line in enumerate(lines, start=1):
        if _BLOCK_START.match(line) or len(held) >= _MAX_BLOCK_LINES:
            if held and start:
                yield start, "".join(held)
            start, held = number, []
        if start:
            held.append(line)
    if held and start:
        yield start, "".join(held)


def read_bibtex(lines: Iterable[str], origin: str, report: ReadReport) -> Iterator[Record]:
    """Records of a BibTeX or BibLaTeX file. ``origin`` is the file's display path."""
    _quiet_parser()
    macros: dict[str, String] = {}
    for first_line, text in _blocks(lines):
        library = parse_string(text, library=Library(list(macros.values())))
        for block in library.blocks:
            where = f"{origin}:{first_line + (block.start_line or 0)}"
            if isinstance(block, ParsingFailedBlock):
                report.skip(where, f"BibTeX entry not parsed ({_reason(block.error)}); skipped")
            elif isinstance(block, String):
                macros[block.key.casefold()] = block
            elif isinstance(block, Entry):
                resolve_concatenations(block, {k: str(v.value) for k, v in macros.items()})
                notes: list[str] = []
                record = record_from_entry(block, where, notes)
                for note in notes:
                    report.skip(where, note)
                if record is not None:
                    yield record


def _reason(error: Exception) -> str:
    """bibtexparser's message, on one line."""
    text = getattr(error, "abort_reason", None) or getattr(error, "message", None) or str(error)
    if "reached end of file" in str(text):  # of this entry's lines: the next one starts
        return "a brace or quote is not closed before the next entry"
    return " ".join(str(text).split()).rstrip(".") or type(error).__name__


def _quiet_parser() -> None:
    """bibtexparser logs each entry it cannot parse; this reader reports them itself (file
    and line), so its log records go nowhere rather than to standard error."""
    logger = logging.getLogger("bibtexparser")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())


def _field(entry: Entry, *names: str) -> str:
    """The first of ``names`` the entry has (case-insensitive), as text."""
    lowered = {f.key.casefold(): f.value for f in entry.fields}
    for name in names:
        value = lowered.get(name)
        if value is not None and str(value).strip():
            return str(value).strip()
    return ""


def resolve_concatenations(entry: Entry, macros: Mapping[str, str]) -> None:
    """Values joined with ``#`` (``cs # " Letters"``, ``"May " # 2024``), which
    bibtexparser keeps as written, joined: quoted and braced pieces as they are, macros
    (``@string`` ones, and ``jan``...``dec``) by their text."""
    for field in entry.fields:
        value = field.value
        if isinstance(value, str) and "#" in value and _CONCATENATION.fullmatch(value):
            pieces = [p.strip() for p in re.findall(_PIECE + "(?=#|$)", value)]
            field.value = "".join(_piece_text(p, macros) for p in pieces)


def _piece_text(piece: str, macros: Mapping[str, str]) -> str:
    if piece[:1] in ('"', "{"):
        return piece[1:-1]
    if piece.isdigit():
        return piece
    name = piece.casefold()
    return macros.get(name, MONTH_MACROS.get(name, piece))


def plain_text(value: str) -> str:
    """A title or abstract as text: TeX accents decoded, the braces that only protect
    capitals dropped, and TeX's escapes of characters (``\\{``, ``\\$``,
    ``\\textbackslash{}``, ``\\textasciitilde{}``...) made the characters; math
    (``$...$``) and commands' arguments (``\\emph{x}``) keep theirs."""
    text = tex_to_unicode(value)
    if "{" not in text and "}" not in text and "\\" not in text:
        return text
    out: list[str] = []
    kept: list[bool] = []  # for each open brace: whether it was kept
    math = False
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            escape = None if math else _CHARACTER_ESCAPE.match(text, i)
            if escape is not None:
                out.append(_ESCAPED[escape.group(1) or escape.group(2)])
                i = escape.end()
            else:  # a command, or an escaped character: as it is
                out.append(text[i : i + 2])
                i += 2
            continue
        i += 1
        if char == "$":
            math = not math
        elif not math and char == "{":
            keep = bool(_COMMAND_BEFORE.search(text, 0, i - 1))
            kept.append(keep)
            if not keep:
                continue
        elif not math and char == "}":
            if kept and not kept.pop():
                continue
        out.append(char)
    return "".join(out)


# TeX's ways of writing characters that mean something to it (how pubsearch's export
# writes them outside math), and the characters.
_ESCAPED = {
    "{": "{",
    "}": "}",
    "$": "$",
    "textbackslash": "\\",
    "textasciitilde": "~",
    "textasciicircum": "^",
    "textbraceleft": "{",
    "textbraceright": "}",
}
_CHARACTER_ESCAPE = re.compile(
    r"\\(?:([{}$])|(textbackslash|textasciitilde|textasciicircum|textbraceleft|textbraceright)"
    r"(?:\{\}|(?![A-Za-z])))"
)
_COMMAND_BEFORE = re.compile(r"\\[A-Za-z]+\*?$")


def authors_of(value: str, notes: list[str]) -> list[str]:
    """The names of an ``author`` field, each given names first."""
    names: list[str] = []
    for raw in split_multiple_persons_names(value):
        if raw.strip().casefold() == "others":  # "and others": et al.
            continue
        try:
            parts = parse_single_name_into_parts(raw, strict=False)
        except InvalidNameError:
            notes.append(f"author name {raw!r} not understood; ignored")
            continue
        if not parts.first and not parts.von and len(parts.last) == 1:
            name = normalize_author(parts.last[0])  # {The ATLAS Collaboration}
        else:
            name = person_name(
                tex_to_unicode(" ".join(parts.first)),
                tex_to_unicode(" ".join(parts.last)),
                tex_to_unicode(" ".join(parts.von)),
                tex_to_unicode(" ".join(parts.jr)),
            )
        if name:
            names.append(name)
    return names


def _arxiv_id(entry: Entry, doi: str) -> str | None:
    prefix = _field(entry, "archiveprefix", "eprinttype").casefold()
    eprint = _field(entry, "eprint")
    if eprint and (prefix == "arxiv" or not prefix):
        found = arxiv_id_of(eprint)
        if found:
            return found
    found = arxiv_id_of_doi(doi) or arxiv_id_of(_field(entry, "url"))
    if found:
        return found
    match = _ARXIV_IN_TEXT.search(_field(entry, "journal", "note", "number"))
    return arxiv_id_of(match.group(1)) if match else None


def record_from_entry(entry: Entry, where: str, notes: list[str]) -> Record | None:
    """The record of one BibTeX entry, or ``None`` (with a note why)."""
    title = plain_text(_field(entry, "title"))
    abstract = plain_text(_field(entry, "abstract"))
    if not title and not abstract:
        notes.append(f"BibTeX entry {entry.key!r} has neither a title nor an abstract; skipped")
        return None
    names = _field(entry, "author") or _field(entry, "editor")
    date = _field(entry, "date")
    year = year_from(_field(entry, "year")) or year_from(date)
    doi = _field(entry, "doi")
    other_arxiv_ids, other_dois = ids_of_note(plain_text(_field(entry, "note")))
    subjects = keywords_from(tex_to_unicode(_field(entry, "keywords")))
    primary = _field(entry, "primaryclass")
    if primary:
        subjects.insert(0, primary)
    return Record(
        title=title,
        abstract=abstract,
        authors=tuple(authors_of(names, notes)) if names else (),
        year=year,
        date=date_from(date) or month_from(date),
        subjects=tuple(subjects),
        source=plain_text(_field(entry, *_SOURCE_FIELDS)),
        origins=(where,),
        arxiv_id=_arxiv_id(entry, doi),
        other_arxiv_ids=other_arxiv_ids,
        # Reference managers get eprints wrong at times: a claim, checked against the
        # title of that id's record when they are merged (pubsearch.ingest.eprints).
        arxiv_id_claimed=True,
        doi=doi or None,
        other_dois=other_dois,
    )
