"""A real OAI-PMH repository on 127.0.0.1 for the harvest tests, serving arXiv's records
in the shapes arXiv's OAI-PMH interface gives them (``arXiv``, ``arXivRaw``, ``oai_dc``;
the element names and namespaces of info.arxiv.org/help/oa's examples), made from the
CC0 records of tests/data/arxiv-snapshot.sample.json.

The tests script it: pages of ``page_size`` records linked by resumption tokens, answers
served before a page's real one (a 503 with Retry-After, a 429, a cut page, an HTML
error page), records deleted upstream, and a page held back until the test lets it go
(the client is killed while it waits).
"""

from __future__ import annotations

import email.utils
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

DATA = Path(__file__).parent / "data" / "arxiv-snapshot.sample.json"
RESPONSE_DATE = "2026-12-01T10:00:00Z"


def snapshot_objects() -> list[dict[str, Any]]:
    with open(DATA, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


@dataclass
class Answer:
    """An answer served instead of a page's real one (once)."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Repository:
    objects: list[dict[str, Any]]
    page_size: int = 10
    # Per arXiv id: the datestamp its header gives (else the object's update_date).
    datestamps: dict[str, str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    # Page number -> answers served, one per request, before the page's real one.
    faults: dict[int, list[Answer]] = field(default_factory=dict)
    block_at: int | None = None
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    requests: list[dict[str, str]] = field(default_factory=list)
    user_agents: list[str] = field(default_factory=list)

    def datestamp(self, obj: dict[str, Any]) -> str:
        return self.datestamps.get(obj["id"], obj["update_date"])

    def answer(self, args: dict[str, str]) -> Answer:
        if "resumptionToken" in args:
            prefix, from_date, until, set_spec, offset = args["resumptionToken"].split("|")
        else:
            prefix = args.get("metadataPrefix", "")
            from_date, until = args.get("from", ""), args.get("until", "")
            set_spec, offset = args.get("set", ""), "0"
        start = int(offset)
        number = start // self.page_size + 1
        faults = self.faults.get(number)
        if faults:
            return faults.pop(0)
        if self.block_at == number:
            self.reached.set()
            self.release.wait(60)
        chosen = [
            obj
            for obj in self.objects
            if (not from_date or self.datestamp(obj) >= from_date[:10])
            and (not until or self.datestamp(obj) <= until[:10])
            and (not set_spec or set_spec in _sets(obj))
        ]
        if not chosen:
            return Answer(200, _envelope(args, '<error code="noRecordsMatch">none</error>'))
        page = chosen[start : start + self.page_size]
        items = "".join(self.record_xml(obj, prefix) for obj in page)
        end = start + len(page)
        token = ""
        if end < len(chosen):
            value = "|".join((prefix, from_date, until, set_spec, str(end)))
            token = (
                f'<resumptionToken cursor="{start}" completeListSize="{len(chosen)}">'
                f"{escape(value)}</resumptionToken>"
            )
        elif start:
            token = f'<resumptionToken cursor="{start}" completeListSize="{len(chosen)}"/>'
        return Answer(200, _envelope(args, f"<ListRecords>{items}{token}</ListRecords>"))

    def record_xml(self, obj: dict[str, Any], prefix: str) -> str:
        arxiv_id = obj["id"]
        sets = "".join(f"<setSpec>{s}</setSpec>" for s in _sets(obj))
        status = ' status="deleted"' if arxiv_id in self.deleted else ""
        header = (
            f"<header{status}><identifier>oai:arXiv.org:{arxiv_id}</identifier>"
            f"<datestamp>{self.datestamp(obj)}</datestamp>{sets}</header>"
        )
        if status:
            return f"<record>{header}</record>"
        metadata = {"arXiv": _arxiv, "arXivRaw": _arxiv_raw, "oai_dc": _oai_dc}[prefix](obj)
        return f"<record>{header}<metadata>{metadata}</metadata></record>"


# arXiv's archives that are sets of their own; the others are subsets of physics.
_TOP_SETS = ("cs", "econ", "eess", "math", "nlin", "q-bio", "q-fin", "stat")


def _sets(obj: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for category in obj["categories"].split():
        archive = category.split(".")[0]
        name = archive if archive in _TOP_SETS else f"physics:{archive}"
        if name not in out:
            out.append(name)
    return out


def _day(created: str) -> str:
    return email.utils.parsedate_to_datetime(created).strftime("%Y-%m-%d")


def _text(name: str, value: str | None) -> str:
    return f"<{name}>{escape(value)}</{name}>" if value else ""


def _arxiv(obj: dict[str, Any]) -> str:
    versions = obj.get("versions") or []
    authors = "".join(
        "<author>"
        + _text("keyname", parts[0])
        + _text("forenames", parts[1] if len(parts) > 1 else "")
        + _text("suffix", parts[2] if len(parts) > 2 else "")
        + "</author>"
        for parts in obj["authors_parsed"]
    )
    updated = _day(versions[-1]["created"]) if len(versions) > 1 else None
    return (
        '<arXiv xmlns="http://arxiv.org/OAI/arXiv/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://arxiv.org/OAI/arXiv/ http://arxiv.org/OAI/arXiv.xsd">'
        + _text("id", obj["id"])
        + _text("created", _day(versions[0]["created"]) if versions else None)
        + _text("updated", updated)
        + f"<authors>{authors}</authors>"
        + _text("title", obj["title"])
        + _text("categories", obj["categories"])
        + _text("comments", obj.get("comments"))
        + _text("journal-ref", obj.get("journal-ref"))
        + _text("doi", obj.get("doi"))
        + _text("license", obj.get("license"))
        + _text("abstract", obj["abstract"])
        + "</arXiv>"
    )


def _arxiv_raw(obj: dict[str, Any]) -> str:
    versions = "".join(
        f'<version version="{v["version"]}">{_text("date", v["created"])}'
        f"<size>1kb</size><source_type>D</source_type></version>"
        for v in obj.get("versions") or []
    )
    return (
        '<arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/">'
        + _text("id", obj["id"])
        + _text("submitter", obj.get("submitter"))
        + versions
        + _text("title", obj["title"])
        + _text("authors", obj["authors"])
        + _text("categories", obj["categories"])
        + _text("doi", obj.get("doi"))
        + _text("abstract", obj["abstract"])
        + "</arXivRaw>"
    )


def _oai_dc(obj: dict[str, Any]) -> str:
    versions = obj.get("versions") or []
    creators = "".join(
        _text("dc:creator", ", ".join(p for p in parts[:2] if p)) for parts in obj["authors_parsed"]
    )
    return (
        '<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/">'
        + _text("dc:title", obj["title"])
        + creators
        + "".join(_text("dc:subject", c) for c in obj["categories"].split())
        + _text("dc:description", obj["abstract"])
        + _text("dc:description", f"Comment: {obj['comments']}" if obj.get("comments") else None)
        + "".join(_text("dc:date", _day(v["created"])) for v in versions)
        + "<dc:type>text</dc:type>"
        + _text("dc:identifier", f"http://arxiv.org/abs/{obj['id']}")
        + _text("dc:identifier", f"doi:{obj['doi']}" if obj.get("doi") else None)
        + "</oai_dc:dc>"
    )


def _envelope(args: dict[str, str], inner: str) -> bytes:
    attributes = "".join(f' {k}="{escape(v)}"' for k, v in sorted(args.items()))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ '
        'http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">'
        f"<responseDate>{RESPONSE_DATE}</responseDate>"
        f"<request{attributes}>http://127.0.0.1/oai</request>{inner}</OAI-PMH>"
    ).encode()


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        query = parse_qs(urlsplit(self.path).query)
        args = {k: v[0] for k, v in query.items()}
        repo = self.server.repository
        repo.requests.append(args)
        repo.user_agents.append(self.headers.get("User-Agent", ""))
        answer = repo.answer(args)
        try:
            self.send_response(answer.status)
            content_type = "text/html" if answer.body.lstrip().startswith(b"<!") else "text/xml"
            self.send_header("Content-Type", f"{content_type}; charset=utf-8")
            for name, value in answer.headers.items():
                self.send_header(name, value)
            if "Content-Length" not in answer.headers:
                self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    repository: Repository


@contextmanager
def serving(repository: Repository) -> Iterator[str]:
    """The repository served on 127.0.0.1; yields its base URL."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.repository = repository
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/oai"
    finally:
        repository.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
