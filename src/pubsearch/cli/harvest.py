"""``pubsearch harvest``: fetch records from the services that publish them into an index,
and ``pubsearch harvest --list``: what each saved harvest covers."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pubsearch.cli.indexing import wait_option
from pubsearch.cli.options import index_dir_of, index_option, reports_errors
from pubsearch.core.config import LOCK_TIMEOUT_SECONDS

if TYPE_CHECKING:
    from pubsearch.harvest.run import HarvestCounts
    from pubsearch.index.embedding import Embedder

# arXiv's OAI-PMH base URL (info.arxiv.org/help/oa: the interface it asks bulk harvesters
# to use, at most one request every 3 seconds).
ARXIV_OAI = "https://oaipmh.arxiv.org/oai"
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
        if state.set_spec:
            query.append(f"set {state.set_spec}")
        if state.metadata_prefix:
            query.append(state.metadata_prefix)
        if state.from_date or state.until:
            query.append(f"asked {state.from_date or '..'} to {state.until or '..'}")
        covered = f"{state.earliest or '?'} to {state.latest or state.list_latest or '?'}"
        line = (
            f"{', '.join(query)}: datestamps {covered}; last run {state.last_run or 'never'}; "
            f"{state.records:,} records, {state.deleted:,} deleted, {state.pages:,} pages "
            f"in {state.runs:,} run{'s' if state.runs != 1 else ''}"
        )
        if state.token:
            line += "; unfinished (the next run goes on from the saved resumption token)"
        else:
            line += f"; next run from {state.next_from() or 'the start'}"
        click.echo(f"{line}; {state.endpoint}")


def _datestamp(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    if value and not _DATESTAMP.fullmatch(value):
        raise click.BadParameter(
            f"{value!r} is not a day (2026-11-01) or a UTC time (2026-11-01T00:00:00Z)"
        )
    return value or ""


@harvest_command.command("arxiv")
@click.option(
    "--set", "set_spec", default="", help="An OAI-PMH set: cs, math, physics:astro-ph ..."
)
@click.option(
    "--from", "from_date", callback=_datestamp, help="Records changed on or after this day."
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
    "--endpoint",
    default=ARXIV_OAI,
    show_default=True,
    help="The OAI-PMH base URL: a mirror, another repository, a local test server.",
)
@click.option(
    "--delay",
    type=click.FloatRange(min=0),
    default=DEFAULT_DELAY,
    show_default=True,
    help="Seconds between requests (arXiv asks for 3).",
)
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=DEFAULT_BATCH,
    show_default=True,
    help="Records added to the index at a time (one update each; 1: every page as it "
    "comes). A stopped harvest fetches at most one batch again.",
)
@click.option(
    "--mailto", help="An e-mail address for the User-Agent, for the service to reach you."
)
@index_option
@wait_option("Seconds to wait for another process writing the index.")
@reports_errors
def arxiv_command(
    set_spec: str,
    from_date: str,
    until: str,
    metadata_prefix: str,
    endpoint: str,
    delay: float,
    batch: int,
    mailto: str | None,
    index_dir: Path | None,
    wait: float = LOCK_TIMEOUT_SECONDS,
) -> None:
    """Harvest arXiv (or any OAI-PMH repository) with ListRecords into the index.

    A run goes on from where the last run of the same command stopped: from its unfinished
    resumption token, else from the latest datestamp it harvested. Each page is added as
    it comes (as `pubsearch index --update` adds records), so a run stopped anywhere
    loses nothing already added.
    """
    from pubsearch.harvest.http import PoliteClient, check_endpoint
    from pubsearch.harvest.run import OaiQuery, harvest_oai

    target = index_dir_of(index_dir)
    query = OaiQuery(
        source="arxiv",
        endpoint=check_endpoint(endpoint),
        metadata_prefix=metadata_prefix,
        set_spec=set_spec,
        from_date=from_date,
        until=until,
    )
    client = PoliteClient(delay=delay, mailto=mailto)
    line = _ProgressLine()
    try:
        counts = harvest_oai(
            target,
            query,
            client,
            line.update,
            embedder=_embedder(target),
            lock_timeout=wait,
            batch=batch,
        )
    finally:
        line.close()
        client.close()
    for note in counts.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(_closing_line(counts))


def _embedder(target: Path) -> Embedder | None:
    """The sentence model when the index has vectors (the new records get theirs)."""
    from pubsearch.cli.indexing import _embedder_if_installed, _has_vectors

    return _embedder_if_installed(target, None, True) if _has_vectors(target) else None


def _closing_line(counts: HarvestCounts) -> str:
    skipped = f", {counts.skipped:,} skipped" if counts.skipped else ""
    resumed = " (went on from the saved resumption token)" if counts.resumed else ""
    return (
        f"harvested {counts.fetched:,} records in {counts.pages:,} pages, "
        f"{counts.seconds:.1f} s{resumed}: {counts.new:,} new, {counts.updated:,} updated, "
        f"{counts.unchanged:,} unchanged, {counts.deleted:,} deleted{skipped}; "
        f"the next run starts {counts.next_start}"
    )


class _ProgressLine:
    """On a terminal, one line redrawn after each page: pages, records, rate, time left
    when the repository says how long the list is."""

    def __init__(self) -> None:
        self._shown = sys.stderr.isatty()
        self._drawn = False

    def update(self, counts: HarvestCounts) -> None:
        if not self._shown:
            return
        rate = counts.fetched / counts.seconds if counts.seconds else 0.0
        text = f"page {counts.pages:,}: {counts.fetched:,} records"
        if counts.expected:
            text += f" of {counts.expected:,}"
            if rate and counts.expected > counts.fetched:
                text += f", {(counts.expected - counts.fetched) / rate:.0f} s left"
        text += f", {rate:,.0f}/s, {counts.new:,} new"
        click.echo(f"\r{text}\x1b[K", nl=False, err=True)
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            click.echo(err=True)
