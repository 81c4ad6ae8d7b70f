"""Records fetched from the services that publish them, added to an index as they come.

The package owns the protocols (``oaipmh``: OAI-PMH's requests, pages, resumption tokens
and errors), what each source's metadata formats make of a paper (``arxiv``: arXiv's
``arXiv``, ``arXivRaw`` and ``oai_dc`` records as :class:`~pubsearch.ingest.records.Record`
values), the polite HTTP client every source shares (``http``: a delay between requests,
``Retry-After`` and bounded retries), what each harvest remembers beside the index
(``state``: ``harvests.json``) and the run of a harvest, page after page (``run``).

It sits beside :mod:`pubsearch.search`, under the faces: it may import
:mod:`pubsearch.index` (the update path, ``update_index``), :mod:`pubsearch.ingest` and
:mod:`pubsearch.core`, and nothing above them (the import-linter layers contract).
"""
