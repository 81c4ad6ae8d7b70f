"""Search parameters as strings (a URL's query string) to and from a :class:`SearchRequest`.

The names are the CLI's: ``q``, ``author`` and ``subject`` (repeatable), ``year`` (``2021`` or
``2019..2021``), ``sort``, ``mode``, ``page``, ``page_size``, ``facet_size``, ``correct`` (``0``:
search the text as typed even when a spelling correction would find more) and ``loose`` (``1``:
count and list the records sharing only some of a relaxed query's words too). An ``author`` in
double quotes (``author="Y. You"``, a hit's author link) is that name as recorded only
(:mod:`pubsearch.index.names`); a ``subject`` may be a code, an archive or arXiv's name
(:mod:`pubsearch.search.subjectmatch`). Every check of a value is made by
:func:`~pubsearch.search.request.parse_year` and :class:`SearchRequest` itself, so the web
page, the JSON API and the command line accept and refuse exactly the same requests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from pubsearch.core.errors import ParameterError
from pubsearch.search.request import DEFAULT_FACET_SIZE, SearchRequest, parse_year

# Parameters that may be given once; ``author`` and ``subject`` may be repeated.
SINGLE = (
    "q",
    "year",
    "sort",
    "mode",
    "page",
    "page_size",
    "facet_size",
    "correct",
    "loose",
    "person",
)
REPEATABLE = ("author", "subject")
NAMES = (*SINGLE, *REPEATABLE)

_DEFAULTS = SearchRequest()

# The part of a query string a request is read from: name -> every value given for it.
Params = Mapping[str, Sequence[str]]


def parse_int(name: str, text: str) -> int:
    """``text`` as an integer, or a ParameterError naming the parameter."""
    text = text.strip()
    digits = text.removeprefix("-")
    # ASCII digits only: str.isdigit also takes "²", which int() refuses.
    if not (digits.isascii() and digits.isdigit()) or len(text) > 12:
        raise ParameterError(name, f"must be a whole number, got {text!r}")
    return int(text)


def _single(params: Params, name: str) -> str | None:
    """The one value of ``name``; None when absent or empty (an empty form field)."""
    values = [v for v in params.get(name, ()) if v.strip()]
    if len(values) > 1:
        raise ParameterError(name, "may be given only once")
    return values[0] if values else None


def _many(params: Params, name: str) -> tuple[str, ...]:
    out: list[str] = []
    for value in params.get(name, ()):
        value = value.strip()
        if value and value not in out:
            out.append(value)
    return tuple(out)


def request_from_params(params: Params, *, facets: bool = True) -> SearchRequest:
    """The SearchRequest for a query string; ParameterError or QuerySyntaxError when bad.

    Absent and empty parameters take their defaults; unknown names are ignored.
    """

    def number(name: str, default: int) -> int:
        text = _single(params, name)
        return default if text is None else parse_int(name, text)

    year = _single(params, "year")
    return SearchRequest(
        q=_single(params, "q") or "",
        authors=_many(params, "author"),
        subjects=_many(params, "subject"),
        year=parse_year(year, "year") if year is not None else None,
        sort=(_single(params, "sort") or _DEFAULTS.sort),  # type: ignore[arg-type]  # checked
        page=number("page", _DEFAULTS.page),
        page_size=number("page_size", _DEFAULTS.page_size),
        facets=facets,
        facet_size=number("facet_size", DEFAULT_FACET_SIZE),
        correct=_flag(params, "correct", _DEFAULTS.correct),
        mode=_single(params, "mode"),  # type: ignore[arg-type]  # SearchRequest checks it
        loose=_flag(params, "loose", _DEFAULTS.loose),
        person=_single(params, "person"),
    )


def _flag(params: Params, name: str, default: bool) -> bool:
    """``1`` or ``0`` (also ``true``/``false``, ``yes``/``no``, ``on``/``off``)."""
    text = _single(params, name)
    if text is None:
        return default
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ParameterError(name, f"must be 1 or 0, got {text!r}")


def params_from_request(request: SearchRequest) -> list[tuple[str, str]]:
    """The query-string pairs of ``request``, in a fixed order, without default values."""
    pairs: list[tuple[str, str]] = []
    if request.q:
        pairs.append(("q", request.q))
    pairs += [("author", a) for a in request.authors]
    pairs += [("subject", s) for s in request.subjects]
    if request.year is not None:
        pairs.append(("year", str(request.year)))
    if request.person is not None:
        pairs.append(("person", request.person))
    optional: Iterable[tuple[str, object, object]] = (
        ("sort", request.sort, _DEFAULTS.sort),
        ("page", request.page, _DEFAULTS.page),
        ("page_size", request.page_size, _DEFAULTS.page_size),
        ("facet_size", request.facet_size, DEFAULT_FACET_SIZE),
    )
    for name, value, default in optional:
        if value != default:
            pairs.append((name, str(value)))
    if request.mode is not None:
        pairs.append(("mode", request.mode))
    if request.correct != _DEFAULTS.correct:
        pairs.append(("correct", "1" if request.correct else "0"))
    if request.loose:
        pairs.append(("loose", "1"))
    return pairs


def collect_params(getlist: Callable[[str], list[str]]) -> dict[str, list[str]]:
    """The search parameters of a multi-dict, given its ``getlist`` (Flask's ``request.args``)."""
    return {name: getlist(name) for name in NAMES}
