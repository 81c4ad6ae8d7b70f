"""The index: what is written, and the tables saved with each generation.

How text is cut into words (:mod:`.tokenizer`, :mod:`.analysis`, :mod:`.schema`), the
record and stored document (:mod:`.documents`), generations on disk (:mod:`.storage`), a
build and an update (:mod:`.build`, :mod:`.segments` for the segments and their worker
processes), the tables a generation saves and its searches read (:mod:`.facets`,
:mod:`.names`, :mod:`.spelling`, :mod:`.tables`), field lengths (:mod:`.lengths`), posting
lists read across segments (:mod:`.postings`), the sentence model and the vectors
(:mod:`.embedding`, :mod:`.vectors`).

May import: :mod:`pubsearch.core`, :mod:`pubsearch.ingest`, :mod:`pubsearch.codec`. Never
the search side or the faces.
"""
