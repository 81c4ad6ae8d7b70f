"""Results and records as plain data: the JSON structure, JSON lines and CSV.

:func:`results_to_dict` is the one documented JSON structure, returned by
``pubsearch query --format json`` and by the web page's ``/api/search`` alike.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import Any

from pubsearch.records import Record
from pubsearch.searching import FacetValue, Hit, IndexStats, SearchResults

CSV_COLUMNS = ("rank", "id", "title", "year", "authors", "subjects", "score", "url", "abstract")


def hit_to_dict(hit: Hit) -> dict[str, Any]:
    return {
        "rank": hit.rank,
        "id": hit.id,
        "title": hit.title,
        "abstract": hit.abstract,
        "authors": list(hit.authors),
        "year": hit.year,
        "subjects": list(hit.subjects),
        "source": hit.source,
        "url": hit.url,
        "score": hit.score,
        "snippet": hit.snippet,
        "title_html": hit.title_html,
    }


def facet_to_dict(value: FacetValue) -> dict[str, Any]:
    return {"value": value.value, "count": value.count, "selected": value.selected}


def results_to_dict(results: SearchResults) -> dict[str, Any]:
    """The JSON structure of a results page (documented in README.md)."""
    req = results.request
    out: dict[str, Any] = {
        "query": req.q,
        "filters": {
            "author": list(req.authors),
            "subject": list(req.subjects),
            "year": str(req.year) if req.year else None,
        },
        "sort": req.sort,
        "total": results.total,
        "page": req.page,
        "page_size": req.page_size,
        "pages": results.pages,
        "took_ms": results.took_ms,
        "suggestion": results.suggestion,
        "hits": [hit_to_dict(h) for h in results.hits],
    }
    if results.facets is not None:
        out["facets"] = {
            name: [facet_to_dict(v) for v in values] for name, values in results.facets.items()
        }
    return out


def record_to_dict(record: Record) -> dict[str, Any]:
    return {
        "id": record.id,
        "title": record.title,
        "abstract": record.abstract,
        "authors": list(record.authors),
        "year": record.year,
        "subjects": list(record.subjects),
        "source": record.source,
        "url": record.url,
        "arxiv_id": record.arxiv_id,
        "doi": record.doi,
        "origins": list(record.origins),
    }


def stats_to_dict(stats: IndexStats) -> dict[str, Any]:
    return {
        "records": stats.records,
        "generation": stats.generation,
        "size_bytes": stats.size_bytes,
        "authors": stats.authors,
        "subjects": stats.subjects,
        "years": {str(y): c for y, c in stats.years.items()},
        "top_authors": [facet_to_dict(v) for v in stats.top_authors],
        "top_subjects": [facet_to_dict(v) for v in stats.top_subjects],
    }


def to_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


def hits_to_jsonl(hits: Iterable[Hit]) -> str:
    return "".join(json.dumps(hit_to_dict(h), ensure_ascii=False) + "\n" for h in hits)


def hits_to_csv(hits: Iterable[Hit]) -> str:
    """CSV with a header row; list fields are joined with ``; ``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for h in hits:
        writer.writerow(
            [
                h.rank,
                h.id,
                h.title,
                h.year if h.year is not None else "",
                "; ".join(h.authors),
                "; ".join(h.subjects),
                "" if h.score is None else h.score,
                h.url or "",
                h.abstract,
            ]
        )
    return buffer.getvalue()
