"""What every ``pubsearch`` command shares: its options for the index and the mode, and
library errors turned into one-line messages with the right exit status."""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from pubsearch.core.config import ENV_INDEX, resolve_index_dir
from pubsearch.core.errors import PubsearchError, UsageError
from pubsearch.search.request import MODES

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


def mode_option(func: F) -> F:
    return click.option(
        "--mode",
        type=click.Choice(MODES),
        default=None,
        help="hybrid: by words and meaning; lexical: by words; semantic: by meaning. "
        "[default: hybrid where the index has vectors, else lexical]",
    )(func)


def model_option(func: F) -> F:
    return click.option(
        "--model",
        "model_dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="A sentence model's folder in the sentence-transformers layout (a BERT-family "
        "model such as bge-small-en-v1.5 or e5-small-v2) to make and compare vectors with. "
        "Default: $PUBSEARCH_MODEL, else the bundled all-MiniLM-L6-v2.",
    )(func)


def index_dir_of(option: Path | None) -> Path:
    return resolve_index_dir(option, os.environ)


def filter_options(func: F) -> F:
    """--author, --subject and --year: the filters of a search (query, follow add)."""
    options = [
        click.option(
            "--author",
            "authors",
            multiple=True,
            help="Only this author, by the name rule (Y. You: Yang You too); in double quotes "
            "('\"Y. You\"'), only that name as recorded and its spellings. Repeat for OR.",
        ),
        click.option(
            "--subject",
            "subjects",
            multiple=True,
            help="Only this subject: an arXiv code (cs.LG), an archive (astro-ph, astro-ph.*), "
            'arXiv\'s name ("Machine Learning": cs.LG and stat.ML), a keyword or a topic. '
            "Repeat for OR.",
        ),
        click.option("--year", help="A year (2021) or a range (2019..2021, 2019.., ..2021)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def query_text(parts: tuple[str, ...]) -> str:
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
