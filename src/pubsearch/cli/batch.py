"""``pubsearch batch``: search every query of a file and write a TREC run."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import click

from pubsearch.cli import trec
from pubsearch.cli.options import (
    PubsearchCLIError,
    index_dir_of,
    index_option,
    mode_option,
    reports_errors,
)
from pubsearch.core.config import default_processes


@click.command("batch")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@index_option
@click.option(
    "--hits",
    default=trec.DEFAULT_HITS,
    show_default=True,
    help="Results written per query (1 to 10,000).",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the run to this file. Default: standard output.",
)
@click.option(
    "--tag", default=trec.DEFAULT_TAG, show_default=True, help="Run name, the last column."
)
@click.option(
    "--processes",
    type=click.IntRange(1, 64),
    help="Processes searching at once, each with the index open; the run is the same "
    f"whatever the number. Fewer for a short file (one per {trec.MIN_QUERIES_PER_PROCESS} "
    "queries). [default: 2, or 1 with one CPU]",
)
@mode_option
@click.option(
    "--loose",
    is_flag=True,
    help="Rank every record that shares some of a relaxed query's words, as 'pubsearch "
    "query --loose' does (by default, those that match it well).",
)
@reports_errors
def batch_command(
    queries: Path,
    index_dir: Path | None,
    hits: int,
    output: Path | None,
    tag: str,
    processes: int | None,
    mode: str | None,
    loose: bool,
) -> None:
    """Search every query of a file and write a TREC run (qid Q0 docid rank score tag).

    QUERIES is TSV (id<TAB>text, one a line) or JSON lines ({"_id" or "id", "text"}, as
    BEIR's queries.jsonl). Each query is searched as 'pubsearch query' searches it; docid is
    the record's own id. A line that cannot be searched is named on stderr with its file
    and line and gets no hits; the others run. The exit status is 1 only when no query
    could be searched.

    \b
    Example:
        pubsearch batch queries.tsv --hits 100 --output run.txt
        pubsearch batch queries.jsonl --index /tmp/scifact > run.txt
    """
    trec.check_hits(hits)
    failed: list[str] = []
    read = trec.read_queries(queries, problems=failed)
    for problem in failed:
        click.echo(f"error: {problem}", err=True)
    lines = len(read) + len(failed)
    count = processes or default_processes()
    with _run_output(output) as out:
        runs = trec.run_in_processes(
            index_dir_of(index_dir),
            read,
            count,
            hits=hits,
            tag=tag,
            mode=mode,  # type: ignore[arg-type]  # click.Choice checked it
            loose=loose,
        )
        for query_run in _query_progress(runs, len(read)):
            if query_run.error is not None:
                failed.append(query_run.error)
                click.echo(f"error: {query_run.error}", err=True)
            out.writelines(line + "\n" for line in query_run.lines)
    click.echo(_batch_summary(lines, failed), err=True)
    if len(failed) == lines:
        sys.exit(1)


def _batch_summary(lines: int, failed: list[str]) -> str:
    """One line: how many queries were searched, and where the others are."""
    searched = f"searched {lines - len(failed):,} of {lines:,} queries"
    if not failed:
        return searched
    where = ", ".join(problem.split(": ", 1)[0] for problem in failed[:5])
    more = ", ..." if len(failed) > 5 else ""
    return f"{searched}; {len(failed):,} failed ({where}{more})"


def _query_progress(runs: Iterator[trec.QueryRun], total: int) -> Iterator[trec.QueryRun]:
    """Each query's run lines, counted by a progress bar on a terminal as they come."""
    if not sys.stderr.isatty():
        yield from runs
        return
    from tqdm import tqdm

    with tqdm(runs, total=total, unit=" queries", file=sys.stderr, leave=False) as bar:
        yield from bar


@contextlib.contextmanager
def _run_output(path: Path | None) -> Iterator[TextIO]:
    if path is None:
        yield sys.stdout
        return
    try:
        stream = path.open("w", encoding="utf-8")
    except OSError as exc:
        raise PubsearchCLIError(f"{path}: {exc.strerror or exc}") from None
    try:
        with stream:
            yield stream
    except BaseException:
        path.unlink(missing_ok=True)  # no half-written run left behind
        raise
