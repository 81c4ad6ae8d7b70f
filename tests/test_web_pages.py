"""The search page through Flask's test client: what it shows and where its links go."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient

from pubsearch.index.build import build_index
from pubsearch.ingest.records import Record
from pubsearch.search.compiler import MAX_QUERY_CHARS
from pubsearch.search.request import SearchRequest
from pubsearch.web import SERVICE_KEY, create_app, long_date, warm_up


def text(client: FlaskClient, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, response.get_data(as_text=True)[:2000]
    return response.get_data(as_text=True)


def links(page: str, css_class: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(rf'class="{css_class}" href="([^"]+)"', page)]


def params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def hit_titles(page: str) -> list[str]:
    found = re.findall(r'<h2 class="hit-title"[^>]*><a [^>]*>(.*?)</a></h2>', page, re.DOTALL)
    return [html.unescape(re.sub(r"</?mark>", "", t)) for t in found]


def test_home_page_lists_everything_with_facets(client: FlaskClient) -> None:
    page = text(client, "/")
    assert "<strong>36</strong> results" in page
    assert len(hit_titles(page)) == 10
    assert '<form id="search" class="search-form" method="get" action="/"' in page
    assert '<label for="q" class="visually-hidden">Search publications</label>' in page
    for legend in ("Authors", "Year", "Subjects"):
        assert f"<legend>{legend}</legend>" in page
    assert 'aria-label="Pages"' in page
    assert 'href="/?page=4"' in page


def test_query_highlights_matches_in_titles_and_snippets(client: FlaskClient) -> None:
    page = text(client, "/?q=batch+size")
    assert '<strong>6</strong> results for “<span class="query">batch size</span>”' in page
    assert "The Limit of the <mark>Batch</mark> <mark>Size</mark>" in page
    assert re.search(r'<p class="snippet">[^<]*<mark>batch</mark>', page)
    assert "<summary>Full abstract</summary>" in page
    assert hit_titles(page)[0] == "The Limit of the Batch Size"


def test_hit_shows_authors_as_profile_links_subjects_with_names_and_source(
    client: FlaskClient,
) -> None:
    page = text(client, "/?q=whale")
    author_link = re.search(r'<span class="authors"><a href="([^"]+)"', page)
    assert author_link is not None
    # The author's profile, at the person this record is by (Wei Lin is several people).
    path, _, person = html.unescape(author_link.group(1)).partition("#")
    assert path == "/author/Wei%20Lin" and person.startswith("wei-lin-")
    profile = text(client, path)
    section = profile[profile.index(f'id="{person}"') :]
    section = section[: section.find("</section>")]
    assert "Whale: Efficient Giant Model Training" in section
    assert "Distributed, Parallel, and Cluster Computing" in page
    tag = links(page, "tag")[0]
    assert params(tag) == {"q": ["whale"], "subject": ["cs.DC"]}
    # No arXiv id in the seeds: the source link searches arXiv for the title.
    assert (
        'href="https://arxiv.org/search/?query=Whale%3A+Efficient+Giant+Model+Training+over'
        '+Heterogeneous+GPUs&amp;searchtype=title"' in page
    )
    assert re.search(r'<a href="/related/t[0-9a-f]+">Related papers</a>', page)


def test_chips_remove_one_filter_and_clear_all_keeps_the_query(client: FlaskClient) -> None:
    page = text(client, "/?q=training&subject=cs.LG&subject=cs.DC&author=Yang+You&year=2020..")
    chips = links(page, "chip")
    assert len(chips) == 4
    assert params(chips[0]) == {
        "q": ["training"],
        "subject": ["cs.LG", "cs.DC"],
        "year": ["2020.."],
    }
    assert params(chips[1])["subject"] == ["cs.DC"]
    assert "year" not in params(chips[3])
    clear = links(page, "clear-all")
    assert clear == ["/?q=training"]
    assert 'aria-label="Remove subject filter cs.LG"' in page
    assert '<span class="badge">4</span>' in page


def test_year_histogram_bars_select_a_year_and_unselect_it(client: FlaskClient) -> None:
    page = text(client, "/?subject=cs.DC")
    bar = re.search(r'<a href="([^"]+)" aria-label="2021: (\d+) results"', page)
    assert bar is not None
    assert params(html.unescape(bar.group(1))) == {"subject": ["cs.DC"], "year": ["2021"]}
    selected = text(client, "/?subject=cs.DC&year=2021")
    bar = re.search(r'<a href="([^"]+)" aria-label="2021: \d+ results \(selected\)"', selected)
    assert bar is not None
    assert params(html.unescape(bar.group(1))) == {"subject": ["cs.DC"]}
    assert 'name="year" type="text" inputmode="numeric" value="2021"' in selected
    # Bar heights are classes (no inline styles under the CSP); the tallest is h20.
    assert re.search(r'class="bar h20', page)


def test_sort_orders(client: FlaskClient, app: Flask) -> None:
    service = app.extensions[SERVICE_KEY]
    newest = text(client, "/?sort=newest&page_size=100")
    oldest = text(client, "/?sort=oldest&page_size=100")
    years = {h.title: h.year for h in service.search(SearchRequest(page_size=100)).hits}
    newest_years = [years[t] for t in hit_titles(newest)]
    oldest_years = [years[t] for t in hit_titles(oldest)]
    assert newest_years == sorted(newest_years, reverse=True)
    assert oldest_years == sorted(oldest_years)
    assert '<option value="oldest" selected>' in oldest


def test_without_query_text_the_sort_box_says_newest_first(client: FlaskClient) -> None:
    # The default keeps its value (the form leaves it out of the URL, and text typed
    # later is ranked by relevance); newest asked for by name stays asked for.
    expected = {
        "/": [("relevance", " selected"), ("oldest", "")],
        "/?q=*": [("relevance", " selected"), ("oldest", "")],
        "/?sort=relevance": [("relevance", " selected"), ("oldest", "")],
        "/?sort=newest": [("newest", " selected"), ("oldest", "")],
        "/?sort=oldest": [("relevance", ""), ("oldest", " selected")],
    }
    for url, options in expected.items():
        page = text(client, url)
        select = page.split('id="sort"')[1].split("</select>")[0]
        assert re.findall(r'<option value="(\w+)"( selected)?>', select) == options, url
        assert ">Newest first</option>" in select and "Relevance" not in select, url
    assert '<option value="relevance" selected>' in text(client, "/?q=batch")


def test_pages_and_page_size(client: FlaskClient) -> None:
    first = hit_titles(text(client, "/?page_size=5"))
    second_page = text(client, "/?page_size=5&page=2")
    assert len(first) == 5
    assert set(first).isdisjoint(hit_titles(second_page))
    assert '<ol class="hits" start="6">' in second_page
    assert 'rel="prev"' in second_page and 'rel="next"' in second_page
    assert 'href="/?page=8&amp;page_size=5"' in second_page  # the last page
    assert '<option value="5" selected>' in second_page


def test_page_past_the_end_says_so(client: FlaskClient) -> None:
    page = text(client, "/?page=9")
    assert "This page is past the last result." in page
    assert '<a href="/">Go to the first page</a>' in page
    single = text(client, "/?q=batch+size&page=3")
    assert '<a href="/?q=batch+size">Go to the first page</a>' in single


def test_no_hits_offers_did_you_mean(client: FlaskClient) -> None:
    page = text(client, "/?q=batchh+sise&correct=0")
    assert 'No results for “<span class="query">batchh sise</span>”' in page
    assert 'Did you mean <a href="/?q=batch+size">batch size</a>?' in page


def test_no_hits_shows_results_for_the_correction(client: FlaskClient) -> None:
    page = " ".join(text(client, "/?q=batchh+sise").split())
    assert 'Showing results for <a href="/?q=batch+size"><strong>batch size</strong></a>.' in page
    assert 'Search instead for <a href="/?q=batchh+sise&amp;correct=0">batchh sise</a>.' in page
    assert "<strong>6</strong> results" in page


def test_no_hits_offers_the_nearest_broader_search(client: FlaskClient) -> None:
    # Two words are both required (longer text may match on some of its words instead).
    page = " ".join(text(client, "/?q=batch+zzzqqq&sort=newest").split())
    assert (
        'Nearest broader search: <a href="/?q=batch&amp;sort=newest">batch</a>'
        " (without “zzzqqq”) finds 6 results." in page
    )
    filtered = text(client, "/?q=batch&subject=eess.SY")
    assert "(without the subject filter)" in filtered
    assert "with these filters" in filtered


def test_relaxed_words_and_how_the_query_was_read_are_shown(client: FlaskClient) -> None:
    page = text(client, "/?q=author%3Alin+batch+size+distributed+zebra+%3Ftransverse")
    note = re.search(r'<div class="message relaxed">\s*<p>(.*?)</p>', page, re.DOTALL)
    assert note is not None
    assert html.unescape(note.group(1)) == (
        "No record has all of: batch, size, distributed, zebra, transverse; "
        "showing records with most of them."
    )
    notices = re.findall(r'<ul class="notices"[^>]*>(.*?)</ul>', page, re.DOTALL)
    assert len(notices) == 1 and "a wildcard cannot start a word" in html.unescape(notices[0])
    plain = text(client, "/?q=batch+size")
    assert 'class="message relaxed"' not in plain and 'class="notices"' not in plain


def test_an_untitled_record_shows_its_first_words_marked_as_such(
    tmp_path: Path,
) -> None:
    from pubsearch.index.build import build_index
    from pubsearch.ingest.readers import ReadReport, read_paths

    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        '{"_id": "7", "title": "", "text": "Compact memories have flexible capacities. '
        'A digital data storage system is described."}\n',
        encoding="utf-8",
    )
    build_index(tmp_path / "ix", read_paths([corpus], ReadReport()))
    app = create_app(tmp_path / "ix", test_config={"TESTING": True})
    try:
        page = text(app.test_client(), "/?q=digital+memories")
    finally:
        app.extensions[SERVICE_KEY].close()
    title = re.search(r'<h2 class="hit-title untitled"[^>]*><a [^>]*>(.*?)</a></h2>', page)
    assert title is not None
    assert title.group(1) == (
        '<span class="untitled-label">Untitled:</span> Compact <mark>memories</mark> '
        "have flexible capacities"
    )


def test_no_hits_and_nothing_to_offer(client: FlaskClient) -> None:
    assert "Try fewer or different words" in text(client, "/?q=zzzqqq")


def test_author_facet_more_link_raises_facet_size(client: FlaskClient) -> None:
    page = text(client, "/?facet_size=1")
    more = re.search(r'<a href="([^"]+)">Show more authors</a>', page)
    assert more is not None
    assert params(html.unescape(more.group(1))) == {"facet_size": ["5"]}
    assert '<input type="hidden" name="facet_size" value="1">' in page
    assert "Show fewer" not in page


def test_related_page(client: FlaskClient, app: Flask) -> None:
    service = app.extensions[SERVICE_KEY]
    record_id = service.search(SearchRequest(page_size=100)).hits[0].id
    page = text(client, f"/related/{record_id}")
    assert "Papers related to" in page
    assert f'action="/related/{record_id}"' in page
    assert "results" in page
    assert f'href="/api/related/{record_id}"' in page
    assert f"related={record_id}" in page  # export links keep the record
    text(client, "/related/no-such-record", status=404)


TEX_TITLE = "Spin waves in Fe$_3$GeTe$_2$ <b>films</b> & $\\alpha$-RuCl$_3$"
TEX_RECORDS = [
    Record(title=TEX_TITLE, abstract="Magnons in thin magnetic films.", authors=("A. One",)),
    Record(title="Magnons in magnetic films", abstract="Spin waves in thin films."),
    Record(title="Thin magnetic films", abstract="Spin waves and magnons in films."),
]


@pytest.fixture(scope="module")
def tex_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FlaskClient]:
    index_dir = tmp_path_factory.mktemp("tex-index")
    build_index(index_dir, TEX_RECORDS)
    app = create_app(index_dir, test_config={"TESTING": True})
    yield app.test_client()
    app.extensions[SERVICE_KEY].close()


def test_related_page_shows_the_title_as_text_and_orders_by_most_similar(
    tex_client: FlaskClient,
) -> None:
    record_id = TEX_RECORDS[0].id
    page = text(tex_client, f"/related/{record_id}")
    shown = "Spin waves in Fe\u2083GeTe\u2082 &lt;b&gt;films&lt;/b&gt; &amp; \u03b1-RuCl\u2083"
    assert f'<h1 class="related-title">{shown}</h1>' in page
    assert f"<title>Related to {shown} \u00b7 pubsearch</title>" in page
    assert "$" not in page.split("<body>")[0]  # no TeX in the head
    select = re.search(r'<select id="sort".*?</select>', page, re.DOTALL)
    assert select is not None
    assert '<option value="relevance" selected>Most similar</option>' in select.group()
    assert "Relevance" not in select.group()
    assert "<strong>2</strong> closest records" in page
    # The search page keeps its own words.
    assert '<option value="relevance" selected>Relevance</option>' in text(tex_client, "/?q=spin")


def test_an_author_link_and_a_quoted_name_keep_to_that_person(client: FlaskClient) -> None:
    page = text(client, "/?q=batch+size&subject=cs.LG")
    link = re.search(r'<span class="authors"><a href="([^"]+)" title="([^"]+)">([^<]+)</a>', page)
    assert link is not None and link.group(3) == "Yang You"
    assert html.unescape(link.group(2)) == "Yang You: profile and papers"
    assert html.unescape(link.group(1)).startswith("/author/Yang%20You#yang-you-")
    # The name in quotes: only that name as recorded, and its box keeps it so.
    person = text(client, "/?q=batch+size&subject=cs.LG&author=%22Yang+You%22")
    chip = re.search(r'<a class="chip" href="([^"]+)" title="([^"]+)"[^>]*>(.*?)</a>', person)
    assert chip is not None and "Yang You" in chip.group(3)
    assert chip.group(2) == "Only this name, as recorded"
    # Its box sends the name in quotes: ticking another box keeps it this person only.
    assert 'name="author" value="&#34;Yang You&#34;" checked>' in person
    assert "<strong>5</strong> results" in person


def test_export_links_and_note(client: FlaskClient, seed_index: Path) -> None:
    page = text(client, "/?q=training&page=2&page_size=5")
    exports = re.findall(r'<a href="([^"]+)" download>([^<]+)</a>', page)
    assert [label for _, label in exports] == ["BibTeX", "RIS", "CSL JSON", "CSV", "JSON lines"]
    assert [html.unescape(u) for u, _ in exports] == [
        "/export.bib?q=training",
        "/export.ris?q=training",
        "/export.json?q=training",
        "/export.csv?q=training",
        "/export.jsonl?q=training",
    ]
    assert "Exports hold all" in page
    capped = create_app(seed_index, test_config={"EXPORT_CAP": 5})
    try:
        page = capped.test_client().get("/").get_data(as_text=True)
        assert "Exports hold the first 5 of 36 results." in page
    finally:
        capped.extensions[SERVICE_KEY].close()


def test_json_twin_link(client: FlaskClient) -> None:
    page = text(client, "/?q=batch&subject=cs.LG")
    assert 'href="/api/search?q=batch&amp;subject=cs.LG">this page as JSON</a>' in page


def test_static_files_are_served(client: FlaskClient) -> None:
    for name, kind in [
        ("pubsearch.css", "text/css"),
        ("pubsearch.js", "text/javascript"),
        ("favicon.svg", "image/svg+xml"),
    ]:
        response = client.get(f"/static/{name}")
        assert response.status_code == 200
        assert response.mimetype == kind
        response.close()


@pytest.mark.parametrize("url", ["/", "/?q=batch", "/?q=zzzqqq", "/?page=0"])
def test_every_form_control_is_labelled(client: FlaskClient, url: str) -> None:
    page = client.get(url).get_data(as_text=True)
    ids = re.findall(r'<(?:input|select)[^>]* id="([^"]+)"', page)
    for control_id in ids:
        assert f'for="{control_id}"' in page, control_id
    # Checkboxes are labelled by the label that wraps them.
    checkboxes = len(re.findall(r'type="checkbox"', page))
    wrapped = len(re.findall(r'<label class="facet-option[^>]*>\s*<input type="checkbox"', page))
    assert checkboxes == wrapped


def test_warm_up_opens_the_index_and_compiles_the_page(seed_index: Path) -> None:
    app = create_app(seed_index)
    svc = app.extensions[SERVICE_KEY]
    assert svc._generation is None
    warm_up(app)
    assert svc._generation is not None and svc._generation.facets is not None
    assert any("search.html" in str(key) for key in app.jinja_env.cache or {})
    assert not svc._open  # the searcher the warm-up took is closed again
    with app.test_client() as client:
        assert "<strong>36</strong> results" in text(client, "/")


def test_warm_up_leaves_a_missing_index_to_the_requests(tmp_path: Path) -> None:
    app = create_app(tmp_path / "no-index")
    warm_up(app)
    with app.test_client() as client:
        assert client.get("/").status_code == 503


def test_the_search_box_takes_a_pasted_abstract(client: FlaskClient) -> None:
    # The browser cuts what is typed or pasted at maxlength: it must hold a whole query.
    box = re.search(r'<input id="q"[^>]*>', text(client, "/")).group()
    assert f'maxlength="{MAX_QUERY_CHARS}"' in box and MAX_QUERY_CHARS >= 10_000


# -- an index of reference-manager and OpenAlex records (tests/data/formats) ---------------


@pytest.fixture
def formats_client(formats_index: Path) -> Iterator[FlaskClient]:
    app = create_app(formats_index, test_config={"TESTING": True})
    yield app.test_client()
    app.extensions[SERVICE_KEY].close()


def sort_options(page: str) -> list[tuple[str, str]]:
    select = re.search(r'<select id="sort".*?</select>', page, re.DOTALL)
    assert select is not None
    return re.findall(r'<option value="([^"]+)"[^>]*>([^<]+)</option>', select.group(0))


def test_most_cited_is_offered_only_where_the_index_has_counts(
    client: FlaskClient, formats_client: FlaskClient
) -> None:
    assert ("cited", "Most cited") not in sort_options(text(client, "/?q=batch"))
    assert ("cited", "Most cited") not in sort_options(text(client, "/"))
    assert sort_options(text(formats_client, "/?q=learning")) == [
        ("relevance", "Relevance"),
        ("newest", "Newest first"),
        ("oldest", "Oldest first"),
        ("cited", "Most cited"),
    ]
    assert ("cited", "Most cited") in sort_options(text(formats_client, "/"))
    error = text(client, "/?q=batch&sort=cited", status=400)
    assert "no record of this index has one" in error


def test_most_cited_page_shows_the_counts_in_order(formats_client: FlaskClient) -> None:
    page = text(formats_client, "/?sort=cited&page_size=20")
    assert '<option value="cited" selected>Most cited</option>' in page
    counts = [
        int(c.replace(",", "")) for c in re.findall(r'class="cited">Cited by ([\d,]+)<', page)
    ]
    assert len(counts) == 20 and counts == sorted(counts, reverse=True)


def test_subjects_that_are_not_arxiv_codes_are_shown_as_they_are(
    formats_client: FlaskClient,
) -> None:
    page = text(formats_client, "/?q=&facet_size=100")
    facet = re.search(r'<fieldset class="facet" id="facet-subject">.*?</fieldset>', page, re.DOTALL)
    assert facet is not None
    options = re.findall(
        r'value="([^"]+)"[^>]*>\s*<span class="facet-label">\s*<span class="facet-value">[^<]*'
        r'</span>\s*(?:<span class="facet-title">([^<]*)</span>)?',
        facet.group(0),
    )
    titles = {html.unescape(value): html.unescape(title) for value, title in options}
    assert titles["Advanced Neural Network Applications"] == ""  # an OpenAlex topic
    assert titles["Computer science"] == ""  # an OpenAlex concept
    assert titles["optical flow"] == ""  # a BibTeX keyword
    assert titles["cs.CV"] == "Computer Vision and Pattern Recognition"  # an arXiv code
    chosen = text(formats_client, "/?subject=Advanced+Neural+Network+Applications")
    assert "Advanced Neural Network Applications" in chosen and "<strong>" in chosen


def test_ris_and_csl_json_exports_download_the_results(formats_client: FlaskClient) -> None:
    ris = formats_client.get("/export.ris?q=black+hole")
    assert ris.status_code == 200 and ris.mimetype == "application/x-research-info-systems"
    assert ris.headers["Content-Disposition"] == 'attachment; filename="pubsearch.ris"'
    assert ris.get_data(as_text=True).startswith("TY  - ")
    csl = formats_client.get("/export.json?q=black+hole")
    assert csl.mimetype == "application/vnd.citationstyles.csl+json"
    items = csl.get_json()
    assert [i["title"] for i in items] == [
        "Dynamic Black-hole Emission Tomography with Physics-informed Neural Fields"
    ]


def test_a_date_shows_as_people_write_it_and_a_month_as_a_month() -> None:
    assert long_date("2024-03-05") == "5 Mar 2024"
    assert long_date("2007-05") == "May 2007"  # dated by the month of its submission
