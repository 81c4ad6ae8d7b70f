"""Whoosh segments written in bulk, and read below Whoosh's API.

A build writes the index through this package, a search reads its posting lists and
columns through :mod:`~pubsearch.codec.w3format`:

* :mod:`~pubsearch.index.segments.workers`: documents spread over worker processes, their
  segments committed as one generation (the only module that starts processes);
* :mod:`~pubsearch.index.segments.writer`: the segment writer, documents into postings;
* :mod:`~pubsearch.index.segments.docpostings`: a document's postings, field by field, without
  Whoosh's token objects;
* :mod:`~pubsearch.codec.pool`: the postings kept in memory, sorted with numpy;
* :mod:`~pubsearch.codec.w3write` and :mod:`~pubsearch.codec.w3format`: the Whoosh 3
  segment format, written and read; the only modules that know Whoosh's byte layout and
  private attributes (tests/test_architecture.py).

Named ``segments``, not ``index``: the repository's ``index/`` directory is build output,
``pubsearch.index.build`` builds and updates indexes from records, and ``whoosh.index`` is
Whoosh's; what this package writes and reads is segments.

This module imports nothing: a search that imports ``w3format`` loads no writer.
"""
