"""The ``pubsearch`` command line: parse, call the library, format. No search logic here."""

from __future__ import annotations

import contextlib
import difflib
import functools
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import click

from pubsearch import speedups, trec
from pubsearch.config import (
    ENV_INDEX,
    LOCK_TIMEOUT_SECONDS,
    default_processes,
    resolve_index_dir,
    speedups_disabled,
)
from pubsearch.errors import (
    IndexCorruptError,
    NothingToIndexError,
    ParameterError,
    PubsearchError,
    ReadError,
    UsageError,
)
from pubsearch.readers import FORMAT_NAMES
from pubsearch.request import DEFAULT_FACET_SIZE, SORT_ORDERS, SearchRequest, parse_year

# The rest is imported by the commands that need it: `pubsearch --help` and `--version`
# load neither Whoosh nor numpy nor Flask, and `query` not the index writer.
if TYPE_CHECKING:
    from flask import Flask

    from pubsearch.broadening import BroaderSearch
    from pubsearch.indexing import IndexSummary
    from pubsearch.readers import ReadReport
    from pubsearch.records import Record
    from pubsearch.results import Hit, SearchResults

F = TypeVar("F", bound=Callable[..., Any])


class PubsearchCLIError(click.ClickException):
    """One line on stderr; exit status 1."""


class PubsearchUsageError(click.ClickException):
    """One line on stderr (no usage text); exit status 2."""

    exit_code = 2


def reports_errors(func: F) -> F:
    """Turn library errors into one-line messages with the right exit status."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UsageError as exc:
            raise PubsearchUsageError(str(exc)) from None
        except PubsearchError as exc:
            raise PubsearchCLIError(str(exc)) from None

    return wrapper  # type: ignore[return-value]


def index_option(func: F) -> F:
    return click.option(
        "--index",
        "index_dir",
        type=click.Path(file_okay=False, path_type=Path),
        help=f"Index directory. Default: ${ENV_INDEX}, else ./index.",
    )(func)


def _index_dir(option: Path | None) -> Path:
    return resolve_index_dir(option, os.environ)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    package_name="pubsearch", message=f"%(prog)s, version %(version)s ({speedups.note()})"
)
def main() -> None:
    """Search scientific publication records: full text, fields and facets.

    \b
    Example:
        pubsearch index seeds/
        pubsearch query "batch size" --facets
    """


# -- index ---------------------------------------------------------------------------------


@main.command("index")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, allow_dash=True, path_type=Path))
@index_option
@click.option(
    "--update",
    is_flag=True,
    help="Add or replace records (by id, arXiv id, DOI or title+year) instead of rebuilding.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", *FORMAT_NAMES]),
    default="auto",
    show_default=True,
    help="Source format; 'auto' detects it from each file's content.",
)
@click.option(
    "--wait",
    default=LOCK_TIMEOUT_SECONDS,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds to wait for another indexer writing the same index.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes writing the index in a full build. Default: one per CPU (at most 4).",
)
@reports_errors
def index_command(
    paths: tuple[Path, ...],
    index_dir: Path | None,
    update: bool,
    fmt: str,
    wait: float,
    workers: int | None,
) -> None:
    """Index publication records from files or directories (default: seeds/).

    Builds into a new directory and swaps it in when complete, so the previous index keeps
    answering if anything goes wrong. Gzipped files are read transparently; '-' reads stdin.

    \b
    Example:
        pubsearch index seeds/
        pubsearch index --update new-records.jsonl.gz
    """
    from pubsearch.indexing import build_index, update_index
    from pubsearch.progress import progress
    from pubsearch.readers import ReadReport, read_paths

    target = _index_dir(index_dir)
    sources: list[Path] = list(paths) or [Path("seeds")]
    report = ReadReport()
    failed: list[ReadError] = []

    def file_failed(error: ReadError) -> None:
        failed.append(error)
        click.echo(f"error: {error}", err=True)

    started = time.monotonic()
    records = read_paths(sources, report, fmt=fmt, on_file_error=file_failed)
    with progress(records, report, sources) as counted:
        if update:
            summary = update_index(target, _require_records(counted, report), lock_timeout=wait)
        else:
            summary = build_index(
                target, _require_records(counted, report), lock_timeout=wait, workers=workers
            )
    for problem in report.problems:
        click.echo(f"warning: {problem}", err=True)
    if summary.counts_dropped:
        click.echo(
            f"warning: {summary.counts_dropped:,} citation counts not kept: {target} was built "
            "by an older pubsearch; rebuild it (without --update) to sort by citations",
            err=True,
        )
    click.echo(_summary_line(summary, report, failed, target, time.monotonic() - started))
    if summary.indexed >= SLOW_BUILD_NOTE_FROM and (note := _plain_python_note()) is not None:
        click.echo(note, err=True)
    if failed:
        sys.exit(1)


# A build of at least this many records without the C speedups says how to get them.
SLOW_BUILD_NOTE_FROM = 10_000


def _plain_python_note() -> str | None:
    """Why this build ran in plain Python, when the C module could not be built (None when
    it is there, or PUBSEARCH_NO_SPEEDUPS turned it off on purpose)."""
    if speedups.compiled is not None or speedups_disabled(os.environ):
        return None
    return (
        "note: indexed in plain Python, about half as fast: pubsearch._speedups was not "
        "built (it needs a C compiler and Python's headers; Debian: apt-get install gcc "
        "python3-dev, then reinstall pubsearch)"
    )


def _require_records(records: Iterable[Record], report: ReadReport) -> Iterator[Record]:
    """Pass records through; refuse to replace an index with nothing."""
    seen = False
    for record in records:
        seen = True
        yield record
    if not seen:
        raise NothingToIndexError(
            f"no records read from {report.files} readable file(s); the index was left unchanged"
        )


def _summary_line(
    summary: IndexSummary, report: ReadReport, failed: list[ReadError], target: Path, secs: float
) -> str:
    skipped = len(report.problems)
    where = ""
    if skipped:
        shown = ", ".join(p.where for p in report.problems[:5])
        where = f" ({shown}{', ...' if skipped > 5 else ''})"
    parts = [
        f"{'updated' if summary.replaced or summary.total != summary.indexed else 'indexed'} "
        f"{summary.indexed:,} records",
        f"{summary.duplicates_merged:,} duplicates merged",
    ]
    if summary.replaced:
        parts.append(f"{summary.replaced:,} replaced")
    parts.append(f"{skipped:,} blocks skipped{where}")
    if failed:
        parts.append(f"{len(failed):,} files unreadable")
    parts.append(f"{summary.total:,} in {target} ({secs:.1f} s)")
    return "; ".join(parts)


# -- query ---------------------------------------------------------------------------------


# Unknown options are let through so that "-lstm" (exclude a word) is query text; a
# mistyped long option ("--limt") is still refused (see _query_text).
@main.command("query", context_settings={"ignore_unknown_options": True})
@click.argument("text", nargs=-1)
@click.option("--author", "authors", multiple=True, help="Only this author (repeat for OR).")
@click.option(
    "--subject",
    "subjects",
    multiple=True,
    help="Only this subject: an arXiv code (cs.LG), a keyword or a topic.",
)
@click.option("--year", help="A year (2021) or a range (2019..2021, 2019.., ..2021).")
@click.option(
    "--sort",
    type=click.Choice(SORT_ORDERS),
    default="relevance",
    show_default=True,
    help="cited: most cited first (an index with citation counts: OpenAlex, Crossref).",
)
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
@reports_errors
def query_command(
    text: tuple[str, ...],
    authors: tuple[str, ...],
    subjects: tuple[str, ...],
    year: str | None,
    sort: str,
    limit: int,
    page: int,
    facets: bool,
    correct: bool,
    facet_size: int,
    fmt: str,
    index_dir: Path | None,
) -> None:
    """Search the index. TEXT uses the query syntax in README.md; plain words just work,
    quoted or not (pubsearch query batch size -lstm).

    \b
    Example:
        pubsearch query "batch size" --facets
        pubsearch query 'title:"deep learning" AND year:2019..2021' --format json
        pubsearch query --author "Yang You" --subject cs.LG --sort newest
        pubsearch query "large batch" --limit 100 --format bibtex > refs.bib
        pubsearch query "protein design" --sort cited --format ris > refs.ris
    """
    from pubsearch import export
    from pubsearch.broadening import nearest_broader
    from pubsearch.searching import SearchService

    request = SearchRequest(
        q=_query_text(text),
        authors=authors,
        subjects=subjects,
        year=parse_year(year, "--year") if year is not None else None,
        sort=sort,  # type: ignore[arg-type]  # click.Choice checked it
        page=page,
        page_size=limit,
        facets=facets,
        facet_size=facet_size,
        correct=correct,
    )
    service = SearchService(_index_dir(index_dir))
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
        citations = _citation_export(fmt, results.hits, service.record)
        broader = None
        if fmt == "text" and results.total == 0:
            broader = nearest_broader(service.count, request)
    finally:
        service.close()
    if citations is not None:
        click.echo(citations, nl=False)
    elif fmt == "json":
        click.echo(export.to_json(export.results_to_dict(results)))
    elif fmt == "jsonl":
        click.echo(export.hits_to_jsonl(results.hits), nl=False)
    elif fmt == "csv":
        click.echo(export.hits_to_csv(results.hits), nl=False)
    else:
        _print_results(results, broader)


def _citation_export(
    fmt: str, hits: tuple[Hit, ...], record: Callable[[str], Record]
) -> str | None:
    """The hits as BibTeX, RIS or CSL JSON (None for the other formats)."""
    from pubsearch import export

    writers = {
        "bibtex": export.hits_to_bibtex,
        "ris": export.hits_to_ris,
        "csljson": export.hits_to_csljson,
    }
    return writers[fmt](hits, record) if fmt in writers else None


def _query_text(parts: tuple[str, ...]) -> str:
    """The query text of the command's arguments, joined by spaces (``pubsearch query
    batch size -lstm``); an argument like ``--limt`` is a mistyped option, not text."""
    for part in parts:
        if part.startswith("--") and len(part) > 2:
            name = part.partition("=")[0]
            command = click.get_current_context().command
            known = [opt for param in command.params for opt in getattr(param, "opts", ())]
            close = difflib.get_close_matches(name, [o for o in known if o.startswith("--")])
            raise click.NoSuchOption(name, possibilities=close)
    return " ".join(parts)


def _as_command(broader: BroaderSearch) -> str:
    """The query command that runs ``broader``'s request."""
    req = broader.request
    words = ["pubsearch", "query"] + ([req.q] if req.q else [])
    words += [arg for a in req.authors for arg in ("--author", a)]
    words += [arg for s in req.subjects for arg in ("--subject", s)]
    if req.year is not None:
        words += ["--year", str(req.year)]
    return shlex.join(words)


def _highlighted(fragment: str) -> str:
    """Terminal form of an HTML snippet: matches in bold (plain when piped)."""
    from pubsearch.highlighting import html_to_plain

    out = []
    for i, part in enumerate(fragment.split("<mark>")):
        if i == 0:
            out.append(html_to_plain(part))
            continue
        matched, _, rest = part.partition("</mark>")
        out.append(click.style(html_to_plain(matched), bold=True) + html_to_plain(rest))
    return "".join(out)


def _print_hit(hit: Hit) -> None:
    title = _highlighted(hit.title_html)
    if hit.untitled:
        title = click.style("[untitled] ", dim=True) + title
    click.echo(f"{hit.rank:>3}. " + title)
    meta = [hit.date or str(hit.year or "n.d."), ", ".join(hit.authors) or "unknown authors"]
    meta.append(("; " if any(" " in x for x in hit.subjects) else " ").join(hit.subjects))
    if hit.cited_by is not None:
        meta.append(f"cited by {hit.cited_by:,}")
    meta.append(hit.id)
    click.echo("     " + click.style(" \u00b7 ".join(m for m in meta if m), dim=True))
    if hit.snippet:
        click.echo("     " + _highlighted(hit.snippet))
    click.echo()


def _print_results(results: SearchResults, broader: BroaderSearch | None = None) -> None:
    req = results.request
    for notice in results.notices:
        click.echo(click.style(f"Note: {notice}", dim=True))
    if results.corrected_from is not None:
        click.echo(
            f"Showing results for {req.q!r}: nothing matched {results.corrected_from!r} "
            "(--no-correct searches it as typed)."
        )
    if results.relaxed_note:
        click.echo(results.relaxed_note)
    if results.suggestion:
        click.echo(f"Did you mean: {results.suggestion}")
    if results.total == 0:
        click.echo(f"No results for {req.q!r}." if req.q else "No results.")
        if broader is not None:
            click.echo(f"Broader: {broader.change} finds {broader.total:,}: {_as_command(broader)}")
    else:
        first = results.hits[0].rank if results.hits else 0
        last = results.hits[-1].rank if results.hits else 0
        shown = f"{first}-{last} of " if results.hits else "page beyond the last; "
        click.echo(
            f"{shown}{results.total:,} results"
            + (f" for {req.q!r}" if req.q else "")
            + f" (page {req.page} of {results.pages}, {results.took_ms:.0f} ms)\n"
        )
        for hit in results.hits:
            _print_hit(hit)
    if results.facets:
        click.echo(click.style("Facets", bold=True))
        for name, values in results.facets.items():
            listed = ", ".join(f"{'*' if v.selected else ''}{v.value} ({v.count})" for v in values)
            click.echo(f"  {name}: {listed or '-'}")


# -- batch ---------------------------------------------------------------------------------


@main.command("batch")
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
@reports_errors
def batch_command(
    queries: Path,
    index_dir: Path | None,
    hits: int,
    output: Path | None,
    tag: str,
    processes: int | None,
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
        runs = trec.run_in_processes(_index_dir(index_dir), read, count, hits=hits, tag=tag)
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


# -- show and stats ------------------------------------------------------------------------


@main.command("show")
@click.argument("record_id")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@index_option
@reports_errors
def show_command(record_id: str, fmt: str, index_dir: Path | None) -> None:
    """Print one whole record by its id (as shown in query results)."""
    from pubsearch import export
    from pubsearch.searching import SearchService

    service = SearchService(_index_dir(index_dir))
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
        ("authors", "; ".join(record.authors)),
        # Codes a space apart (cs.LG stat.ML); keywords and topics hold spaces of their own.
        (
            "subjects",
            ("; " if any(" " in x for x in record.subjects) else " ").join(record.subjects),
        ),
        ("source", record.source),
        ("cited by", "" if record.cited_by is None else f"{record.cited_by:,}"),
        ("url", record.url or ""),
        ("doi", record.doi or ""),
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
    from pubsearch import export
    from pubsearch.searching import SearchService

    target = _index_dir(index_dir)
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
    "exposes the page to your network (there is no login: put a proxy in front for that).",
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
@reports_errors
def serve_command(
    index_dir: Path | None, host: str, port: int, threads: int, processes: int | None
) -> None:
    """Serve the search page and its JSON API (waitress; debug is never on).

    A re-index (pubsearch index) shows up without a restart.

    \b
    Example:
        pubsearch serve                      # then open http://127.0.0.1:5000/
        pubsearch serve --index /data/ix --port 8080
    """
    from pubsearch import storage
    from pubsearch.web import create_app, serving, warm_up

    target = _index_dir(index_dir)
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
        app = create_app(target)
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
