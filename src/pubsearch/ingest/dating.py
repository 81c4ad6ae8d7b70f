"""Records dated by their submission rather than by the listing that gave them.

arXiv's daily listings carry old papers too (a new version, a cross-list): the 102,289
records of ``../shared/data`` include ``0705.1862``, listed on 2025-08-26 and submitted in
May 2007. A record whose date is such a listing's is dated by the month its arXiv id was
given (YYMM, new style and old: :func:`pubsearch.ingest.identifiers.submission_month`) when that
month is more than :data:`LISTING_LAG_MONTHS` before the listing: its year and date
become the submission's, the date a month (``2007-05``), and the listing's day is kept as
``Record.listed``. The year facet and the newest-first sort then place it by its
submission. A date from a journal (a publication date) is never moved: only readers that
know their date is a listing's ask for this.
"""

from __future__ import annotations

from dataclasses import replace

from pubsearch.ingest.identifiers import submission_month
from pubsearch.ingest.records import Record

# A listing up to this many months after the id's month is the paper's own (a first
# version listed late, a revision soon after); later ones are dated by the submission.
LISTING_LAG_MONTHS = 12


def dated_by_submission(record: Record) -> Record:
    """``record``, dated by its submission month when its date (a listing's day) is more
    than :data:`LISTING_LAG_MONTHS` after it (see the module's doc); else as it is."""
    if record.arxiv_id is None or record.date is None or len(record.date) != 10:
        return record
    submitted = submission_month(record.arxiv_id)
    if submitted is None:
        return record
    year, month = submitted
    listed_year, listed_month = int(record.date[:4]), int(record.date[5:7])
    if (listed_year - year) * 12 + listed_month - month <= LISTING_LAG_MONTHS:
        return record
    return replace(record, year=year, date=f"{year:04d}-{month:02d}", listed=record.date)
