"""Profile pages: a person's list of publications, as the seeds in ``seeds/`` are.

Layout (blank lines between everything, any number of them)::

    arXiv subjects                                   site line
    Yang You                                         the person
    Publications and source records attributed to Yang You.
    At least 235 records · Page 13Linked to original sources
    arXiv2021                                        source and year: starts a record
    Online Evolutionary Batch Size Orchestration...  title
    Efficient GPU resource scheduling is ...         abstract (optional, may span lines)
    cs.DC↗                                           subjects, each tag ending in ↗

The page's person is an author of every record on it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from pubsearch.ingest.readers.report import ReadReport
from pubsearch.ingest.records import Record

# "arXiv2021"; a source of two words ("Semantic Scholar 2021") is accepted only where a
# record can start (after a subject line or the header), so that a title or abstract line
# ending in a number is not taken for one.
_START = re.compile(
    r"^(?P<source>[A-Za-z][\w.\-]*(?: [A-Za-z][\w.\-]*)?) ?(?P<year>(?:1[89]|20)\d\d)$"
)
_ATTRIBUTED = re.compile(r"^Publications and source records attributed to (?P<name>.+?)\.?$")
_SUBJECT_TAG = re.compile(r"[A-Za-z][A-Za-z\-]*(?:\.[A-Za-z][A-Za-z\-]*)?")
_ARROW = "\u2197"


def looks_like_profile(first_lines: list[str]) -> bool:
    """True when the opening lines have a profile page's attribution line."""
    return any(_ATTRIBUTED.match(line.strip()) for line in first_lines)


def _subjects(line: str) -> list[str] | None:
    """Tags of a subject line (``cs.DC↗`` or ``cs.LG↗ stat.ML↗``), or None if it is not one."""
    if not line.endswith(_ARROW):
        return None
    parts = [p.strip(" ,;") for p in re.split(r"[\u2197,;\s]+", line) if p.strip(" ,;")]
    if not parts or not all(_SUBJECT_TAG.fullmatch(p) for p in parts):
        return None
    return parts


def read_profile(lines: Iterable[str], origin: str, report: ReadReport) -> Iterator[Record]:
    """Records of one profile page. ``origin`` is the file's display path."""
    numbered = [(n, line.strip()) for n, line in enumerate(lines, start=1)]
    numbered = [(n, line.lstrip("\ufeff")) for n, line in numbered if line.strip("\ufeff")]

    person: str | None = None
    for _, line in numbered[:6]:
        match = _ATTRIBUTED.match(line)
        if match:
            person = match.group("name").strip()
            break
    if person is None:
        report.skip(f"{origin}:1", "no 'Publications and source records attributed to' line")
        return

    # Group lines into blocks, each starting at a source-and-year line.
    blocks: list[list[tuple[int, str]]] = []
    after_subjects = True  # the header ends where the first record may start
    for number, line in numbered:
        if _START.match(line) and (after_subjects or " " not in line):
            blocks.append([(number, line)])
            after_subjects = False
        else:
            if blocks:
                blocks[-1].append((number, line))
            after_subjects = _subjects(line) is not None or not blocks

    for block in blocks:
        record = _read_block(block, person, origin, report)
        if record is not None:
            yield record


def _read_block(
    block: list[tuple[int, str]], person: str, origin: str, report: ReadReport
) -> Record | None:
    start_line, head = block[0]
    where = f"{origin}:{start_line}"
    match = _START.match(head)
    assert match is not None  # blocks start at a matching line
    body = block[1:]
    subject_at = next((i for i, (_, line) in enumerate(body) if _subjects(line)), None)
    if subject_at is None:
        report.skip(where, "record has no subject line ending in '\u2197'; skipped")
        return None
    if subject_at == 0:
        report.skip(where, "record has no title; skipped")
        return None
    if subject_at + 1 < len(body):
        stray_line = body[subject_at + 1][0]
        report.skip(f"{origin}:{stray_line}", "text after the subject line ignored")
    title = body[0][1]
    abstract = " ".join(line for _, line in body[1:subject_at])
    subjects = _subjects(body[subject_at][1]) or []
    return Record(
        title=title,
        abstract=abstract,
        authors=(person,),
        year=int(match.group("year")),
        subjects=tuple(subjects),
        source=match.group("source").strip(),
        origins=(where,),
    )
