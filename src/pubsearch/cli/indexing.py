"""The ``pubsearch index`` and ``pubsearch embed`` commands: read records, build or update
the index, give its records vectors; with progress on a terminal and one summary line."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pubsearch.cli.options import F, index_dir_of, index_option, model_option, reports_errors
from pubsearch.core import speedups
from pubsearch.core.config import LOCK_TIMEOUT_SECONDS, speedups_disabled, vectors_disabled
from pubsearch.core.errors import NothingToIndexError, ReadError
from pubsearch.ingest.readers import FORMAT_NAMES

if TYPE_CHECKING:
    from pubsearch.index.embedding import Embedder

if TYPE_CHECKING:
    from pubsearch.index.build import IndexSummary
    from pubsearch.ingest.readers import ReadReport
    from pubsearch.ingest.records import Record


# -- index ---------------------------------------------------------------------------------


def wait_option(text: str) -> Callable[[F], F]:
    def decorate(func: F) -> F:
        option = click.option(
            "--wait",
            default=LOCK_TIMEOUT_SECONDS,
            show_default=True,
            type=click.FloatRange(min=0),
            help=text,
        )
        return option(func)

    return decorate


def max_tokens_option(func: F) -> F:
    option = click.option(
        "--max-tokens",
        type=click.IntRange(min=16, max=256),
        default=None,
        help="Embed each record's first N word pieces only (fewer: faster vectors, at some "
        "cost in ranking: docs/performance.md). Default: the limit the index's vectors were "
        "made with, else 192 for the bundled model (the model's own limit is 256), or a "
        "--model's own limit.",
    )
    return option(func)


@click.command("index")
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
@wait_option("Seconds to wait for another indexer writing the same index.")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes writing the index in a full build. Default: one per CPU (at most 4).",
)
@click.option(
    "--no-vectors",
    is_flag=True,
    help="Do not give records sentence vectors (hybrid and semantic search need them; "
    "'pubsearch embed' adds them later). Also set by PUBSEARCH_NO_VECTORS=1.",
)
@max_tokens_option
@model_option
@reports_errors
def index_command(
    paths: tuple[Path, ...],
    index_dir: Path | None,
    update: bool,
    fmt: str,
    wait: float,
    workers: int | None,
    no_vectors: bool,
    max_tokens: int | None,
    model_dir: Path | None,
) -> None:
    """Index publication records from files or directories (default: seeds/).

    Builds into a new directory and swaps it in when complete, so the previous index keeps
    answering if anything goes wrong. Gzipped files are read transparently; '-' reads stdin.

    \b
    Example:
        pubsearch index seeds/
        pubsearch index --update new-records.jsonl.gz
        pubsearch index --no-vectors records.jsonl.gz

    Where the semantic part is installed (`make run` does; see docs/install.md), each record
    then gets a sentence vector for hybrid and semantic search: the index answers by words
    from the moment it is built, and by meaning once every vector is made. Ctrl-C while
    vectors are made keeps the index and what was made; 'pubsearch embed' goes on.
    """
    from pubsearch.cli.progress import progress
    from pubsearch.index.build import build_index, update_index
    from pubsearch.ingest.readers import ReadReport, read_paths

    target = index_dir_of(index_dir)
    sources: list[Path] = list(paths) or [Path("seeds")]
    report = ReadReport()
    failed: list[ReadError] = []

    def file_failed(error: ReadError) -> None:
        failed.append(error)
        click.echo(f"error: {error}", err=True)

    started = time.monotonic()
    records = read_paths(sources, report, fmt=fmt, on_file_error=file_failed)
    # An update makes vectors only for an index that has them (the model loads in a second
    # or two: not for nothing).
    no_vectors = no_vectors or vectors_disabled(os.environ) or (update and not _has_vectors(target))
    embedder = None if no_vectors else _embedder_if_installed(target, max_tokens, update, model_dir)
    with progress(records, report, sources) as counted:
        if update:
            summary = update_index(
                target, _require_records(counted, report), lock_timeout=wait, embedder=embedder
            )
        else:
            summary = build_index(
                target, _require_records(counted, report), lock_timeout=wait, workers=workers
            )
    for problem in report.problems:
        click.echo(f"warning: {problem}", err=True)
    for warning in summary.warnings:
        click.echo(f"warning: {warning}", err=True)
    if summary.counts_dropped:
        click.echo(
            f"warning: {summary.counts_dropped:,} citation counts not kept: {target} was built "
            "by an older pubsearch; rebuild it (without --update) to sort by citations",
            err=True,
        )
    click.echo(_summary_line(summary, report, failed, target, time.monotonic() - started))
    if summary.indexed >= SLOW_BUILD_NOTE_FROM and (note := _plain_python_note()) is not None:
        click.echo(note, err=True)
    if embedder is not None and not update:
        _embed(target, embedder, wait)  # publishes a generation of its own
    from pubsearch.cli.library import prepare_recommendations

    prepare_recommendations(target)
    if failed:
        sys.exit(1)


def _has_vectors(index_dir: Path) -> bool:
    from pubsearch.index import storage
    from pubsearch.index.vectors import VECTORS_FILE

    live = storage.current_generation(index_dir)
    return live is not None and (live / VECTORS_FILE).is_file()


def _embedder_if_installed(
    target: Path, max_tokens: int | None, update: bool, model_dir: Path | None = None
) -> Embedder | None:
    """The sentence model, or None (with a note) when the semantic part is not installed."""
    from pubsearch.index import embedding

    if not embedding.available():
        click.echo(f"note: no vectors made: {embedding.unavailable_message()}", err=True)
        return None
    return _embedder_for(target, max_tokens, update, model_dir)


def _embedder_for(
    target: Path, max_tokens: int | None, update: bool = False, model_dir: Path | None = None
) -> Embedder:
    """The model (``--model``, else PUBSEARCH_MODEL's, else the bundled one) cutting texts
    where the index's vectors were cut (or at ``max_tokens``: an update keeps the vectors
    it has, so it cannot change that). An update refuses a model other than the one that
    made the index's vectors; embed makes them all again with it."""
    from pubsearch.core.errors import UsageError
    from pubsearch.index import embedding
    from pubsearch.index.models import model_base
    from pubsearch.index.vectors import index_model

    spec = embedding.sentence_model(model_dir)
    base = embedding.model_id_base(spec)
    model = index_model(target)
    if model is not None and model_base(model) != base:
        if update:
            raise UsageError(
                f"the vectors of {target} were made by {model_base(model)}, not by {base}: "
                "an update would mix them; make them all again with this model first: "
                f"pubsearch embed --index {target} --model {spec.folder}"
            )
        click.echo(
            f"vectors: {target}'s were made by {model_base(model)}; making them all again "
            f"with {base}",
            err=True,
        )
        model = None
    had = embedding.max_tokens_of(model) if model is not None else None
    if update and had is not None and max_tokens is not None and max_tokens != had:
        raise UsageError(
            f"--max-tokens {max_tokens}: the vectors of {target} were made of "
            f"{had} tokens a record; to change that, run: pubsearch embed --max-tokens "
            f"{max_tokens}"
        )
    chosen = max_tokens or had or embedding.record_tokens(spec)
    return embedding.Embedder(model=spec, max_tokens=chosen)


def _embed(target: Path, embedder: Embedder, wait: float) -> None:
    from pubsearch.index.vectors import embed_index

    with _VectorProgress() as progress:
        try:
            summary = embed_index(target, embedder, progress.update, lock_timeout=wait)
        except KeyboardInterrupt:
            progress.close()
            kept = (
                f"{progress.done:,} of {progress.todo:,} made and kept"
                if progress.todo
                else "none made yet"
            )
            click.echo(
                f"vectors: stopped; {kept} (the index answers by words meanwhile); to go "
                f"on: pubsearch embed --index {target}",
                err=True,
            )
            sys.exit(130)
    made = f"{summary.embedded:,} made, {summary.reused:,} kept"
    if summary.generation is None:
        click.echo(f"vectors: all {summary.total:,} records have one ({made})")
    else:
        click.echo(f"vectors: {summary.total:,} records have one ({made}; {summary.seconds:.1f} s)")


class _VectorProgress:
    """What making the vectors will take, said once the first (spread) chunk is made
    (vectors.SAMPLE_TEXTS), and a bar on a terminal: how many, per second, the time left."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._said = False
        self._started = 0.0
        self.done = 0
        self.todo = 0

    def update(self, done: int, todo: int) -> None:
        self.done, self.todo = done, todo
        if not todo:
            return
        if not done:
            from pubsearch.index.vectors import sampled_first

            self._started = time.monotonic()
            if not sampled_first(todo):  # too few to time first: said at once
                self._say(todo, "")
        elif not self._said:
            seconds = time.monotonic() - self._started
            rate = done / seconds if seconds > 0 else 0.0
            expected = ""
            if done < todo and rate > 0:
                left = _duration(seconds + (todo - done) / rate)
                expected = f", about {left} at {rate:,.0f} a second"
            self._say(todo, expected)
        if not sys.stderr.isatty():
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(
                total=todo, unit=" records", desc="vectors", file=sys.stderr, leave=False
            )
        self._bar.update(done - self._bar.n)

    def _say(self, todo: int, expected: str) -> None:
        self._said = True
        click.echo(
            f"vectors: making {todo:,}{expected} (the index already answers by words; "
            "Ctrl-C stops, and 'pubsearch embed' goes on from there)",
            err=True,
        )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> _VectorProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _duration(seconds: float) -> str:
    """``seconds`` as a person says it: 40 s, 8 min, 2 h 10 min."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


@click.command("embed")
@index_option
@wait_option("Seconds to wait for another indexer when the vectors are ready to publish.")
@max_tokens_option
@model_option
@reports_errors
def embed_command(
    index_dir: Path | None, wait: float, max_tokens: int | None, model_dir: Path | None
) -> None:
    """Give the index's records that lack one a sentence vector, for hybrid and semantic
    search (needs the semantic part: `make run` installs it; see docs/install.md).

    Runs beside a server, which goes on answering and switches to the new vectors when
    they are published. Resumable: after Ctrl-C or a kill, run it again and it goes on
    from the vectors already made. With another --max-tokens than the index's vectors
    were made with, every record is embedded again.

    \b
    Example:
        pubsearch index --no-vectors records.jsonl.gz
        pubsearch embed
        pubsearch embed --max-tokens 128
    """
    from pubsearch.core.errors import UsageError
    from pubsearch.index import embedding

    if not embedding.available():
        raise UsageError(embedding.unavailable_message())
    target = index_dir_of(index_dir)
    _embed(target, _embedder_for(target, max_tokens, model_dir=model_dir), wait)
    from pubsearch.cli.library import prepare_recommendations

    prepare_recommendations(target)


# A build of at least this many records without the C speedups says how to get them.
SLOW_BUILD_NOTE_FROM = 10_000


def _plain_python_note() -> str | None:
    """Why this build ran in plain Python, when the C module could not be built (None when
    it is there, or PUBSEARCH_NO_SPEEDUPS turned it off on purpose)."""
    if speedups.compiled is not None or speedups_disabled(os.environ):
        return None
    return (
        "note: indexed in plain Python, about half as fast: pubsearch.core._speedups was not "
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
