"""Results and records as plain data: the JSON structure, JSON lines, CSV, BibTeX, RIS and
CSL JSON (the last three for reference managers: Zotero, JabRef, EndNote, Mendeley).

:func:`results_to_dict` is the one documented JSON structure, returned by
``pubsearch query --format json`` and by the web page's ``/api/search`` alike.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import rispy
from rispy import RisWriter

from pubsearch.index.names import PARTICLES
from pubsearch.ingest.identifiers import note_of_ids
from pubsearch.ingest.readers.bibtex import plain_text
from pubsearch.ingest.records import Record
from pubsearch.search.request import MAX_PAGE_SIZE, MAX_RESULT_DEPTH, SORT_ORDERS, SearchRequest
from pubsearch.search.results import FacetValue, Hit, IndexStats, SearchResults, shortened

CSV_COLUMNS = (
    "rank",
    "id",
    "title",
    "year",
    "authors",
    "subjects",
    "score",
    "url",
    "abstract",
    "cited_by",
)


def hit_to_dict(hit: Hit) -> dict[str, Any]:
    return {
        "rank": hit.rank,
        "id": hit.id,
        "title": hit.title,
        "abstract": hit.abstract,
        "authors": list(hit.authors),
        "year": hit.year,
        "date": hit.date,
        "subjects": list(hit.subjects),
        "source": hit.source,
        "url": hit.url,
        "score": hit.score,
        "snippet": hit.snippet,
        "title_html": hit.title_html,
        "abstract_html": hit.abstract_html,
        "untitled": hit.untitled,
        "shared": list(hit.shared),
        "by_meaning": hit.by_meaning,
        "why": hit.why,
        "cited_by": hit.cited_by,
        "arxiv_ids": list(hit.arxiv_ids),
        "dois": list(hit.dois),
        "listed": hit.listed,
        "people": list(hit.people),
    }


def facet_to_dict(value: FacetValue) -> dict[str, Any]:
    found: dict[str, Any] = {"value": value.value, "count": value.count, "selected": value.selected}
    if value.people:  # an author name of several people
        found["people"] = [
            {"id": p.id, "hint": p.hint, "count": p.count, "selected": p.selected}
            for p in value.people
        ]
    return found


def results_to_dict(results: SearchResults) -> dict[str, Any]:
    """The JSON structure of a results page (documented in README.md)."""
    req = results.request
    out: dict[str, Any] = {
        "query": req.q,
        "filters": {
            "author": list(req.authors),
            "subject": list(req.subjects),
            "year": str(req.year) if req.year else None,
            **({"person": req.person} if req.person else {}),
        },
        "sort": req.sort,
        "mode": results.mode,
        "sorts": [s for s in SORT_ORDERS if s != "cited" or results.citations],
        "total": results.total,
        "word_total": results.total if results.word_total is None else results.word_total,
        "page": req.page,
        "page_size": req.page_size,
        "pages": results.pages,
        "took_ms": results.took_ms,
        "suggestion": results.suggestion,
        "corrected_from": results.corrected_from,
        "relaxed": results.relaxed,
        "relaxed_words": list(results.words),
        "all_words_total": results.all_words_total,
        "loose": req.loose,
        "loose_total": results.loose_total,
        "notices": list(results.notices),
        "authors_found": {typed: list(names) for typed, names in results.authors_found.items()},
        "subjects_found": {typed: list(found) for typed, found in results.subjects_found.items()},
        "hits": [hit_to_dict(h) for h in results.hits],
    }
    if results.facets is not None:
        out["facets"] = {
            name: [facet_to_dict(v) for v in values] for name, values in results.facets.items()
        }
    return out


def record_to_dict(record: Record) -> dict[str, Any]:
    return {
        "id": record.id,
        "title": record.title,
        "abstract": record.abstract,
        "authors": list(record.authors),
        "year": record.year,
        "date": record.date,
        "subjects": list(record.subjects),
        "source": record.source,
        "url": record.url,
        "arxiv_id": record.arxiv_id,
        "doi": record.doi,
        "arxiv_ids": list(record.arxiv_ids),
        "dois": list(record.dois),
        "listed": record.listed,
        "cited_by": record.cited_by,
        "origins": list(record.origins),
    }


def stats_to_dict(stats: IndexStats) -> dict[str, Any]:
    return {
        "records": stats.records,
        "generation": stats.generation,
        "size_bytes": stats.size_bytes,
        "authors": stats.authors,
        "subjects": stats.subjects,
        "cited": stats.cited,
        "years": {str(y): c for y, c in stats.years.items()},
        "top_authors": [facet_to_dict(v) for v in stats.top_authors],
        "top_subjects": [facet_to_dict(v) for v in stats.top_subjects],
    }


def to_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


def hits_to_jsonl(hits: Iterable[Hit]) -> str:
    return "".join(json.dumps(hit_to_dict(h), ensure_ascii=False) + "\n" for h in hits)


def hits_to_csv(hits: Iterable[Hit]) -> str:
    """CSV with a header row; list fields are joined with ``; ``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for h in hits:
        writer.writerow(
            [
                h.rank,
                h.id,
                h.title,
                h.year if h.year is not None else "",
                "; ".join(h.authors),
                "; ".join(h.subjects),
                "" if h.score is None else h.score,
                h.url or "",
                h.abstract,
                "" if h.cited_by is None else h.cited_by,
            ]
        )
    return buffer.getvalue()


# -- exporting every page of a search --------------------------------------------------------

# The most records one export holds; the file and the page say so when there were more.
EXPORT_CAP = 1000
EXPORT_FORMATS = ("bibtex", "csv", "jsonl", "ris", "csljson")


@dataclass(frozen=True)
class ExportBatch:
    """The hits of every page of a search, up to a cap."""

    hits: tuple[Hit, ...]
    total: int
    cap: int

    @property
    def capped(self) -> bool:
        return self.total > len(self.hits)

    def describe(self, request: SearchRequest) -> str:
        """One line saying what the export holds, for a comment or a note on the page."""
        what = f"{len(self.hits):,} of {self.total:,} results"
        if request.q:
            what += f" for {shortened(request.q)!r}"
        if self.capped:
            what += f" (capped at {self.cap:,}; narrow the search to export the rest)"
        return what


def collect_hits(
    search: Callable[[SearchRequest], SearchResults],
    request: SearchRequest,
    cap: int = EXPORT_CAP,
) -> ExportBatch:
    """Every hit of ``request`` (all pages, in its sort order), at most ``cap`` of them.

    ``search`` is :meth:`SearchService.search` or a search like it (related records).
    """
    cap = max(1, min(cap, MAX_RESULT_DEPTH))
    page_size = MAX_PAGE_SIZE
    hits: list[Hit] = []
    total = 0
    page = 1
    while len(hits) < cap:
        results = search(replace(request, page=page, page_size=page_size, facets=False))
        total = results.total
        hits.extend(results.hits)
        if not results.hits or len(hits) >= total:
            break
        page += 1
    return ExportBatch(tuple(hits[:cap]), total, cap)


# -- BibTeX --------------------------------------------------------------------------------

_BIBTEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_KEY_SKIP_WORDS = frozenset(
    "a an the on of for in to and with via from by at is are towards toward".split()
)


def bibtex_escape(text: str) -> str:
    """``text`` with every character that means something to (La)TeX escaped."""
    return "".join(_BIBTEX_SPECIAL.get(c, c) for c in text)


# Math as the BibTeX reader (tex_to_unicode) leaves it: $$...$$ and $...$.
_MATH = re.compile(r"\$\$.*?\$\$|\$(?<!\\\$)(?:[^$\\]|\\.)*\$", re.DOTALL)
_COMMAND = re.compile(r"\\[A-Za-z]+\*?")
# Outside math: how the reader's escapes of special characters are written.
_TEXT_SPECIAL = {**_BIBTEX_SPECIAL, "\\": r"\textbackslash{}"}
# Every special character, braces as commands (which pair whatever the text's braces do).
_EVERY_SPECIAL = {**_TEXT_SPECIAL, "{": r"\textbraceleft{}", "}": r"\textbraceright{}"}


def bibtex_text(text: str) -> str:
    """A title or abstract as a BibTeX value: its TeX written as TeX (math such as
    ``MoTe$_{2-x}$``, commands such as ``\\emph{x}`` with their arguments), every other
    character that means something to TeX escaped (``50\\%``, ``\\&``, ``\\{braces\\}``),
    so that the BibTeX reader gives back ``text``. Where it would not (braces that do not
    pair, TeX the reader would decode), the whole text is escaped, math too."""
    written = _tex_kept(text)
    if written is not None and plain_text(written) == text:
        return written
    return "".join(_EVERY_SPECIAL.get(c, c) for c in text)


def _braces_pair(text: str) -> bool:
    """Whether every brace of ``text`` closes one opened before it (``{}}{`` does not)."""
    depth = 0
    for char in text:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _tex_kept(text: str) -> str | None:
    """``text`` with its math and commands as they are and the rest escaped; None when
    its braces do not pair (BibTeX counts every brace, escaped or not)."""
    out: list[str] = []
    opened: list[bool] = []  # each brace open: a command's argument (kept) or a character
    at = 0
    while at < len(text):
        if text[at] == "$" and (math := _MATH.match(text, at)) is not None:
            if not _braces_pair(math.group()):
                return None
            out.append(math.group())
            at = math.end()
        elif text[at] == "\\" and (command := _COMMAND.match(text, at)) is not None:
            out.append(command.group())
            at = command.end()
            if text.startswith("{", at):
                out.append("{")
                opened.append(True)
                at += 1
        elif text[at] == "{":
            out.append(r"\{")
            opened.append(False)
            at += 1
        elif text[at] == "}":
            if not opened:
                return None
            out.append("}" if opened.pop() else r"\}")
            at += 1
        else:
            out.append(_TEXT_SPECIAL.get(text[at], text[at]))
            at += 1
    return None if opened else "".join(out)


def _ascii_word(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return re.sub(r"[^a-z0-9]", "", decomposed.encode("ascii", "ignore").decode().lower())


def bibtex_key(record: Record) -> str:
    """``you2020large``: first author's family name, year and first significant title word."""
    name = ""
    if record.authors:
        first = record.authors[0]
        family = first.split(",")[0] if "," in first else first.split()[-1]
        name = _ascii_word(family)
    word = ""
    for candidate in re.findall(r"\w+", record.title):
        folded = _ascii_word(candidate)
        if folded and folded not in _KEY_SKIP_WORDS:
            word = folded
            break
    return f"{name or 'anon'}{record.year or 'nd'}{word}"


def record_to_bibtex(record: Record, key: str) -> str:
    """One BibTeX entry: ``@misc`` for preprints, ``@article`` for published (DOI) records."""
    fields: list[tuple[str, str]] = []
    published = bool(record.doi) and "arxiv" not in record.source.lower()
    kind = "article" if published else "misc"
    if record.authors:
        fields.append(("author", " and ".join(bibtex_escape(a) for a in record.authors)))
    if record.title:
        fields.append(("title", bibtex_text(record.title)))
    if published and record.source:
        fields.append(("journal", bibtex_escape(record.source)))
    if record.year is not None:
        fields.append(("year", str(record.year)))
    if record.date:
        fields.append(("date", record.date))  # BibLaTeX's: the day, or a month
    if record.arxiv_id:
        fields.append(("eprint", record.arxiv_id))
        fields.append(("archivePrefix", "arXiv"))
        if record.subjects:
            fields.append(("primaryClass", bibtex_escape(record.subjects[0])))
    elif not published and record.source:
        fields.append(("howpublished", bibtex_escape(record.source)))
    if record.doi:
        fields.append(("doi", bibtex_escape(record.doi)))
    if record.url:
        fields.append(("url", bibtex_escape(record.url)))
    if others := note_of_ids(record.other_arxiv_ids, record.other_dois):
        fields.append(("note", bibtex_escape(others)))  # one eprint, one doi: the rest
    if record.subjects:
        fields.append(("keywords", bibtex_escape(", ".join(record.subjects))))
    if record.abstract:
        fields.append(("abstract", bibtex_text(record.abstract)))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{kind}{{{key},\n{body}\n}}\n"


def records_to_bibtex(records: Iterable[Record], comment: str = "") -> str:
    """BibTeX entries with unique keys (``you2020large``, ``you2020largea``, ...).

    ``comment`` lines go first, as ``%`` comments, which BibTeX ignores.
    """
    out = [f"% {line}\n" for line in comment.splitlines()]
    if out:
        out.append("\n")
    for record, key in _keyed(records):
        out.append(record_to_bibtex(record, key) + "\n")
    return "".join(out)


def _key_suffix(n: int) -> str:
    """a, b, ..., z, aa, ab, ..."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = ""
    n += 1
    while n:
        n, rem = divmod(n - 1, 26)
        out = letters[rem] + out
    return out


def hits_to_bibtex(hits: Iterable[Hit], record: Callable[[str], Record], comment: str = "") -> str:
    """BibTeX for ``hits``; ``record`` fetches a hit's whole record (``SearchService.record``),
    which has the arXiv id and DOI a hit lacks."""
    return records_to_bibtex((record(h.id) for h in hits), comment)


# -- RIS and CSL JSON ----------------------------------------------------------------------

_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
# Names that are a group's, not a person's: written whole (CSL's "literal").
_GROUP_WORDS = re.compile(r"\b(collaboration|consortium|group|team|project)\b", re.IGNORECASE)


def name_parts(name: str) -> tuple[str, str, str]:
    """``(given, family, suffix)`` of a name written given names first (``Anna van der
    Berg Jr.`` -> ``("Anna", "van der Berg", "Jr.")``), or written ``Family, Given``."""
    if "," in name:
        family, _, given = name.partition(",")
        return given.strip(), family.strip(), ""
    words = name.split()
    suffix = words.pop() if len(words) > 2 and words[-1].casefold() in _SUFFIXES else ""
    if len(words) < 2:
        return "", " ".join(words), suffix
    start = len(words) - 1
    while start > 1 and words[start - 1].casefold() in PARTICLES:
        start -= 1
    return " ".join(words[:start]), " ".join(words[start:]), suffix


def _is_group(name: str) -> bool:
    return bool(_GROUP_WORDS.search(name))


def _published(record: Record) -> bool:
    """A journal's record rather than a preprint's (as the BibTeX export decides)."""
    return bool(record.doi) and "arxiv" not in record.source.lower()


def record_to_csl(record: Record, key: str) -> dict[str, Any]:
    """One CSL JSON item (Zotero's and Pandoc's citation data)."""
    item: dict[str, Any] = {
        "id": key,
        "type": "article-journal" if _published(record) else "article",
        "title": record.title,
    }
    authors: list[dict[str, str]] = []
    for name in record.authors:
        given, family, suffix = name_parts(name)
        if _is_group(name) or not given:
            authors.append({"literal": name})
        else:
            authors.append(
                {"family": family, "given": given, **({"suffix": suffix} if suffix else {})}
            )
    if authors:
        item["author"] = authors
    if record.date:
        item["issued"] = {"date-parts": [[int(p) for p in record.date.split("-")]]}
    elif record.year is not None:
        item["issued"] = {"date-parts": [[record.year]]}
    if record.abstract:
        item["abstract"] = record.abstract
    if record.source:
        item["container-title"] = record.source
    if record.doi:
        item["DOI"] = record.doi
    if record.arxiv_id:
        item["number"] = f"arXiv:{record.arxiv_id}"
    if others := note_of_ids(record.other_arxiv_ids, record.other_dois):
        item["note"] = others  # where Zotero keeps what has no field of its own
    if record.url:
        item["URL"] = record.url
    if record.subjects:
        # Semicolons: some subjects (Zotero's arXiv tags) hold commas.
        item["keyword"] = "; ".join(record.subjects)
    if record.cited_by is not None:
        item["custom"] = {"cited_by_count": record.cited_by}
    return item


def records_to_csljson(records: Iterable[Record]) -> str:
    """A CSL JSON array, one item per record, with the BibTeX export's keys as ids."""
    return to_json([record_to_csl(r, key) for r, key in _keyed(records)]) + "\n"


def record_to_ris(record: Record) -> dict[str, Any]:
    """One RIS record, as rispy names its tags."""
    entry: dict[str, Any] = {
        "type_of_reference": "JOUR" if _published(record) else "GEN",
        "title": record.title,
    }
    names = []
    for name in record.authors:
        given, family, suffix = name_parts(name)
        names.append(
            name
            if _is_group(name) or not given
            else ", ".join(p for p in (family, given, suffix) if p)
        )
    if names:
        entry["authors"] = names
    if record.year is not None:
        entry["year"] = str(record.year)
    if record.date:
        # RIS's YYYY/MM/DD/: 2024/05/29/, or a month 2007/05//.
        entry["date"] = "/".join((*record.date.split("-"), "", "")[:3]) + "/"
    if record.abstract:
        entry["abstract"] = record.abstract
    if record.source:
        entry["journal_name"] = record.source
    if record.doi:
        entry["doi"] = record.doi
    if record.url:
        entry["urls"] = [record.url]
    if record.subjects:
        entry["keywords"] = list(record.subjects)
    notes = [f"Cited By :{record.cited_by}"] if record.cited_by is not None else []  # Scopus's
    if others := note_of_ids(record.other_arxiv_ids, record.other_dois):
        notes.append(others)  # one DO: the further ids
    if notes:
        entry["notes"] = notes
    return entry


class _RisWriter(RisWriter):  # type: ignore[misc]  # rispy is untyped
    """rispy's writer without the record numbers ("1.") it puts before each record."""

    def set_header(self, count: int) -> str:
        return ""


def records_to_ris(records: Iterable[Record]) -> str:
    """RIS records, each from ``TY`` to ``ER``."""
    text: str = rispy.dumps([record_to_ris(r) for r in records], implementation=_RisWriter)
    written = text.replace("\n\nTY  - ", "\nTY  - ").strip("\n").replace("ER  - \n", "ER  - \n\n")
    return written + "\n" if written else ""


def _keyed(records: Iterable[Record]) -> Iterator[tuple[Record, str]]:
    """Each record with a key unique among them (``you2020large``, ``you2020largea``...)."""
    used: set[str] = set()
    for record in records:
        base = key = bibtex_key(record)
        suffix = 0
        while key in used:
            key = base + _key_suffix(suffix)
            suffix += 1
        used.add(key)
        yield record, key


def hits_to_ris(hits: Iterable[Hit], record: Callable[[str], Record]) -> str:
    """RIS for ``hits``; ``record`` fetches a hit's whole record (``SearchService.record``)."""
    return records_to_ris(record(h.id) for h in hits)


def hits_to_csljson(hits: Iterable[Hit], record: Callable[[str], Record]) -> str:
    """CSL JSON for ``hits``; ``record`` fetches a hit's whole record."""
    return records_to_csljson(record(h.id) for h in hits)
