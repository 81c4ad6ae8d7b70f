"""Routes: parse the parameters, call the search service, render. No search logic here.

/                         the search page (q, author, subject, year, sort, page, ...)
/related/<id>             records most like one record, as a results page
/author/<name>            the people of an author name, a profile each
/export.bib|ris|json|csv|jsonl     every page of the current results (capped), as a
                          download (json: CSL JSON)
/api/search               the JSON of `pubsearch query --format json --facets`
/api/records/<id>         one record
/api/related/<id>         the JSON of a related-records page
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Response, current_app, render_template, request, url_for

from pubsearch.ingest.records import Record
from pubsearch.library.follow import Recommended
from pubsearch.search import export
from pubsearch.search.broadening import nearest_broader
from pubsearch.search.request import SearchRequest
from pubsearch.search.results import SearchResults
from pubsearch.web import guard
from pubsearch.web.pages import build_results_page
from pubsearch.web.params import collect_params, params_from_request, request_from_params
from pubsearch.web.state import library, service
from pubsearch.web.urls import search_url

bp = Blueprint("pubsearch", __name__)

# Export routes: extension -> (link label, media type).
EXPORTS = {
    "bib": ("BibTeX", "application/x-bibtex"),
    "ris": ("RIS", "application/x-research-info-systems"),
    "json": ("CSL JSON", "application/vnd.citationstyles.csl+json"),
    "csv": ("CSV", "text/csv"),
    "jsonl": ("JSON lines", "application/x-ndjson"),
}

Search = Callable[[SearchRequest], SearchResults]


def search_request(facets: bool = True) -> SearchRequest:
    return request_from_params(collect_params(request.args.getlist), facets=facets)


def _json(data: Any) -> Response:
    # The CLI's serializer, so that the API and `pubsearch query --format json` match.
    return Response(export.to_json(data) + "\n", mimetype="application/json")


# -- pages ---------------------------------------------------------------------------------


@bp.get("/")
def search_page() -> str:
    svc = service()
    req = search_request()
    results = svc.search(req)
    return render_results(results, svc.count, url_for("pubsearch.search_page"), related=None)


@bp.get("/related/<path:record_id>")
def related_page(record_id: str) -> str:
    svc = service()
    record = svc.record(record_id)
    req = search_request()
    search: Search = functools.partial(svc.related, record.id)
    results = search(req)
    path = url_for("pubsearch.related_page", record_id=record.id)
    return render_results(results, lambda r: search(r).total, path, related=record)


def render_results(
    results: SearchResults,
    count: Callable[[SearchRequest], int],
    path: str,
    related: Record | None,
    tag: str | None = None,
    recommended: Recommended | None = None,
) -> str:
    """The results page of ``results`` at ``path``: a search's, a related record's, a
    tag's library page or its recommendations."""
    req = results.request
    broader = None
    if results.total == 0 and (req.q or req.authors or req.subjects or req.year is not None):
        broader = nearest_broader(count, req)
    page = build_results_page(
        results,
        path,
        export_paths={
            label: url_for("pubsearch.export_results", ext=ext)
            for ext, (label, _) in EXPORTS.items()
        },
        export_cap=current_app.config["EXPORT_CAP"],
        related_url=lambda record_id: url_for("pubsearch.related_page", record_id=record_id),
        author_url=_author_url,
        broader=broader,
        extra_export_params=_export_params(related, tag),
        related=related,
    )
    json_url: str | None
    if related is None:
        json_url = search_url(url_for("pubsearch.api_search"), req)
    else:
        json_url = search_url(url_for("pubsearch.api_related", record_id=related.id), req)
    feed_url = search_url(url_for("following.search_feed"), req) if related is None else None
    if tag is not None:
        feed = "following.recommended_feed" if recommended else "following.tag_feed"
        feed_url = url_for(feed, tag=tag)
        json_url = None
    return render_template(
        "search.html",
        page=page,
        related=page.related,
        json_url=json_url,
        feed_url=feed_url,
        forms=guard.forms(),
        follow_params=params_from_request(req),
        library_tag=tag,
        last_tag=library().last_tag(),
        recommended=recommended,
    )


def _export_params(related: Record | None, tag: str | None) -> str:
    if related is not None:
        return urlencode({"related": related.id})
    return urlencode({"tag": tag}) if tag is not None else ""


def _author_url(name: str, person: str) -> str:
    """An author's profile page, at the person's profile where it is known."""
    url = url_for("pubsearch.author_page", name=name)
    return f"{url}#{person}" if person else url


@bp.get("/author/<path:name>")
def author_page(name: str) -> str:
    found = service().author(name)
    return render_template(
        "author.html",
        profiles=found,
        most={p.id: max((n for _, n in p.years), default=1) for p in found.people},
        person_url=lambda person: search_url(
            url_for(".search_page"), SearchRequest(person=person, sort="newest")
        ),
        feed_url=lambda person: search_url(
            url_for("following.search_feed"), SearchRequest(person=person)
        ),
        record_url=lambda record_id: search_url(
            url_for(".search_page"), SearchRequest(q=record_id)
        ),
        author_url=lambda author: url_for(".author_page", name=author),
    )


# -- export --------------------------------------------------------------------------------


@bp.get("/export.<any(bib, ris, json, csv, jsonl):ext>")
def export_results(ext: str) -> Response:
    """Every page of the results of the same parameters as the page (plus ``related``)."""
    svc = service()
    req = search_request(facets=False)
    related = request.args.get("related", "").strip()
    tag = request.args.get("tag", "").strip()
    search: Search = functools.partial(svc.related, related) if related else svc.search
    if tag:
        search = functools.partial(library().search_tag, tag)
    collected = export.collect_hits(search, req, cap=current_app.config["EXPORT_CAP"])
    if ext == "bib":
        comment = f"pubsearch export: {collected.describe(req)}\nsearch: {request.full_path}"
        body = export.hits_to_bibtex(collected.hits, svc.record, comment)
    elif ext == "ris":
        body = export.hits_to_ris(collected.hits, svc.record)
    elif ext == "json":
        body = export.hits_to_csljson(collected.hits, svc.record)
    elif ext == "csv":
        body = export.hits_to_csv(collected.hits)
    else:
        body = export.hits_to_jsonl(collected.hits)
    _, media_type = EXPORTS[ext]
    response = Response(body, mimetype=media_type)
    response.headers["Content-Disposition"] = f'attachment; filename="pubsearch.{ext}"'
    response.headers["X-Total-Count"] = str(collected.total)
    response.headers["X-Export-Count"] = str(len(collected.hits))
    response.headers["X-Export-Capped"] = "true" if collected.capped else "false"
    return response


# -- JSON API ------------------------------------------------------------------------------


@bp.get("/api/search")
def api_search() -> Response:
    """The same parameters as the page; facets always included."""
    return _json(export.results_to_dict(service().search(search_request(facets=True))))


@bp.get("/api/records/<path:record_id>")
def api_record(record_id: str) -> Response:
    return _json(export.record_to_dict(service().record(record_id)))


@bp.get("/api/related/<path:record_id>")
def api_related(record_id: str) -> Response:
    results = service().related(record_id, search_request(facets=True))
    return _json(export.results_to_dict(results))
