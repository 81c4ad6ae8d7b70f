"""pubsearch: search publication records by keyword and meaning, with facets, from the shell
or a browser.

The packages, from the bottom up (each imports only those below it; import-linter checks
it, ``make lint``): :mod:`pubsearch.core` (configuration, errors, arrays on disk, the C
speedups), :mod:`pubsearch.ingest` (files read into records) and :mod:`pubsearch.codec`
(the Whoosh 3 format), :mod:`pubsearch.index` (analysis, build, the tables of a
generation), :mod:`pubsearch.search` (the one search service), and the two faces,
:mod:`pubsearch.web` and :mod:`pubsearch.cli`.
"""

# The one place the version is written: pyproject.toml reads it from here (setuptools'
# ``attr:``), and ``pubsearch --version`` prints it without importlib.metadata.
__version__ = "0.1.0"
