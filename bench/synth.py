"""Synthetic records in arXiv's metadata snapshot format, N of them, from a seed.

A script for the growth benchmark (``bench/growth.py``), not a part of pubsearch. The
records are what ``pubsearch index --format arxiv`` reads (``arxiv-metadata-oai-snapshot.json``:
one JSON object a line with ``id``, ``submitter``, ``authors``, ``title``, ``comments``,
``journal-ref``, ``doi``, ``report-no``, ``categories``, ``license``, ``abstract``,
``versions``, ``update_date``, ``authors_parsed``), drawn from a model of small statistics
(``bench/synth_model.json``) fitted once on the 102,289 real arXiv records of
``../shared/data/arxiv-2024-2026`` (CC0)::

    .venv/bin/python bench/synth.py 1000000 --out /tmp/pubsearch-growth/synth-1m.json.gz
    .venv/bin/python bench/synth.py --fit     # refit bench/synth_model.json from the real records

Kept from the real records (the model file holds them):

* titles: words a title (histogram), the share written in Title Case;
* abstracts: sentences an abstract and words a sentence (histograms), commas and inline
  TeX (``$...$``, the 60 commonest snippets) per word, the share of records without one;
* words: the 5,000 commonest words (their commonest spelling) with their frequencies in
  titles and in abstracts; past them, a Zipf tail whose exponent is fitted so that the
  vocabulary grows as the real one does (Heaps' law, V = K * T^beta, fitted on the real
  records at 10k, 50k and 102k; ``heaps`` in the model). Words of the tail are drawn with
  fixed probabilities, so a word first seen at 100k recurs at 1M: new words are not all
  hapaxes;
* authors: authors a paper (histogram, to the largest collaborations); a population of
  people with Zipf-like productivity (a Pareto tail over their ranks, fitted so that the
  distinct names grow with N as the real ones do); names from the 3,000 commonest surnames
  and 2,000 commonest given names, by their frequencies, with the real share of a middle
  initial (two people can share a name, as in the real records);
* categories: the primary category's frequency, categories a paper, and for each primary
  category its commonest co-listed ones;
* duplicates: the share of records that are the same paper as an earlier one (same title
  and year, another id), as pubsearch's merger finds them in the real records.

Invented (the 2024-2026 records cannot say; from arXiv's public figures, approximately):
submissions a year from 1991 to 2026, versions a paper and their spacing, the shares with
a DOI, a journal reference and comments, licences, and the words of the tail (syllables,
the same word for the same rank at every N). Ids are arXiv's: ``hep-th/9901001`` before
April 2007, ``0704.0001`` after, five digits from 2015; unique, numbered per month.

The same seed and model give the same records, and the first N records of a larger run
are the N records of a smaller one.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import math
import random
import re
import sys
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"
MODEL = Path(__file__).with_name("synth_model.json")
SEED = 20261201
BATCH = 2_000  # records drawn together; fixed, so that a run's prefix is the smaller run

TOP_WORDS = 5_000
SURNAMES = 3_000
GIVEN_NAMES = 2_000
MATH_SNIPPETS = 60
CO_CATEGORIES = 8
HEAPS_POINTS = (10_000, 50_000, 102_289)  # where the laws are fitted
SMALL_POINTS = (1_000, 4_000)  # kept in the model too, for the tests at a small N

_TOKEN = re.compile(r"[A-Za-z]+|[0-9]+")
_MATH = re.compile(r"\$[^$]{1,40}\$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")

# Submissions a year (approximately arXiv's own statistics; 2026 extrapolated). Only the
# shape matters: records are spread over the years in these proportions.
SUBMISSIONS = {
    1991: 300, 1992: 3_200, 1993: 6_700, 1994: 10_000, 1995: 13_000, 1996: 15_500,
    1997: 19_500, 1998: 24_000, 1999: 28_000, 2000: 30_500, 2001: 33_000, 2002: 35_500,
    2003: 37_500, 2004: 42_500, 2005: 45_500, 2006: 49_000, 2007: 55_500, 2008: 58_500,
    2009: 64_000, 2010: 70_000, 2011: 76_500, 2012: 84_500, 2013: 92_500, 2014: 97_500,
    2015: 105_000, 2016: 113_500, 2017: 124_000, 2018: 140_500, 2019: 155_500,
    2020: 178_500, 2021: 181_500, 2022: 185_500, 2023: 208_500, 2024: 241_000,
    2025: 270_000, 2026: 290_000,
}  # fmt: skip
VERSIONS = (0.56, 0.30, 0.10, 0.03, 0.01)  # 1 to 5 versions
DAYS_BETWEEN_VERSIONS = 75.0
SHARE_DOI = 0.45
SHARE_JOURNAL = 0.40
SHARE_COMMENTS = 0.80
LICENSES = (
    (None, 0.25),
    ("http://arxiv.org/licenses/nonexclusive-distrib/1.0/", 0.55),
    ("http://creativecommons.org/licenses/by/4.0/", 0.15),
    ("http://creativecommons.org/licenses/by-nc-nd/4.0/", 0.05),
)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")

# Syllables of the invented words: no "e" or "y" (English stemmers cut them at a word's end).
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvz" for v in "aiou"]


# -- fitting the model on real records ------------------------------------------------------


def read_real(path: Path, limit: int | None = None) -> Iterator[dict[str, Any]]:
    """Records of a JSON lines file (gzip or not), as ``bench/speed.py`` reads the corpus."""
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if limit is not None and n >= limit:
                return
            yield json.loads(line)


def tokens(text: str) -> list[str]:
    """Words of ``text`` (runs of letters, runs of digits), TeX snippets left out."""
    return _TOKEN.findall(_MATH.sub(" ", text))


def heaps_fit(points: list[tuple[int, int]]) -> tuple[float, float]:
    """(K, beta) of V = K * T^beta by least squares on logarithms of (T, V) points."""
    xs = [math.log(t) for t, _ in points]
    ys = [math.log(v) for _, v in points]
    if len(points) == 1:
        return points[0][1] / points[0][0] ** 0.5, 0.5
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    beta = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    return math.exp(my - beta * mx), beta


def _histogram(counter: Counter[int]) -> list[list[int]]:
    return [[value, count] for value, count in sorted(counter.items())]


def _tail(counter: Counter[str], top: int) -> float:
    """The share of ``counter``'s counts outside its ``top`` commonest values."""
    return 1 - sum(c for _, c in counter.most_common(top)) / max(counter.total(), 1)


def _is_title_case(words: list[str]) -> bool:
    long = [w for w in words if len(w) > 3]
    return bool(long) and sum(w[0].isupper() for w in long) >= 0.6 * len(long)


def fit(path: Path, points: Iterable[int] = HEAPS_POINTS) -> dict[str, Any]:
    """The model's statistics from the real records of ``path`` (JSON lines)."""
    marks = sorted(set(points) | set(SMALL_POINTS))
    title_len: Counter[int] = Counter()
    sentences: Counter[int] = Counter()
    sentence_len: Counter[int] = Counter()
    title_words: Counter[str] = Counter()
    abstract_words: Counter[str] = Counter()
    spellings: dict[str, Counter[str]] = defaultdict(Counter)
    math_snippets: Counter[str] = Counter()
    n_authors: Counter[int] = Counter()
    surnames: Counter[str] = Counter()
    given: Counter[str] = Counter()
    names: set[str] = set()
    primary: Counter[str] = Counter()
    n_categories: Counter[int] = Counter()
    co: dict[str, Counter[str]] = defaultdict(Counter)
    seen_keys: set[tuple[str, int]] = set()
    counts = Counter[str]()
    heaps_words: list[list[int]] = []
    heaps_authors: list[list[int]] = []
    total_tokens = 0
    n = 0
    for rec in read_real(path):
        n += 1
        title, abstract = rec.get("title") or "", rec.get("abstract") or ""
        words = tokens(title)
        title_len[len(words)] += 1
        counts["title case"] += _is_title_case(words)
        for word in words:
            title_words[word.lower()] += 1
            spellings[word.lower()][word] += 1
        total_tokens += len(words)
        if not abstract.strip():
            counts["no abstract"] += 1
        else:
            parts = _SENTENCE_END.split(abstract.strip())
            sentences[len(parts)] += 1
            for part in parts:
                found = tokens(part)
                sentence_len[len(found)] += 1
                counts["abstract words"] += len(found)
                counts["commas"] += part.count(",")
                for word in found:
                    abstract_words[word.lower()] += 1
                    spellings[word.lower()][word] += 1
                total_tokens += len(found)
            for snippet in _MATH.findall(abstract):
                math_snippets[snippet] += 1
                counts["math"] += 1
        authors = rec.get("authors") or []
        n_authors[len(authors)] += 1
        for name in authors:
            names.add(name.casefold())
            parts = name.split()
            if len(parts) >= 2:
                surnames[parts[-1]] += 1
                given[parts[0]] += 1
                counts["names"] += 1
                counts["middle"] += len(parts) > 2
        cats = rec.get("categories") or []
        n_categories[len(cats)] += 1
        if cats:
            primary[cats[0]] += 1
            for other in cats[1:]:
                co[cats[0]][other] += 1
        key = (" ".join(w.lower() for w in words), rec.get("year") or 0)
        counts["duplicates"] += key in seen_keys
        seen_keys.add(key)
        if n in marks:
            vocabulary = len(title_words.keys() | abstract_words.keys())
            heaps_words.append([n, total_tokens, vocabulary])
            heaps_authors.append([n, sum(k * v for k, v in n_authors.items()), len(names)])
    if not heaps_words or heaps_words[-1][0] != n:
        vocabulary = len(title_words.keys() | abstract_words.keys())
        heaps_words.append([n, total_tokens, vocabulary])
        heaps_authors.append([n, sum(k * v for k, v in n_authors.items()), len(names)])
    top = [w for w, _ in (title_words + abstract_words).most_common(TOP_WORDS)]
    small = [p for p in heaps_words if p[0] in SMALL_POINTS and p[0] not in points]
    small_authors = [p for p in heaps_authors if p[0] in SMALL_POINTS and p[0] not in points]
    heaps_words = [p for p in heaps_words if p not in small]
    heaps_authors = [p for p in heaps_authors if p not in small_authors]
    k, beta = heaps_fit([(t, v) for _, t, v in heaps_words])
    ka, beta_a = heaps_fit([(t, v) for _, t, v in heaps_authors])
    title_total = sum(title_words.values())
    abstract_total = sum(abstract_words.values()) or 1
    return {
        "records": n,
        "title_words": _histogram(title_len),
        "title_case": counts["title case"] / n,
        "sentences": _histogram(sentences),
        "sentence_words": _histogram(sentence_len),
        "no_abstract": counts["no abstract"] / n,
        "comma_per_word": counts["commas"] / abstract_total,
        "math_per_word": counts["math"] / abstract_total,
        "math": math_snippets.most_common(MATH_SNIPPETS),
        "words": [
            [spellings[w].most_common(1)[0][0], title_words[w], abstract_words[w]] for w in top
        ],
        "title_tail": 1 - sum(title_words[w] for w in top) / title_total,
        "abstract_tail": 1 - sum(abstract_words[w] for w in top) / abstract_total,
        "heaps": {"points": heaps_words, "K": k, "beta": beta, "small": small},
        "authors_per_paper": _histogram(n_authors),
        "author_heaps": {"points": heaps_authors, "K": ka, "beta": beta_a, "small": small_authors},
        "surnames": surnames.most_common(SURNAMES),
        "surname_tail": _tail(surnames, SURNAMES),
        "given_names": given.most_common(GIVEN_NAMES),
        "given_tail": _tail(given, GIVEN_NAMES),
        "middle_initial": counts["middle"] / max(counts["names"], 1),
        "primary": primary.most_common(),
        "categories_per_paper": _histogram(n_categories),
        "co_categories": {p: c.most_common(CO_CATEGORIES) for p, c in sorted(co.items())},
        "duplicates": counts["duplicates"] / n,
        # Fitted by calibrate(): the Zipf tails' exponents.
        "word_tail_exponent": 2.0,
        "word_tail_scale": float(TOP_WORDS),
        "author_exponent": 2.0,
        "author_scale": 1.0,
    }


def calibrate(model: dict[str, Any], seed: int = SEED) -> dict[str, Any]:
    """Fit the Zipf tails of words and of authors (each an exponent and a scale) so that
    the generator's distinct words and distinct names grow as the real ones do."""
    rng = np.random.default_rng(seed)
    words = Words(model)

    def vocabulary(size: int) -> int:
        return int(np.unique(words.ranks(rng, size, title=False)).size)

    model["word_tail_exponent"], model["word_tail_scale"] = _fit_tail(
        words, vocabulary, model["heaps"]["points"], (1e3, 1e4, 1e5, 1e6)
    )
    people = People(model)

    def population(size: int) -> int:
        return len(set(people.names(np.unique(people.ranks(rng, size)))))

    model["author_exponent"], model["author_scale"] = _fit_tail(
        people, population, model["author_heaps"]["points"], (1e2, 1e3, 1e4, 1e5)
    )
    return model


def _fit_tail(
    tail: Words | People, distinct: Any, points: list[list[int]], scales: tuple[float, ...]
) -> tuple[float, float]:
    """(exponent, scale) of a tail: for each scale, the exponent at which ``distinct(size)``
    gives the real count at the largest point (bisection); then the scale that misses the
    smallest point least."""
    (_, small, at_small), *_, (_, large, at_large) = points
    best = (math.inf, 0.0, 0.0)
    for scale in scales:
        tail.scale = scale
        lo, hi = 1.05, 6.0
        for _ in range(12):
            tail.exponent = (lo + hi) / 2
            if distinct(large) > at_large:
                lo = tail.exponent
            else:
                hi = tail.exponent
        tail.exponent = round((lo + hi) / 2, 4)
        miss = abs(math.log(distinct(small) / at_small))
        best = min(best, (miss, tail.exponent, scale))
    return best[1], best[2]


# -- drawing ----------------------------------------------------------------------------------


def _mix(values: np.ndarray, salt: int) -> np.ndarray:
    """splitmix64 of ``values`` + ``salt``: the same well-spread 64-bit number for a rank."""
    with np.errstate(over="ignore"):
        z = values.astype(np.uint64) + np.uint64(salt) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _unit(values: np.ndarray, salt: int) -> np.ndarray:
    """A number in [0, 1) for each value, fixed by the value."""
    return (_mix(values, salt) >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def _pareto_ranks(rng: np.random.Generator, size: int, exponent: float, scale: float) -> np.ndarray:
    """Ranks from 0 with P(rank r) falling as (r + scale)^-exponent, without an end (past
    2^40, a rank is drawn at random there: each such draw is one of a kind)."""
    ranks = scale * (rng.random(size) ** (-1.0 / (exponent - 1.0)) - 1.0)
    far = ~(ranks < _FAR)  # also inf
    ranks[far] = _FAR + rng.integers(0, 1 << 40, int(far.sum()))
    return ranks.astype(np.int64)


_FAR = float(1 << 40)


class Histogram:
    """Values drawn in the proportions of a ``[[value, count], ...]`` table."""

    def __init__(self, table: list[list[Any]]) -> None:
        self.values = np.array([v for v, _ in table])
        weights = np.array([c for _, c in table], dtype=np.float64)
        self.cdf = np.cumsum(weights / weights.sum())

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        index = np.searchsorted(self.cdf, rng.random(size), side="right")
        return self.values[np.minimum(index, len(self.values) - 1)]


class Words:
    """Word ranks drawn from the real top words' frequencies and a Zipf tail past them."""

    def __init__(self, model: dict[str, Any]) -> None:
        self.top = [w for w, _, _ in model["words"]]
        real = {w.lower() for w in self.top}
        self.lower = real
        self.exponent: float = model["word_tail_exponent"]
        self.scale: float = model.get("word_tail_scale", float(TOP_WORDS))
        self.tables = {}
        for title, column, tail in ((True, 1, "title_tail"), (False, 2, "abstract_tail")):
            counts = np.array([row[column] for row in model["words"]], dtype=np.float64)
            head = 1.0 - model[tail]
            self.tables[title] = (np.cumsum(counts / counts.sum()) * head, head)
        self._invented: dict[int, str] = {}

    def ranks(self, rng: np.random.Generator, size: int, title: bool) -> np.ndarray:
        cdf, head = self.tables[title]
        u = rng.random(size)
        ranks = np.searchsorted(cdf, u, side="right").astype(np.int64)
        tail = u >= head
        top = len(self.top)
        ranks[tail] = top + _pareto_ranks(rng, int(tail.sum()), self.exponent, self.scale)
        return ranks

    def word(self, rank: int) -> str:
        if rank < len(self.top):
            return self.top[rank]
        made = self._invented.get(rank)
        if made is None:
            number = rank - len(self.top) + len(_SYLLABLES)  # two syllables or more
            parts = []
            while number:
                number, digit = divmod(number, len(_SYLLABLES))
                parts.append(_SYLLABLES[digit])
            made = "".join(reversed(parts))
            if made in self.lower:  # a real word: made different (no syllable ends in x)
                made += "x"
            self._invented[rank] = made
        return made


class NamePool:
    """A name for a person's rank: one of the real commonest names, in their proportions,
    or (in the real share of rarer names) an invented one; fixed by the rank."""

    def __init__(self, table: list[list[Any]], tail: float, salt: int) -> None:
        self.names = [name for name, _ in table]
        self.cdf = Histogram([[i, c] for i, (_, c) in enumerate(table)]).cdf * (1.0 - tail)
        self.salt = salt

    def pick(self, ranks: np.ndarray) -> list[str]:
        index = np.searchsorted(self.cdf, _unit(ranks, self.salt), side="right").tolist()
        made = _mix(ranks, self.salt + 100).tolist()
        return [
            self.names[i] if i < len(self.names) else _invented_name(m)
            for i, m in zip(index, made, strict=True)
        ]


def _invented_name(number: int) -> str:
    parts = []
    for _ in range(2 + number % 2):
        number, digit = divmod(number >> 1, len(_SYLLABLES))
        parts.append(_SYLLABLES[digit])
    return "".join(parts).capitalize()


class People:
    """Authors: ranks by productivity, and a name for each rank (fixed by the rank)."""

    def __init__(self, model: dict[str, Any]) -> None:
        self.exponent: float = model["author_exponent"]
        self.scale: float = model["author_scale"]
        self.surnames = NamePool(model["surnames"], model["surname_tail"], 1)
        self.given = NamePool(model["given_names"], model["given_tail"], 2)
        self.middle = float(model["middle_initial"])

    def ranks(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return _pareto_ranks(rng, size, self.exponent, self.scale)

    def parts(self, ranks: np.ndarray) -> list[tuple[str, str]]:
        """(surname, given names) of each rank."""
        middle = (_unit(ranks, 3) < self.middle).tolist()
        letters = (_mix(ranks, 4) % np.uint64(26)).tolist()
        return [
            (last, f"{first} {chr(65 + letter)}." if m else first)
            for last, first, m, letter in zip(
                self.surnames.pick(ranks), self.given.pick(ranks), middle, letters, strict=True
            )
        ]

    def names(self, ranks: np.ndarray) -> list[str]:
        return [f"{first} {last}" for last, first in self.parts(ranks)]


class Generator:
    """Snapshot records drawn from a model; :meth:`records` yields them in order."""

    def __init__(self, model: dict[str, Any], seed: int = SEED) -> None:
        self.model = model
        self.seed = seed
        self.words = Words(model)
        self.people = People(model)
        self.title_len = Histogram(model["title_words"])
        self.sentences = Histogram(model["sentences"])
        self.sentence_len = Histogram(model["sentence_words"])
        self.authors_per_paper = Histogram(model["authors_per_paper"])
        self.categories_per_paper = Histogram(model["categories_per_paper"])
        self.primary = [c for c, _ in model["primary"]]
        self.primary_hist = Histogram([[i, c] for i, (_, c) in enumerate(model["primary"])])
        self.math = [s for s, _ in model["math"]]
        self.years = Histogram([[y, n] for y, n in SUBMISSIONS.items()])
        self._numbers: Counter[str] = Counter()
        # The last papers' (title, year, month, day): a duplicate repeats one of them.
        self._recent: deque[tuple[str, int, int, int]] = deque(maxlen=100)

    def records(self, n: int) -> Iterator[dict[str, Any]]:
        done = 0
        batch = 0
        while done < n:
            rng = np.random.default_rng([self.seed, batch])
            for record in self._batch(rng, BATCH):
                if done >= n:
                    return
                yield record
                done += 1
            batch += 1

    def _text(self, rng: np.random.Generator, lengths: np.ndarray, title: bool) -> list[str]:
        """Words for ``sum(lengths)`` slots, as strings."""
        ranks = self.words.ranks(rng, int(lengths.sum()), title)
        unique, inverse = np.unique(ranks, return_inverse=True)
        strings = [self.words.word(r) for r in unique.tolist()]
        return [strings[i] for i in inverse.tolist()]

    def _batch(self, rng: np.random.Generator, size: int) -> Iterator[dict[str, Any]]:
        py = random.Random(int(rng.integers(1 << 62)))
        model = self.model
        title_lengths = np.maximum(self.title_len.draw(rng, size), 1)
        title_words = self._text(rng, title_lengths, title=True)
        has_abstract = rng.random(size) >= model["no_abstract"]
        n_sentences = np.where(has_abstract, self.sentences.draw(rng, size), 0)
        sentence_lengths = np.maximum(self.sentence_len.draw(rng, int(n_sentences.sum())), 2)
        abstract_words = self._text(rng, sentence_lengths, title=False)
        comma = (rng.random(len(abstract_words)) < model["comma_per_word"]).tolist()
        maths = (rng.random(len(abstract_words)) < model["math_per_word"]).tolist()
        n_authors = self.authors_per_paper.draw(rng, size)
        people = self.people.parts(self.people.ranks(rng, int(n_authors.sum())))
        n_cats = np.maximum(self.categories_per_paper.draw(rng, size), 1)
        primaries = self.primary_hist.draw(rng, size)
        years = self.years.draw(rng, size)
        duplicate = rng.random(size) < model["duplicates"]
        t = a = s = p = 0
        for i in range(size):
            words = title_words[t : t + int(title_lengths[i])]
            t += int(title_lengths[i])
            title = _title(words, py.random() < model["title_case"])
            sentences = []
            for _ in range(int(n_sentences[i])):
                length = int(sentence_lengths[s])
                s += 1
                chunk = []
                for j in range(a, a + length):
                    word = py.choice(self.math) if maths[j] and self.math else abstract_words[j]
                    chunk.append(word + "," if comma[j] and j < a + length - 1 else word)
                a += length
                chunk[0] = chunk[0][:1].upper() + chunk[0][1:]
                sentences.append(" ".join(chunk) + ".")
            authors = _distinct(people[p : p + int(n_authors[i])])
            p += int(n_authors[i])
            cats = self._categories(py, self.primary[int(primaries[i])], int(n_cats[i]))
            month, day = py.randint(1, 12), py.randint(1, 28)
            year = int(years[i])
            if duplicate[i] and self._recent:
                title, year, month, day = py.choice(self._recent)
            else:
                self._recent.append((title, year, month, day))
            yield self._record(py, title, " ".join(sentences), authors, cats, (year, month, day))

    def _categories(self, py: random.Random, primary: str, count: int) -> list[str]:
        cats = [primary]
        choices = self.model["co_categories"].get(primary, [])
        pool = [c for c, _ in choices]
        weights = [n for _, n in choices]
        while len(cats) < count and pool:
            pick = py.choices(range(len(pool)), weights)[0]
            cats.append(pool.pop(pick))
            weights.pop(pick)
        return cats

    def _record(
        self,
        py: random.Random,
        title: str,
        abstract: str,
        authors: list[tuple[str, str]],
        cats: list[str],
        day: tuple[int, int, int],
    ) -> dict[str, Any]:
        year, month, mday = day
        arxiv_id = self._new_id(year, month, cats[0])
        versions = []
        when = _days(year, month, mday)
        for v in range(1, 1 + _draw(py, VERSIONS)):
            if v > 1:
                when += 1 + int(py.expovariate(1 / DAYS_BETWEEN_VERSIONS))
            versions.append({"version": f"v{v}", "created": _created(py, when)})
        names = [f"{first} {last}" for last, first in authors]
        pages = py.randint(4, 40)
        return {
            "id": arxiv_id,
            "submitter": names[0] if names else "arXiv Admin",
            "authors": _author_string(names),
            "title": title,
            "comments": f"{pages} pages, {py.randint(0, 12)} figures"
            if py.random() < SHARE_COMMENTS
            else None,
            "journal-ref": f"J. Synth. {py.randint(1, 99)} ({year})"
            if py.random() < SHARE_JOURNAL
            else None,
            "doi": f"10.{py.randint(1000, 9999)}/synth.{arxiv_id.replace('/', '.')}"
            if py.random() < SHARE_DOI
            else None,
            "report-no": None,
            "categories": " ".join(cats),
            "license": py.choices([lic for lic, _ in LICENSES], [w for _, w in LICENSES])[0],
            "abstract": abstract,
            "versions": versions,
            "update_date": _iso(when),
            "authors_parsed": [[last, first, ""] for last, first in authors],
        }

    def _new_id(self, year: int, month: int, primary: str) -> str:
        """arXiv's id for the next paper of that month: old style before April 2007."""
        yymm = f"{year % 100:02d}{month:02d}"
        if (year, month) < (2007, 4):
            archive = primary.split(".")[0].lower()
            key = f"{archive}/{yymm}"
            self._numbers[key] += 1
            if self._numbers[key] <= 999:
                return f"{key}{self._numbers[key]:03d}"
        self._numbers[yymm] += 1
        number = self._numbers[yymm]
        width = 5 if year >= 2015 or number > 9999 else 4
        return f"{yymm}.{number:0{width}d}"


def _title(words: list[str], title_case: bool) -> str:
    if title_case:
        words = [w[:1].upper() + w[1:] if len(w) > 3 else w for w in words]
    words = [words[0][:1].upper() + words[0][1:], *words[1:]]
    return " ".join(words)


def _distinct(people: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: set[tuple[str, str]] = set()
    return [p for p in people if not (p in seen or seen.add(p))]  # type: ignore[func-returns-value]


def _author_string(names: list[str]) -> str:
    if len(names) < 2:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _draw(py: random.Random, shares: tuple[float, ...]) -> int:
    return py.choices(range(1, len(shares) + 1), shares)[0]


def _days(year: int, month: int, day: int) -> int:
    return datetime.date(year, month, day).toordinal()


def _iso(ordinal: int) -> str:
    return datetime.date.fromordinal(ordinal).isoformat()


def _created(py: random.Random, ordinal: int) -> str:
    day = datetime.date.fromordinal(ordinal)
    return (
        f"{DAYS[day.weekday()]}, {day.day} {MONTHS[day.month - 1]} {day.year} "
        f"{py.randint(0, 23):02d}:{py.randint(0, 59):02d}:{py.randint(0, 59):02d} GMT"
    )


# -- the command line -----------------------------------------------------------------------


def load_model(path: Path = MODEL) -> dict[str, Any]:
    with path.open(encoding="utf-8") as fh:
        model: dict[str, Any] = json.load(fh)
    return model


def write_records(model: dict[str, Any], n: int, out: IO[str], seed: int = SEED) -> int:
    count = 0
    for record in Generator(model, seed).records(n):
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        count += 1
    return count


def open_out(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "wt", encoding="utf-8", compresslevel=1)
    return path.open("w", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, nargs="?", help="how many records to write")
    parser.add_argument("--out", type=Path, help="output file (.gz is compressed); default stdout")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--model", type=Path, default=MODEL, help="the model's statistics (JSON)")
    parser.add_argument(
        "--fit",
        nargs="?",
        const=DEFAULT_DATA,
        type=Path,
        metavar="DATA",
        help="refit --model from real records (JSON lines; default the 102,289 arXiv records)",
    )
    args = parser.parse_args()
    if args.fit:
        model = calibrate(fit(args.fit))
        args.model.write_text(json.dumps(model, ensure_ascii=False, separators=(",", ":")) + "\n")
        print(f"wrote {args.model} from {model['records']:,} records", file=sys.stderr)
        return
    if args.n is None:
        parser.error("give N (records to write) or --fit")
    model = load_model(args.model)
    if args.out is None:
        write_records(model, args.n, sys.stdout, args.seed)
        return
    with open_out(args.out) as out:
        count = write_records(model, args.n, out, args.seed)
    print(f"wrote {count:,} records to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
