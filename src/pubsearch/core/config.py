"""Where the index lives (the ``--index`` option, else ``PUBSEARCH_INDEX``, else ``./index``),
and how many processes a command uses by default."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV_INDEX = "PUBSEARCH_INDEX"
DEFAULT_INDEX = "index"


def resolve_index_dir(option: str | os.PathLike[str] | None, env: Mapping[str, str]) -> Path:
    """The index directory for a command, from its option and the environment given."""
    if option:
        return Path(option)
    from_env = env.get(ENV_INDEX, "").strip()
    if from_env:
        return Path(from_env)
    return Path(DEFAULT_INDEX)


def cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def default_processes() -> int:
    """Processes for work that spreads over them (serving, batches): two where there are two
    CPUs or more, else one. Each process holds its own searchers, so more than two is left
    to the ``--processes`` option."""
    return 2 if cpus() >= 2 else 1


# How long `pubsearch index` waits for another indexer writing the same index (--wait).
LOCK_TIMEOUT_SECONDS = 10.0


# Set (to anything but "" or "0"), the C speedups are not used even where they were built.
ENV_NO_SPEEDUPS = "PUBSEARCH_NO_SPEEDUPS"


def speedups_disabled(environ: Mapping[str, str]) -> bool:
    """Whether ``PUBSEARCH_NO_SPEEDUPS`` asks for the plain Python."""
    return environ.get(ENV_NO_SPEEDUPS, "") not in ("", "0")


# Set (to anything but "" or "0"), `pubsearch index` makes no vectors, as with --no-vectors.
ENV_NO_VECTORS = "PUBSEARCH_NO_VECTORS"


def vectors_disabled(environ: Mapping[str, str]) -> bool:
    """Whether ``PUBSEARCH_NO_VECTORS`` asks for builds without vectors."""
    return environ.get(ENV_NO_VECTORS, "") not in ("", "0")


# The first wait, in seconds, before a harvest asks again after a timeout or a server error
# (doubled each time, up to HARVEST_MAX_WAIT); the tests set it to 0.
ENV_HARVEST_BACKOFF = "PUBSEARCH_HARVEST_BACKOFF"
HARVEST_BACKOFF_SECONDS = 2.0
# The longest wait a harvest accepts, a server's Retry-After included.
HARVEST_MAX_WAIT_SECONDS = 600.0


def harvest_backoff(environ: Mapping[str, str]) -> float:
    """The first back-off of a harvest's retries: ``PUBSEARCH_HARVEST_BACKOFF`` or 2 s."""
    try:
        return max(0.0, float(environ.get(ENV_HARVEST_BACKOFF, "")))
    except ValueError:
        return HARVEST_BACKOFF_SECONDS


# The token a server that listens beyond this machine asks of every change of its library
# (a saved search, a tag); unset, such a server takes no changes.
ENV_WRITE_TOKEN = "PUBSEARCH_WRITE_TOKEN"

# The e-mail digest (pubsearch news --email): its SMTP server, login (from the environment
# only, never the command line), sender, and the page its links point to.
ENV_SMTP_HOST = "PUBSEARCH_SMTP_HOST"
ENV_SMTP_PORT = "PUBSEARCH_SMTP_PORT"
ENV_SMTP_USER = "PUBSEARCH_SMTP_USER"
ENV_SMTP_PASSWORD = "PUBSEARCH_SMTP_PASSWORD"
ENV_MAIL_FROM = "PUBSEARCH_MAIL_FROM"
ENV_PAGE_URL = "PUBSEARCH_PAGE_URL"
