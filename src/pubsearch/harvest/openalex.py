"""OpenAlex's ``/works`` list as a harvest: cursor paging, the polite pool, and a filter
that asks a rerun only for the works changed since the last one.

Requests are built as OpenAlex documents them:
``/works?filter=..&search=..&per_page=100&cursor=*`` (then ``cursor=`` the page's
``meta.next_cursor``), with ``mailto=`` (the polite pool) and ``api_key=`` where given.
The list ends at a page whose ``next_cursor`` is null or whose ``results`` are empty. A
rerun adds ``from_updated_date:`` the latest ``updated_date`` its works had (a day) to the
filter, in place of one the filter gave if that is older. Works are read by the OpenAlex
reader (:func:`pubsearch.ingest.readers.openalex.record_from_work`: the abstract from
``abstract_inverted_index``, the citation count kept).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from pubsearch.core.errors import HarvestError
from pubsearch.harvest.paged import ApiPage, Item
from pubsearch.harvest.state import HarvestState
from pubsearch.ingest.readers.openalex import record_from_work

SOURCE = "openalex"
SINCE_FILTER = "from_updated_date"
# OpenAlex's largest page (per_page 1 to 100, developers.openalex.org's paging guide).
PER_PAGE = 100


@dataclass(frozen=True)
class OpenAlexQuery:
    endpoint: str
    filter: str = ""
    search: str = ""
    per_page: int = PER_PAGE
    mailto: str | None = None
    api_key: str | None = None

    first = "*"
    newest_first = False

    def new_state(self) -> HarvestState:
        return HarvestState(source=SOURCE, endpoint=self.endpoint, query=self.query_text())

    def query_text(self) -> str:
        """The query as a saved harvest's key and ``--list`` show it."""
        parts = {"filter": self.filter, "search": self.search}
        return urlencode({k: v for k, v in parts.items() if v})

    def url(self, since: str, position: str) -> str:
        args = {}
        filters = with_since(self.filter, SINCE_FILTER, since[:10])
        if filters:
            args["filter"] = filters
        if self.search:
            args["search"] = self.search
        args["per_page"] = str(self.per_page)
        args["cursor"] = position
        if self.mailto:
            args["mailto"] = self.mailto
        if self.api_key:
            args["api_key"] = self.api_key
        return self.endpoint.rstrip("/") + "/works?" + urlencode(args, safe=":,|*")

    def shown(self, url: str) -> str:
        return url.replace(f"api_key={self.api_key}", "api_key=...") if self.api_key else url

    def parse(self, body: bytes, url: str, number: int, position: str) -> ApiPage:
        data = json_page(body, url, number)
        results = data.get("results")
        meta = data.get("meta")
        if not isinstance(results, list) or not isinstance(meta, Mapping):
            raise HarvestError(f"{url}: page {number}: not an OpenAlex list (no meta and results)")
        items = []
        for offset, work in enumerate(results):
            if not isinstance(work, Mapping):
                continue
            key = _string(work.get("id")) or f"{url}#{offset}"
            # The day it last changed: what from_updated_date asks by.
            stamp = (_string(work.get("updated_date")) or _string(work.get("publication_date")))[
                :10
            ]
            items.append(Item(key=key, stamp=stamp, record=record_from_work(work, key)))
        cursor = meta.get("next_cursor")
        count = meta.get("count")
        return ApiPage(
            items=tuple(items),
            next=cursor if isinstance(cursor, str) and cursor and results else None,
            total=count if isinstance(count, int) else None,
        )

    def refusal(self, body: bytes) -> str:
        return refusal_of(body, ("message", "error"))


def with_since(filters: str, name: str, day: str) -> str:
    """``filters`` (``a:1,b:2``) with ``name:day`` in it, in place of a ``name`` it gives
    that is older (or kept if later); unchanged when ``day`` is empty."""
    if not day:
        return filters
    kept: list[str] = []
    given = ""
    for part in filter(None, (p.strip() for p in filters.split(","))):
        field, _, value = part.partition(":")
        if field.strip() == name:
            given = max(given, value.strip())
        else:
            kept.append(part)
    return ",".join([*kept, f"{name}:{max(day, given)}"])


def json_page(body: bytes, url: str, number: int) -> Mapping[str, Any]:
    """A JSON object's page; a one-line error naming the URL and page when it is not one
    (cut short, an HTML page)."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        start = body[:200].lstrip().lower()
        html = start.startswith((b"<!doctype html", b"<html"))
        what = "an HTML page" if html else f"cut short or not JSON: {exc}"
        raise HarvestError(f"{url}: page {number}: not a JSON answer ({what})") from None
    if not isinstance(data, Mapping):
        raise HarvestError(f"{url}: page {number}: not a JSON object")
    return data


def refusal_of(body: bytes, keys: tuple[str, ...]) -> str:
    """The message a JSON error answer gives (under one of ``keys``), shortened."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        text = body[:200].decode("utf-8", "replace")
        return "" if text.lstrip().startswith("<") else " ".join(text.split())[:120]
    found: object = data
    if isinstance(data, Mapping):
        found = next((data[k] for k in keys if data.get(k)), "")
    if isinstance(found, list) and found:
        found = found[0]
    if isinstance(found, Mapping):
        found = found.get("message") or found.get("type") or ""
    text = " ".join(str(found).split())
    return text[:200]


def _string(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""
