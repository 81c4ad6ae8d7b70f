"""A BibTeX eprint that names another paper does not merge the entry with that paper.

Reference managers get arXiv ids wrong at times (Google Scholar's exports put one paper's
eprint on another's entry). An arXiv id read from a BibTeX entry is a claim
(``Record.arxiv_id_claimed``): the entry is the paper of that id only when their titles
agree. Records are first grouped by every identity key, claims included
(:class:`~pubsearch.ingest.records.PaperGroups`); :class:`EprintCheck` then takes each group
apart again where a claim joined titles that disagree, leaving the arXiv id out of the
claiming record and saying so (file and line).

Titles agree when their words, compared as people read them (TeX written as text,
``$\\Lambda$CDM`` as ΛCDM, ``MoTe$_{2}$`` as MoTe₂; case, accents and punctuation
ignored; function words and a plural ``s`` left out), overlap by at least
:data:`MIN_SIMILARITY` (shared words over all their words), or when the shorter title has
at least :data:`MIN_CONTAINED_WORDS` words, all in the longer one (a subtitle left out).
A title missing on either side never disagrees.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from functools import reduce

from pubsearch.ingest.readable import readable
from pubsearch.ingest.records import PaperGroups, Record, fold, merge

MIN_SIMILARITY = 0.5
MIN_CONTAINED_WORDS = 3
_FUNCTION_WORDS = frozenset(
    "a an and are as at by for from in into is its of on or the to towards via with".split()
)
_WORD = re.compile(r"\w+")


def title_words(title: str) -> frozenset[str]:
    """The words a title is compared by (see the module's doc)."""
    words = _WORD.findall(fold(readable(title)))
    return frozenset(
        word[:-1] if len(word) > 3 and word.endswith("s") else word
        for word in words
        if word not in _FUNCTION_WORDS
    )


def titles_agree(first: str, second: str) -> bool:
    """Whether two titles are those of one paper (see the module's doc)."""
    a, b = title_words(first), title_words(second)
    if not a or not b:
        return True
    shared = len(a & b)
    if shared / len(a | b) >= MIN_SIMILARITY:
        return True
    shorter = min(len(a), len(b))
    return shorter >= MIN_CONTAINED_WORDS and shared == shorter


class EprintCheck:
    """Takes apart the groups of records that a claimed arXiv id joined to a paper whose
    title disagrees. Called with each group's members (in order of arrival); keeps the
    warnings it gave and how many papers it added."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.splits = 0

    def __call__(self, members: list[Record]) -> list[list[Record]]:
        """The papers ``members`` are, each its records in order of arrival."""
        if len(members) < 2 or not any(m.arxiv_id_claimed for m in members):
            return [members]
        checked = [self._checked(member, members) for member in members]
        if checked == members:
            return [members]
        groups: PaperGroups[Record] = PaperGroups()
        for record in checked:
            groups.add(record.identity_keys, record)
        papers = list(groups.held())
        self.splits += len(papers) - 1
        return papers

    def _checked(self, member: Record, members: list[Record]) -> Record:
        """``member`` without the claimed arXiv ids whose papers' titles disagree with
        its own (each said in a warning)."""
        if not member.arxiv_id_claimed:
            return member
        dropped = []
        for arxiv_id in member.arxiv_ids:
            holders = [m for m in members if not m.arxiv_id_claimed and arxiv_id in m.arxiv_ids]
            if holders and not any(titles_agree(member.title, h.title) for h in holders):
                dropped.append(arxiv_id)
                self.warnings.append(_disagreement(member, arxiv_id, holders[0]))
        return without_arxiv_ids(member, dropped) if dropped else member


def without_arxiv_ids(record: Record, dropped: Iterable[str]) -> Record:
    """``record`` without the arXiv ids ``dropped``; its id made anew when it was one."""
    left = tuple(a for a in record.arxiv_ids if a not in set(dropped))
    return replace(
        record,
        arxiv_id=left[0] if left else None,
        other_arxiv_ids=left[1:],
        id=record.id if record.has_own_id else "",
    )


def _disagreement(member: Record, arxiv_id: str, holder: Record) -> str:
    where = member.origins[0] if member.origins else "a record"
    theirs = f" ({holder.origins[0]})" if holder.origins else ""
    return (
        f"{where}: eprint {arxiv_id} is another paper, \u201c{holder.title}\u201d{theirs}, "
        f"not \u201c{member.title}\u201d: not merged with it, the entry kept without that id"
    )


def merged_papers(members: list[Record], check: EprintCheck | None) -> list[Record]:
    """The records ``members`` make, folded with :func:`~pubsearch.ingest.records.merge`:
    one, or more where ``check`` takes them apart."""
    papers = check(members) if check is not None else [members]
    return [reduce(merge, paper) for paper in papers]
