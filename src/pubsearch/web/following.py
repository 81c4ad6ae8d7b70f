"""The library's routes: its pages, the changes (each a POST with its form token), and the
Atom feeds. The library (pubsearch.library) does the work; these give it URLs and render.

GET  /library                              saved searches (new counts) and tags
GET  /library/tag/<tag>                    a tag's records as a results page (search,
                                           facets, sort, export: /export.*?tag=<tag>)
GET  /library/tag/<tag>/recommended        untagged records most like the tag's
POST /library/follow                       save the search of the form's fields as name
POST /library/unfollow                     forget a saved search
POST /library/tag, /library/untag          tag or untag the record(s) of the form
GET  /search.atom?<the page's parameters>  the newest records a search finds
GET  /follow/<name>.atom                   the newest records of a saved search
GET  /tag/<tag>.atom                       a tag's records, newest first
GET  /tag/<tag>/recommended.atom           its recommendations among the last 30 days' records

Every change needs the form token of the page it came from (:mod:`pubsearch.web.guard`);
a server that listens beyond this machine takes changes only with the write token set in
its environment (``PUBSEARCH_WRITE_TOKEN``).
"""

from __future__ import annotations

import time

from flask import Blueprint, Response, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from pubsearch.core.errors import ParameterError
from pubsearch.library import feeds
from pubsearch.search.request import SearchRequest
from pubsearch.search.results import SearchResults
from pubsearch.web import guard
from pubsearch.web.params import collect_params, request_from_params
from pubsearch.web.state import library
from pubsearch.web.urls import search_url

bp = Blueprint("following", __name__)

ATOM_TYPE = "application/atom+xml"
_ID = "__record_id__"


# -- pages ---------------------------------------------------------------------------------


@bp.get("/library")
def library_page() -> str:
    lib = library()
    return render_template(
        "library.html",
        followed=lib.followed(),
        tags=lib.tags(),
        describe=feeds.describe,
        search_link=lambda req: search_url(url_for("pubsearch.search_page"), req),
        forms=guard.forms(),
    )


@bp.get("/library/tag/<tag>")
def tag_page(tag: str) -> str:
    from pubsearch.web.views import render_results, search_request

    lib = library()
    req = search_request()

    def search(r: SearchRequest) -> SearchResults:
        return lib.search_tag(tag, r)

    results = search(req)
    return render_results(
        results,
        lambda r: search(r).total,
        url_for(".tag_page", tag=tag),
        related=None,
        tag=tag,
    )


@bp.get("/library/tag/<tag>/recommended")
def recommended_page(tag: str) -> str:
    from pubsearch.web.views import render_results, search_request

    req = search_request(facets=False)
    found = library().recommend(tag, page=req.page, page_size=req.page_size)
    results = SearchResults(req, found.total, found.hits, None, 0.0)
    path = url_for(".recommended_page", tag=tag)
    return render_results(
        results, lambda r: found.total, path, related=None, tag=tag, recommended=found
    )


# -- changes -------------------------------------------------------------------------------


def _back(default: str) -> BaseResponse:
    """A redirect to the form's ``next`` (a path of this site), else to ``default``."""
    target = request.form.get("next", "")
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        target = default
    return redirect(target, code=303)


@bp.post("/library/follow")
def follow() -> BaseResponse:
    guard.check()
    name = request.form.get("name", "").strip()
    params = collect_params(request.form.getlist)
    req = request_from_params(params, facets=False)
    library().follow(name, req)
    return _back(url_for(".library_page"))


@bp.post("/library/unfollow")
def unfollow() -> BaseResponse:
    guard.check()
    name = request.form.get("name", "").strip()
    if not library().unfollow(name):
        raise ParameterError("name", f"no saved search is called {name!r}")
    return _back(url_for(".library_page"))


@bp.post("/library/tag")
def tag_records() -> BaseResponse:
    guard.check()
    tag = request.form.get("tag", "").strip()
    ids = [i.strip() for i in request.form.getlist("record") if i.strip()]
    if not ids:
        raise ParameterError("record", "no record to tag")
    library().tag(tag, ids)
    return _back(url_for(".tag_page", tag=tag))


@bp.post("/library/untag")
def untag_records() -> BaseResponse:
    guard.check()
    tag = request.form.get("tag", "").strip()
    ids = [i.strip() for i in request.form.getlist("record") if i.strip()]
    library().untag(tag, ids)
    return _back(url_for(".tag_page", tag=tag))


# -- feeds ---------------------------------------------------------------------------------


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
    page = url_for(".tag_page", tag=tag, _external=True)
    return _atom(feeds.tag_feed(library(), tag, _links(page)))


@bp.get("/tag/<tag>/recommended.atom")
def recommended_feed(tag: str) -> Response:
    page = url_for(".recommended_page", tag=tag, _external=True)
    return _atom(feeds.recommended_feed(library(), tag, _links(page), time.time()))
