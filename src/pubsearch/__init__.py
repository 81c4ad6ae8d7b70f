"""pubsearch: search publication records by keyword, with facets, from the shell or a browser.

The parts, by responsibility: :mod:`pubsearch.readers` turn files into
:class:`~pubsearch.records.Record` objects, :mod:`pubsearch.indexing` writes them into a
Whoosh index, :mod:`pubsearch.searching` answers queries for both :mod:`pubsearch.cli` and
:mod:`pubsearch.web`.
"""
