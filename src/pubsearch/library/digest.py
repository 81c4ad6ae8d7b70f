"""The e-mail digest: one message with the new records of every saved search and each tag's
recommendations among the records new since its last digest (a plain text part and an HTML
part, each search, tag and record linked to the page), sent over SMTP."""

from __future__ import annotations

import html
import smtplib
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from urllib.parse import quote, urljoin

from pubsearch.core.errors import PubsearchError
from pubsearch.library.feeds import describe, search_path
from pubsearch.library.follow import NewRecords, TagNews
from pubsearch.search.results import Hit

# The longest an SMTP server may take to answer, in seconds.
SMTP_TIMEOUT = 30.0


class MailError(PubsearchError):
    """The digest could not be sent (the server named, and why)."""


@dataclass(frozen=True)
class Smtp:
    """Where and how to send: host, port, STARTTLS, and a login (from the environment)."""

    host: str = "127.0.0.1"
    port: int = 25
    starttls: bool = False
    user: str | None = None
    password: str | None = None


def _record_link(hit: Hit, page_url: str) -> str:
    return hit.url or urljoin(page_url, "api/records/" + quote(hit.id, safe=""))


def _hit_lines(hits: Sequence[Hit], page_url: str, text: list[str], parts: list[str]) -> None:
    parts.append("<ol>")
    for hit in hits:
        where = _record_link(hit, page_url)
        who = ", ".join(hit.authors[:3]) + (" et al." if len(hit.authors) > 3 else "")
        when = hit.date or str(hit.year or "")
        text += [f"  {hit.title}", f"    {who} ({when}) {where}", ""]
        parts.append(
            f'<li><a href="{html.escape(where)}">{html.escape(hit.title)}</a><br>'
            f"<small>{html.escape(who)} · {html.escape(when)}</small></li>"
        )
    parts.append("</ol>")


def compose(
    found: Sequence[NewRecords],
    to: str,
    sender: str,
    page_url: str,
    recommended: Sequence[TagNews] = (),
) -> EmailMessage:
    """The digest of ``found`` (each saved search's new records) and ``recommended`` (each
    tag's recommendations among its new records) to ``to``."""
    total = sum(news.total for news in found)
    suggested = sum(len(news.found.hits) for news in recommended)
    message = EmailMessage()
    subject = f"pubsearch: {total:,} new {'record' if total == 1 else 'records'}"
    if suggested:
        subject += f", {suggested:,} recommended"
    message["Subject"] = subject
    message["From"] = sender
    message["To"] = to
    message["Date"] = formatdate(localtime=False, usegmt=True)
    message["Message-ID"] = make_msgid(domain="pubsearch.invalid")
    text: list[str] = []
    parts: list[str] = ["<html><body>"]
    for news in found:
        link = urljoin(page_url, search_path(news.request))
        shown = f" ({len(news.hits):,} shown)" if len(news.hits) < news.total else ""
        text += [f"{news.name}: {news.total:,} new{shown} - {describe(news.request)}", link, ""]
        parts.append(
            f'<h2><a href="{html.escape(link)}">{html.escape(news.name or "")}</a>: '
            f"{news.total:,} new{shown}</h2><p>{html.escape(describe(news.request))}</p>"
        )
        _hit_lines(news.hits, page_url, text, parts)
    if not found:
        text.append("No saved searches.")
    for tagged in recommended:
        page = tagged.found
        link = urljoin(page_url, f"library/tag/{quote(page.tag, safe='')}/recommended")
        about = (
            f"the {len(page.hits):,} most like its {page.tagged:,} records of {page.total:,} new"
        )
        text += ["", f"Recommended for {page.tag}: {about}", link, ""]
        parts.append(
            f'<h2>Recommended for <a href="{html.escape(link)}">{html.escape(page.tag)}</a></h2>'
            f"<p>{html.escape(about)}</p>"
        )
        _hit_lines(page.hits, page_url, text, parts)
    parts.append("</body></html>")
    message.set_content("\n".join(text) + "\n")
    message.add_alternative("\n".join(parts) + "\n", subtype="html")
    return message


def send(message: EmailMessage, smtp: Smtp) -> None:
    """Send ``message``; a MailError naming the server when that fails."""
    where = f"{smtp.host}:{smtp.port}"
    try:
        with smtplib.SMTP(smtp.host, smtp.port, timeout=SMTP_TIMEOUT) as client:
            if smtp.starttls:
                client.starttls(context=ssl.create_default_context())
            if smtp.user:
                client.login(smtp.user, smtp.password or "")
            client.send_message(message)
    except (OSError, smtplib.SMTPException) as exc:
        reason = str(exc) or type(exc).__name__
        raise MailError(f"cannot send the digest through {where}: {reason}") from None
