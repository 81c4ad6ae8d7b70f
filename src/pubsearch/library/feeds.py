"""Atom feeds (RFC 4287) of a search, a saved search and a tag: newest records first, each
entry's id the paper's own (its arXiv abstract page, else its DOI's URL, else a ``tag:``
URI of its record id), so that a feed reader shows a paper once however often it comes
back, and in whichever feed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, urlencode
from xml.etree import ElementTree as ET

from pubsearch.library.follow import Library
from pubsearch.search.request import SearchRequest
from pubsearch.search.results import Hit

ATOM = "http://www.w3.org/2005/Atom"
# Entries per feed: the newest.
FEED_SIZE = 50
TAG_AUTHORITY = "tag:pubsearch.invalid,2026:"
# A tag's recommended feed: among the records that appeared in these last days.
RECOMMENDED_DAYS = 30


def describe(request: SearchRequest) -> str:
    """A saved search as one line: its text and filters."""
    parts = [repr(request.q)] if request.q else ["everything"]
    parts += [f"author {a}" for a in request.authors]
    if request.person is not None:
        parts.append(f"person {request.person}")
    parts += [f"subject {s}" for s in request.subjects]
    if request.year is not None:
        parts.append(f"year {request.year}")
    if request.mode is not None:
        parts.append(f"mode {request.mode}")
    return ", ".join(parts)


def search_path(request: SearchRequest) -> str:
    """The search page's path and query string for a saved search (its text, filters and
    mode: the parameters of pubsearch.web.params, for a face that does not load the web)."""
    pairs = [("q", request.q)] if request.q else []
    pairs += [("author", a) for a in request.authors]
    if request.person is not None:
        pairs.append(("person", request.person))
    pairs += [("subject", s) for s in request.subjects]
    if request.year is not None:
        pairs.append(("year", str(request.year)))
    if request.mode is not None:
        pairs.append(("mode", request.mode))
    if request.loose:
        pairs.append(("loose", "1"))
    return "./?" + urlencode(pairs) if pairs else "./"


def entry_id(hit: Hit) -> str:
    """The paper's stable id: arXiv's page of its first arXiv id, the URL of its DOI, or a
    tag URI of its record id."""
    if hit.arxiv_ids:
        return f"https://arxiv.org/abs/{hit.arxiv_ids[0]}"
    if hit.dois:
        return f"https://doi.org/{quote(hit.dois[0], safe='/')}"
    return TAG_AUTHORITY + "record/" + quote(hit.id, safe="")


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class FeedLinks:
    """Where the feed is (``self_url``), the page it mirrors, and a record's page."""

    self_url: str
    page_url: str
    record_url: str  # with "{id}" for the record's id

    def record(self, record_id: str) -> str:
        return self.record_url.replace("{id}", quote(record_id, safe=""))


def atom(
    feed_id: str,
    title: str,
    links: FeedLinks,
    entries: Sequence[tuple[Hit, float]],
    updated: float,
) -> bytes:
    """The Atom document of ``entries`` (a hit and when it appeared), in their order (a
    reader sorts by ``updated``)."""
    ET.register_namespace("", ATOM)

    def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
        if text is not None:
            element.text = text
        return element

    feed = ET.Element(f"{{{ATOM}}}feed")
    sub(feed, "id", feed_id)
    sub(feed, "title", title)
    newest = max([at for _, at in entries if math.isfinite(at)], default=updated)
    sub(feed, "updated", _stamp(newest))
    sub(feed, "link", rel="self", type="application/atom+xml", href=links.self_url)
    sub(feed, "link", rel="alternate", type="text/html", href=links.page_url)
    author = sub(feed, "author")
    sub(author, "name", "pubsearch")
    sub(feed, "generator", "pubsearch")
    for hit, at in entries:
        entry = sub(feed, "entry")
        sub(entry, "id", entry_id(hit))
        sub(entry, "title", hit.title or hit.id, type="text")
        sub(entry, "updated", _stamp(at if math.isfinite(at) else updated))
        if hit.date and len(hit.date) == 10:
            sub(entry, "published", hit.date + "T00:00:00Z")
        sub(entry, "link", rel="alternate", href=hit.url or links.record(hit.id))
        sub(entry, "link", rel="related", type="text/html", href=links.record(hit.id))
        for name in hit.authors:
            person = sub(entry, "author")
            sub(person, "name", name)
        for subject in hit.subjects:
            sub(entry, "category", term=subject)
        sub(entry, "summary", hit.abstract or hit.title or hit.id, type="text")
    body: bytes = ET.tostring(feed, encoding="utf-8", xml_declaration=True)
    return body


def search_feed(library: Library, request: SearchRequest, links: FeedLinks) -> bytes:
    """The newest records a search finds."""
    found = library.new_records(request, -math.inf, page_size=FEED_SIZE)
    title = f"pubsearch: {describe(request)}"
    feed_id = TAG_AUTHORITY + "search/" + quote(describe(request), safe="")
    return atom(
        feed_id, title, links, list(zip(found.hits, found.appeared, strict=True)), found.upto
    )


def follow_feed(library: Library, name: str, links: FeedLinks) -> bytes:
    """The newest records of the saved search ``name`` (what is seen is not changed)."""
    saved = library.saved(name)
    found = library.new_records(saved.request, -math.inf, page_size=FEED_SIZE, name=name)
    title = f"pubsearch: {name} ({describe(saved.request)})"
    feed_id = TAG_AUTHORITY + "follow/" + quote(name, safe="")
    return atom(
        feed_id, title, links, list(zip(found.hits, found.appeared, strict=True)), found.upto
    )


def tag_feed(library: Library, tag: str, links: FeedLinks) -> bytes:
    """The records of ``tag``, newest first."""
    page = library.tag_page(tag, page_size=FEED_SIZE)
    views = library.views()
    entries = [(hit, float(views.appeared[views.by_id[hit.id]])) for hit in page.hits]
    feed_id = TAG_AUTHORITY + "tag/" + quote(tag, safe="")
    return atom(feed_id, f"pubsearch: tag {tag}", links, entries, views.upto)


def recommended_feed(library: Library, tag: str, links: FeedLinks, now: float) -> bytes:
    """The records most like ``tag``'s among those that appeared in the last
    :data:`RECOMMENDED_DAYS` days, most alike first."""
    found = library.recommend(tag, since=now - RECOMMENDED_DAYS * 86_400, page_size=FEED_SIZE)
    views = library.views()
    entries = [(hit, float(views.appeared[views.by_id[hit.id]])) for hit in found.hits]
    feed_id = TAG_AUTHORITY + "recommended/" + quote(tag, safe="")
    return atom(feed_id, f"pubsearch: recommended for {tag}", links, entries, views.upto)
