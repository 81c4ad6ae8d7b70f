"""Which Whoosh is installed, and whether the fast paths know its format: the gate every
module of this package, and the index's worker processes, go through before reading or
writing below Whoosh's API."""

from __future__ import annotations

import warnings

# The whoosh3 releases whose segment format, and readers' and writers' private attributes,
# this module and w3write were written against and tested with (pyproject.toml's pin).
KNOWN_WHOOSH_VERSIONS = frozenset({"3.54.0"})


def _installed_whoosh() -> str:
    """The version the installed Whoosh gives itself (whoosh3's is its distribution's:
    3.54.0), read from the module rather than the installed package's metadata, whose
    import and look-up cost a one-shot query some 30 ms."""
    import whoosh

    return str(whoosh.versionstring())


# The Whoosh version the fast paths go by (a test pretends another).
WHOOSH_VERSION = _installed_whoosh()


_warned = False


class UnknownWhooshWarning(UserWarning):
    """The installed Whoosh is not a version whose format the fast paths know."""


def fast_paths() -> bool:
    """Whether the installed Whoosh is one of :data:`KNOWN_WHOOSH_VERSIONS`, whose segment
    format the fast paths (this module's readers, w3write's writer) know. Otherwise the
    index is written by Whoosh's own writer and read through Whoosh's API, and the first
    call in the process warns (:class:`UnknownWhooshWarning`), once."""
    global _warned
    if WHOOSH_VERSION in KNOWN_WHOOSH_VERSIONS:
        return True
    if not _warned:
        _warned = True
        known = ", ".join(sorted(KNOWN_WHOOSH_VERSIONS))
        warnings.warn(
            f"Whoosh {WHOOSH_VERSION} is not a version whose index format pubsearch's fast "
            f"paths know ({known}): indexing and searching through Whoosh's own writer and "
            "readers instead, which is slower",
            UnknownWhooshWarning,
            stacklevel=2,
        )
    return False
