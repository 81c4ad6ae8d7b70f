"""Crossref's ``/works`` list as a harvest: deep paging with cursors, the polite pool, and
a filter that asks a rerun only for the works Crossref indexed since the last one.

Requests are built as Crossref's REST API documents them:
``/works?query=..&filter=..&rows=1000&cursor=*`` (then ``cursor=`` the page's
``message.next-cursor``), with ``mailto=`` (the polite pool). The list ends at a page
whose ``items`` are empty (Crossref gives a next cursor to the end). A rerun adds
``from-index-date:`` the latest ``indexed`` date its works had (a day) to the filter, in
place of an older one the filter gave. Works are read by the Crossref reader
(:func:`pubsearch.ingest.readers.crossref.record_from_work`: JATS abstracts stripped to
text, the citation count kept).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from pubsearch.core.errors import HarvestError
from pubsearch.harvest.openalex import json_page, refusal_of, with_since
from pubsearch.harvest.paged import ApiPage, Item
from pubsearch.harvest.state import HarvestState
from pubsearch.ingest.readers.crossref import record_from_work

SOURCE = "crossref"
SINCE_FILTER = "from-index-date"
# Crossref's largest page (rows up to 1,000).
ROWS = 1000


@dataclass(frozen=True)
class CrossrefQuery:
    endpoint: str
    filter: str = ""
    query: str = ""
    rows: int = ROWS
    mailto: str | None = None

    first = "*"
    newest_first = False

    def new_state(self) -> HarvestState:
        return HarvestState(source=SOURCE, endpoint=self.endpoint, query=self.query_text())

    def query_text(self) -> str:
        parts = {"filter": self.filter, "query": self.query}
        return urlencode({k: v for k, v in parts.items() if v})

    def url(self, since: str, position: str) -> str:
        args = {}
        if self.query:
            args["query"] = self.query
        filters = with_since(self.filter, SINCE_FILTER, since[:10])
        if filters:
            args["filter"] = filters
        args["rows"] = str(self.rows)
        args["cursor"] = position
        if self.mailto:
            args["mailto"] = self.mailto
        return self.endpoint.rstrip("/") + "/works?" + urlencode(args, safe=":,*")

    def shown(self, url: str) -> str:
        return url

    def parse(self, body: bytes, url: str, number: int, position: str) -> ApiPage:
        data = json_page(body, url, number)
        message = data.get("message")
        items = message.get("items") if isinstance(message, Mapping) else None
        if not isinstance(message, Mapping) or not isinstance(items, list):
            raise HarvestError(f"{url}: page {number}: not a Crossref work list (no items)")
        out = []
        for offset, work in enumerate(items):
            if not isinstance(work, Mapping):
                continue
            doi = work.get("DOI")
            key = f"doi:{doi.lower()}" if isinstance(doi, str) and doi else f"{url}#{offset}"
            indexed = work.get("indexed")
            stamp = indexed.get("date-time") if isinstance(indexed, Mapping) else None
            out.append(
                Item(
                    key=key,
                    # The day Crossref indexed it: what from-index-date asks by.
                    stamp=stamp[:10] if isinstance(stamp, str) else "",
                    record=record_from_work(work, f"{self.endpoint}/works/{doi or offset}"),
                )
            )
        cursor = message.get("next-cursor")
        total = message.get("total-results")
        return ApiPage(
            items=tuple(out),
            next=cursor if isinstance(cursor, str) and cursor and items else None,
            total=total if isinstance(total, int) else None,
        )

    def refusal(self, body: bytes) -> str:
        return refusal_of(body, ("message",))
