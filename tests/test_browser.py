"""The page in a real browser: Debian's Chromium driven by Playwright against `pubsearch serve`.

Chromium is found at $PUBSEARCH_CHROMIUM, /usr/bin/chromium or on PATH. Without it these
tests skip, saying how to install it, except in CI (CI=true), where they fail.
Set PUBSEARCH_SCREENSHOT=path.png to keep a screenshot of the page with facets applied
(and path-320px.png, the same page on a 320 px wide screen).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Locator,
    Page,
    Route,
    expect,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError

from pubsearch.index.build import build_index
from pubsearch.ingest.records import Record

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HOW_TO_INSTALL = (
    "no Chromium found: install Debian's with `sudo apt-get install chromium` "
    "(or set PUBSEARCH_CHROMIUM to a Chromium binary); never `playwright install`"
)
WIDE = {"width": 1280, "height": 900}
NARROW = {"width": 320, "height": 720}


def find_chromium(environ: Mapping[str, str]) -> str | None:
    for candidate in (
        environ.get("PUBSEARCH_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def require_chromium(environ: Mapping[str, str], found: str | None) -> str:
    """The Chromium to drive; skips without one, but fails in CI (CI=true)."""
    if found is None:
        if environ.get("CI", "").lower() == "true":
            pytest.fail(HOW_TO_INSTALL + " (CI=true: the browser tests must run)")
        pytest.skip(HOW_TO_INSTALL)
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = require_chromium(os.environ, find_chromium(os.environ))
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


def test_missing_chromium_skips_with_how_to_install_but_fails_in_ci() -> None:
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium"):
        require_chromium({}, None)
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_chromium({"CI": "true"}, None)
    assert require_chromium({"CI": "true"}, "/usr/bin/chromium") == "/usr/bin/chromium"


def test_pubsearch_chromium_points_at_a_browser(tmp_path: Path) -> None:
    fake = tmp_path / "my-chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert find_chromium({"PUBSEARCH_CHROMIUM": str(fake)}) == str(fake)


def _open_page(browser: Browser, javascript: bool = True, **viewport: int) -> Iterator[Page]:
    context = browser.new_context(viewport=viewport or WIDE, java_script_enabled=javascript)
    page = context.new_page()
    page.set_default_timeout(10_000)
    problems: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            problems.append(f"console {message.type}: {message.text}")

    page.on("console", console)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    yield page
    context.close()
    # No script errors, no CSP violations, no failed loads.
    assert problems == []


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    yield from _open_page(browser)


def url_params(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def total(page: Page) -> int:
    text = page.locator(".total strong").inner_text()
    return int(text.replace(",", ""))


def facet_box(page: Page, facet: str, value: str) -> tuple[Locator, Locator]:
    option = page.locator(f"#facet-{facet}-list li").filter(
        has=page.locator(f'input[value="{value}"]')
    )
    return option.locator("input[type=checkbox]"), option.locator(".count")


def subject_count(page: Page, code: str) -> int:
    _, count = facet_box(page, "subject", code)
    return int(count.inner_text())


def tick(page: Page, facet: str, value: str, checked: bool) -> None:
    box, _ = facet_box(page, facet, value)
    with page.expect_navigation():
        box.set_checked(checked)


def screenshot_path(tmp_path: Path) -> Path:
    target = Path(os.environ.get("PUBSEARCH_SCREENSHOT") or tmp_path / "facets.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def test_search_tick_untick_and_go_back(page: Page, live_server: str, tmp_path: Path) -> None:
    page.goto(live_server + "/")
    assert total(page) == 36

    # "/" focuses the search box; typing a query and Enter searches.
    page.locator("body").press("/")
    expect(page.locator("#q")).to_be_focused()
    page.keyboard.type("batch size")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert url_params(page) == {"q": ["batch size"]}  # no empty or default parameters
    assert total(page) == 6
    assert (subject_count(page, "cs.LG"), subject_count(page, "cs.DC")) == (5, 1)

    # Ticking a subject applies at once; the other subject keeps its count (disjunctive).
    tick(page, "subject", "cs.DC", True)
    assert url_params(page) == {"q": ["batch size"], "subject": ["cs.DC"]}
    assert total(page) == 1
    assert subject_count(page, "cs.LG") == 5
    expect(page.locator(".chip")).to_have_count(1)
    expect(page.locator(".chip")).to_contain_text("cs.DC")

    # Two values of one facet mean OR.
    tick(page, "subject", "cs.LG", True)
    assert sorted(url_params(page)["subject"]) == ["cs.DC", "cs.LG"]
    assert total(page) == 6
    page.screenshot(path=str(screenshot_path(tmp_path)), full_page=True)

    tick(page, "subject", "cs.DC", False)
    assert url_params(page) == {"q": ["batch size"], "subject": ["cs.LG"]}
    assert total(page) == 5

    # Back shows each earlier state, boxes ticked as its URL says.
    page.go_back()
    assert sorted(url_params(page)["subject"]) == ["cs.DC", "cs.LG"]
    assert total(page) == 6
    for code in ("cs.DC", "cs.LG"):
        box, _ = facet_box(page, "subject", code)
        expect(box).to_be_checked()
    page.go_back()
    assert url_params(page)["subject"] == ["cs.DC"]
    assert total(page) == 1
    box, _ = facet_box(page, "subject", "cs.LG")
    expect(box).not_to_be_checked()


def test_abstract_toggle(page: Page, live_server: str) -> None:
    page.goto(live_server + "/?q=batch+size")
    first = page.locator(".hit").first
    abstract = first.locator("details.abstract p")
    expect(abstract).to_be_hidden()
    first.get_by_text("Full abstract").click()
    expect(abstract).to_be_visible()
    assert "Large-batch training is an efficient approach" in abstract.inner_text()
    assert first.locator("details.abstract").get_attribute("open") is not None


def test_year_bar_chips_and_clear_all(page: Page, live_server: str) -> None:
    page.goto(live_server + "/?q=training&author=Yang+You")
    before = total(page)
    with page.expect_navigation():
        page.locator('.histogram a[aria-label^="2021:"]').click()
    assert url_params(page) == {"q": ["training"], "author": ["Yang You"], "year": ["2021"]}
    assert total(page) < before
    expect(page.locator("#year")).to_have_value("2021")
    with page.expect_navigation():
        page.get_by_role("link", name="Remove year filter 2021").click()
    assert "year" not in url_params(page)
    with page.expect_navigation():
        page.get_by_role("link", name="Clear all").click()
    assert url_params(page) == {"q": ["training"]}


def test_sort_and_page_size_apply_at_once(page: Page, live_server: str) -> None:
    page.goto(live_server + "/?q=training")
    with page.expect_navigation():
        page.get_by_label("Sort").select_option("oldest")
    assert url_params(page) == {"q": ["training"], "sort": ["oldest"]}
    years = [int(y) for y in page.locator(".hit .year").all_inner_texts()]
    assert years == sorted(years)
    with page.expect_navigation():
        page.get_by_label("Per page").select_option("20")
    assert url_params(page)["page_size"] == ["20"]


def test_related_papers_page(page: Page, live_server: str) -> None:
    page.goto(live_server + "/?q=batch+size")
    with page.expect_navigation():
        page.locator(".hit").first.get_by_role("link", name="Related papers").click()
    assert re.search(r"/related/[^/?]+$", page.url)
    expect(page.locator(".related-banner")).to_contain_text("The Limit of the Batch Size")
    assert total(page) > 0


def test_visible_focus(page: Page, live_server: str) -> None:
    page.goto(live_server + "/?q=batch")
    page.keyboard.press("Tab")  # the skip link comes first
    focused = page.evaluate("document.activeElement.className")
    assert focused == "skip-link"
    expect(page.locator(".skip-link")).to_be_in_viewport()
    page.keyboard.press("Tab")
    style = page.evaluate(
        "(() => { const s = getComputedStyle(document.activeElement);"
        " return [s.outlineStyle, s.outlineWidth]; })()"
    )
    assert style == ["solid", "3px"]


def test_narrow_screen(browser: Browser, live_server: str, tmp_path: Path) -> None:
    for page in _open_page(browser, **NARROW):
        page.goto(live_server + "/?q=batch+size&subject=cs.DC&subject=cs.LG")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= NARROW["width"]
        filters = page.locator("details.filters")
        assert filters.get_attribute("open") is None  # folded away on a narrow screen
        expect(page.locator("#facet-subject")).to_be_hidden()
        filters.locator("summary").click()
        expect(page.locator("#facet-subject")).to_be_visible()
        shot = screenshot_path(tmp_path)
        page.screenshot(path=str(shot.with_name(shot.stem + "-320px.png")), full_page=True)


def test_works_without_javascript(browser: Browser, live_server: str) -> None:
    for page in _open_page(browser, javascript=False):
        page.goto(live_server + "/?q=batch+size")
        expect(page.locator(".apply-filters button")).to_be_visible()
        box, _ = facet_box(page, "subject", "cs.DC")
        box.check()
        with page.expect_navigation():
            page.get_by_role("button", name="Apply filters").click()
        params = url_params(page)
        assert params["q"] == ["batch size"] and params["subject"] == ["cs.DC"]
        assert total(page) == 1
        expect(page.locator(".facet-filter")).to_have_count(0)


# -- a long author list: type to filter it ---------------------------------------------------

MANY_AUTHORS = [
    "Ada Lovelace",
    "Alan Turing",
    "Barbara Liskov",
    "Claude Shannon",
    "Donald Knuth",
    "Edsger Dijkstra",
    "Frances Allen",
    "Grace Hopper",
    "Jürgen Schmidhuber",
    "Leslie Lamport",
]


@pytest.fixture(scope="module")
def many_authors_server(
    tmp_path_factory: pytest.TempPathFactory,
    serve: Callable[[Path, Path], AbstractContextManager[str]],
) -> Iterator[str]:
    index_dir = tmp_path_factory.mktemp("many-authors")
    records = [
        Record(title=f"Paper {i} on graphs", authors=(name,), year=2000 + i, subjects=("cs.DS",))
        for i, name in enumerate(MANY_AUTHORS)
    ]
    build_index(index_dir, records)
    with serve(index_dir, index_dir.parent / "serve.log") as url:
        yield url


def test_author_facet_can_be_filtered_by_typing(page: Page, many_authors_server: str) -> None:
    page.goto(many_authors_server + "/")
    items = page.locator("#facet-author-list li")
    expect(items).to_have_count(len(MANY_AUTHORS))
    search = page.get_by_label("Filter authors")
    expect(search).to_be_visible()
    search.fill("jurgen")  # accents do not matter
    expect(page.locator("#facet-author-list li:visible")).to_have_count(1)
    expect(page.locator("#facet-author-list li:visible")).to_contain_text("Jürgen Schmidhuber")
    search.fill("")
    expect(page.locator("#facet-author-list li:visible")).to_have_count(len(MANY_AUTHORS))
    search.fill("a")
    search.press("Enter")  # does not submit the form
    assert url_params(page) == {}
    with page.expect_navigation():
        page.locator("#facet-author-list li:visible").first.locator("input").check()
    assert len(url_params(page)["author"]) == 1
    assert total(page) == 1


# -- stored and reflected XSS, in the real browser ---------------------------------------------

XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
XSS_RECORDS = [
    Record(
        title=f"Batch training {XSS} title",
        abstract=f"Large batch training abstract {XSS} with x < y && 'quotes' batch.",
        authors=(f"Eve {XSS}", "O'Neil & Sons"),
        subjects=("cs.LG", '"><svg onload=window.__pwned=3>'),
        year=2021,
    ),
    Record(
        title="A plain paper about batch size", authors=("Bob",), year=2020, subjects=("cs.DC",)
    ),
]


@pytest.fixture(scope="module")
def xss_server(
    tmp_path_factory: pytest.TempPathFactory,
    serve: Callable[[Path, Path], AbstractContextManager[str]],
) -> Iterator[str]:
    index_dir = tmp_path_factory.mktemp("xss")
    build_index(index_dir, XSS_RECORDS)
    with serve(index_dir, index_dir.parent / "xss-serve.log") as url:
        yield url


def assert_not_pwned(page: Page) -> None:
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("body img[src=x]").count() == 0
    assert page.locator("body svg[onload]").count() == 0
    # Every script element is our own file.
    sources = page.locator("script").evaluate_all("els => els.map(e => e.src)")
    assert all(src.endswith("/static/pubsearch.js") for src in sources)


@pytest.mark.parametrize(
    "path",
    [
        "/?q=batch",
        "/?q=onerror",
        "/?q=" + "%3Cscript%3Ewindow.__pwned%3D4%3C%2Fscript%3E",
        "/?q=%22%3E%3Cimg+src%3Dx+onerror%3D%22window.__pwned%3D5%22%3E",
        "/?q=batch&author=Eve+%3Cscript%3Ewindow.__pwned%3D6%3C%2Fscript%3E",
        "/?q=nothingatall%3Cscript%3Ewindow.__pwned%3D7%3C%2Fscript%3E",
    ],
)
def test_stored_and_reflected_xss_do_not_run(page: Page, xss_server: str, path: str) -> None:
    response = page.goto(xss_server + path)
    assert response is not None and response.status == 200
    assert_not_pwned(page)


def test_reflected_xss_on_the_error_page(browser: Browser, xss_server: str) -> None:
    context = browser.new_context(viewport=WIDE)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        bad = "%3Cscript%3Ewindow.__pwned%3D8%3C%2Fscript%3E"
        response = page.goto(f"{xss_server}/?q=batch&year={bad}&sort={bad}")
        assert response is not None and response.status == 400
        assert_not_pwned(page)
        assert errors == []
    finally:
        context.close()


def test_stored_markup_shows_as_text(page: Page, xss_server: str) -> None:
    page.goto(xss_server + "/?q=batch")
    expect(page.get_by_text("<script>window.__pwned=2</script>").first).to_be_visible()
    page.locator("details summary").first.click()
    assert_not_pwned(page)
    with page.expect_navigation():
        page.get_by_role("link", name=re.compile("Related papers")).first.click()
    assert_not_pwned(page)


def test_results_follow_the_box_as_you_type(page: Page, live_server: str) -> None:
    page.goto(live_server + "/")
    assert total(page) == 36
    box = page.locator("#q")
    box.click()
    page.keyboard.type("batch", delay=40)
    expect(page).to_have_url(re.compile(r"/\?q=batch$"))
    page.keyboard.type(" size", delay=40)
    # No Enter: the results, the facets, the title and the address follow the box.
    expect(page.locator(".total strong")).to_have_text("6")
    expect(page).to_have_url(re.compile(r"/\?q=batch\+size$"))
    expect(page).to_have_title(re.compile("^batch size"))
    assert (subject_count(page, "cs.LG"), subject_count(page, "cs.DC")) == (5, 1)
    expect(box).to_be_focused()
    expect(box).to_have_value("batch size")
    # Screen readers hear the new total from a status region that stays on the page.
    expect(page.locator("#typing-status[role=status]")).to_have_text(
        re.compile(r"^6 results for “batch size” · 1–6 · \d+ ms$")
    )
    # The facets put in place work as the page's own: ticking one applies it.
    tick(page, "subject", "cs.DC", True)
    assert url_params(page) == {"q": ["batch size"], "subject": ["cs.DC"]}
    assert total(page) == 1
    # Typing replaced the address ("/", then "?q=batch") instead of adding one per pause:
    # one step back is the typed query, the next leaves the site.
    page.go_back()
    assert url_params(page) == {"q": ["batch size"]}
    assert total(page) == 6
    page.go_back()
    assert "q=" not in page.url


def test_typing_keeps_the_filters_and_a_refused_query_keeps_the_results(
    browser: Browser, live_server: str
) -> None:
    context = browser.new_context(viewport=WIDE)
    page = context.new_page()
    page.set_default_timeout(10_000)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else 0)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.goto(live_server + "/?q=batch&subject=cs.LG")
    box = page.locator("#q")
    box.click()
    page.keyboard.press("End")
    page.keyboard.type(" size", delay=40)
    expect(page).to_have_url(re.compile(r"\?q=batch\+size&subject=cs\.LG$"))
    expect(page.locator(".total strong")).to_have_text("5")
    expect(page.locator(".chip")).to_contain_text("cs.LG")
    assert problems == []
    # A query the server refuses (400) while half typed: the last results stay.
    with page.expect_response(lambda r: r.status == 400):
        page.keyboard.type(" year:[2019 TO", delay=40)
    expect(page.locator(".total strong")).to_have_text("5")
    expect(page).to_have_url(re.compile(r"\?q=batch\+size&subject=cs\.LG$"))
    # Enter shows why, as before.
    with page.expect_navigation():
        page.keyboard.press("Enter")
    expect(page.locator("body")).to_contain_text("is not closed")
    context.close()
    # Chromium logs each refused load (the fetches, then the page); nothing else.
    assert problems and all("status of 400" in p for p in problems), problems


def test_a_pasted_abstract_is_searched_whole(page: Page, live_server: str) -> None:
    # A record's abstract pasted into the box (longer than the 1,000 characters the box
    # once cut it to) finds that record first, and the whole text reaches the server.
    pasted = (
        "Training large deep neural networks on massive datasets is computationally very "
        "challenging. There has been recent surge in interest in using large batch stochastic "
        "optimization methods to tackle this issue. The most prominent algorithm in this line "
        "of research is LARS, which by employing layerwise adaptive learning rates trains "
        "ResNet on ImageNet in a few minutes. However, LARS performs poorly for attention "
        "models like BERT, indicating that its performance gains are not consistent across "
        "tasks. In this paper, we first study a principled layerwise adaptation strategy to "
        "accelerate training of deep neural networks using large mini-batches. Using this "
        "strategy, we develop a new layerwise adaptive large batch optimization technique "
        "called LAMB; we then provide convergence analysis of LAMB as well as LARS, showing "
        "convergence to a stationary point in general nonconvex settings. Our empirical "
        "results demonstrate the superior performance of LAMB across various tasks such as "
        "BERT and ResNet-50 training with very little hyperparameter tuning. In particular, "
        "for BERT training, our optimizer enables use of very large batch sizes of 32868 "
        "without any degradation of performance. By increasing the batch size to the memory "
        "limit of a TPUv3 Pod, BERT training time can be reduced from 3 days to just 76 "
        "minutes (Table 1)."
    )
    assert len(pasted) > 1_200
    page.goto(live_server + "/")
    page.locator("#q").focus()
    page.keyboard.insert_text(pasted)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert url_params(page)["q"] == [pasted]
    first = page.locator("ol.hits > li h2").first
    expect(first).to_have_text(re.compile("^Large Batch Optimization for Deep Learning"))


@pytest.mark.semantic
def test_the_mode_switch_applies_at_once(page: Page, vector_server: str) -> None:
    page.goto(vector_server + "/?q=" + "speeding up the education of enormous networks")
    switch = page.get_by_label("Match")
    expect(switch).to_have_value("hybrid")
    with page.expect_navigation():
        switch.select_option("semantic")
    assert url_params(page)["mode"] == ["semantic"]
    expect(page.locator(".hit .why").first).to_contain_text("Close in meaning:")
    with page.expect_navigation():
        page.get_by_label("Match").select_option("hybrid")
    assert "mode" not in url_params(page)  # the default is left out of the URL


@pytest.fixture(scope="module")
def library_server(
    formats_index: Path,
    tmp_path_factory: pytest.TempPathFactory,
    serve: Callable[[Path, Path], AbstractContextManager[str]],
) -> Iterator[str]:
    """`pubsearch serve` of tests/data/formats: keywords, OpenAlex topics, citation counts."""
    with serve(formats_index, tmp_path_factory.mktemp("library") / "serve.log") as url:
        yield url


def test_most_cited_sort_and_subjects_as_they_are(
    page: Page, library_server: str, tmp_path: Path
) -> None:
    page.goto(library_server + "/?q=learning")
    with page.expect_navigation():
        page.get_by_label("Sort").select_option("cited")
    assert url_params(page) == {"q": ["learning"], "sort": ["cited"]}
    expect(page.get_by_label("Sort")).to_have_value("cited")
    cited = [
        int(c.removeprefix("Cited by ").replace(",", ""))
        for c in page.locator(".hit .cited").all_inner_texts()
    ]
    assert len(cited) >= 5 and cited == sorted(cited, reverse=True)

    # A topic is a subject of its own: no arXiv name beside it; ticking it filters.
    topic = "Advanced Neural Network Applications"
    box, count = facet_box(page, "subject", topic)
    expect(box).to_be_visible()
    label = page.locator("#facet-subject-list li").filter(
        has=page.locator(f'input[value="{topic}"]')
    )
    expect(label.locator(".facet-title")).to_have_count(0)
    expected = int(count.inner_text())
    tick(page, "subject", topic, True)
    assert url_params(page) == {"q": ["learning"], "sort": ["cited"], "subject": [topic]}
    assert total(page) == expected
    page.screenshot(path=str(tmp_path / "library.png"), full_page=True)
    shot = os.environ.get("PUBSEARCH_LIBRARY_SCREENSHOT")
    if shot:
        page.goto(library_server + "/?q=learning&sort=cited")
        page.screenshot(path=shot, full_page=True)


def test_typing_back_to_the_shown_query_drops_the_answer_on_its_way(
    page: Page, live_server: str
) -> None:
    """The address bar and the results always show what the box asks for: an answer to
    text typed and taken back before it came is not put in place."""
    page.goto(live_server + "/?q=batch")
    shown = total(page)
    held: list[Route] = []

    def hold(route: Route) -> None:  # the answer to "batch s" waits
        held.append(route)

    page.route(re.compile(r"/\?q=batch\+s$"), hold)
    box = page.locator("#q")
    box.click()
    page.keyboard.press("End")
    page.keyboard.type(" s", delay=40)
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(20)
    assert len(held) == 1
    page.keyboard.press("Backspace")
    page.keyboard.press("Backspace")
    page.wait_for_timeout(400)  # past the pause: the box rests on "batch" again
    with contextlib.suppress(PlaywrightError):  # the page may have given up on it
        held[0].continue_()
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(200)  # time for an answer that came to be put in place
    assert urlsplit(page.url).query == "q=batch"
    expect(box).to_have_value("batch")
    assert total(page) == shown
    expect(page).to_have_title(re.compile("^batch ·"))


# -- authors and subjects: names, links and the facets' order --------------------------------

SURNAMES = "Aalto Berg Cole Dahl Egan Falk Gray Hale Ives Jude Kerr Lund Moss Nash Orr Pike"
PROLIFIC = [f"Ann {surname}" for surname in (SURNAMES + " Quinn Ross Shaw Tate Uhl Vale").split()]
YOUS = {"Y. You": 2, "Y You": 1, "Yang You": 3, "Yu You": 1}


def _people_records() -> list[Record]:
    records = [
        Record(
            title=f"Graph colouring bound {k}",
            authors=tuple(PROLIFIC),
            subjects=("math.CO",),
            year=2020,
        )
        for k in range(4)
    ]
    records.append(Record(title="A rare graph result", authors=("Ada Rare",), subjects=("cs.DM",)))
    number = 0
    for name, papers in YOUS.items():
        for _ in range(papers):
            number += 1
            subjects = ("cs.LG",) if number % 2 else ("stat.ML", "cs.LG")
            records.append(
                Record(title=f"Batch scaling study {number}", authors=(name,), subjects=subjects)
            )
    return records


@pytest.fixture(scope="module")
def people_server(
    tmp_path_factory: pytest.TempPathFactory,
    serve: Callable[[Path, Path], AbstractContextManager[str]],
) -> Iterator[str]:
    index_dir = tmp_path_factory.mktemp("people")
    build_index(index_dir, _people_records())
    with serve(index_dir, index_dir.parent / "serve.log") as url:
        yield url


def author_list(page: Page) -> list[tuple[str, bool]]:
    """The author facet as shown: (name, ticked), in order."""
    items = page.locator("#facet-author-list li")
    return [
        (item.locator(".facet-value").inner_text(), item.locator("input").is_checked())
        for item in items.all()
    ]


def test_an_authors_link_on_a_hit_opens_that_persons_profile(
    page: Page, people_server: str
) -> None:
    page.goto(people_server + "/?q=batch+scaling")
    assert total(page) == sum(YOUS.values())
    link = page.locator(".hit .authors a", has_text=re.compile(r"^Y\. You$")).first
    expect(link).to_have_attribute("title", "Y. You: profile and papers")
    href = link.get_attribute("href") or ""
    path, _, person = href.partition("#")
    assert path == "/author/Y.%20You" and person
    with page.expect_navigation():
        link.click()
    assert page.url == people_server + href
    expect(page.locator(f"section#{person} h2")).to_contain_text("Y. You")
    # A name in quotes, as the search form sends it: only that name as recorded.
    page.goto(people_server + "/?q=batch+scaling&author=%22Y.+You%22")
    assert url_params(page) == {"q": ["batch scaling"], "author": ['"Y. You"']}
    # Y. You and Y You (one person's spellings), not Yang You or Yu You.
    assert total(page) == YOUS["Y. You"] + YOUS["Y You"]
    assert author_list(page)[:3] == [("Y. You", True), ("Y You", True), ("Yang You", False)]
    expect(page.locator(".chip")).to_contain_text('"Y. You" (2 names)')
    # Ticking a subject keeps the person: the boxes send the names in quotes.
    tick(page, "subject", "stat.ML", True)
    assert sorted(url_params(page)["author"]) == ['"Y You"', '"Y. You"']
    assert {h for h in page.locator(".hit .authors").all_inner_texts()} <= {"Y. You", "Y You"}
    # The same name typed follows the name rule: every Y. You.
    page.goto(people_server + "/?q=batch+scaling&author=Y.+You")
    assert total(page) == sum(YOUS.values())


def test_ticked_values_stay_first_in_their_list(page: Page, people_server: str) -> None:
    page.goto(people_server + "/")
    names = [name for name, _ in author_list(page)]
    assert len(names) == 20 and "Ada Rare" not in names  # the 22 prolific fill the list
    # One that falls off the list, selected (a shared link): shown first, ticked.
    page.goto(people_server + "/?author=Ada+Rare")
    assert author_list(page)[0] == ("Ada Rare", True)
    assert not any(ticked for _, ticked in author_list(page)[1:])
    # One far down the list, ticked: it joins the top.
    last = author_list(page)[-1][0]
    tick(page, "author", last, True)
    assert author_list(page)[:2] == [(last, True), ("Ada Rare", True)]
    assert not any(ticked for _, ticked in author_list(page)[2:])
    page.go_back()
    assert author_list(page)[0] == ("Ada Rare", True)


def test_a_subject_by_its_name(page: Page, people_server: str) -> None:
    page.goto(people_server + "/?subject=machine+learning")
    expect(page.locator(".notices")).to_contain_text(
        "Subject \u201cmachine learning\u201d is the name of cs.LG and stat.ML"
    )
    assert total(page) == sum(YOUS.values())
    subjects = page.locator("#facet-subject-list li input")
    assert [box.get_attribute("value") for box in subjects.all()[:2]] == ["cs.LG", "stat.ML"]
    expect(subjects.nth(0)).to_be_checked()
    expect(subjects.nth(1)).to_be_checked()
    expect(page.locator(".chip")).to_contain_text("machine learning (2 subjects)")
    # Unticking one leaves the other.
    tick(page, "subject", "cs.LG", False)
    assert url_params(page) == {"subject": ["stat.ML"]}
    assert total(page) == subject_count(page, "stat.ML")
    # A name nearly right says what there is.
    page.goto(people_server + "/?subject=Machine+Lerning")
    expect(page.locator(".notices")).to_contain_text(
        "did you mean Machine Learning (cs.LG), Machine Learning (stat.ML)?"
    )
    expect(page.locator(".no-results")).to_be_visible()
