"""The Whoosh 3 file format, read and written: the only package that knows Whoosh's
private attributes and byte layout (``tests/test_architecture.py`` checks it).

Read: :mod:`.w3format` (posting lists, in one read; prefixes' lists; query internals),
:mod:`.w3terms` (the terms table, looked up with ``pread``, many terms of many segments at
once), :mod:`.w3positions` (positions and phrases), :mod:`.w3columns` (length and facet
columns), :mod:`.w3version` (whether the installed Whoosh's format is known). Written:
:mod:`.w3write`, from the postings of :mod:`.pool`. :mod:`.hotlists` keeps a segment's
longest posting lists again as arrays (pubsearch's own file beside Whoosh's).

May import: :mod:`pubsearch.core`, Whoosh, numpy. Nothing of the index, search or ingest.
"""
