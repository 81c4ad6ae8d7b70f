"""Top documents scored with numpy must be the ones Whoosh's collector finds, in order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from whoosh import query as wq

from pubsearch.index import storage
from pubsearch.index.build import build_index
from pubsearch.index.facets import FacetTable
from pubsearch.index.lengths import field_lengths
from pubsearch.index.schema import DEFAULT_FIELD
from pubsearch.ingest.readers import ReadReport, read_paths
from pubsearch.search import ranking
from pubsearch.search.compiler import parse_query
from pubsearch.search.masks import UnsupportedQuery, query_mask
from pubsearch.search.topdocs import documents_by_year, top_documents

DATA = Path(__file__).resolve().parent / "data"

QUERIES = [
    "learning",
    "model",
    "neural network",
    "graph neural network",
    "learning OR quantum",
    "deep -learning",
    "title:learning",
    "abstract:model title:graph",
    "author:you batch",
    "batch size training",
    "nothingmatchesthis",
    "(quantum OR graph) AND (model OR network)",
    '"batch size"',
    '"language models"',
    '"neural network" training',
    'title:"large language"',
    '"deep neural networks"',
    'author:"Yang You"',
    '"batch size"~3',
    '"language models"~2',
    '"neural training"~6',
    '"models large"~4',
    "neural AND NOT graph",
    "model NOT language NOT quantum",
    "subject:cs.lg training",
    "subject:cs.lg OR subject:cs.dc",
    "id:2401.00001 OR learning",
    "optim*",
    "lear*",
    "ba?ch size",
    "neur* AND graph",
    "title:lang* -model",
    "transform?r",
    "abstract:optim* title:learn*",
    "co* OR batch",
    "subject:cs.* quantum",
    "zzzq*",
    "year:2021 training",
    "year:2019..2021 batch",
    "year:>2020 model",
    "year:<2020 OR quantum",
    "year:[2019 TO 2020] -learning",
    "year:1800",
    "*",
    "-learning",
    "NOT model",
    "learning OR *",
    "learning AND *",
    "title:* model",
    "abstract:*",
    "subject:* -learning",
    "year:* graph",
    "learning -*",
]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory, seeds_dir: Path):  # type: ignore[no-untyped-def]
    index_dir = tmp_path_factory.mktemp("topdocs")
    records = list(read_paths([seeds_dir, DATA / "arxiv-2024-2026.sample.jsonl"], ReadReport()))
    build_index(index_dir, records + records[:5])  # a few duplicates: deleted documents
    ix = storage.open_index(storage.current_generation(index_dir))  # type: ignore[arg-type]
    with ix.searcher(weighting=ranking.weighting()) as s:  # the service's scoring model
        yield s
    ix.close()


@pytest.mark.parametrize("q", QUERIES)
@pytest.mark.parametrize("limit", [1, 10, 50])
def test_numpy_top_documents_equal_whoosh(searcher, q: str, limit: int) -> None:  # type: ignore[no-untyped-def]
    query = parse_query(q, searcher.schema)
    size = searcher.reader().doc_count_all()
    allowed = query_mask(searcher, query, size)
    allowed[:] = True
    for d in range(size):
        allowed[d] = not searcher.reader().is_deleted(d)
    cache: dict[str, object] = {}

    def lengths(fieldname: str):  # type: ignore[no-untyped-def]
        return cache.setdefault(fieldname, field_lengths(searcher.reader(), fieldname))

    ours = top_documents(searcher, query, allowed, limit, lengths)
    assert ours is not None
    # The reference is Whoosh scoring every match (limit=None): with a limit, Whoosh's
    # collector simplifies the matcher as the threshold rises and can miss the best
    # document of an AND of ORs (seen here with limit=1 and 2).
    if isinstance(query, wq.AndNot):
        # Whoosh's AND NOT matcher lets through some documents of its NOT part (seen on
        # "deep -learning"): score the positive part and drop the NOT part's documents.
        excluded = set(searcher.docs_for_query(query.b))
        hits = searcher.search(query.a, limit=None, optimize=False)
        theirs = [(h.score, h.docnum) for h in hits if h.docnum not in excluded][:limit]
    else:
        # A pattern (optim*) is scored as the OR of the words it expands to: what Whoosh
        # does on indexes of over 5,000 records; on smaller ones its prefix and wildcard
        # queries give every match the same score.
        hits = searcher.search(_simplified(searcher, query), limit=None)
        theirs = [(hit.score, hit.docnum) for hit in hits][:limit]
    assert [d for _, d in ours] == [d for _, d in theirs]
    assert [round(s, 9) for s, _ in ours] == [round(s, 9) for s, _ in theirs]


def _every_match(searcher, query) -> list[tuple[float, int]]:  # type: ignore[no-untyped-def]
    """(score, docnum) of every live match, scored by Whoosh (see the test above)."""
    if isinstance(query, wq.AndNot):
        excluded = set(searcher.docs_for_query(query.b))
        hits = searcher.search(query.a, limit=None, optimize=False)
        return [(h.score, h.docnum) for h in hits if h.docnum not in excluded]
    return [(h.score, h.docnum) for h in searcher.search(_simplified(searcher, query), limit=None)]


def _simplified(searcher, query: wq.Query) -> wq.Query:  # type: ignore[no-untyped-def]
    """``query`` with its patterns expanded, as Whoosh scores them on large indexes; left
    as it is when it has ``*`` (Whoosh's simplify makes "x OR *" just "*", unscored)."""
    if any(type(leaf) is wq.Every for leaf in query.leaves()):
        return query
    return query.simplify(searcher.reader())


@pytest.mark.parametrize("q", [*QUERIES, ""])
@pytest.mark.parametrize("newest", [True, False])
def test_documents_by_year_are_every_match_sorted_by_year_date_then_score(  # type: ignore[no-untyped-def]
    searcher, q: str, newest: bool
) -> None:
    reader = searcher.reader()
    size = reader.doc_count_all()
    table = FacetTable.build(reader)
    years, dates = table.years, table.dates
    assert 0 < int((dates > 0).sum()) < size  # the seeds have no dates, the arXiv records do
    live = [d for d in range(size) if not reader.is_deleted(d)]
    allowed = query_mask(searcher, wq.Every(), size)
    allowed[:] = False
    allowed[live] = True
    query = parse_query(q, searcher.schema)
    if query is None:
        matches = [(0.0, d) for d in live]
    else:
        matches = _every_match(searcher, query)

    def key(match: tuple[float, int]) -> tuple[bool, int, bool, int, float, int]:
        score, docnum = match
        year = int(years[docnum])
        day = int(dates[docnum]) % 10_000
        return (
            year == 0,
            -year if newest else year,
            day == 0,  # within a year, the dated ones first
            -day if newest else day,
            -round(score, 9),
            docnum,
        )

    expected = sorted(matches, key=key)
    cache: dict[str, object] = {}

    def lengths(fieldname: str):  # type: ignore[no-untyped-def]
        return cache.setdefault(fieldname, field_lengths(reader, fieldname))

    for limit in (1, 10, 50, size):
        ours = documents_by_year(searcher, query, allowed, limit, lengths, years, newest, dates)
        assert ours is not None
        assert [d for _, d in ours] == [d for _, d in expected[:limit]]
        assert [round(s, 9) for s, _ in ours] == [round(s, 9) for s, _ in expected[:limit]]


@pytest.mark.parametrize(
    "query",
    [wq.FuzzyTerm("content", "trainn"), wq.TermRange("title", "a", "c")],
)
def test_a_query_the_compiler_never_makes_is_refused(searcher, query: wq.Query) -> None:  # type: ignore[no-untyped-def]
    # Whoosh would match these (its own matchers); pubsearch runs only what its compiler
    # makes (masks.EXECUTED) and says so, rather than quietly handing them to Whoosh.
    size = searcher.reader().doc_count_all()
    assert any(True for _ in searcher.docs_for_query(query))
    with pytest.raises(UnsupportedQuery, match="not a query pubsearch runs"):
        query_mask(searcher, query, size)
    assert top_documents(searcher, query, np.ones(size, bool), 10, lambda f: None) is None  # type: ignore[arg-type,return-value]


def test_a_phrase_with_slop_matches_what_whoosh_matches(searcher) -> None:  # type: ignore[no-untyped-def]
    size = searcher.reader().doc_count_all()
    for slop in (0, 1, 2, 3, 5, 10):
        for words in (["batch", "size"], ["larg", "languag", "model"], ["model", "larg"]):
            query = wq.Phrase("abstract", words, slop=slop)
            expected = sorted(searcher.docs_for_query(query))
            found = np.flatnonzero(query_mask(searcher, query, size))
            live = [int(d) for d in found if not searcher.reader().is_deleted(int(d))]
            assert live == expected, (slop, words)


@pytest.mark.parametrize(
    "q",
    [
        "graph neural network training on large batch sizes",
        "language models reasoning quantum",
        "learning OR quantum",
    ],
)
def test_feedback_from_the_best_match_is_the_documented_formula(searcher, q: str) -> None:  # type: ignore[no-untyped-def]
    from pubsearch.search.compiler import parse_text_query

    parsed = parse_text_query(q, searcher.schema)
    assert parsed is not None
    query = parsed.relaxed or parsed.strict
    reader = searcher.reader()
    size = reader.doc_count_all()
    allowed = np.array([not reader.is_deleted(d) for d in range(size)])
    lengths = field_lengths(reader, DEFAULT_FIELD)

    def feedback(docnum: int) -> wq.Query | None:
        return ranking.feedback_query(searcher, docnum, float(lengths[docnum]))

    ours = ranking.top_with_feedback(searcher, query, allowed, size, lambda f: lengths, 1.5)
    plain = top_documents(searcher, query, allowed, size, lambda f: lengths)
    assert ours is not None and plain is not None
    # The reference: Whoosh's scores of the query and of the feedback query, combined.
    scores = dict((d, s) for s, d in _every_match(searcher, query))
    best = min(scores, key=lambda d: (-round(scores[d], 9), d))
    like = feedback(best)
    assert like is not None and len(list(like.leaves())) <= ranking.FEEDBACK_TERMS
    likeness = {h.docnum: h.score for h in searcher.search(like, limit=None)}
    top_like = max(likeness.get(d, 0.0) for d in scores)
    final = {d: s + 1.5 * scores[best] * likeness.get(d, 0.0) / top_like for d, s in scores.items()}
    expected = sorted(final, key=lambda d: (-round(final[d], 9), d))
    assert [d for _, d in ours] == expected
    assert [round(s, 6) for s, _ in ours] == [round(final[d], 6) for d in expected]
    # The same matches, the same best match, another order below it.
    assert {d for _, d in ours} == {d for _, d in plain}
    assert ours[0][1] == plain[0][1] == best
    assert [d for _, d in ours] != [d for _, d in plain]


@pytest.mark.parametrize("q", ["graph neural network training on large batch sizes", "learning"])
def test_shown_lists_fewer_in_the_order_all_allowed_give(searcher, q: str) -> None:  # type: ignore[no-untyped-def]
    """``shown`` lists some of the allowed documents; the feedback still comes from all of
    them (the best match included, even when not shown), so the order is the same.
    ``scored`` (the query's scores, worked out before) gives the same as without."""
    from pubsearch.search.compiler import parse_text_query
    from pubsearch.search.topdocs import match_scores

    parsed = parse_text_query(q, searcher.schema)
    assert parsed is not None
    query = parsed.relaxed or parsed.strict
    reader = searcher.reader()
    size = reader.doc_count_all()
    allowed = np.array([not reader.is_deleted(d) for d in range(size)])
    lengths = field_lengths(reader, DEFAULT_FIELD)
    every = ranking.top_with_feedback(searcher, query, allowed, size, lambda f: lengths, 1.5)
    assert every is not None and len(every) > 10
    shown = np.random.default_rng(7).random(size) < 0.5
    shown[every[0][1]] = False  # the best match is not listed, but still gives the feedback
    listed = ranking.top_with_feedback(
        searcher, query, allowed, 10, lambda f: lengths, 1.5, shown=shown
    )
    assert listed == [(s, d) for s, d in every if shown[d]][:10]
    scored = match_scores(searcher, query, size, lambda f: lengths)
    again = ranking.top_with_feedback(
        searcher, query, allowed, size, lambda f: lengths, 1.5, scored=scored
    )
    assert again == every


def test_field_lengths_equal_whoosh_per_document(tmp_path: Path) -> None:
    """Lengths read a column at a time are the ones Whoosh reads document by document:
    in a segment whose last documents lack the field (its column stops short), and in a
    segment that has no such column at all."""
    words = "graph neural network training batch size quantum model".split()
    ix = storage.create_index(tmp_path)
    segments = [
        [
            {
                "id": f"a{i}",
                "title": " ".join(words[: 1 + i % 8]),
                "abstract": " ".join(words * (i * 7 % 60 + 1)) if i < 6 else None,
            }
            for i in range(9)
        ],
        [{"id": f"b{i}", "title": " ".join(words[i:])} for i in range(4)],
    ]
    for docs in segments:
        writer = ix.writer()
        for doc in docs:
            writer.add_document(**{k: v for k, v in doc.items() if v is not None})
        writer.commit(merge=False)
    with ix.reader() as reader:
        assert len(reader.leaf_readers()) == 2
        for fieldname in ("title", "abstract"):
            got = field_lengths(reader, fieldname)
            # Whoosh's None (a document without the field in a segment with the column)
            # is 0 here, as the scorers take it.
            want = [reader.doc_field_length(d, fieldname, 1) or 0 for d in range(13)]
            assert got.tolist() == want, fieldname
        assert field_lengths(reader, "abstract")[6:9].tolist() == [0, 0, 0]
        assert field_lengths(reader, "abstract")[9:].tolist() == [1, 1, 1, 1]
    ix.close()


@pytest.mark.speedups
@pytest.mark.parametrize("q", QUERIES)
def test_scores_added_in_c_are_numpys_to_the_last_bit(
    searcher, q: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from pubsearch.core import speedups
    from pubsearch.search.topdocs import _scores

    assert speedups.active() is not None
    query = parse_query(q, searcher.schema)
    size = searcher.reader().doc_count_all()
    cache: dict[str, object] = {}

    def lengths(fieldname: str):  # type: ignore[no-untyped-def]
        return cache.setdefault(fieldname, field_lengths(searcher.reader(), fieldname))

    in_c = _scores(searcher, searcher.weighting, query, size, lengths)
    monkeypatch.setattr(speedups, "enabled", False)
    in_numpy = _scores(searcher, searcher.weighting, query, size, lengths)
    assert (in_c is None) == (in_numpy is None)
    if in_c is not None and in_numpy is not None:
        assert in_c[0].tolist() == in_numpy[0].tolist()
        assert in_c[1].tobytes() == in_numpy[1].tobytes()  # the same doubles, bit for bit


def test_prepared_length_norms_are_the_ones_a_search_uses(searcher, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A server works out each scored field's length part of BM25 before it answers:
    the very arrays the first search's scores then use, by the documented formula."""
    from collections import OrderedDict

    from pubsearch.index.schema import SCORED_FIELDS
    from pubsearch.search import topdocs

    monkeypatch.setattr(topdocs, "_NORMS", OrderedDict())
    reader = searcher.reader()
    held = {name: field_lengths(reader, name) for name in SCORED_FIELDS}
    topdocs.prepare_norms(searcher, held.__getitem__, SCORED_FIELDS)
    assert len(topdocs._NORMS) == len(SCORED_FIELDS) == 3
    for name in SCORED_FIELDS:
        avg = searcher.avg_field_length(name)
        expected = ranking.K1 * ((1 - ranking.B) + ranking.B * held[name] / avg)
        used = topdocs._length_norms(searcher, held.__getitem__, name, ranking.K1, ranking.B)
        assert np.array_equal(used, expected)
        assert any(used is norms for _, norms in topdocs._NORMS.values())
    assert len(topdocs._NORMS) == 3  # nothing worked out again
