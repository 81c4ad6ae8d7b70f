"""The ``pubsearch`` command line: parse, call the library, format. No search logic here."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pubsearch import __version__
from pubsearch.cli.options import (
    filter_options,
    index_dir_of,
    index_option,
    mode_option,
    model_option,
    query_text,
    reports_errors,
)
from pubsearch.cli.output import citation_export, print_hit
from pubsearch.core.errors import IndexCorruptError, ParameterError
from pubsearch.search.request import (
    DEFAULT_FACET_SIZE,
    SORT_ORDERS,
    SearchRequest,
    parse_year,
)

# The rest is imported by the commands that need it: `pubsearch --help` and `--version`
# load neither Whoosh nor numpy nor Flask, and `query` not the index writer.
if TYPE_CHECKING:
    from flask import Flask

    from pubsearch.search.broadening import BroaderSearch
    from pubsearch.search.results import SearchResults


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``pubsearch --version``: the version (pubsearch.__version__, not read from the
    installed package's metadata, which takes a tenth of a second to import) and whether
    the C speedups are there (the C module is loaded only now)."""
    if not value or ctx.resilient_parsing:
        return
    from pubsearch.core import speedups

    click.echo(f"{ctx.find_root().info_name}, version {__version__} ({speedups.note()})")
    ctx.exit()


# Commands kept in modules of their own, imported only when run (or listed by --help): a
# query does not load the indexer's, harvester's, library's and batch run's code.
# The people of an author facet's name the text output lists (JSON: all).
PEOPLE_SHOWN = 5

LAZY_COMMANDS = {
    "author": "pubsearch.cli.people:author_command",
    "batch": "pubsearch.cli.batch:batch_command",
    "embed": "pubsearch.cli.indexing:embed_command",
    "follow": "pubsearch.cli.library:follow_command",
    "harvest": "pubsearch.cli.harvest:harvest_command",
    "index": "pubsearch.cli.indexing:index_command",
    "news": "pubsearch.cli.library:news_command",
    "recommend": "pubsearch.cli.library:recommend_command",
    "tag": "pubsearch.cli.library:tag_command",
}


class LazyGroup(click.Group):
    """A group whose commands of :data:`LAZY_COMMANDS` are imported when first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in LAZY_COMMANDS:
            return found
        import importlib

        module, name = LAZY_COMMANDS[cmd_name].split(":")
        command = getattr(importlib.import_module(module), name)
        assert isinstance(command, click.Command) and command.name == cmd_name
        self.add_command(command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and exit.",
)
def main() -> None:
    """Search scientific publication records: full text, fields and facets.

    \b
    Example:
        pubsearch index seeds/
        pubsearch query "batch size" --facets
    """


# -- query ---------------------------------------------------------------------------------


# Unknown options are let through so that "-lstm" (exclude a word) is query text; a
# mistyped long option ("--limt") is still refused (see options.query_text).
@main.command("query", context_settings={"ignore_unknown_options": True})
@click.argument("text", nargs=-1)
@filter_options
@click.option(
    "--person",
    help="Only this person's records (an id that 'pubsearch author NAME' lists), whatever "
    "name they are written with.",
)
@click.option(
    "--sort",
    type=click.Choice(SORT_ORDERS),
    default="relevance",
    show_default=True,
    help="cited: most cited first (an index with citation counts: OpenAlex, Crossref).",
)
@mode_option
@click.option(
    "--limit",
    "--page-size",
    "limit",
    default=10,
    show_default=True,
    help="Results per page (1 to 100).",
)
@click.option("--page", default=1, show_default=True, help="Page number, from 1.")
@click.option("--facets", is_flag=True, help="Count authors, years and subjects of all matches.")
@click.option(
    "--correct/--no-correct",
    default=True,
    show_default=True,
    help="When nothing matches, search the spelling correction instead.",
)
@click.option(
    "--loose",
    is_flag=True,
    help="Also count and list the records that share only some of a relaxed query's words "
    "(a pasted text: by default only those that match it well).",
)
@click.option(
    "--facet-size",
    default=DEFAULT_FACET_SIZE,
    show_default=True,
    help="Most values listed per facet.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "jsonl", "csv", "bibtex", "ris", "csljson"]),
    default="text",
    show_default=True,
    help="Output format. json is the same structure as the web API's /api/search; "
    "bibtex, ris and csljson go into a reference manager.",
)
@index_option
@model_option
@reports_errors
def query_command(
    text: tuple[str, ...],
    authors: tuple[str, ...],
    person: str | None,
    subjects: tuple[str, ...],
    year: str | None,
    sort: str,
    mode: str | None,
    limit: int,
    page: int,
    facets: bool,
    correct: bool,
    loose: bool,
    facet_size: int,
    fmt: str,
    index_dir: Path | None,
    model_dir: Path | None,
) -> None:
    """Search the index. TEXT uses the query syntax in README.md; plain words just work,
    quoted or not (pubsearch query batch size -lstm).

    \b
    Example:
        pubsearch query "batch size" --facets
        pubsearch query 'title:"deep learning" AND year:2019..2021' --format json
        pubsearch query --author "Yang You" --subject cs.LG --sort newest
        pubsearch query galaxies --subject astro-ph --subject "Machine Learning"
        pubsearch query "large batch" --limit 100 --format bibtex > refs.bib
        pubsearch query "protein design" --sort cited --format ris > refs.ris
    """
    _one_blas_thread()
    from pubsearch.search.service import SearchService

    request = SearchRequest(
        q=query_text(text),
        authors=authors,
        subjects=subjects,
        year=parse_year(year, "--year") if year is not None else None,
        sort=sort,  # type: ignore[arg-type]  # click.Choice checked it
        mode=mode,  # type: ignore[arg-type]  # click.Choice checked it
        page=page,
        page_size=limit,
        facets=facets,
        facet_size=facet_size,
        correct=correct,
        loose=loose,
        person=person,
    )
    service = SearchService(index_dir_of(index_dir), model=model_dir)
    try:
        results = service.search(request)
        if request.page > results.pages:
            found = (
                f"page {results.pages:,} of {results.total:,} "
                f"{'result' if results.total == 1 else 'results'}"
                if results.total
                else "there are no results"
            )
            raise ParameterError("--page", f"{request.page} is past the last page ({found})")
        citations = citation_export(fmt, results.hits, service.record)
        broader = None
        if fmt == "text" and results.total == 0:
            from pubsearch.search.broadening import nearest_broader

            broader = nearest_broader(service.count, request)
    finally:
        service.close()
    if citations is not None:
        click.echo(citations, nl=False)
    elif fmt == "text":
        _print_results(results, broader)
    else:  # the export formats' module (and its BibTeX and RIS libraries) only for them
        from pubsearch.search import export

        if fmt == "json":
            click.echo(export.to_json(export.results_to_dict(results)))
        elif fmt == "jsonl":
            click.echo(export.hits_to_jsonl(results.hits), nl=False)
        else:
            click.echo(export.hits_to_csv(results.hits), nl=False)


def _one_blas_thread() -> None:
    """One OpenBLAS thread for a command that searches once and exits, when numpy is not
    loaded yet: OpenBLAS starts a thread per CPU when numpy is imported and stops them at
    exit (about 50 ms of a one-shot query on 2 CPUs), and a search does no BLAS work worth
    them (the similarities by meaning are computed in C). OPENBLAS_NUM_THREADS, when set,
    is left as it is."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _as_command(broader: BroaderSearch) -> str:
    """The query command that runs ``broader``'s request."""
    req = broader.request
    words = ["pubsearch", "query"] + ([req.q] if req.q else [])
    words += [arg for a in req.authors for arg in ("--author", a)]
    words += [arg for s in req.subjects for arg in ("--subject", s)]
    if req.year is not None:
        words += ["--year", str(req.year)]
    return shlex.join(words)


def _print_results(results: SearchResults, broader: BroaderSearch | None = None) -> None:
    from pubsearch.search.results import shortened

    req = results.request
    for notice in results.notices:
        click.echo(click.style(f"Note: {notice}", dim=True))
    label = results.query_shown  # a pasted text by its first words
    if results.corrected_from is not None:
        click.echo(
            f"Showing results for {label!r}: nothing matched {shortened(results.corrected_from)!r}"
            " (--no-correct searches it as typed)."
        )
    if results.relaxed_note:
        click.echo(results.relaxed_note)
    if results.loose_note:
        well = results.total - (results.loose_total or 0)
        hint = (
            f"without --loose, the {well:,} that match it well"
            if req.loose
            else "--loose shows them"
        )
        click.echo(f"{results.loose_note.removesuffix('.')}: {hint}.")
    if results.suggestion:
        click.echo(f"Did you mean: {results.suggestion}")
    if results.total == 0:
        click.echo(f"No results for {label!r}." if req.q else "No results.")
        if broader is not None:
            click.echo(f"Broader: {broader.change} finds {broader.total:,}: {_as_command(broader)}")
    else:
        first = results.hits[0].rank if results.hits else 0
        last = results.hits[-1].rank if results.hits else 0
        shown = f"{first}-{last} of " if results.hits else "page beyond the last; "
        how = ""
        if results.mode == "hybrid":
            alone = results.total - (results.word_total or 0)
            how = f", {results.word_total:,} by their words, {alone:,} by meaning alone"
        elif results.mode == "semantic":
            how = ", by meaning"
        click.echo(
            f"{shown}{results.total:,} results"
            + (f" for {label!r}" if req.q else "")
            + f" (page {req.page} of {results.pages}{how}, {results.took_ms:.0f} ms)\n"
        )
        for hit in results.hits:
            print_hit(hit)
    if results.facets:
        click.echo(click.style("Facets", bold=True))
        for name, values in results.facets.items():
            listed = ", ".join(f"{'*' if v.selected else ''}{v.value} ({v.count})" for v in values)
            click.echo(f"  {name}: {listed or '-'}")
            for v in values:  # a name of several people: each, with its id for --person
                if v.people:
                    people = ", ".join(
                        f"{'*' if p.selected else ''}{p.hint} ({p.count}) {p.id}"
                        for p in v.people[:PEOPLE_SHOWN]
                    )
                    more = len(v.people) - PEOPLE_SHOWN
                    tail = f", and {more} more (pubsearch author {v.value!r})" if more > 0 else ""
                    click.echo(f"    {v.value}: {people}{tail}")


# -- show and stats ------------------------------------------------------------------------


@main.command("show")
@click.argument("record_id")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@index_option
@reports_errors
def show_command(record_id: str, fmt: str, index_dir: Path | None) -> None:
    """Print one whole record by its id (as shown in query results)."""
    from pubsearch.search import export
    from pubsearch.search.service import SearchService

    service = SearchService(index_dir_of(index_dir))
    try:
        record = service.record(record_id)
    finally:
        service.close()
    if fmt == "json":
        click.echo(export.to_json(export.record_to_dict(record)))
        return
    if record.title:
        click.echo(click.style(record.title, bold=True))
    else:
        click.echo(click.style("[untitled] ", dim=True) + record.display_title)
    rows = [
        ("id", record.id),
        ("year", str(record.year or "")),
        ("date", record.date or ""),
        ("listed", record.listed or ""),
        ("authors", "; ".join(record.authors)),
        # Codes a space apart (cs.LG stat.ML); keywords and topics hold spaces of their own.
        (
            "subjects",
            ("; " if any(" " in x for x in record.subjects) else " ").join(record.subjects),
        ),
        ("source", record.source),
        ("cited by", "" if record.cited_by is None else f"{record.cited_by:,}"),
        ("url", record.url or ""),
        ("arxiv", ", ".join(record.arxiv_ids)),
        ("doi", ", ".join(record.dois)),
        ("read from", ", ".join(record.origins)),
    ]
    for label, value in rows:
        if value:
            click.echo(f"{label + ':':<11}{value}")
    click.echo()
    click.echo(record.abstract or "(no abstract)")


@main.command("stats")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("--top", default=10, show_default=True, help="How many authors and subjects.")
@index_option
@reports_errors
def stats_command(fmt: str, top: int, index_dir: Path | None) -> None:
    """Record count and overviews of authors, years and subjects."""
    from pubsearch.search import export
    from pubsearch.search.service import SearchService

    target = index_dir_of(index_dir)
    service = SearchService(target)
    try:
        stats = service.stats(top=max(1, top))
    finally:
        service.close()
    if fmt == "json":
        click.echo(export.to_json(export.stats_to_dict(stats)))
        return
    click.echo(f"index:     {target} ({stats.generation}, {stats.size_bytes / 1e6:.1f} MB)")
    click.echo(f"records:   {stats.records:,}")
    click.echo(f"authors:   {stats.authors:,} distinct")
    click.echo(f"subjects:  {stats.subjects:,} distinct")
    if stats.cited:
        click.echo(f"citations: {stats.cited:,} records with a count (--sort cited)")
    years = ", ".join(f"{y}: {c}" for y, c in stats.years.items())
    click.echo(f"years:     {years or '-'}")
    click.echo("top authors:  " + ", ".join(f"{v.value} ({v.count})" for v in stats.top_authors))
    click.echo("top subjects: " + ", ".join(f"{v.value} ({v.count})" for v in stats.top_subjects))


# -- serve ---------------------------------------------------------------------------------


@main.command("serve")
@index_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. The default lets only this machine in; --host 0.0.0.0 "
    "exposes the page to your network (there is no login: put a proxy in front for that); "
    "its library then takes changes only with $PUBSEARCH_WRITE_TOKEN set.",
)
@click.option(
    "--port",
    default=5000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on; 0 picks a free one.",
)
@click.option(
    "--threads",
    default=4,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Requests each server process serves at once (each thread keeps its own searcher).",
)
@click.option(
    "--processes",
    type=click.IntRange(1, 64),
    help="Server processes sharing the port. Python runs one thread at a time in a process, "
    "so more processes use more CPUs; each keeps its own searchers and facet tables, so "
    "memory grows with them. More than one needs fork (Linux, macOS). "
    "[default: 2, or 1 with one CPU]",
)
@model_option
@reports_errors
def serve_command(
    index_dir: Path | None,
    host: str,
    port: int,
    threads: int,
    processes: int | None,
    model_dir: Path | None,
) -> None:
    """Serve the search page and its JSON API (waitress; debug is never on).

    A re-index (pubsearch index) shows up without a restart.

    \b
    Example:
        pubsearch serve                      # then open http://127.0.0.1:5000/
        pubsearch serve --index /data/ix --port 8080
    """
    from pubsearch.index import storage
    from pubsearch.web import create_app, serving, warm_up

    target = index_dir_of(index_dir)
    if model_dir is not None:  # what the server processes' search services read
        from pubsearch.index.models import ENV_MODEL

        os.environ[ENV_MODEL] = str(model_dir)
    try:
        if storage.current_generation(target) is None:
            click.echo(
                f"warning: no index at {target} yet; the page answers 503 until one is built "
                f"(pubsearch index --index {target} PATH)",
                err=True,
            )
    except IndexCorruptError as exc:
        click.echo(f"warning: {exc}", err=True)
    count = processes or serving.default_processes()

    def announce(listening: list[tuple[str, int]]) -> None:
        for address, bound_port in listening:
            click.echo(f"Serving {target} on {_browser_url(address, bound_port)}")
        workers = f"{count} processes of {threads} threads" if count > 1 else f"{threads} threads"
        click.echo(f"{workers}. Press Ctrl-C to stop.")

    def make_app() -> Flask:  # in each server process
        app = create_app(target, {"BOUND_TO": host})
        warm_up(app)
        return app

    serving.serve(
        make_app,
        host=host,
        port=port,
        threads=threads,
        processes=count,
        announce=announce,
    )


def _browser_url(host: str, port: int) -> str:
    """The URL to open for a listening address (0.0.0.0 is reachable as 127.0.0.1 here)."""
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/"


# The index and embed commands (pubsearch.cli.indexing).
