"""What guards the page's changes (a saved search, a tag): every change is a POST carrying
the form token of a page this server made, and a server that listens beyond this machine
takes changes only with the write token set in its environment.

The form token is the signed double-submit pattern: a random value in an HttpOnly,
SameSite=Strict cookie, and in each form its HMAC under the library's secret (kept in the
library file, so that every process of a server signs alike). Another site can make a
browser send the cookie with a POST, but cannot read a page to learn the token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from flask import current_app, g, request
from werkzeug.wrappers import Response

from pubsearch.core.errors import ChangeRefusedError
from pubsearch.web.state import library

COOKIE = "pubsearch_form"
FIELD = "csrf"
WRITE_FIELD = "write_token"
SECRET_KEY = "pubsearch.secret"
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


@dataclass(frozen=True)
class Forms:
    """What a page's forms carry: the form token, and whether a write token is asked."""

    csrf: str
    write_token_needed: bool


def _secret() -> bytes:
    kept: bytes | None = current_app.extensions.get(SECRET_KEY)
    if kept is None:
        with library().store() as store:
            kept = current_app.extensions[SECRET_KEY] = store.secret().encode()
    return kept


def _nonce() -> str:
    nonce = request.cookies.get(COOKIE, "")
    if len(nonce) < 16:
        nonce = g.get("new_form_nonce") or secrets.token_urlsafe(24)
        g.new_form_nonce = nonce
    return nonce


def _signed(nonce: str) -> str:
    return hmac.new(_secret(), nonce.encode(), hashlib.sha256).hexdigest()


def local_only() -> bool:
    """Whether the server listens on this machine only (the default)."""
    host = str(current_app.config.get("BOUND_TO") or "127.0.0.1")
    return host in LOOPBACK or host.startswith("127.")


def forms() -> Forms:
    return Forms(_signed(_nonce()), not local_only())


def check() -> None:
    """Refuse the POST being served (ChangeRefusedError: 403) unless it carries this
    visitor's form token, and the write token where the server listens beyond here."""
    if not local_only():
        expected = str(current_app.config.get("WRITE_TOKEN") or "")
        if not expected:
            raise ChangeRefusedError(
                "this server listens beyond this machine: changes need PUBSEARCH_WRITE_TOKEN "
                "set where it runs"
            )
        given = request.form.get(WRITE_FIELD, "")
        if not hmac.compare_digest(given.encode(), expected.encode()):
            raise ChangeRefusedError("the write token is missing or wrong")
    nonce = request.cookies.get(COOKIE, "")
    given = request.form.get(FIELD, "")
    if len(nonce) < 16 or not hmac.compare_digest(given.encode(), _signed(nonce).encode()):
        raise ChangeRefusedError(
            "the form's token is missing or stale: reload the page and try again"
        )


def set_cookie(response: Response) -> Response:
    """Give a visitor without one the cookie their form tokens are signed for."""
    nonce = g.get("new_form_nonce")
    if nonce:
        response.set_cookie(COOKIE, nonce, httponly=True, samesite="Strict", path="/")
    return response
