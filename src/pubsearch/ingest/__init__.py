"""What comes in: files of publication records read into :class:`~.records.Record`
objects (:mod:`.readers`, one module per format), a paper's identity and the merging of
the records of one paper (:mod:`.records`, :mod:`.eprints`, :mod:`.dating`), arXiv ids and
DOIs in every written form (:mod:`.identifiers`), TeX read as text and letters folded to
their base (:mod:`.textforms`, :mod:`.readable`), arXiv's subject names (:mod:`.subjects`).

May import: :mod:`pubsearch.core`. Knows nothing of Whoosh, the index or searching.
"""
