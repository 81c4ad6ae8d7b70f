"""Surnames in the search box: are a person's papers first, and do topic words stay topics?

A script, not a test. Three sets, searched words only (``--mode lexical``):

* surnames alone: those of issue #32 and ``--drawn`` more drawn (seeded) from the index's
  own surnames that people wrote 5 to 60 records under and no title or abstract uses;
  right when the first min(5, n) hits are papers by someone of that surname (n: their
  records), the surname compared with its marks and German spellings dropped;
* topic words that are also surnames (``moon``, ``young``): right when the first five
  hits use the word in their title or abstract;
* a surname and a topic word of one of its people's titles: right when that person's
  papers on the topic come first (as many as there are, up to five) and other papers on
  the topic follow.

    .venv/bin/python bench/surnames.py --index /tmp/arxiv-ix
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter
from pathlib import Path

from pubsearch.ingest.records import fold
from pubsearch.ingest.textforms import transliterations
from pubsearch.search.request import SearchRequest
from pubsearch.search.results import Hit
from pubsearch.search.service import SearchService

ISSUE = [
    "Hinton",
    "LeCun",
    "Niessner",
    "Lacki",
    "Schölkopf",
    "Scholkopf",
    "Schoelkopf",
    "O'Brien",
    "OBrien",
    "Übler",
    "Uebler",
    "Spurek",
    "Isik",
    "Borchmann",
    "Sørensen",
]
TOPIC_WORDS = ["graph", "attention", "moon", "young", "long", "field", "white", "bell"]
WITH_TOPICS = [("Spurek", "gaussian splatting"), ("Hinton", "capsule")]
_LETTERS = re.compile(r"[a-z]+")


def skeleton(text: str) -> set[str]:
    """The words of a name, folded, with German spellings taken back (oe is o)."""
    out = set()
    for form in (fold(text), fold(transliterations(text))):
        for word in _LETTERS.findall(form.replace("'", "")):
            for spelled, plain in (("ae", "a"), ("oe", "o"), ("ue", "u"), ("aa", "a")):
                word = word.replace(spelled, plain)
            out.add(word)
    return out


def by(surname: str, hit: Hit) -> bool:
    wanted = skeleton(surname)
    return any(wanted <= skeleton(author) for author in hit.authors)


def first_are_theirs(service: SearchService, text: str, surname: str, n: int) -> tuple[bool, int]:
    results = service.search(SearchRequest(q=text, mode="lexical", page_size=max(n, 1)))
    hits = results.hits[:n]
    return len(hits) == n and all(by(surname, hit) for hit in hits), results.total


def drawn_surnames(service: SearchService, count: int, seed: int) -> list[str]:
    gen, searcher = service._searcher()
    table = service._facet_table(gen, searcher)
    names = gen.names(table, service.index_dir / gen.name)
    pool = sorted(
        word
        for word, papers in names.surnames()
        if 5 <= papers <= 60 and len(word) >= 5 and word.isalpha() and word.isascii()
    )
    rng = random.Random(seed)
    rng.shuffle(pool)
    chosen = []
    for word in pool:
        if service.count_word(word) == 0:
            chosen.append(word.capitalize())
        if len(chosen) == count:
            break
    return chosen


def topic_of(service: SearchService, surname: str) -> str | None:
    """A word of the titles of the surname's people that other titles use too."""
    results = service.search(SearchRequest(authors=(surname,), page_size=100, mode="lexical"))
    words = Counter(
        w for hit in results.hits for w in set(_LETTERS.findall(hit.title.lower())) if len(w) >= 7
    )
    for word, _ in words.most_common():
        if service.count_word(word) >= 20 and word not in skeleton(surname):
            return word
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="an index directory")
    parser.add_argument("--drawn", type=int, default=15, help="surnames drawn from the index")
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()
    service = SearchService(args.index)
    surnames = ISSUE + drawn_surnames(service, args.drawn, args.seed)

    print("| surname | records by the surname | first min(5, n) theirs | total |")
    print("|---|---:|---|---:|")
    right = 0
    for surname in surnames:
        n = service.search(SearchRequest(authors=(surname,), mode="lexical", page_size=1)).total
        ok, total = first_are_theirs(service, surname, surname, min(5, n))
        right += ok
        print(f"| {surname} | {n} | {'yes' if ok else 'NO'} | {total} |")
    print(f"\nsurnames alone: {right} of {len(surnames)} ({right / len(surnames):.0%})\n")

    print("| topic word | total | first 5 use the word |")
    print("|---|---:|---|")
    kept = 0
    for word in TOPIC_WORDS:
        results = service.search(SearchRequest(q=word, mode="lexical", page_size=5))
        ok = (
            all(word in f"{hit.title} {hit.abstract}".lower() for hit in results.hits)
            and len(results.hits) == 5
        )
        kept += ok
        print(f"| {word} | {results.total} | {'yes' if ok else 'NO'} |")
    print(f"\ntopic words kept: {kept} of {len(TOPIC_WORDS)}\n")

    pairs = list(WITH_TOPICS)
    for surname in surnames[len(ISSUE) :]:
        topic = topic_of(service, surname)
        if topic is not None:
            pairs.append((surname, topic))
    print("| query | their papers on it | first theirs | others follow | total |")
    print("|---|---:|---|---|---:|")
    good = 0
    for surname, topic in pairs:
        theirs = service.search(
            SearchRequest(q=topic, authors=(surname,), mode="lexical", page_size=1)
        ).total
        text = f"{surname} {topic}"
        ok, total = first_are_theirs(service, text, surname, min(5, theirs))
        follow = total > theirs
        good += ok and follow
        print(
            f"| {text} | {theirs} | {'yes' if ok else 'NO'} | {'yes' if follow else 'NO'} "
            f"| {total} |"
        )
    print(f"\nsurname and topic: {good} of {len(pairs)}")
    service.close()


if __name__ == "__main__":
    main()
