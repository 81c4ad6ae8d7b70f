"""The Whoosh 3 file format, read and written: the only package that knows Whoosh's
private attributes and byte layout (``tests/test_architecture.py`` checks it).

:mod:`.w3format` reads segments (posting lists in one read, blocks decoded, positions,
length and facet columns, the terms table, many terms of many segments at once);
:mod:`.w3write` writes them from the postings of :mod:`.pool`; :mod:`.hotlists` keeps a
segment's longest posting lists again as arrays (pubsearch's own file beside Whoosh's).

May import: :mod:`pubsearch.core`, Whoosh, numpy. Nothing of the index, search or ingest.
"""
