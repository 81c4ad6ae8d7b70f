"""OAI-PMH 2.0's ``ListRecords``: the requests, the pages they answer with, and the errors.

A list is asked for once with its arguments (``verb=ListRecords&metadataPrefix=arXiv``,
``set``, ``from``, ``until``); each page that does not end it carries a resumption token,
and the next page is asked for with that token alone (``verb=ListRecords&resumptionToken=``).
``noRecordsMatch`` is an empty list, not an error. A record whose header says
``status="deleted"`` has no metadata: the repository withdrew it.

Pages are read with the standard library's ``xml.etree`` (its expat refuses entity
expansion bombs); a body that is not OAI-PMH XML (cut short, an HTML error page) is a
:class:`~pubsearch.core.errors.HarvestError` naming the URL and the page.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from urllib.parse import urlencode

from pubsearch.core.errors import HarvestError

NS = "{http://www.openarchives.org/OAI/2.0/}"
METADATA_PREFIXES = ("arXiv", "arXivRaw", "oai_dc")


class BadResumptionTokenError(HarvestError):
    """The repository no longer knows the token (they expire): the list must be asked anew."""


@dataclass(frozen=True)
class OaiRecord:
    """One record of a page: its header and its metadata element (None when deleted)."""

    identifier: str
    datestamp: str
    deleted: bool
    metadata: ET.Element | None


@dataclass(frozen=True)
class Page:
    """One answer to ``ListRecords``."""

    records: tuple[OaiRecord, ...]
    # The token of the next page; None on the last one.
    token: str | None
    # How many records the whole list has, where the repository says.
    list_size: int | None
    response_date: str


def _with_query(endpoint: str, args: dict[str, str]) -> str:
    return endpoint + ("&" if "?" in endpoint else "?") + urlencode(args)


def list_records_url(
    endpoint: str,
    metadata_prefix: str,
    set_spec: str | None = None,
    from_date: str | None = None,
    until: str | None = None,
) -> str:
    """The first request of a list."""
    args = {"verb": "ListRecords", "metadataPrefix": metadata_prefix}
    if set_spec:
        args["set"] = set_spec
    if from_date:
        args["from"] = from_date
    if until:
        args["until"] = until
    return _with_query(endpoint, args)


def resume_url(endpoint: str, token: str) -> str:
    """The request of the page after the one that gave ``token``."""
    return _with_query(endpoint, {"verb": "ListRecords", "resumptionToken": token})


def parse_page(body: bytes, url: str, number: int) -> Page:
    """The records and the token of one ``ListRecords`` answer (page ``number``)."""
    where = f"{url}: page {number}"
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        start = body[:200].lstrip().lower()
        what = "an HTML page" if start.startswith((b"<!doctype html", b"<html")) else "cut short"
        raise HarvestError(f"{where}: not OAI-PMH XML ({what}: {exc})") from None
    if root.tag != NS + "OAI-PMH":
        raise HarvestError(f"{where}: not an OAI-PMH answer (its root is <{_local(root.tag)}>)")
    response_date = _text(root.find(NS + "responseDate"))
    for error in root.findall(NS + "error"):
        code = error.get("code", "")
        if code == "noRecordsMatch":
            return Page(records=(), token=None, list_size=0, response_date=response_date)
        message = f"{where}: the repository answers {code}: {_text(error) or 'no reason given'}"
        if code == "badResumptionToken":
            raise BadResumptionTokenError(message)
        raise HarvestError(message)
    listing = root.find(NS + "ListRecords")
    if listing is None:
        raise HarvestError(f"{where}: an OAI-PMH answer without ListRecords")
    records = tuple(_record(element) for element in listing.findall(NS + "record"))
    token_element = listing.find(NS + "resumptionToken")
    token = _text(token_element) or None
    size = token_element.get("completeListSize") if token_element is not None else None
    return Page(
        records=records,
        token=token,
        list_size=int(size) if size and size.isdigit() else None,
        response_date=response_date,
    )


def _record(element: ET.Element) -> OaiRecord:
    header = element.find(NS + "header")
    if header is None:
        return OaiRecord(identifier="", datestamp="", deleted=False, metadata=None)
    metadata = element.find(NS + "metadata")
    return OaiRecord(
        identifier=_text(header.find(NS + "identifier")),
        datestamp=_text(header.find(NS + "datestamp")),
        deleted=header.get("status") == "deleted",
        metadata=next(iter(metadata), None) if metadata is not None else None,
    )


def _text(element: ET.Element | None) -> str:
    return "".join(element.itertext()).strip() if element is not None else ""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]
