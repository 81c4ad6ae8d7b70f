"""Searching: a request (:mod:`.request`) answered by the one search service
(:mod:`.service`) that the command line and the web page share.

The query text is read into a tree (:mod:`.syntax`), compiled into Whoosh queries
(:mod:`.compiler`, :mod:`.wildcards`), matched as boolean arrays (:mod:`.masks`), scored
(:mod:`.topdocs`, :mod:`.ranking`, :mod:`.wellmatched`, :mod:`.semantic`), filtered and
counted (:mod:`.selection`, :mod:`.subjectmatch`); box words stand for people and
corrections (:mod:`.boxwords`); hits are made readable and marked (:mod:`.hits`,
:mod:`.highlighting`); related papers, ids, broader searches (:mod:`.related`,
:mod:`.lookup`, :mod:`.broadening`); results (:mod:`.results`) exported (:mod:`.export`).
What the service keeps per open generation is :mod:`.generation`; a request compiled
once, what the page's and the facets' steps take, is :mod:`.plan`.

May import: :mod:`pubsearch.index`, :mod:`pubsearch.codec` (the read half),
:mod:`pubsearch.ingest`, :mod:`pubsearch.core`. Never the faces, the index writer or
multiprocessing.
"""
