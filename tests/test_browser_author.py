"""The author page (/author/NAME) in a real headless Chromium, wide and narrow: "Yang You"
of the seed index is several people. Set PUBSEARCH_SCREENSHOT=dir/name.png to keep the
screenshots (name-1280px.png, name-375px.png)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect
from test_browser import _open_page, browser, screenshot_path

pytestmark = pytest.mark.browser

__all__ = ["browser"]  # the module's Chromium, shared with test_browser's tests


@pytest.mark.parametrize("width", [1280, 375])
def test_author_page_shows_each_person(
    browser: Browser, live_server: str, tmp_path: Path, width: int
) -> None:
    for page in _open_page(browser, width=width, height=900):
        page.goto(live_server + "/author/Yang%20You")
        expect(page.locator("h1")).to_have_text("Yang You")
        profiles = page.locator("section.profile")
        assert profiles.count() >= 2
        first = profiles.first
        expect(first).to_contain_text("Publications and source records attributed to Yang You.")
        expect(first.locator("meter").first).to_be_visible()
        calorimeter = profiles.filter(has_text="physics.ins-det (2)")
        expect(calorimeter).to_have_count(1)
        expect(calorimeter).not_to_contain_text("Keypoint")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        shot = screenshot_path(tmp_path)
        page.screenshot(
            path=str(shot.with_name(f"{shot.stem}-author-{width}px.png")), full_page=True
        )
        # A person's records as a search: only theirs.
        calorimeter.get_by_role("link", name="search these records").click()
        expect(page.locator(".total strong")).to_have_text("2")


@pytest.mark.parametrize("width", [1280, 375])
def test_the_author_facet_and_hits_lead_to_people(
    browser: Browser, live_server: str, tmp_path: Path, width: int
) -> None:
    """The facet lists the people of "Yang You" under the name; following one narrows the
    results to that person and marks it; a hit's author name opens that person's profile."""
    for page in _open_page(browser, width=width, height=900):
        page.goto(live_server + "/?facet_size=50")
        filters = page.locator("details.filters")
        if filters.get_attribute("open") is None:  # folded away on a narrow screen
            filters.locator("summary").click()
        you = page.locator("#facet-author-list > li", has_text="Yang You")
        people = you.locator("a.facet-person")
        assert people.count() >= 2
        calorimeter = people.filter(has_text="physics.ins-det")
        expect(calorimeter).to_have_count(1)
        expect(calorimeter.locator(".count")).to_have_text("2")
        calorimeter.click()
        expect(page.locator(".total strong")).to_have_text("2")
        if filters.get_attribute("open") is None:
            filters.locator("summary").click()
        chosen = page.locator("a.facet-person.is-selected")
        expect(chosen).to_have_count(1)
        expect(chosen).to_contain_text("physics.ins-det")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        shot = screenshot_path(tmp_path)
        page.screenshot(
            path=str(shot.with_name(f"{shot.stem}-person-facet-{width}px.png")), full_page=True
        )
        # A hit's author: that person's profile, scrolled to them.
        link = page.locator(".hit .authors a", has_text="Yang You").first
        href = link.get_attribute("href") or ""
        link.click()
        expect(page.locator("h1")).to_have_text("Yang You")
        person = href.partition("#")[2]
        expect(page.locator(f"section#{person}")).to_contain_text("physics.ins-det")
