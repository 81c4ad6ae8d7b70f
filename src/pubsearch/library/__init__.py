"""The library: what pubsearch remembers of one person's (or a small group's) reading, in a
SQLite file beside the index: saved searches and what is new in them, tags, feeds and
recommendations per tag. Above the search service, under the faces (docs/following.md)."""
