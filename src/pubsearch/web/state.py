"""What the running app holds for its requests: the one search service and its library,
kept in the app's extensions by :func:`pubsearch.web.create_app` and asked for by the views."""

from __future__ import annotations

from flask import current_app

from pubsearch.library.follow import Library
from pubsearch.search.service import SearchService

SERVICE_KEY = "pubsearch.service"


def service() -> SearchService:
    """The search service of the running app."""
    svc: SearchService = current_app.extensions[SERVICE_KEY]
    return svc


LIBRARY_KEY = "pubsearch.library"


def library() -> Library:
    """The library (saved searches, tags) of the running app's index."""
    kept: Library = current_app.extensions[LIBRARY_KEY]
    return kept
