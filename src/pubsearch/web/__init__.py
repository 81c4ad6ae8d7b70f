"""The search page and its JSON API, as a Flask application made by :func:`create_app`.

Importing this package creates nothing: no app, no index, no service. ``create_app`` builds
one :class:`~pubsearch.search.service.SearchService` for the index directory; the service keeps
a searcher per thread and reopens it when the index is rebuilt, so a re-index shows up
without a restart.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask, Response, render_template, request
from markupsafe import Markup
from werkzeug.exceptions import HTTPException

from pubsearch.core.config import ENV_WRITE_TOKEN, resolve_index_dir
from pubsearch.core.errors import (
    ChangeRefusedError,
    IndexCorruptError,
    IndexMissingError,
    ParameterError,
    PubsearchError,
    RecordNotFoundError,
    UsageError,
)
from pubsearch.search import export
from pubsearch.search.compiler import MAX_QUERY_CHARS
from pubsearch.search.request import SearchRequest
from pubsearch.search.results import Hit, shortened
from pubsearch.search.service import SearchService
from pubsearch.web.state import LIBRARY_KEY, SERVICE_KEY

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "object-src 'none'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def create_app(
    index_dir: str | os.PathLike[str] | None = None,
    test_config: Mapping[str, Any] | None = None,
) -> Flask:
    """The web application for the index at ``index_dir`` (default: $PUBSEARCH_INDEX, else
    ./index). ``test_config`` overrides configuration values, as in Flask's tutorial."""
    app = Flask(__name__)
    app.config.from_mapping(
        INDEX_DIR=str(resolve_index_dir(index_dir, os.environ)),
        # Searches are GET requests; the library's changes are small forms: anything
        # with a larger body is refused early.
        MAX_CONTENT_LENGTH=16 * 1024,
        EXPORT_CAP=export.EXPORT_CAP,
        # Where the server listens (pubsearch serve --host): beyond this machine, changes
        # need WRITE_TOKEN ($PUBSEARCH_WRITE_TOKEN; unset: no changes).
        BOUND_TO="127.0.0.1",
        WRITE_TOKEN=os.environ.get(ENV_WRITE_TOKEN, ""),
    )
    if test_config:
        app.config.update(test_config)
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True
    app.add_template_filter(highlighted)
    app.add_template_filter(long_date)
    app.add_template_filter(shortened)  # a pasted text shown by its first words
    app.jinja_env.globals["DEFAULTS"] = SearchRequest()
    # A pasted abstract fits in the search box: it takes what a query may hold.
    app.jinja_env.globals["MAX_QUERY_CHARS"] = MAX_QUERY_CHARS

    from pubsearch.library.follow import Library
    from pubsearch.web import following, guard, views

    # A re-indexed generation gets its spelling words and author names built in the
    # background, so that no visitor's search pays for them.
    app.extensions[SERVICE_KEY] = SearchService(
        Path(app.config["INDEX_DIR"]), prepare_in_background=True
    )
    app.extensions[LIBRARY_KEY] = Library(app.extensions[SERVICE_KEY])
    app.register_blueprint(views.bp)
    app.register_blueprint(following.bp)
    app.register_error_handler(UsageError, _bad_request)
    app.register_error_handler(RecordNotFoundError, _not_found)
    app.register_error_handler(IndexMissingError, _unavailable)
    app.register_error_handler(IndexCorruptError, _unavailable)
    app.register_error_handler(ChangeRefusedError, _forbidden)
    app.register_error_handler(HTTPException, _http_error)
    app.after_request(_security_headers)
    app.after_request(guard.set_cookie)
    return app


def warm_up(app: Flask) -> None:
    """Serve ``app``'s front page once, in this thread, and close the searcher that took:
    the index's generation is opened, its facet tables and author names loaded and the
    page's templates compiled before a server starts answering (see docs/performance.md).
    A missing or unreadable index is left for the requests to report (the page answers
    503)."""
    with app.test_client() as client:
        if client.get("/").status_code == 200:
            app.extensions[SERVICE_KEY].prepare()
    app.extensions[SERVICE_KEY].close()


def long_date(date: str) -> str:
    """``2024-03-05`` -> ``5 Mar 2024``; a month, ``2007-05``, -> ``May 2007``."""
    year, month, *day = date.split("-")
    shown = f"{_MONTHS[int(month) - 1]} {year}"
    return f"{int(day[0])} {shown}" if day else shown


_MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def highlighted(hit: Hit, part: str) -> Markup:
    """A hit's highlighted ``title``, ``snippet`` or ``abstract`` as HTML, or ``why`` (the
    sentence closest in meaning to the query, escaped).

    The one place HTML made in Python is marked safe: these fragments are the record's
    text escaped by :func:`pubsearch.search.highlighting.marked_to_html`, with matches in
    ``<mark>``.
    """
    if part == "title":
        return Markup(hit.title_html)
    if part == "snippet":
        return Markup(hit.snippet)
    if part == "abstract":
        return Markup(hit.abstract_html)
    if part == "why":
        return Markup(hit.why)
    raise ValueError(f"no highlighted part {part!r}")


def _security_headers(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def _wants_json() -> bool:
    return request.path.startswith("/api/")


def _error(status: int, title: str, message: str, parameter: str | None = None) -> Response:
    if _wants_json():
        body: dict[str, Any] = {"status": status, "error": title, "message": message}
        if parameter is not None:
            body["parameter"] = parameter
        return Response(export.to_json(body), status=status, mimetype="application/json")
    html = render_template(
        "error.html",
        status=status,
        title=title,
        message=message,
        q=request.args.get("q", ""),
        syntax_help=status == 400,
    )
    return Response(html, status=status, mimetype="text/html")


def _bad_request(exc: PubsearchError) -> Response:
    parameter = exc.name if isinstance(exc, ParameterError) else None
    return _error(400, "Bad request", str(exc), parameter)


def _not_found(exc: PubsearchError) -> Response:
    return _error(404, "Not found", str(exc))


def _forbidden(exc: PubsearchError) -> Response:
    return _error(403, "Forbidden", str(exc))


def _unavailable(exc: PubsearchError) -> Response:
    return _error(503, "Index unavailable", str(exc))


def _http_error(exc: HTTPException) -> Response:
    status = exc.code or 500
    title = exc.name[:1] + exc.name[1:].lower()  # "Not Found" -> "Not found", as ours
    response = _error(status, title, exc.description or exc.name)
    allow = exc.get_response().headers.get("Allow")  # set by 405 Method Not Allowed
    if allow:
        response.headers["Allow"] = allow
    return response
