"""The page during and after a harvest, in a real browser: a running `pubsearch serve`
shows each batch the harvest has added, and the new records first when sorted newest
first, without a restart. The screenshots are kept where PUBSEARCH_SCREENSHOT_DIR says
(else in the test's temporary folder), to be looked at."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from api_server import Works, sample_objects, serving
from conftest import running_server
from harvest_support import harvest
from playwright.sync_api import Browser, Page
from test_browser import _open_page, browser, total  # noqa: F401  (browser: a fixture)

from pubsearch.ingest.readable import readable

pytestmark = pytest.mark.browser


def shot(page: Page, tmp_path: Path, name: str) -> None:
    folder = Path(os.environ.get("PUBSEARCH_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=True)


def titles(page: Page) -> list[str]:
    return [t.strip() for t in page.locator(".hit h2, .hit h3").all_inner_texts()]


def test_the_page_during_and_after_a_harvest(browser: Browser, tmp_path: Path) -> None:  # noqa: F811
    index_dir = tmp_path / "ix"
    # The 20 oldest works first; the 30 newest appear at OpenAlex afterwards.
    objects = sorted(sample_objects(50), key=lambda o: (o["date"], o["id"]))
    works = Works("openalex", objects[:20])
    env = dict(os.environ, PUBSEARCH_HARVEST_BACKOFF="0")
    with serving(works) as api:
        first = harvest(["openalex"], index_dir, api, "--per-page", "10")
        assert first.exit_code == 0, first.output
        with running_server(index_dir, tmp_path / "serve.log") as site:
            works.objects.extend(objects[20:])
            for obj in objects[20:]:
                works.changed[obj["id"]] = "2030-01-02"
            works.block_at = 3  # the harvest waits there, pages 1 and 2 added
            argv = [sys.executable, "-m", "pubsearch", "harvest", "openalex", "--endpoint", api]
            argv += ["--delay", "0", "--per-page", "10", "--batch", "1"]
            process = subprocess.Popen(
                [*argv, "--index", str(index_dir)], env=env, stdout=subprocess.PIPE
            )
            try:
                assert works.reached.wait(60), "the harvest never asked for page 3"
                for page in _open_page(browser):
                    page.goto(site + "/?sort=newest")
                    during = total(page)
                    shot(page, tmp_path, "harvest-during-1280px.png")
                    works.release.set()
                    out, _ = process.communicate(timeout=120)
                    assert process.returncode == 0, out
                    page.goto(site + "/?sort=newest")
                    after = total(page)
                    shown = titles(page)
                    shot(page, tmp_path, "harvest-after-1280px.png")
                for page in _open_page(browser, width=375, height=800):
                    page.goto(site + "/?sort=newest")
                    shot(page, tmp_path, "harvest-after-375px.png")
            finally:
                works.release.set()
                if process.poll() is None:
                    process.kill()
    assert 20 < during < 50  # batches already added, served while the harvest waits
    assert after == 50
    # Newest first: the first ten shown are of the thirty the harvest added.
    added = {" ".join(readable(o["title"]).split()) for o in objects[20:]}
    assert len(shown) >= 10
    assert {" ".join(t.split()) for t in shown[:10]} <= added
