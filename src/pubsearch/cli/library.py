"""The library's commands: ``follow`` (saved searches), ``news`` (what is new in them),
``tag`` (a personal library) and ``recommend``. Parse, call pubsearch.library, print."""

from __future__ import annotations

import calendar
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pubsearch.cli.options import (
    filter_options,
    index_dir_of,
    index_option,
    mode_option,
    query_text,
    reports_errors,
)
from pubsearch.cli.output import FORMATS, citation_export, print_hit
from pubsearch.core.config import (
    ENV_MAIL_FROM,
    ENV_PAGE_URL,
    ENV_SMTP_HOST,
    ENV_SMTP_PASSWORD,
    ENV_SMTP_PORT,
    ENV_SMTP_USER,
)
from pubsearch.core.errors import ParameterError, PubsearchError
from pubsearch.search.request import MAX_PAGE_SIZE, SearchRequest, parse_year

if TYPE_CHECKING:
    from pubsearch.library.follow import Library, TagNews
    from pubsearch.search.results import Hit

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Output format, as for query (bibtex, ris and csljson go into a reference manager).",
)


def parse_since(text: str | None, name: str = "--since") -> float | None:
    """``2026-11-01`` (UTC midnight) as seconds since the epoch; None for None."""
    if text is None:
        return None
    match = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", text.strip())
    if match is None:
        raise ParameterError(name, f"expected a date like 2026-11-01, got {text!r}")
    year, month, day = (int(part) for part in match.groups())
    try:
        moment = datetime(year, month, day, tzinfo=UTC)
    except ValueError as exc:
        raise ParameterError(name, f"{text!r} is not a date ({exc})") from None
    return float(calendar.timegm(moment.timetuple()))


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


@contextmanager
def _library(index_dir: Path | None) -> Iterator[Library]:
    from pubsearch.library.follow import Library
    from pubsearch.search.service import SearchService

    service = SearchService(index_dir_of(index_dir))
    try:
        yield Library(service)
    finally:
        service.close()


def prepare_recommendations(index_dir: Path) -> None:
    """After a build, an update or a harvest: when the library has tags (and scikit-learn
    is installed), make the new generation's word table now, so that the first
    recommendation list does not wait for it; said on stderr."""
    import time

    from pubsearch.library.store import LIBRARY_FILE

    if not (index_dir / LIBRARY_FILE).is_file() or _recommend_missing() is not None:
        return
    started = time.monotonic()
    with _library(index_dir) as library:
        made = library.prepare_recommendations()
    if made:
        took = time.monotonic() - started
        click.echo(
            f"recommendations: the word table of {made:,} records is ready ({took:.1f} s)",
            err=True,
        )


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _tag_news(library: Library, since: float | None, limit: int) -> list[TagNews]:
    """Each tag's recommendations for the digest (none when ``limit`` is 0 or there are no
    tags); without scikit-learn, a note on stderr and none."""
    if limit == 0 or not library.tags():
        return []
    missing = _recommend_missing()
    if missing is not None:
        click.echo(f"pubsearch: no recommendations in the digest: {missing}", err=True)
        return []
    return library.tag_news(since, page_size=limit)


def _recommend_missing() -> str | None:
    """Why recommendations cannot be made here (scikit-learn not installed), or None."""
    from pubsearch.library import recommend

    try:
        recommend.check_available()
    except PubsearchError as exc:
        return str(exc)
    return None


def echo_hits(
    fmt: str,
    hits: tuple[Hit, ...],
    record: Callable[[str], Any],
    data: Callable[[], Any],
    text: Callable[[], None],
) -> None:
    """``hits`` in ``fmt``: ``data()`` as JSON, the hits as lines, CSV or references, or
    ``text()`` for the terminal."""
    from pubsearch.search import export

    citations = citation_export(fmt, hits, record)
    if citations is not None:
        click.echo(citations, nl=False)
    elif fmt == "json":
        click.echo(export.to_json(data()))
    elif fmt == "jsonl":
        click.echo(export.hits_to_jsonl(hits), nl=False)
    elif fmt == "csv":
        click.echo(export.hits_to_csv(hits), nl=False)
    else:
        text()


# -- follow --------------------------------------------------------------------------------


@click.group("follow")
def follow_command() -> None:
    """Saved searches: pubsearch news prints what is new in them.

    \b
    Example:
        pubsearch follow add gnn "graph neural network" --subject cs.LG
        pubsearch follow list
        pubsearch news gnn
    """


@follow_command.command("add", context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.argument("text", nargs=-1)
@filter_options
@mode_option
@click.option("--loose", is_flag=True, help="As for query: records sharing some words too.")
@index_option
@reports_errors
def follow_add(
    name: str,
    text: tuple[str, ...],
    authors: tuple[str, ...],
    subjects: tuple[str, ...],
    year: str | None,
    mode: str | None,
    loose: bool,
    index_dir: Path | None,
) -> None:
    """Save a search as NAME: TEXT and the filters as for query. What it finds now counts
    as seen; pubsearch news NAME prints what comes after. A NAME saved already is replaced
    (what was seen stays seen)."""
    request = SearchRequest(
        q=query_text(text),
        authors=authors,
        subjects=subjects,
        year=parse_year(year, "--year") if year is not None else None,
        mode=mode,  # type: ignore[arg-type]  # click.Choice checked it
        loose=loose,
    )
    with _library(index_dir) as library:
        new = library.follow(name, request)
    click.echo(f"{'Following' if new else 'Replaced'} {name!r}.")


@follow_command.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@index_option
@reports_errors
def follow_list(fmt: str, index_dir: Path | None) -> None:
    """Every saved search, with its count of new records."""
    from pubsearch.library.feeds import describe
    from pubsearch.library.store import request_to_json
    from pubsearch.search import export

    with _library(index_dir) as library:
        followed = library.followed()
    if fmt == "json":
        import json

        rows = [
            {
                "name": f.saved.name,
                "request": json.loads(request_to_json(f.saved.request)),
                "new": f.new,
                "seen": _when(f.saved.seen),
            }
            for f in followed
        ]
        click.echo(export.to_json(rows))
        return
    if not followed:
        click.echo("No saved searches (pubsearch follow add NAME TEXT ...).")
    for f in followed:
        click.echo(f"{f.saved.name:<20} {f.new:>6,} new   {describe(f.saved.request)}")


@follow_command.command("remove")
@click.argument("name")
@index_option
@reports_errors
def follow_remove(name: str, index_dir: Path | None) -> None:
    """Forget the saved search NAME."""
    with _library(index_dir) as library:
        if not library.unfollow(name):
            raise ParameterError("NAME", f"no saved search is called {name!r} (follow list)")
    click.echo(f"Removed {name!r}.")


# -- news ----------------------------------------------------------------------------------


@click.command("news")
@click.argument("name", required=False)
@click.option(
    "--since",
    help="Records that appeared on or after this day (2026-11-01) instead of since last looked.",
)
@click.option(
    "--limit",
    default=MAX_PAGE_SIZE,
    show_default=True,
    type=click.IntRange(1, MAX_PAGE_SIZE),
    help="Most records printed per saved search (the count says how many more; all are seen).",
)
@format_option
@click.option(
    "--email",
    metavar="ADDRESS",
    help="Send them as one message to ADDRESS instead of printing them (marked seen once sent).",
)
@click.option(
    "--recommended",
    default=10,
    show_default=True,
    type=click.IntRange(0, MAX_PAGE_SIZE),
    help="With --email: each tag's most alike records among those new since its last "
    "digest (0: none).",
)
@click.option(
    "--smtp-host",
    envvar=ENV_SMTP_HOST,
    default="127.0.0.1",
    show_default=True,
    help=f"The SMTP server [env {ENV_SMTP_HOST}]; a login from ${ENV_SMTP_USER} and "
    f"${ENV_SMTP_PASSWORD} (the environment only).",
)
@click.option(
    "--smtp-port",
    envvar=ENV_SMTP_PORT,
    default=25,
    show_default=True,
    type=click.IntRange(1, 65535),
    help=f"[env {ENV_SMTP_PORT}]",
)
@click.option("--starttls", is_flag=True, help="Encrypt the connection with STARTTLS.")
@click.option(
    "--from",
    "sender",
    envvar=ENV_MAIL_FROM,
    default="pubsearch@localhost",
    show_default=True,
    help=f"The sender's address [env {ENV_MAIL_FROM}].",
)
@click.option(
    "--page-url",
    envvar=ENV_PAGE_URL,
    default="http://127.0.0.1:5000/",
    show_default=True,
    help=f"Where the search page is, for the message's links [env {ENV_PAGE_URL}].",
)
@index_option
@reports_errors
def news_command(
    name: str | None,
    since: str | None,
    limit: int,
    fmt: str,
    email: str | None,
    recommended: int,
    smtp_host: str,
    smtp_port: int,
    starttls: bool,
    sender: str,
    page_url: str,
    index_dir: Path | None,
) -> None:
    """Records that appeared since you last looked, newest first, for the saved search
    NAME (or each): then they count as seen. With --email, one message of them all, and
    (without NAME) each tag's recommendations among the records new since its last digest.

    \b
    Example:
        pubsearch news
        pubsearch news gnn --since 2026-11-01 --format bibtex > new.bib
        PUBSEARCH_SMTP_HOST=mail.example.org pubsearch news --email me@example.org
    """
    from pubsearch.library.feeds import describe
    from pubsearch.search import export

    start = parse_since(since)
    with _library(index_dir) as library:
        found = library.news(name, since=start, page_size=limit, mark=email is None)
        if email is not None:
            from pubsearch.library import digest

            smtp = digest.Smtp(
                smtp_host,
                smtp_port,
                starttls,
                os.environ.get(ENV_SMTP_USER) or None,
                os.environ.get(ENV_SMTP_PASSWORD) or None,
            )
            tagged = _tag_news(library, start, recommended) if name is None else []
            digest.send(digest.compose(found, email, sender, page_url, tagged), smtp)
            library.mark_seen(found)
            library.mark_tags_seen(tagged)
            total = sum(news.total for news in found)
            also = ""
            if tagged:
                shown = sum(len(news.found.hits) for news in tagged)
                also = f" and {shown:,} recommended for {_count(len(tagged), 'tag')}"
            click.echo(
                f"Sent {total:,} new records of {len(found):,} saved searches{also} to {email}."
            )
            return
        hits = tuple(hit for news in found for hit in news.hits)

        def data() -> Any:
            return [
                {
                    "name": news.name,
                    "total": news.total,
                    "since": _when(news.since) if news.since > 0 else None,
                    "hits": [export.hit_to_dict(hit) for hit in news.hits],
                }
                for news in found
            ]

        def text() -> None:
            if not found:
                click.echo("No saved searches (pubsearch follow add NAME TEXT ...).")
            for news in found:
                shown = f", {len(news.hits):,} shown" if len(news.hits) < news.total else ""
                click.echo(
                    click.style(f"{news.name}: {news.total:,} new{shown}", bold=True)
                    + click.style(f"   {describe(news.request)}", dim=True)
                )
                click.echo()
                for hit in news.hits:
                    print_hit(hit)

        echo_hits(fmt, hits, library.service.record, data, text)


# -- tag -----------------------------------------------------------------------------------


@click.group("tag")
def tag_command() -> None:
    """A personal library: records under tags (by id; any arXiv id or DOI of the record).

    \b
    Example:
        pubsearch tag add reading 2401.01234 10.1038/nature14539
        pubsearch tag list reading --format bibtex > reading.bib
        pubsearch recommend reading
    """


@tag_command.command("add")
@click.argument("tag")
@click.argument("ids", nargs=-1, required=True)
@index_option
@reports_errors
def tag_add(tag: str, ids: tuple[str, ...], index_dir: Path | None) -> None:
    """Tag the records of IDS with TAG (none if any id is unknown)."""
    with _library(index_dir) as library:
        added = library.tag(tag, ids)
    click.echo(f"Tagged {added:,} more {'record' if added == 1 else 'records'} {tag!r}.")


@tag_command.command("remove")
@click.argument("tag")
@click.argument("ids", nargs=-1, required=True)
@index_option
@reports_errors
def tag_remove(tag: str, ids: tuple[str, ...], index_dir: Path | None) -> None:
    """Take TAG off the records of IDS."""
    with _library(index_dir) as library:
        removed = library.untag(tag, ids)
    click.echo(f"Untagged {removed:,} {'record' if removed == 1 else 'records'} {tag!r}.")


@tag_command.command("list")
@click.argument("tag", required=False)
@click.option(
    "--limit", default=MAX_PAGE_SIZE, show_default=True, type=click.IntRange(1, MAX_PAGE_SIZE)
)
@click.option("--page", default=1, show_default=True, type=click.IntRange(1))
@format_option
@index_option
@reports_errors
def tag_list(tag: str | None, limit: int, page: int, fmt: str, index_dir: Path | None) -> None:
    """The tags and their counts; with TAG, its records, newest first."""
    from pubsearch.search import export

    with _library(index_dir) as library:
        if tag is None:
            tags = library.tags()
            if fmt == "json":
                click.echo(export.to_json([{"tag": t, "records": c} for t, c in tags]))
            elif not tags:
                click.echo("No tags (pubsearch tag add TAG ID...).")
            for name, count in tags if fmt != "json" else ():
                click.echo(f"{name:<20} {count:>6,}")
            return
        listed = library.tag_page(tag, page=page, page_size=limit)

        def data() -> Any:
            return {
                "tag": tag,
                "total": listed.total,
                "hits": [export.hit_to_dict(hit) for hit in listed.hits],
                "missing": [item.record for item in listed.missing],
            }

        def text() -> None:
            click.echo(click.style(f"{tag}: {listed.total:,} records", bold=True) + "\n")
            for hit in listed.hits:
                print_hit(hit)
            for item in listed.missing:
                click.echo(f"  (not in the index now: {item.record})")

        echo_hits(fmt, listed.hits, library.service.record, data, text)


# -- recommend -----------------------------------------------------------------------------


@click.command("recommend")
@click.argument("tag")
@click.option("--since", help="Only records that appeared on or after this day (2026-11-01).")
@click.option(
    "--limit",
    "--page-size",
    "limit",
    default=10,
    show_default=True,
    type=click.IntRange(1, MAX_PAGE_SIZE),
    help=f"Results per page (1 to {MAX_PAGE_SIZE}).",
)
@click.option("--page", default=1, show_default=True, type=click.IntRange(1), help="From 1.")
@format_option
@index_option
@reports_errors
def recommend_command(
    tag: str, since: str | None, limit: int, page: int, fmt: str, index_dir: Path | None
) -> None:
    """Records not tagged TAG, most like those that are first: by the words of titles and
    abstracts (tf-idf, Rocchio's classifier), with the sentence vectors where the index has
    them (see docs/following.md). The first list of an index makes its word table (about a minute
    for 100,000 records), kept for the next.

    \b
    Example:
        pubsearch recommend reading --since 2026-11-01
        pubsearch recommend reading --limit 50 --format bibtex > toread.bib
    """
    from pubsearch.search import export

    start = parse_since(since)
    with _library(index_dir) as library:
        found = library.recommend(tag, since=start, page=page, page_size=limit)

        def data() -> Any:
            return {
                "tag": tag,
                "total": found.total,
                "tagged": found.tagged,
                "meaning": found.meaning,
                "hits": [export.hit_to_dict(hit) for hit in found.hits],
            }

        def text() -> None:
            how = "words and meaning" if found.meaning else "words (the index has no vectors)"
            click.echo(
                f"Recommended for {tag!r} ({found.tagged:,} tagged), by {how}: "
                f"{found.total:,} records ranked, page {page}\n"
            )
            for hit in found.hits:
                print_hit(hit)

        echo_hits(fmt, found.hits, library.service.record, data, text)
