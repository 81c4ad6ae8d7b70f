"""The polite HTTP client of every harvest: one connection pool, a ``User-Agent`` naming
pubsearch (and the harvester's address where given), a delay between requests, and
bounded retries.

urllib3 does the retrying: its ``Retry`` honours ``Retry-After`` (in seconds or as a date)
on 503 and 429, and retries timeouts, refused connections and 5xx answers. Two things are
changed: the first retry after an error without ``Retry-After`` waits too (urllib3's does
not), and no wait is longer than :data:`~pubsearch.core.config.HARVEST_MAX_WAIT_SECONDS`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from urllib.parse import urlsplit

import urllib3
from urllib3.util.retry import Retry

from pubsearch.core.config import HARVEST_MAX_WAIT_SECONDS, harvest_backoff
from pubsearch.core.errors import HarvestError, ParameterError

# Answers worth asking again for: too many requests, and the server's passing troubles.
RETRY_STATUSES = (429, 500, 502, 503, 504)
RETRIES = 6
CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 120.0


class _PoliteRetry(Retry):
    """urllib3's ``Retry`` whose first back-off is ``backoff_factor`` (then doubled), and
    whose ``Retry-After`` waits are at most ``backoff_max``."""

    def get_backoff_time(self) -> float:
        errors = 0
        for attempt in reversed(self.history):
            if attempt.redirect_location is not None:
                break
            errors += 1
        if errors == 0:
            return 0.0
        return float(min(self.backoff_max, self.backoff_factor * 2 ** (errors - 1)))

    def get_retry_after(self, response: urllib3.BaseHTTPResponse) -> float | None:
        asked = super().get_retry_after(response)
        return None if asked is None else min(asked, self.backoff_max)


@dataclass(frozen=True)
class Fetched:
    """One answer: its status and its body, read whole."""

    url: str
    status: int
    body: bytes


def check_endpoint(url: str) -> str:
    """``url`` if it is an http(s) URL with a host; a usage error otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ParameterError("--endpoint", f"{url!r} is not an http(s) URL")
    return url


def user_agent(mailto: str | None = None) -> str:
    """``pubsearch/0.1.0 (mailto:me@example.org)``: who is asking, and how to reach them."""
    try:
        ours = version("pubsearch")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        ours = "0"
    return f"pubsearch/{ours}" + (f" (mailto:{mailto})" if mailto else "")


class PoliteClient:
    """GET requests, at least ``delay`` seconds apart, retried as the module says."""

    def __init__(
        self,
        delay: float,
        mailto: str | None = None,
        retries: int = RETRIES,
        backoff: float | None = None,
    ) -> None:
        self.delay = max(0.0, delay)
        retry = _PoliteRetry(
            total=retries,
            redirect=5,
            status_forcelist=RETRY_STATUSES,
            backoff_factor=harvest_backoff(os.environ) if backoff is None else backoff,
            backoff_max=HARVEST_MAX_WAIT_SECONDS,
            respect_retry_after_header=True,
            raise_on_status=False,
        )
        self._pool = urllib3.PoolManager(
            headers={"User-Agent": user_agent(mailto), "Accept-Encoding": "gzip"},
            retries=retry,
            timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT, read=READ_TIMEOUT),
        )
        self._last: float | None = None

    def get(self, url: str, what: str = "", shown: str | None = None) -> Fetched:
        """The answer to ``GET url``, after the delay since the last request; a
        :class:`HarvestError` naming the URL (as ``shown``, where a key is left out) and
        ``what`` was asked for (``page 3``) when no answer came however often it was asked."""
        if self._last is not None:
            wait = self._last + self.delay - time.monotonic()
            if wait > 0:
                time.sleep(wait)
        try:
            response = self._pool.request("GET", url, preload_content=True)
        except urllib3.exceptions.HTTPError as exc:
            reason = getattr(exc, "reason", None) or exc
            where = f"{shown or url}: {what}" if what else (shown or url)
            raise HarvestError(f"{where}: no answer ({reason})") from None
        finally:
            self._last = time.monotonic()
        return Fetched(url=url, status=response.status, body=response.data)

    def close(self) -> None:
        self._pool.clear()
