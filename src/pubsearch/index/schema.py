"""The Whoosh schema and analyzers, in one place.

Fields people can name in a query are ``title``, ``abstract``, ``author``, ``subject`` and
``year`` (see :data:`QUERY_FIELDS`); the rest serve filters, facets, updates and display.
"""

from __future__ import annotations

from whoosh import analysis, columns, fields

from pubsearch.index.analysis import FastAnalyzer
from pubsearch.index.tokenizer import ANALYSIS_VERSION, SearchableTokenizer
from pubsearch.ingest.textforms import folding

# A word is a run of letters and digits, with inner dots kept ("u.s", "v1.2") and inner
# apostrophes (which folding then drops: "o'brien" is "obrien").
WORD_PATTERN = r"\w+(?:['.]?\w+)*"
# A word of a name: letters and digits, with inner apostrophes ("O'Brien").
NAME_WORD_PATTERN = r"\w+(?:'\w+)*"

# Plain words are searched in ``content``: title and abstract indexed together as one text,
# so that BM25 sees one term frequency and one length per record (BM25F with a shared
# saturation), the title counted TITLE_WEIGHT times. Chosen on SciFact's train queries
# with bench/relevance.py: title and abstract scored apart and summed ranked worse, the
# more so the higher the title's boost.
DEFAULT_FIELD = "content"
TITLE_WEIGHT = 3

# Wildcards and prefixes (``transform?r``, ``title:transformer*``) match words as written,
# not their stems ("transformer" is indexed as "transform" in ``title``): each of these
# fields has beside it a field of its words cut and folded as it cuts and folds them, not
# stemmed (frequencies, no positions), which patterns expand against.
WRITTEN_FIELDS = {"title": "title_words", "abstract": "abstract_words"}

# The fields whose longest posting lists each segment keeps a second time, as arrays
# (pubsearch.codec.hotlists): the plain words' field, the titles and names people
# search by field, and the words as written a short prefix (co*) stands for. Not the
# abstract's stems: they would add as much again to the index.
# The fields whose unstemmed words the spelling table holds: only the title keeps them.
SPELLING_FIELDS = ("title",)
KEPT_LIST_FIELDS = frozenset({DEFAULT_FIELD, "title", "author", *WRITTEN_FIELDS.values()})

# Separates the values of a multi-valued column (authors, subjects).
VALUE_SEP = "\x1f"


def text_analyzer() -> analysis.Analyzer:
    """Title and abstract: TeX read as it reads, words, lower case, letters folded
    (pubsearch.ingest.textforms), Snowball stems; stop words kept.

    Keeping stop words ("not", "of", "the") was chosen on SciFact's train queries with
    bench/relevance.py: nDCG@10 0.7164 -> 0.7218, better in each of 5 folds (paired t 2.5);
    it also lets a phrase match exactly ("state of the art"). The stop filter stays, with no
    stop words, to drop a word that folds to nothing.
    """
    # FastAnalyzer: the same tokens as the plain chain, computed in bulk when indexing.
    return FastAnalyzer(
        SearchableTokenizer(WORD_PATTERN),
        analysis.LowercaseFilter(),
        analysis.CharsetFilter(folding()),
        analysis.StopFilter(stoplist=(), minsize=1),
        analysis.PyStemmerFilter("english"),
    )


def content_text(title: str, abstract: str) -> str:
    """What ``content`` indexes for a record: its title TITLE_WEIGHT times, then its abstract."""
    return "\n".join([title] * TITLE_WEIGHT + [abstract])


# content_text's parts, (field, times) a line each: the bulk writer makes ``content``'s
# postings from theirs.
CONTENT_PARTS = (("title", TITLE_WEIGHT), ("abstract", 1))
# The text fields a search of words scores (each part, and the combined field for the
# feedback from the best match).
SCORED_FIELDS = (*(name for name, _ in CONTENT_PARTS), DEFAULT_FIELD)


def written_analyzer() -> analysis.Analyzer:
    """The words of titles and abstracts as written (:data:`WRITTEN_FIELDS`): cut and
    folded as :func:`text_analyzer` cuts and folds them, not stemmed; a word for each of
    its stems, so that a field of them has its source's lengths."""
    # FastAnalyzer: the same tokens as the plain chain, computed in bulk when indexing.
    return FastAnalyzer(
        SearchableTokenizer(WORD_PATTERN),
        analysis.LowercaseFilter(),
        analysis.CharsetFilter(folding()),
        analysis.StopFilter(stoplist=(), minsize=1),
    )


def name_analyzer() -> analysis.Analyzer:
    """Author names: words, lower case, letters folded (pubsearch.ingest.textforms); no stemming,
    no stop words."""
    # FastAnalyzer: the same tokens as the plain chain, computed in bulk when indexing.
    return FastAnalyzer(
        SearchableTokenizer(NAME_WORD_PATTERN),
        analysis.LowercaseFilter(),
        analysis.CharsetFilter(folding()),
    )


def build_schema() -> fields.Schema:
    """The schema every pubsearch index is created with."""
    return fields.Schema(
        id=fields.ID(stored=True, unique=True),
        # Identity keys (arXiv id, DOI, title+year) so that --update merges the same paper.
        keys=fields.KEYWORD(commas=True),
        # spelling=True keeps unstemmed words for did-you-mean: title words only (the same
        # for the abstract cost a fifth of the indexing time).
        title=fields.TEXT(analyzer=text_analyzer(), stored=True, spelling=True),
        abstract=fields.TEXT(analyzer=text_analyzer(), stored=True),
        # Title and abstract as one text, for ranking plain words. No positions: phrases
        # are matched in title and abstract (see search/compiler.py), which keeps the index small.
        content=fields.TEXT(analyzer=text_analyzer(), phrase=False),
        # The title's and the abstract's words as written, for wildcards and prefixes
        # (WRITTEN_FIELDS); no positions.
        title_words=fields.TEXT(analyzer=written_analyzer(), phrase=False),
        abstract_words=fields.TEXT(analyzer=written_analyzer(), phrase=False),
        # Searchable author words (author:you, author:"yang you"); the display list is stored.
        author=fields.TEXT(analyzer=name_analyzer(), stored=True),
        # Subject codes, case-insensitive (subject:cs.lg, subject:cs.*).
        subject=fields.KEYWORD(lowercase=True, commas=True, stored=True),
        year=fields.NUMERIC(int, bits=16, stored=True, sortable=True, signed=False),
        # The day, as YYYYMMDD, where the source gives it: "newest first" sorts by it.
        date=fields.NUMERIC(int, bits=32, stored=True, sortable=True, signed=False),
        # How many works cite the record, where the source counts them (OpenAlex,
        # Crossref): "most cited" sorts by it. Added later: see OPTIONAL_FIELDS.
        cited=fields.NUMERIC(int, bits=32, stored=True, sortable=True, signed=False),
        # Facet values per document, read in bulk when counting facets.
        author_facet=fields.COLUMN(columns.VarBytesColumn()),
        subject_facet=fields.COLUMN(columns.VarBytesColumn()),
        source=fields.STORED(),
        origins=fields.STORED(),
        arxiv_id=fields.STORED(),
        doi=fields.STORED(),
        # A merged paper's further arXiv ids and DOIs (identity keys), and the day of the
        # listing a record dated by its submission was read from (Record.listed).
        other_ids=fields.STORED(),
        listed=fields.STORED(),
    )


# Fields an index built by an older version may lack; it stays readable without them (an
# index without ``cited`` offers no "most cited" sort).
OPTIONAL_FIELDS = frozenset({"cited"})

# Names a query may use, with the arXiv-style short forms people type.
QUERY_FIELDS = ("title", "abstract", "author", "subject", "year")
FIELD_ALIASES = {"ti": "title", "abs": "abstract", "au": "author", "cat": "subject"}


# The fields whose words are cut by a SearchableTokenizer.
ANALYSED_FIELDS = ("title", "abstract", "content", *WRITTEN_FIELDS.values(), "author")


def analysed_as_now(schema: fields.Schema) -> bool:
    """Whether an index with ``schema`` cut its words as this version does (its
    tokenizers' :data:`~pubsearch.index.tokenizer.ANALYSIS_VERSION`)."""
    for name in ANALYSED_FIELDS:
        if name not in schema:
            return False
        items = getattr(schema[name].analyzer, "items", None) or [None]
        if getattr(items[0], "version", 0) != ANALYSIS_VERSION:
            return False
    return True
