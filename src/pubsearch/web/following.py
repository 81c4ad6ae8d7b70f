"""The library's routes: Atom feeds of a search, a saved search and a tag. The feeds are
made by pubsearch.library.feeds; these routes give them their URLs and serve them.

/search.atom?<the page's parameters>   the newest records the search finds
/follow/<name>.atom                    the newest records of a saved search
/tag/<tag>.atom                        a tag's records, newest first
"""

from __future__ import annotations

from flask import Blueprint, Response, request, url_for

from pubsearch.library import feeds
from pubsearch.web.params import collect_params, request_from_params
from pubsearch.web.state import library
from pubsearch.web.urls import search_url

bp = Blueprint("following", __name__)

ATOM_TYPE = "application/atom+xml"
_ID = "__record_id__"


def _links(page_url: str) -> feeds.FeedLinks:
    record_url = url_for("pubsearch.api_record", record_id=_ID, _external=True)
    return feeds.FeedLinks(
        self_url=request.url,
        page_url=page_url,
        record_url=record_url.replace(_ID, "{id}"),
    )


def _atom(body: bytes) -> Response:
    return Response(body, mimetype=ATOM_TYPE)


@bp.get("/search.atom")
def search_feed() -> Response:
    req = request_from_params(collect_params(request.args.getlist), facets=False)
    page = search_url(url_for("pubsearch.search_page", _external=True), req)
    return _atom(feeds.search_feed(library(), req, _links(page)))


@bp.get("/follow/<name>.atom")
def follow_feed(name: str) -> Response:
    saved = library().saved(name)
    page = search_url(url_for("pubsearch.search_page", _external=True), saved.request)
    return _atom(feeds.follow_feed(library(), name, _links(page)))


@bp.get("/tag/<tag>.atom")
def tag_feed(tag: str) -> Response:
    page = url_for("pubsearch.search_page", _external=True)
    return _atom(feeds.tag_feed(library(), tag, _links(page)))
