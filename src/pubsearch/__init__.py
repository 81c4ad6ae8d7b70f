"""pubsearch: search publication records by keyword, with facets, from the shell or a browser.

The parts, by responsibility: :mod:`pubsearch.ingest.readers` turn files into
:class:`~pubsearch.ingest.records.Record` objects, :mod:`pubsearch.index.build` writes them into a
Whoosh index, :mod:`pubsearch.search.service` answers queries for both :mod:`pubsearch.cli.main` and
:mod:`pubsearch.web`.
"""
