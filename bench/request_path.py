"""One request's path through the code: the modules it enters, and the calls that climb.

A script, not a test. It runs a few requests on an index with Python's profiler hook on,
and records every call from one pubsearch module into another. A call *climbs* when it
goes from a lower layer to a higher one (docs/architecture.md: core < ingest, codec <
index < search, harvest < library < web < cli; inside search, anything into ``search.service``, the
top of the package, climbs too): a function handed down and called back, which the
import contracts cannot see. Each request is run once first, so that the tables a
generation keeps are built before the one traced.

    .venv/bin/python bench/request_path.py --index /tmp/arxiv-ix
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from pubsearch.search.request import SearchRequest, parse_year
from pubsearch.search.service import SearchService

LAYERS = {"core": 0, "ingest": 1, "codec": 1, "index": 2, "search": 3, "harvest": 3}
LAYERS |= {"library": 4, "web": 5, "cli": 6}
TOP_OF_SEARCH = "pubsearch.search.service"

Edge = tuple[str, str]


def rank(module: str) -> int | None:
    """Where a module stands (higher calls lower), or None outside the packages."""
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "pubsearch" or parts[1] not in LAYERS:
        return None
    return LAYERS[parts[1]] * 10 + (module == TOP_OF_SEARCH)


def trace(request: Callable[[], Any]) -> tuple[set[str], Counter[Edge]]:
    """The pubsearch modules ``request`` enters, and its calls between modules."""
    modules: set[str] = set()
    calls: Counter[Edge] = Counter()

    def hook(frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        if not callee.startswith("pubsearch"):
            return
        modules.add(callee)
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
        if caller.startswith("pubsearch") and caller != callee:
            calls[(caller, callee)] += 1

    sys.setprofile(hook)
    try:
        request()
    finally:
        sys.setprofile(None)
    return modules, calls


def climbs(calls: Counter[Edge]) -> dict[Edge, int]:
    """The calls from a lower module to a higher one."""
    found = {}
    for (caller, callee), count in calls.items():
        low, high = rank(caller), rank(callee)
        if low is not None and high is not None and high > low:
            found[(caller, callee)] = count
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=Path("index"))
    args = parser.parse_args()
    service = SearchService(args.index)
    first = service.search(SearchRequest(q="graph neural network")).hits[0].id
    requests: dict[str, Callable[[], Any]] = {
        "related papers": lambda: service.related(first, SearchRequest(facets=True)),
        "words, a year, facets": lambda: service.search(
            SearchRequest(q="graph neural network", year=parse_year("2025"), facets=True)
        ),
        "subject: in the box": lambda: service.search(
            SearchRequest(q="subject:cs.LG transformer", facets=True)
        ),
        "a surname and words": lambda: service.search(SearchRequest(q="Hinton capsules")),
        "wildcard, sorted by date": lambda: service.search(
            SearchRequest(q="title:transformer*", sort="newest")
        ),
    }
    print(f"{'request':28} {'modules':>8} {'call edges':>11} {'climbs':>7}")
    for name, request in requests.items():
        request()
        modules, calls = trace(request)
        up = climbs(calls)
        print(f"{name:28} {len(modules):8d} {len(calls):11d} {sum(up.values()):7d}")
        for (caller, callee), count in sorted(up.items()):
            print(f"    {caller} -> {callee} ({count})")
    service.close()


if __name__ == "__main__":
    main()
