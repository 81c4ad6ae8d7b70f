"""``pubsearch harvest``: fetch records from the services that publish them into an index,
and ``pubsearch harvest --list``: what each saved harvest covers."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote_plus

import click

from pubsearch.cli.indexing import wait_option
from pubsearch.cli.options import index_dir_of, index_option, reports_errors
from pubsearch.core.config import LOCK_TIMEOUT_SECONDS

if TYPE_CHECKING:
    from pubsearch.harvest.paged import PagedSource
    from pubsearch.harvest.run import HarvestCounts, OaiQuery
    from pubsearch.index.embedding import Embedder

F = TypeVar("F", bound=Callable[..., Any])

# arXiv's OAI-PMH base URL (info.arxiv.org/help/oa: the interface it asks bulk harvesters
# to use, at most one request every 3 seconds).
ARXIV_OAI = "https://oaipmh.arxiv.org/oai"
# The arXiv API (info.arxiv.org/help/api: a request every 3 seconds).
ARXIV_API = "http://export.arxiv.org/api/query"
OPENALEX_API = "https://api.openalex.org"
CROSSREF_API = "https://api.crossref.org"
DEFAULT_DELAY = 3.0
# pubsearch.harvest.run.DEFAULT_BATCH, which --help must not import the index to know.
DEFAULT_BATCH = 5_000
# OAI-PMH's datestamps: a day, or a second in UTC.
_DATESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z)?")


@click.group("harvest", invoke_without_command=True)
@click.option("--list", "show_list", is_flag=True, help="Show each saved harvest and stop.")
@index_option
@click.pass_context
@reports_errors
def harvest_command(ctx: click.Context, show_list: bool, index_dir: Path | None) -> None:
    """Fetch records from a live source into the index, going on from the last run.

    \b
    Examples:
        pubsearch harvest arxiv --set cs --from 2026-11-01
        pubsearch harvest arxiv --query 'cat:cs.LG AND ti:diffusion'
        pubsearch harvest openalex --filter author.id:A5023888391 --mailto me@example.org
        pubsearch harvest crossref --query 'graph neural' --filter type:journal-article
        pubsearch harvest --list
    """
    if show_list:
        _list_harvests(index_dir_of(index_dir))
    elif ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def _list_harvests(target: Path) -> None:
    from pubsearch.harvest.state import load_states

    states = load_states(target)
    if not states:
        click.echo(f"no saved harvests in {target}")
        return
    for state in states.values():
        query = [state.source]
        if state.query:
            query.append(unquote_plus(state.query).replace("&", ", "))
        if state.set_spec:
            query.append(f"set {state.set_spec}")
        if state.metadata_prefix:
            query.append(state.metadata_prefix)
        if state.from_date or state.until:
            query.append(f"asked {state.from_date or '..'} to {state.until or '..'}")
        covered = f"{state.earliest or '?'} to {state.latest or state.list_latest or '?'}"
        dates = "dates" if state.query else "datestamps"
        line = (
            f"{', '.join(query)}: {dates} {covered}; last run {state.last_run or 'never'}; "
            f"{state.records:,} records, {state.deleted:,} deleted, {state.pages:,} pages "
            f"in {state.runs:,} run{'s' if state.runs != 1 else ''}"
        )
        if state.token:
            kept = "position" if state.query else "resumption token"
            line += f"; unfinished (the next run goes on from the saved {kept})"
        else:
            line += f"; next run from {state.next_from() or 'the start'}"
        click.echo(f"{line}; {state.endpoint}")


def _datestamp(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    if value and not _DATESTAMP.fullmatch(value):
        raise click.BadParameter(
            f"{value!r} is not a day (2026-11-01) or a UTC time (2026-11-01T00:00:00Z)"
        )
    return value or ""


def _common_options(endpoint_help: str, delay: float, delay_help: str) -> Callable[[F], F]:
    """The options every source shares: endpoint, delay, batch, mailto, index, wait."""

    def decorate(func: F) -> F:
        for option in reversed(
            [
                click.option("--endpoint", help=endpoint_help),
                click.option(
                    "--delay",
                    type=click.FloatRange(min=0),
                    default=delay,
                    show_default=True,
                    help=delay_help,
                ),
                click.option(
                    "--batch",
                    type=click.IntRange(min=1),
                    default=DEFAULT_BATCH,
                    show_default=True,
                    help="Records added to the index at a time (one update each; 1: every "
                    "page as it comes). A stopped harvest fetches at most one batch again.",
                ),
                click.option(
                    "--mailto",
                    help="An e-mail address for the User-Agent (and, for OpenAlex and "
                    "Crossref, the polite pool), for the service to reach you.",
                ),
                index_option,
                wait_option("Seconds to wait for another process writing the index."),
            ]
        ):
            func = option(func)
        return func

    return decorate


@harvest_command.command("arxiv")
@click.option(
    "--set", "set_spec", default="", help="An OAI-PMH set: cs, math, physics:astro-ph ..."
)
@click.option(
    "--from",
    "from_date",
    callback=_datestamp,
    help="Records changed on or after this day (with --query: the list is read down to it).",
)
@click.option("--until", callback=_datestamp, help="Records changed on or before this day.")
@click.option(
    "--metadata-prefix",
    type=click.Choice(["arXiv", "arXivRaw", "oai_dc"]),
    default="arXiv",
    show_default=True,
    help="The metadata format (oai_dc: what every OAI-PMH repository serves).",
)
@click.option(
    "--query",
    "search_query",
    help="An arXiv API search_query ('cat:cs.LG AND ti:diffusion'): the API, newest first, "
    "instead of OAI-PMH.",
)
@click.option(
    "--sort-by",
    type=click.Choice(["lastUpdatedDate", "submittedDate"]),
    default="lastUpdatedDate",
    show_default=True,
    help="With --query: the date the list comes newest first by.",
)
@click.option(
    "--max-results",
    type=click.IntRange(min=1, max=2000),
    default=200,
    show_default=True,
    help="With --query: entries a page.",
)
@_common_options(
    f"The OAI-PMH base URL (default {ARXIV_OAI}), or with --query the API's "
    f"(default {ARXIV_API}): a mirror, another repository, a local test server.",
    DEFAULT_DELAY,
    "Seconds between requests (arXiv asks for 3).",
)
@reports_errors
def arxiv_command(
    set_spec: str,
    from_date: str,
    until: str,
    metadata_prefix: str,
    search_query: str | None,
    sort_by: str,
    max_results: int,
    endpoint: str | None,
    delay: float,
    batch: int,
    mailto: str | None,
    index_dir: Path | None,
    wait: float = LOCK_TIMEOUT_SECONDS,
) -> None:
    """Harvest arXiv (or any OAI-PMH repository) with ListRecords into the index; with
    --query, the arXiv API's answers to a query, newest first.

    A run goes on from where the last run of the same command stopped: from its unfinished
    resumption token, else from the latest datestamp it harvested (with --query: the list
    is read down to the newest entry the last run saw). Pages are added as they come (as
    `pubsearch index --update` adds records), so a run stopped anywhere loses nothing
    already added.
    """
    from pubsearch.harvest.http import check_endpoint

    if search_query is not None:
        _refuse_with_query(set_spec, until, metadata_prefix)
        from pubsearch.harvest.arxivapi import ArxivApiQuery

        source = ArxivApiQuery(
            endpoint=check_endpoint(endpoint or ARXIV_API),
            search_query=search_query,
            max_results=max_results,
            sort_by=sort_by,
        )
        _run_paged(source, from_date, index_dir, delay, batch, mailto, wait)
        return
    from pubsearch.harvest.run import OaiQuery

    query = OaiQuery(
        source="arxiv",
        endpoint=check_endpoint(endpoint or ARXIV_OAI),
        metadata_prefix=metadata_prefix,
        set_spec=set_spec,
        from_date=from_date,
        until=until,
    )
    _run(None, query, "", index_dir, delay, batch, mailto, wait)


def _refuse_with_query(set_spec: str, until: str, metadata_prefix: str) -> None:
    from pubsearch.core.errors import ParameterError

    for name, given in (
        ("--set", set_spec),
        ("--until", until),
        ("--metadata-prefix", metadata_prefix != "arXiv"),
    ):
        if given:
            raise ParameterError(name, "is OAI-PMH's; the arXiv API (--query) has none")


@harvest_command.command("openalex")
@click.option(
    "--filter",
    "filters",
    default="",
    help="An OpenAlex filter, in OpenAlex's syntax (author.id:A5023888391,"
    "from_publication_date:2025-01-01).",
)
@click.option("--search", default="", help="OpenAlex's full-text search of the works.")
@click.option(
    "--from",
    "from_date",
    callback=_datestamp,
    help="Works updated at OpenAlex on or after this day (the first run; later runs go on "
    "from the latest they saw).",
)
@click.option(
    "--per-page",
    type=click.IntRange(min=1, max=200),
    default=100,
    show_default=True,
    help="Works a page (OpenAlex documents up to 100).",
)
@click.option(
    "--api-key",
    envvar="OPENALEX_API_KEY",
    help="An OpenAlex API key (free; OpenAlex asks for one). Default: $OPENALEX_API_KEY. "
    "Never saved, never shown.",
)
@_common_options(
    f"The API's base URL (default {OPENALEX_API}).",
    1.0,
    "Seconds between requests.",
)
@reports_errors
def openalex_command(
    filters: str,
    search: str,
    from_date: str,
    per_page: int,
    api_key: str | None,
    endpoint: str | None,
    delay: float,
    batch: int,
    mailto: str | None,
    index_dir: Path | None,
    wait: float = LOCK_TIMEOUT_SECONDS,
) -> None:
    """Harvest OpenAlex works (a filter, a search) into the index, cursor page by page.

    A run goes on from its saved cursor, else asks only for the works updated since the
    latest its last run saw (from_updated_date).
    """
    from pubsearch.harvest.http import check_endpoint
    from pubsearch.harvest.openalex import OpenAlexQuery

    source = OpenAlexQuery(
        endpoint=check_endpoint(endpoint or OPENALEX_API),
        filter=filters,
        search=search,
        per_page=per_page,
        mailto=mailto,
        api_key=api_key or None,
    )
    _run_paged(source, from_date, index_dir, delay, batch, mailto, wait)


@harvest_command.command("crossref")
@click.option("--query", default="", help="Crossref's bibliographic query.")
@click.option(
    "--filter",
    "filters",
    default="",
    help="A Crossref filter, in Crossref's syntax "
    "(from-index-date:2025-01-01,type:journal-article).",
)
@click.option(
    "--from",
    "from_date",
    callback=_datestamp,
    help="Works Crossref indexed on or after this day (the first run; later runs go on "
    "from the latest they saw).",
)
@click.option(
    "--rows",
    type=click.IntRange(min=1, max=1000),
    default=1000,
    show_default=True,
    help="Works a page.",
)
@_common_options(
    f"The API's base URL (default {CROSSREF_API}).",
    1.0,
    "Seconds between requests.",
)
@reports_errors
def crossref_command(
    query: str,
    filters: str,
    from_date: str,
    rows: int,
    endpoint: str | None,
    delay: float,
    batch: int,
    mailto: str | None,
    index_dir: Path | None,
    wait: float = LOCK_TIMEOUT_SECONDS,
) -> None:
    """Harvest Crossref works (a query, a filter) into the index, cursor page by page.

    A run goes on from its saved cursor (a cursor Crossref no longer knows starts the list
    anew), else asks only for the works Crossref indexed since the latest its last run saw
    (from-index-date).
    """
    from pubsearch.harvest.crossref import CrossrefQuery
    from pubsearch.harvest.http import check_endpoint

    source = CrossrefQuery(
        endpoint=check_endpoint(endpoint or CROSSREF_API),
        filter=filters,
        query=query,
        rows=rows,
        mailto=mailto,
    )
    _run_paged(source, from_date, index_dir, delay, batch, mailto, wait)


def _run_paged(
    source: PagedSource,
    from_date: str,
    index_dir: Path | None,
    delay: float,
    batch: int,
    mailto: str | None,
    wait: float,
) -> None:
    _run(source, None, from_date, index_dir, delay, batch, mailto, wait)


def _run(
    source: PagedSource | None,
    oai: OaiQuery | None,
    from_date: str,
    index_dir: Path | None,
    delay: float,
    batch: int,
    mailto: str | None,
    wait: float,
) -> None:
    """One harvest (an API's list, else OAI-PMH), its bar on a terminal, its closing line
    (also, with what it did so far, when it fails)."""
    from pubsearch.core.errors import PubsearchError
    from pubsearch.harvest.http import PoliteClient
    from pubsearch.harvest.paged import harvest_paged
    from pubsearch.harvest.run import HarvestCounts, harvest_oai

    target = index_dir_of(index_dir)
    client = PoliteClient(delay=delay, mailto=mailto)
    counts = HarvestCounts()
    bar = HarvestBar()
    embedder = _embedder(target)
    try:
        if source is not None:
            harvest_paged(
                target, source, client, bar.update, embedder, wait, batch, counts, from_date
            )
        elif oai is not None:
            harvest_oai(target, oai, client, bar.update, embedder, wait, batch, counts)
    except PubsearchError:
        bar.close()
        click.echo(_closing_line(counts, stopped=True, oai=source is None))
        raise
    finally:
        bar.close()
        client.close()
    for note in counts.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(_closing_line(counts, oai=source is None))
    if counts.new or counts.updated or counts.deleted:  # a new generation went live
        from pubsearch.cli.library import prepare_recommendations

        prepare_recommendations(target)


def _embedder(target: Path) -> Embedder | None:
    """The sentence model when the index has vectors (the new records get theirs)."""
    from pubsearch.cli.indexing import _embedder_if_installed, _has_vectors

    return _embedder_if_installed(target, None, True) if _has_vectors(target) else None


def _closing_line(counts: HarvestCounts, stopped: bool = False, oai: bool = True) -> str:
    """What a run did, in one line: fetched, new, updated, unchanged, pages, time, and
    where the next run starts (also for a run that failed: what it did before)."""
    skipped = f", {counts.skipped:,} skipped" if counts.skipped else ""
    deleted = f", {counts.deleted:,} deleted" if oai or counts.deleted else ""
    kept = "resumption token" if oai else "position of the list"
    resumed = f" (went on from the saved {kept})" if counts.resumed else ""
    verb = "stopped after harvesting" if stopped else "harvested"
    return (
        f"{verb} {counts.fetched:,} records in {counts.pages:,} pages, "
        f"{counts.seconds:.1f} s{resumed}: {counts.new:,} new, {counts.updated:,} updated, "
        f"{counts.unchanged:,} unchanged{deleted}{skipped}; "
        f"the next run starts {counts.next_start or 'from the start'}"
    )


class HarvestBar:
    """On a terminal, a bar (tqdm) redrawn after each page: records so far, of how many
    where the service says, the rate, the time left, pages and new records. Elsewhere
    (a pipe, a log, cron) nothing: the closing line says it all."""

    def __init__(self) -> None:
        self._bar: Any = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(
                total=None,
                unit=" records",
                desc="harvesting",
                file=sys.stderr,
                leave=False,
                dynamic_ncols=True,
                # Each page's counts drawn (tqdm's default waits 0.1 s between draws, and
                # the last page's could be left undrawn): pages come a second or more apart.
                mininterval=0,
            )

    def update(self, counts: HarvestCounts) -> None:
        bar = self._bar
        if bar is None:
            return
        if counts.expected and bar.total != counts.expected:
            bar.total = max(counts.expected, counts.fetched)
        bar.set_postfix_str(f"page {counts.pages:,}, {counts.new:,} new", refresh=False)
        bar.update(counts.fetched - bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
