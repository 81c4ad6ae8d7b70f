"""Records with arXiv codes of two archives, codes that share a name and a keyword:
the index of the subject tests (test_searching_subjects.py, test_web_facets.py)."""

from __future__ import annotations

from pubsearch.ingest.records import Record

RECORDS = [
    Record(title="Gradient descent for deep networks", subjects=("cs.LG",), year=2021),
    Record(title="Kernel methods in statistics", subjects=("stat.ML",), year=2022),
    Record(title="Learning theory of kernels", subjects=("cs.LG", "stat.ML"), year=2022),
    Record(title="Stars of the old days", subjects=("astro-ph",), year=2021),
    Record(title="Spiral galaxies and their arms", subjects=("astro-ph.GA",), year=2022),
    Record(title="The cosmic microwave background", subjects=("astro-ph.CO",), year=2023),
    Record(title="Galaxy shapes by deep learning", subjects=("astro-ph.GA", "cs.LG"), year=2023),
    Record(title="Dark matter halos from a catalogue", subjects=("Dark matter",), year=2023),
    Record(title="Strongly correlated electrons", subjects=("cond-mat.str-el",), year=2021),
    Record(title="Strings and branes", subjects=("hep-th",), year=2022),
]


def titles_with(*subjects: str) -> set[str]:
    return {r.title for r in RECORDS if set(r.subjects) & set(subjects)}
