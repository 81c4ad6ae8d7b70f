"""One error hierarchy. The CLI and the web layer translate these; nothing else should escape.

``UsageError`` subclasses are the caller's mistake (exit status 2, HTTP 400); the rest are
problems with files or the index (exit status 1).
"""

from __future__ import annotations


class PubsearchError(Exception):
    """Base class for every error pubsearch reports to a person."""


class UsageError(PubsearchError):
    """The request itself is wrong: a bad query, parameter or option value."""


class QuerySyntaxError(UsageError):
    """The query text cannot be understood (unknown field, unbalanced range, too long...)."""


class ParameterError(UsageError):
    """A parameter other than the query text is out of range or malformed."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name


class RecordNotFoundError(UsageError):
    """No record has the requested id."""


class IndexMissingError(PubsearchError):
    """There is no index where one was expected, or it holds no records."""


class IndexLockedError(PubsearchError):
    """Another process is writing the index."""


class ChangeRefusedError(PubsearchError):
    """A change asked of the page without what it needs (its form token, the write token)."""


class IndexChangedError(PubsearchError):
    """A new generation went live between two steps that must read the same one."""


class IndexCorruptError(PubsearchError):
    """The index exists but cannot be read."""


class ReadError(PubsearchError):
    """A source file cannot be read at all. ``where`` is ``path`` or ``path:line``."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


class NothingToIndexError(PubsearchError):
    """The sources held no readable record, so the index was left as it was."""


class WorkerError(PubsearchError):
    """A process writing part of the index stopped or failed (the build is abandoned and
    the previous index stays live)."""


class ServerProcessError(PubsearchError):
    """One of the server's processes died; the server stopped."""


class HarvestError(PubsearchError):
    """A harvest stopped: a page that could not be fetched or read. What was added to the
    index before it stays there, and the next run starts where this one stopped."""
