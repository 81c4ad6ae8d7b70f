"""The ``pubsearch`` command: :mod:`.main` (the group and the query, batch, show, stats
and serve commands), :mod:`.indexing` (index and embed), :mod:`.options` (what the commands
share), :mod:`.progress` (the build's progress bar), :mod:`.trec` (TREC runs in parallel
processes).

May import everything below it: :mod:`pubsearch.web` (to serve), :mod:`pubsearch.search`,
:mod:`pubsearch.index`, :mod:`pubsearch.ingest`, :mod:`pubsearch.core`; commands import what
they need when they run (``pubsearch --version`` loads neither Whoosh, numpy nor Flask).
"""
