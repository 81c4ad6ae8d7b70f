"""The words of science: does pubsearch find what a scan of the records finds, however a
scientist types it? A script, not a test.

On the arXiv records of ``../shared/data`` (indexed without vectors: words only), it sets
the count pubsearch gives for each typed form beside the count a scan of the records gives:

* **formulas and symbols**: the chemical formulas written with TeX subscripts in some
  abstracts (``La$_3$Ni$_2$O$_7$``) and plainly in others, the most used first, and
  symbols (``$\\Lambda$CDM``, ``Ly$\\alpha$``, ``H$\\alpha$``); each typed plainly, in TeX
  and with Unicode subscripts or Greek letters. The scan's own rules (here, not
  pubsearch's normalisation: see :func:`undecorated` and :data:`SYMBOLS`) find every
  written form in the raw text. Recall: the share of the scanned records pubsearch finds.
* **arXiv ids**: records drawn at random, each id typed four ways (``2505.17997``,
  ``2505.17997v2``, ``arXiv:2505.17997``, its abs URL); the record must come first.
* **surnames**: a surname alone, and with words of one of that person's titles; the
  first results must be that person's papers; and no surname is ever corrected.
* **names with ł, ø, ı, ß, æ ...**: an author filter typed without them finds what the
  name as written finds.
* **wildcards**: patterns on titles and on titles and abstracts, against a scan of the
  words as written.

    .venv/bin/python bench/vocabulary.py                       # index in /tmp/pubsearch-vocabulary
    .venv/bin/python bench/vocabulary.py --index DIR --only formulas
"""

from __future__ import annotations

import argparse
import fnmatch
import random
import re
import subprocess
import sys
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pubsearch.ingest.records import Record
from pubsearch.ingest.textforms import searchable
from pubsearch.search.request import SearchRequest
from pubsearch.search.service import SearchService

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"
SECTIONS = ("formulas", "ids", "surnames", "names", "wildcards")

SUBSCRIPTS = dict(zip("0123456789", "₀₁₂₃₄₅₆₇₈₉", strict=True))


def ensure_index(index: Path, data: Path) -> None:
    if (index / "CURRENT").exists():
        return
    print(f"indexing {data} into {index} ...", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-m", "pubsearch", "index", "--no-vectors", "--index", str(index)]
        + [str(data)],
        check=True,
    )


@dataclass
class Row:
    """One thing looked for: the scan's records, and pubsearch's for each typed form."""

    name: str
    scanned: set[str]
    found: dict[str, set[str]]  # typed form -> ids pubsearch gives

    def recall(self, form: str) -> float:
        if not self.scanned:
            return 1.0
        return len(self.found[form] & self.scanned) / len(self.scanned)


class Searcher:
    """Every record id pubsearch gives for a request (pages of 100, up to 10,000)."""

    def __init__(self, service: SearchService) -> None:
        self.service = service

    def ids(self, q: str = "", authors: tuple[str, ...] = ()) -> set[str]:
        found: set[str] = set()
        page = 1
        while page * 100 <= 10_000:
            results = self.service.search(
                SearchRequest(
                    q=q,
                    authors=authors,
                    page=page,
                    page_size=100,
                    mode="lexical",
                    highlight=False,
                )
            )
            found.update(hit.id for hit in results.hits)
            if page * 100 >= results.total:
                break
            page += 1
        return found

    def total(self, q: str) -> int:
        return self.service.count(SearchRequest(q=q, mode="lexical"))

    def first(self, q: str, count: int) -> list[str]:
        results = self.service.search(
            SearchRequest(q=q, page=1, page_size=max(count, 1), mode="lexical", highlight=False)
        )
        return [hit.id for hit in results.hits]


# -- formulas and symbols ------------------------------------------------------------------

# A formula written with TeX subscripts somewhere in it: element symbols, each with an
# optional count ($_3$, $_{3}$), at least two elements.
_TEX_FORMULA = re.compile(
    r"(?<![A-Za-z0-9\\])((?:[A-Z][a-z]?(?:\$_\{?\d+\}?\$)?){2,})(?![A-Za-z0-9$])"
)
_PIECE = re.compile(r"[A-Z][a-z]?|\d+")
# A formula written plainly: element symbols with counts, at least one of them a number.
_PLAIN_FORMULA = re.compile(
    r"(?<![A-Za-z0-9$_{])((?:[A-Z][a-z]?\d*)*[A-Z][a-z]?\d+(?:[A-Z][a-z]?\d*)*)(?![A-Za-z0-9$])"
)
# What TeX puts around a formula's pieces: dollars, script marks, braces, font commands.
_DECORATIONS = re.compile(r"[$_^{}]|\\(?:mathrm|rm|text|mathit|textrm)\b\s*")
_SCRIPT_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉⁰¹²³⁴⁵⁶⁷⁸⁹", "01234567890123456789")


def undecorated(text: str) -> str:
    """The scan's reading of a text for formulas (its own, not pubsearch's): TeX's
    decorations dropped and Unicode's script digits as digits, so that every written form
    of ``La3Ni2O7`` is that word (``La$_3$Ni$_2$O$_7$``, ``$\\mathrm{La_3Ni_2O_7}$``,
    ``La₃Ni₂O₇``); one with more joined to it is another formula (``CH$_3$OH`` is not
    ``CH3``, ``$^{15}$NH$_3$`` not ``NH3``)."""
    return _DECORATIONS.sub("", text).translate(_SCRIPT_DIGITS)


def formula_pattern(plain: str) -> re.Pattern[str]:
    """A formula standing as a word of :func:`undecorated` text."""
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(plain)}(?![A-Za-z0-9])")


def formula_forms(plain: str) -> dict[str, str]:
    pieces = _PIECE.findall(plain)
    tex = "".join(
        f"$_{p}$" if p.isdigit() and len(p) == 1 else f"$_{{{p}}}$" if p.isdigit() else p
        for p in pieces
    )
    unicode = "".join("".join(SUBSCRIPTS[d] for d in p) if p.isdigit() else p for p in pieces)
    return {"plain": plain, "TeX": tex, "Unicode": unicode}


# Symbols: a name, the scan's pattern of every written form, and typed forms.
_LAMBDA = r"(?:\$\\Lambda\$|\$Λ\$|Λ|\\Lambda|Lambda)"
SYMBOLS: list[tuple[str, str, dict[str, str]]] = [
    (
        "ΛCDM",
        rf"(?<![A-Za-z]){_LAMBDA}[ -]?(?:\\mathrm\{{)?CDM",
        {"Unicode": "ΛCDM", "TeX": "$\\Lambda$CDM", "name": "LambdaCDM"},
    ),
    (
        "Lyα",
        r"(?<![A-Za-z])Ly[ -]?(?:\$\\alpha\$|\$\\rm\s*\\alpha\$|α|\\alpha|alpha)(?![a-z])",
        {"Unicode": "Lyα", "TeX": "Ly$\\alpha$", "name": "Lyalpha"},
    ),
    (
        "Hα",
        r"(?<![A-Za-z])H(?:\$\\alpha\$|α|alpha)(?![a-z])",
        {"Unicode": "Hα", "TeX": "H$\\alpha$", "name": "Halpha"},
    ),
    (
        "Hβ",
        r"(?<![A-Za-z])H(?:\$\\beta\$|β|beta)(?![a-z])",
        {"Unicode": "Hβ", "TeX": "H$\\beta$", "name": "Hbeta"},
    ),
    (
        "α-synuclein",
        r"(?<![A-Za-z])(?:\$\\alpha\$|α|alpha)[ -]?synuclein",
        {"Unicode": "α-synuclein", "TeX": "$\\alpha$-synuclein", "name": "alpha-synuclein"},
    ),
    (
        "μm",
        r"(?<![A-Za-z0-9])(?:\$\\mu\$\s?|μ|µ|\\mu\s?)m(?![A-Za-z])",
        {"Unicode": "μm", "TeX": "$\\mu$m", "micro sign": "µm"},
    ),
]


def formulas_table(records: list[Record], search: Searcher, count: int) -> list[Row]:
    texts = [(r.id, f"{r.title} {r.abstract}") for r in records]
    tex_counts: Counter[str] = Counter()
    plain_seen: Counter[str] = Counter()
    for _, text in texts:
        for match in _TEX_FORMULA.finditer(text):
            written = match.group(1)
            if "$_" in written:
                tex_counts[re.sub(r"[$_{}]", "", written)] += 1
        plain_seen.update(_PLAIN_FORMULA.findall(text))
    # Written in TeX in some records and plainly in others; the most used first.
    chosen = [
        f for f, _ in tex_counts.most_common() if plain_seen[f] and len(_PIECE.findall(f)) > 2
    ]
    rows = []
    plain_texts = [(rid, undecorated(text)) for rid, text in texts]
    for plain in chosen[:count]:
        pattern = formula_pattern(plain)
        scanned = {rid for rid, text in plain_texts if pattern.search(text)}
        forms = formula_forms(plain)
        rows.append(Row(plain, scanned, {k: search.ids(v) for k, v in forms.items()}))
    for name, scan, forms in SYMBOLS:
        pattern = re.compile(scan)
        scanned = {rid for rid, text in texts if pattern.search(text)}
        rows.append(Row(name, scanned, {k: search.ids(v) for k, v in forms.items()}))
    return rows


def print_rows(title: str, rows: list[Row]) -> None:
    forms = list(dict.fromkeys(form for row in rows for form in row.found))
    print(f"\n### {title}\n")
    print("| looked for | scan | " + " | ".join(f"{f}: found (recall)" for f in forms) + " |")
    print("|---|---:|" + "---:|" * len(forms))
    worst: dict[str, float] = {}
    for row in rows:
        cells = []
        for form in forms:
            if form not in row.found:
                cells.append("")
                continue
            recall = row.recall(form)
            worst[form] = min(worst.get(form, 1.0), recall)
            cells.append(f"{len(row.found[form]):,} ({recall:.2f})")
        print(f"| {row.name} | {len(row.scanned):,} | " + " | ".join(cells) + " |")
    for form in forms:
        pooled_scan = sum(len(r.scanned) for r in rows if form in r.found)
        pooled_hit = sum(len(r.found[form] & r.scanned) for r in rows if form in r.found)
        share = sum(r.recall(form) >= 0.95 for r in rows if form in r.found)
        of = sum(form in r.found for r in rows)
        print(
            f"\n{form}: pooled recall {pooled_hit / max(pooled_scan, 1):.3f}; "
            f"{share} of {of} at 0.95 or more; lowest {worst.get(form, 1.0):.2f}"
        )


# -- arXiv ids -----------------------------------------------------------------------------


def id_forms(arxiv_id: str) -> dict[str, str]:
    return {
        "plain": arxiv_id,
        "versioned": f"{arxiv_id}v2",
        "arXiv:": f"arXiv:{arxiv_id}",
        "URL": f"https://arxiv.org/abs/{arxiv_id}",
    }


def ids_table(records: list[Record], search: Searcher, count: int, rng: random.Random) -> None:
    with_ids = [r for r in records if r.arxiv_id]
    drawn = rng.sample(with_ids, min(count, len(with_ids)))
    firsts: Counter[str] = Counter()
    onlies: Counter[str] = Counter()
    misses: list[str] = []
    for record in drawn:
        assert record.arxiv_id is not None
        for form, typed in id_forms(record.arxiv_id).items():
            results = search.service.search(
                SearchRequest(q=typed, page_size=10, mode="lexical", highlight=False)
            )
            ids = [hit.id for hit in results.hits]
            if ids[:1] == [record.id]:
                firsts[form] += 1
                onlies[form] += results.total == 1
            else:
                misses.append(f"{typed} -> {ids[:3]} (total {results.total})")
    print(f"\n### arXiv ids ({len(drawn)} records, drawn with the seed)\n")
    print("| typed as | first | only result |")
    print("|---|---:|---:|")
    for form in id_forms("0000.00000"):
        print(f"| {form} | {firsts[form]} of {len(drawn)} | {onlies[form]} of {len(drawn)} |")
    for miss in misses[:10]:
        print(f"- missed: {miss}")


# -- surnames ------------------------------------------------------------------------------


def scan_fold(text: str) -> str:
    """The scan's folding of a name (its own, not pubsearch's): accents stripped, the
    letters Unicode does not decompose spelt out, apostrophes dropped, lower case."""
    text = text.translate(_SCAN_LETTERS)
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return stripped.replace("'", "").replace("\u2019", "").casefold()


_SCAN_LETTERS = str.maketrans(
    {
        "ł": "l",
        "Ł": "L",
        "ø": "o",
        "Ø": "O",
        "ı": "i",
        "đ": "d",
        "Đ": "D",
        "ħ": "h",
        "ß": "ss",
        "æ": "ae",
        "Æ": "Ae",
        "œ": "oe",
        "Œ": "Oe",
        "þ": "th",
        "Þ": "Th",
    }
)


def surname_of(author: str) -> str:
    return scan_fold(author.split(",")[0] if "," in author else author.split()[-1])


# The issue's surnames; the rest are drawn from the corpus.
NAMED_SURNAMES = [
    "Hinton",
    "LeCun",
    "Niessner",
    "Lacki",
    "Spurek",
    "Borchmann",
    "Schölkopf",
    "O'Brien",
    "Übler",
]


def surnames_table(
    records: list[Record], search: Searcher, count: int, rng: random.Random, words: set[str]
) -> None:
    by_surname: dict[str, set[str]] = {}
    written: dict[str, str] = {}
    for record in records:
        for author in record.authors:
            key = surname_of(author)
            by_surname.setdefault(key, set()).add(record.id)
            written.setdefault(key, author.split()[-1] if "," not in author else author)
    # Distinctive surnames: 5 to 60 papers, of letters only, not a word of any title.
    pool = sorted(
        key
        for key, ids in by_surname.items()
        if 5 <= len(ids) <= 60
        and key.isalpha()
        and key.isascii()
        and len(key) > 3
        and key not in words
    )
    chosen = [s for s in NAMED_SURNAMES if scan_fold(s) in by_surname]
    chosen += rng.sample(
        [written[k] for k in pool if written[k] not in chosen], max(0, count - len(chosen))
    )
    titles = {r.id: r.title for r in records}
    good = 0
    topic_good = 0
    topic_tried = 0
    corrected: list[str] = []
    print(f"\n### Surnames ({len(chosen)})\n")
    print("| surname | their papers | first 5: theirs | with topic words | first: theirs |")
    print("|---|---:|---:|---|---:|")
    for surname in chosen:
        theirs = by_surname[scan_fold(surname)]
        want = min(5, len(theirs))
        first = search.first(surname, want)
        hit = sum(rid in theirs for rid in first[:want])
        good += hit == want
        results = search.service.search(SearchRequest(q=surname, mode="lexical", highlight=False))
        if results.suggestion or results.corrected_from:
            corrected.append(f"{surname} -> {results.suggestion}")
        # Topic: two longest words of one of their titles, with the surname.
        sample = sorted(theirs)[0]
        topic_words = sorted(re.findall(r"[A-Za-z]{5,}", titles[sample]), key=len)[-2:]
        topic = " ".join([surname, *topic_words])
        mine = {rid for rid in theirs if all(w.lower() in titles[rid].lower() for w in topic_words)}
        topic_first = search.first(topic, 1)
        ok = bool(topic_first) and topic_first[0] in theirs
        topic_tried += 1
        topic_good += ok
        print(
            f"| {surname} | {len(theirs)} | {hit} of {want} | {topic} ({len(mine)}) | "
            f"{'yes' if ok else 'no'} |"
        )
    print(
        f"\nsurname alone: {good} of {len(chosen)} put that person's papers first "
        f"({good / len(chosen):.0%}); with topic words: {topic_good} of {topic_tried}; "
        f"corrected or suggested: {len(corrected)} {corrected}"
    )


# -- names with letters people type without ------------------------------------------------

SPECIAL = "łŁøØıßæÆœđĐħþ"


def names_table(records: list[Record], search: Searcher, count: int, rng: random.Random) -> None:
    people: dict[str, set[str]] = {}
    for record in records:
        for author in record.authors:
            if any(c in SPECIAL for c in author):
                people.setdefault(author, set()).add(record.id)
    pool = sorted(name for name, ids in people.items() if len(ids) >= 2)
    chosen = rng.sample(pool, min(count, len(pool)))
    exact = 0
    print(f"\n### Names with {SPECIAL} ({len(chosen)})\n")
    print("| name as written | records (scan) | --author as written | typed plainly | found |")
    print("|---|---:|---:|---|---:|")
    for name in sorted(chosen):
        plain = unicodedata.normalize("NFKD", name.translate(_SCAN_LETTERS))
        plain = "".join(c for c in plain if not unicodedata.combining(c))
        as_written = search.ids(authors=(name,))
        typed = search.ids(authors=(plain,))
        exact += typed == as_written and people[name] <= typed
        print(f"| {name} | {len(people[name])} | {len(as_written)} | {plain} | {len(typed)} |")
    print(
        f"\nexact (typed plainly finds what the name as written finds, and every record "
        f"the scan finds): {exact} of {len(chosen)}"
    )
    for typed, written in (
        ("Schoelkopf", "Schölkopf"),
        ("Soerensen", "Sørensen"),
        ("Uebler", "Übler"),
    ):
        print(
            f"- `{typed}` finds {len(search.ids(q=typed))}, `{written}` "
            f"{len(search.ids(q=written))}"
        )


# -- wildcards -----------------------------------------------------------------------------

_SCAN_WORD = re.compile(r"\w+(?:['.]?\w+)*")

WILDCARDS = [
    "title:transformer*",
    "transform?r",
    "transformer*",
    "title:optim*",
    "optim?zation",
    "title:neuro*",
    "neuro*",
    "title:quantum*",
    "qu?ntum",
    "title:graph*",
    "gr?ph",
    "title:diffus*",
    "diffus?on",
    "title:galax*",
    "galax?es",
    "title:superconduct*",
    "superconduct*",
    "title:lang*",
    "langu?ge",
    "title:reinforc*",
    "title:entangle*",
    "entangle?ent",
    "title:spectr*",
    "spectr?m",
    "title:magnet*",
    "magneti?ation",
    "title:learn*",
    "learn?ng",
    "title:robot*",
    "rob?t*",
]


def written_words(text: str) -> set[str]:
    """The scan's words of a text as written: TeX read as pubsearch reads it (the formulas
    above check that reading against a scan of their own), then its own cutting and folding:
    runs of letters and digits with inner dots and apostrophes, accents stripped, the
    apostrophes and underscores inside a word dropped, lower case."""
    words = _SCAN_WORD.findall(scan_fold(searchable(text)))
    return {w.replace("'", "").replace("_", "") for w in words}


def wildcards_table(records: list[Record], search: Searcher) -> None:
    fields = [(r.id, written_words(r.title), written_words(r.abstract)) for r in records]
    exact = 0
    print(f"\n### Wildcards ({len(WILDCARDS)})\n")
    print("| pattern | scan | pubsearch | exact |")
    print("|---|---:|---:|---|")
    for pattern in WILDCARDS:
        in_title = pattern.startswith("title:")
        glob = pattern.removeprefix("title:")
        match = re.compile(fnmatch.translate(glob)).match
        scanned = {
            rid
            for rid, title, abstract in fields
            if any(map(match, title)) or (not in_title and any(map(match, abstract)))
        }
        found = search.ids(q=pattern)
        total = search.total(pattern)
        # Past 10,000 (the deepest page served): the count, and the first 10,000 among them.
        same = total == len(scanned) and found <= scanned
        exact += same
        print(f"| `{pattern}` | {len(scanned):,} | {total:,} | {'yes' if same else 'no'} |")
    print(f"\nexact: {exact} of {len(WILDCARDS)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="records to index")
    parser.add_argument(
        "--index",
        type=Path,
        default=Path("/tmp/pubsearch-vocabulary"),
        help="index directory (built from --data when it has none)",
    )
    parser.add_argument("--only", nargs="*", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--formulas", type=int, default=40, help="formulas to look for")
    args = parser.parse_args()

    ensure_index(args.index, args.data)
    started = time.perf_counter()
    service = SearchService(args.index)
    records = list(service.iter_records())
    search = Searcher(service)
    print(f"{len(records):,} records in {args.index}")
    if "formulas" in args.only:
        print_rows("Formulas and symbols", formulas_table(records, search, args.formulas))
    if "ids" in args.only:
        ids_table(records, search, 100, random.Random(args.seed))
    if "surnames" in args.only:
        words = {w.lower() for r in records for w in re.findall(r"[A-Za-z]+", r.title)}
        surnames_table(records, search, 30, random.Random(args.seed), words)
    if "names" in args.only:
        names_table(records, search, 30, random.Random(args.seed))
    if "wildcards" in args.only:
        wildcards_table(records, search)
    print(f"\n({time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
