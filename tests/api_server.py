"""A real web API on 127.0.0.1 for the harvest tests of OpenAlex, Crossref and the arXiv
API: ``/works`` lists in OpenAlex's and Crossref's JSON shapes (cursor paging: ``cursor=*``,
then each page's next cursor; the list ends at an empty page) and the arXiv API's Atom
feed (``start``/``max_results``, newest first by ``updated``), as each service documents
them (developers.openalex.org, api.crossref.org's REST API documentation, info.arxiv.org/
help/api). The works are made at run time from the CC0 arXiv records of
tests/data/arxiv-2024-2026.sample.jsonl (see tests/data/README.md); the OpenAlex ids,
citation counts, Crossref DOIs (Crossref's example prefix 10.5555) and journal are made up.

The tests script it as they script tests/oai_server.py: answers served before a page's
real one (a 503 with Retry-After, a 429, a cut page, an HTML page), dates changed
upstream, and a page held back until the test lets it go (the client is killed while it
waits). It keeps every request's path and arguments and its User-Agent.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape, quoteattr

from oai_server import Answer

from pubsearch.ingest.subjects import arxiv_subject_name

DATA = Path(__file__).parent / "data" / "arxiv-2024-2026.sample.jsonl"
SERVICES = ("openalex", "crossref", "arxiv")
# What each service's list is narrowed by on a rerun.
SINCE_FILTERS = {"openalex": "from_updated_date", "crossref": "from-index-date"}


def sample_objects(count: int = 50) -> list[dict[str, Any]]:
    with open(DATA, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()][:count]


@dataclass
class Works:
    """One service's works, served as that service serves them."""

    service: str
    objects: list[dict[str, Any]]
    # Per arXiv id: the day the work last changed at the service (else the record's date).
    changed: dict[str, str] = field(default_factory=dict)
    # Page number -> answers served, one per request, before the page's real one.
    faults: dict[int, list[Answer]] = field(default_factory=dict)
    # Cursors the service no longer knows (they expire): answered 400, once (the same
    # offset's cursor of a list begun anew is a new one at a real service).
    expired: set[str] = field(default_factory=set)
    block_at: int | None = None
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    requests: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    user_agents: list[str] = field(default_factory=list)

    def day(self, obj: dict[str, Any]) -> str:
        return self.changed.get(obj["id"], obj["date"])

    def answer(self, path: str, args: dict[str, str]) -> Answer:
        size = int(args.get("per_page") or args.get("rows") or args.get("max_results") or 25)
        if self.service == "arxiv":
            start = int(args.get("start", "0"))
        else:
            cursor = args.get("cursor", "")
            if cursor in self.expired or not cursor:
                self.expired.discard(cursor)
                return Answer(400, _json({"status": "failed", "message": "bad cursor"}))
            start = 0 if cursor == "*" else int(base64.urlsafe_b64decode(cursor).decode())
        number = start // size + 1
        faults = self.faults.get(number)
        if faults:
            return faults.pop(0)
        if self.block_at == number:
            self.reached.set()
            self.release.wait(60)
        chosen = self._chosen(args)
        page = chosen[start : start + size]
        end = start + len(page)
        if self.service == "arxiv":
            return Answer(200, self._feed(args, page, start, size, len(chosen)), _ATOM)
        next_cursor = base64.urlsafe_b64encode(str(end).encode()).decode() if page else None
        if self.service == "openalex":
            body = {
                "meta": {
                    "count": len(chosen),
                    "db_response_time_ms": 12,
                    "page": None,
                    "per_page": size,
                    "next_cursor": next_cursor,
                    "groups_count": None,
                },
                "results": [self._openalex(obj) for obj in page],
                "group_by": [],
            }
        else:
            body = {
                "status": "ok",
                "message-type": "work-list",
                "message-version": "1.0.0",
                "message": {
                    "facets": {},
                    "next-cursor": base64.urlsafe_b64encode(str(end).encode()).decode(),
                    "total-results": len(chosen),
                    "items": [self._crossref(obj) for obj in page],
                    "items-per-page": size,
                    "query": {"start-index": 0, "search-terms": args.get("query")},
                },
            }
        return Answer(200, _json(body))

    def _chosen(self, args: dict[str, str]) -> list[dict[str, Any]]:
        since = ""
        for part in args.get("filter", "").split(","):
            name, _, value = part.partition(":")
            if name == SINCE_FILTERS.get(self.service):
                since = value
        chosen = [obj for obj in self.objects if self.day(obj) >= since]
        if self.service == "arxiv":  # newest first, as sortOrder=descending asks
            return sorted(chosen, key=lambda obj: (self.day(obj), obj["id"]), reverse=True)
        return chosen

    def _openalex(self, obj: dict[str, Any]) -> dict[str, Any]:
        number = 5000000000 + int("".join(c for c in obj["id"] if c.isdigit()))
        doi = f"https://doi.org/10.48550/arxiv.{obj['id']}"
        words: dict[str, list[int]] = {}
        for position, word in enumerate(obj["abstract"].split()):
            words.setdefault(word, []).append(position)
        return {
            "id": f"https://openalex.org/W{number}",
            "doi": doi,
            "title": obj["title"],
            "display_name": obj["title"],
            "publication_year": obj["year"],
            "publication_date": obj["date"],
            "ids": {"openalex": f"https://openalex.org/W{number}", "doi": doi},
            "language": "en",
            "primary_location": {
                "is_oa": True,
                "landing_page_url": f"https://arxiv.org/abs/{obj['id']}",
                "source": {
                    "id": "https://openalex.org/S4306400194",
                    "display_name": "arXiv (Cornell University)",
                    "type": "repository",
                },
            },
            "type": "preprint",
            "authorships": [
                {
                    "author_position": "first" if i == 0 else "middle",
                    "author": {"id": f"https://openalex.org/A{number + i}", "display_name": name},
                    "institutions": [],
                    "raw_author_name": name,
                }
                for i, name in enumerate(obj["authors"])
            ],
            "cited_by_count": len(obj["title"]) % 17,
            # OpenAlex's topics are its own, not arXiv's categories; the categories' names
            # stand in for them here (what the reader keeps is a topic's display_name).
            "topics": [
                {
                    "id": f"https://openalex.org/T{10000 + i}",
                    "display_name": arxiv_subject_name(code) or code,
                    "score": 0.9,
                }
                for i, code in enumerate(obj["categories"])
            ],
            "abstract_inverted_index": words,
            "updated_date": f"{self.day(obj)}T08:00:00.000000",
            "created_date": obj["date"],
        }

    def _crossref(self, obj: dict[str, Any]) -> dict[str, Any]:
        year, month, day = (int(p) for p in obj["date"].split("-"))
        indexed = self.day(obj)
        return {
            "indexed": {
                "date-parts": [[int(p) for p in indexed.split("-")]],
                "date-time": f"{indexed}T08:00:00Z",
                "timestamp": 0,
            },
            "reference-count": 0,
            "publisher": "Example Academic Press",
            "abstract": "<jats:title>Abstract</jats:title>"
            f"<jats:p>{escape(obj['abstract'])}</jats:p>",
            "DOI": f"10.5555/arxiv.{obj['id']}",
            "type": "journal-article",
            "created": {"date-parts": [[year, month, day]]},
            "source": "Crossref",
            "is-referenced-by-count": len(obj["title"]) % 13,
            "title": [obj["title"]],
            "prefix": "10.5555",
            "author": [_crossref_name(name, i) for i, name in enumerate(obj["authors"])],
            "member": "7822",
            "container-title": ["Journal of Examples"],
            "issued": {"date-parts": [[year, month, day]]},
            "subject": list(obj["categories"]),
            "URL": f"https://doi.org/10.5555/arxiv.{obj['id']}",
        }

    def _feed(
        self, args: dict[str, str], page: list[dict[str, Any]], start: int, size: int, total: int
    ) -> bytes:
        entries = "".join(self._entry(obj) for obj in page)
        query = escape(args.get("search_query", ""))
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<feed xmlns="http://www.w3.org/2005/Atom">'
            f'<link href="http://arxiv.org/api/query" rel="self" type="application/atom+xml"/>'
            f'<title type="html">ArXiv Query: search_query={query}</title>'
            "<id>http://arxiv.org/api/cHxbiOdZaP56ODnBPIenZhzg5f8</id>"
            "<updated>2026-12-01T00:00:00-05:00</updated>"
            f'<opensearch:totalResults xmlns:opensearch="{_OPENSEARCH}">{total}'
            "</opensearch:totalResults>"
            f'<opensearch:startIndex xmlns:opensearch="{_OPENSEARCH}">{start}'
            "</opensearch:startIndex>"
            f'<opensearch:itemsPerPage xmlns:opensearch="{_OPENSEARCH}">{size}'
            "</opensearch:itemsPerPage>"
            f"{entries}</feed>"
        ).encode()

    def _entry(self, obj: dict[str, Any]) -> str:
        link = f"http://arxiv.org/abs/{obj['id']}v1"
        categories = "".join(
            f'<category term={quoteattr(c)} scheme="http://arxiv.org/schemas/atom"/>'
            for c in obj["categories"]
        )
        authors = "".join(f"<author><name>{escape(a)}</name></author>" for a in obj["authors"])
        return (
            f"<entry><id>{link}</id>"
            f"<updated>{self.day(obj)}T08:00:00Z</updated>"
            f"<published>{obj['date']}T08:00:00Z</published>"
            f"<title>{escape(obj['title'])}</title>"
            f"<summary>  {escape(obj['abstract'])}\n</summary>{authors}"
            f'<link href="{link}" rel="alternate" type="text/html"/>'
            f'<arxiv:primary_category xmlns:arxiv="{_ARXIV}" '
            f'term={quoteattr(obj["primary_category"])} scheme="{_ARXIV}"/>'
            f"{categories}</entry>"
        )


_ATOM = {"Content-Type": "application/atom+xml; charset=utf-8"}
_OPENSEARCH = "http://a9.com/-/spec/opensearch/1.1/"
_ARXIV = "http://arxiv.org/schemas/atom"


def _crossref_name(name: str, index: int) -> dict[str, Any]:
    given, _, family = name.rpartition(" ")
    out: dict[str, Any] = {"given": given, "family": family} if given else {"family": name}
    return {**out, "sequence": "first" if index == 0 else "additional", "affiliation": []}


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def arxiv_error(message: str) -> Answer:
    """The arXiv API's error: HTTP 400 and a feed whose one entry names the error."""
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        "<entry><id>http://arxiv.org/api/errors#incorrect_id_format</id>"
        f"<title>Error</title><summary>{escape(message)}</summary></entry></feed>"
    )
    return Answer(400, body.encode(), _ATOM)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        parts = urlsplit(self.path)
        args = {k: v[0] for k, v in parse_qs(parts.query).items()}
        works = self.server.works
        works.requests.append(args)
        works.paths.append(self.path)
        works.user_agents.append(self.headers.get("User-Agent", ""))
        answer = works.answer(parts.path, args)
        try:
            self.send_response(answer.status)
            headers = dict(answer.headers)
            if "Content-Type" not in headers:
                html = answer.body.lstrip().startswith(b"<")
                kind = "text/html" if html else "application/json"
                headers["Content-Type"] = f"{kind}; charset=utf-8"
            for name, value in headers.items():
                self.send_header(name, value)
            if "Content-Length" not in headers:
                self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    works: Works


@contextmanager
def serving(works: Works) -> Iterator[str]:
    """The service on 127.0.0.1; yields its base URL (for the arXiv API, its query URL)."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.works = works
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield base + "/api/query" if works.service == "arxiv" else base
    finally:
        works.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
