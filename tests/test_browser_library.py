"""The library in a real browser (Debian's Chromium via Playwright, against `pubsearch
serve`): follow a search, tag three hits, open the Library and Recommended pages, read the
Atom feed; screenshots at 1280 and 375 px (kept in PUBSEARCH_SCREENSHOT_DIR when set)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import feedparser
import pytest
from library_support import build
from playwright.sync_api import Browser, Page, expect, sync_playwright
from test_browser import CHROMIUM_ARGS, _open_page, find_chromium, require_chromium

pytestmark = pytest.mark.browser

PHONE = {"width": 375, "height": 800}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = require_chromium(os.environ, find_chromium(os.environ))
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def wide(browser: Browser) -> Iterator[Page]:
    yield from _open_page(browser)


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    yield from _open_page(browser, **PHONE)


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("PUBSEARCH_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_follow_tag_library_recommended_and_feed(
    wide: Page,
    phone: Page,
    tmp_path: Path,
    serve: Callable[[Path, Path], AbstractContextManager[str]],
) -> None:
    index = build(tmp_path / "ix")
    shots = _shots(tmp_path)
    with serve(index, tmp_path / "serve.log") as url:
        page = wide
        page.goto(url + "/?q=galaxy")
        # Follow the search.
        page.locator("#follow-name").fill("galaxies")
        with page.expect_navigation():
            page.locator("button.follow-button").click()
        assert page.url == url + "/library"
        expect(page.locator(".library-list").first).to_contain_text("galaxies")
        expect(page.locator(".library-list").first).to_contain_text("0 new")

        # Tag three hits: each comes back to the search, the tag last used at hand.
        page.goto(url + "/?q=galaxy")
        page.locator("#tag-name").fill("lensing")
        for number in range(3):
            expect(page.locator("#tag-name")).to_have_value("lensing")
            button = page.locator("button.tag-button").nth(number)
            with page.expect_navigation():
                button.click()
            assert page.url == url + "/?q=galaxy"
        page.screenshot(path=str(shots / "search-1280.png"), full_page=True)

        # The Library page: the saved search and the tag with its three records.
        page.goto(url + "/library")
        tags = page.locator(".library-list").nth(1)
        expect(tags).to_contain_text("lensing")
        expect(tags).to_contain_text("3 records")
        page.screenshot(path=str(shots / "library-1280.png"), full_page=True)
        with page.expect_navigation():
            tags.get_by_role("link", name="lensing").click()
        expect(page.locator(".hit")).to_have_count(3)
        expect(page.locator(".library-banner")).to_contain_text("lensing")
        page.screenshot(path=str(shots / "tag-1280.png"), full_page=True)

        # Recommended: untagged records, galaxy papers first.
        with page.expect_navigation():
            page.get_by_role("link", name="Recommended for lensing").click()
        hits = page.locator(".hit")
        expect(hits).to_have_count(10)
        for number in range(7):
            expect(hits.nth(number).locator(".hit-title")).to_contain_text("Galaxy study")
        page.screenshot(path=str(shots / "recommended-1280.png"), full_page=True)

        # The Atom feed, as a reader would fetch it.
        response = page.request.get(url + "/tag/lensing.atom")
        assert response.ok
        feed = feedparser.parse(response.body())
        assert not feed.bozo and len(feed.entries) == 3
        assert all(e.id.startswith("https://arxiv.org/abs/2503.") for e in feed.entries)

        # The same pages on a phone's width.
        for path, name in (
            ("/?q=galaxy", "search"),
            ("/library", "library"),
            ("/library/tag/lensing/recommended", "recommended"),
        ):
            phone.goto(url + path)
            width = phone.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], (path, width)  # nothing wider than the screen
            phone.screenshot(path=str(shots / f"{name}-375.png"), full_page=True)
