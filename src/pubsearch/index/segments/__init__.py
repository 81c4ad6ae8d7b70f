"""Segments written in bulk: the build's side of the index.

* :mod:`.workers`: documents spread over worker processes, their segments committed as one
  generation (the only module that starts processes);
* :mod:`.writer`: the segment writer, documents into postings;
* :mod:`.docpostings`: a document's postings, field by field, without Whoosh's token
  objects.

They write through :mod:`pubsearch.codec` (the Whoosh 3 format) and nothing else knows how
the bytes are laid out. This module imports nothing: a search loads no writer.
"""
