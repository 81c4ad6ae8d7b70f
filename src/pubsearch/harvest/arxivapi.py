"""The arXiv API's query (Atom) as a harvest: newest first, read down to the last harvest.

Requests are built as arXiv's API manual documents them:
``/api/query?search_query=..&start=..&max_results=..&sortBy=lastUpdatedDate&sortOrder=descending``
(what arxiv-sanity-lite polls). The list is read newest first, a page at a time, and ends
at the first page with nothing newer than the latest ``updated`` the last harvest of the
same query saw (or at the end of the list; ``opensearch:totalResults`` gives its size). A
new version of a paper moves it to the top of the list, so a rerun sees it.

Entries are read with the standard library's ``xml.etree``: the id (``http://arxiv.org/abs/
2401.00001v2``: the arXiv id without its version), title, summary, authors, ``published``
(the first version's day), ``updated``, categories, ``arxiv:doi``; TeX accents decoded and
names normalised as the arXiv snapshot reader does. The API answers an error as a feed
whose one entry's id is under ``/api/errors``: a one-line error naming the URL and page.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from urllib.parse import urlencode

from pubsearch.core.errors import HarvestError
from pubsearch.harvest.paged import ApiPage, Item
from pubsearch.harvest.state import HarvestState
from pubsearch.ingest.dating import dated_by_submission
from pubsearch.ingest.readers.fields import arxiv_id_of, date_from, first_doi, year_from
from pubsearch.ingest.readers.tex import normalize_author, tex_to_unicode
from pubsearch.ingest.records import Record

SOURCE = "arxiv-api"
ATOM = "{http://www.w3.org/2005/Atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
ARXIV = "{http://arxiv.org/schemas/atom}"
# Entries a page (the API allows up to 2,000; its manual suggests slices of a few hundred).
MAX_RESULTS = 200
SORTS = ("lastUpdatedDate", "submittedDate")


@dataclass(frozen=True)
class ArxivApiQuery:
    endpoint: str
    search_query: str
    max_results: int = MAX_RESULTS
    sort_by: str = "lastUpdatedDate"

    first = "0"
    newest_first = True

    def new_state(self) -> HarvestState:
        return HarvestState(
            source=SOURCE,
            endpoint=self.endpoint,
            query=urlencode({"search_query": self.search_query, "sortBy": self.sort_by}),
        )

    def url(self, since: str, position: str) -> str:
        args = {
            "search_query": self.search_query,
            "start": position,
            "max_results": str(self.max_results),
            "sortBy": self.sort_by,
            "sortOrder": "descending",
        }
        return self.endpoint + ("&" if "?" in self.endpoint else "?") + urlencode(args)

    def shown(self, url: str) -> str:
        return url

    def parse(self, body: bytes, url: str, number: int, position: str) -> ApiPage:
        where = f"{url}: page {number}"
        try:
            root = ET.fromstring(body)
        except ET.ParseError as exc:
            opening = body[:200].lstrip().lower()
            html = opening.startswith((b"<!doctype html", b"<html"))
            what = "an HTML page" if html else f"cut short: {exc}"
            raise HarvestError(f"{where}: not an Atom feed ({what})") from None
        if root.tag != ATOM + "feed":
            name = _local(root.tag)
            what = "an HTML page" if name.lower() == "html" else f"its root is <{name}>"
            raise HarvestError(f"{where}: not an Atom feed ({what})")
        entries = root.findall(ATOM + "entry")
        for entry in entries:
            if "/api/errors" in _text(entry.find(ATOM + "id")):
                said = _text(entry.find(ATOM + "summary")) or "no reason given"
                raise HarvestError(f"{where}: the arXiv API answers an error: {said}")
        total_text = _text(root.find(OPENSEARCH + "totalResults"))
        total = int(total_text) if total_text.isdigit() else None
        items = tuple(self._item(entry, url) for entry in entries)
        start = int(position) if position.isdigit() else 0
        end = start + len(items)
        more = bool(items) and (total is None or end < total)
        return ApiPage(items=items, next=str(end) if more else None, total=total)

    def _item(self, entry: ET.Element, url: str) -> Item:
        link = _text(entry.find(ATOM + "id"))
        arxiv_id = arxiv_id_of(link.rsplit("/abs/", 1)[-1]) if "/abs/" in link else None
        updated = _text(entry.find(ATOM + "updated"))
        published = _text(entry.find(ATOM + "published"))
        # The date the list is sorted by: what "newer than the last harvest" compares.
        stamp = published if self.sort_by == "submittedDate" else updated
        title = tex_to_unicode(" ".join(_text(entry.find(ATOM + "title")).split()))
        abstract = tex_to_unicode(" ".join(_text(entry.find(ATOM + "summary")).split()))
        if arxiv_id is None or not (title or abstract):
            return Item(key=link or url, stamp=stamp, record=None)
        authors = []
        for author in entry.findall(ATOM + "author"):
            name = normalize_author(tex_to_unicode(_text(author.find(ATOM + "name"))))
            if name:
                authors.append(name)
        categories = [c.get("term", "") for c in entry.findall(ATOM + "category")]
        primary = entry.find(ARXIV + "primary_category")
        if primary is not None and primary.get("term") in categories:
            categories.remove(primary.get("term", ""))
            categories.insert(0, primary.get("term", ""))
        record = Record(
            title=title,
            abstract=abstract,
            authors=tuple(authors),
            year=year_from(published or updated),
            date=date_from(published or updated),
            subjects=tuple(c for c in categories if c),
            source="arXiv",
            origins=(link,),
            arxiv_id=arxiv_id,
            doi=first_doi(_text(entry.find(ARXIV + "doi")) or None),
        )
        return Item(
            key=f"arxiv:{arxiv_id}",
            stamp=stamp,
            record=record if published else dated_by_submission(record),
        )

    def refusal(self, body: bytes) -> str:
        try:
            root = ET.fromstring(body)
        except ET.ParseError:
            return ""
        for entry in root.iter(ATOM + "entry"):
            return _text(entry.find(ATOM + "summary"))[:200]
        return ""


def _text(element: ET.Element | None) -> str:
    return "".join(element.itertext()).strip() if element is not None else ""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]
