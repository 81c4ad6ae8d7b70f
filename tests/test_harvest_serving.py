"""A running `pubsearch serve` keeps answering while a harvest adds to its index (each
batch a new generation, as `pubsearch index --update` makes), and serves the new records
once the harvest has added them, without a restart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from api_server import Works, sample_objects, serving
from conftest import running_server
from harvest_support import harvest


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUBSEARCH_HARVEST_BACKOFF", "0")


def search(base: str, query: str = "") -> tuple[int, dict[str, Any]]:
    url = f"{base}/api/search?sort=newest&page_size=50&q={urllib.parse.quote(query)}"
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, json.loads(response.read())


def test_a_server_answers_during_a_harvest_and_serves_its_records_after(
    tmp_path: Path,
) -> None:
    index_dir = tmp_path / "ix"
    objects = sample_objects(50)
    works = Works("openalex", objects[:20])
    with serving(works) as api:
        first = harvest(["openalex"], index_dir, api, "--per-page", "10")
        assert first.exit_code == 0, first.output
        with running_server(index_dir, tmp_path / "serve.log") as site:
            status, before = search(site)
            assert (status, before["total"]) == (200, 20)
            # Thirty works new at OpenAlex: the next run's list (since the latest day).
            works.objects.extend(objects[20:])
            for obj in objects[20:]:
                works.changed[obj["id"]] = "2030-01-02"
            answers: list[int] = []
            totals: list[int] = []
            stop = threading.Event()

            def keep_asking() -> None:
                while not stop.is_set():
                    code, data = search(site)
                    answers.append(code)
                    totals.append(data["total"])

            asker = threading.Thread(target=keep_asking, daemon=True)
            asker.start()
            works.block_at = 3  # the harvest waits there, pages 1 and 2 added
            argv = [sys.executable, "-m", "pubsearch", "harvest", "openalex"]
            argv += ["--endpoint", api, "--delay", "0", "--per-page", "10", "--batch", "1"]
            env = dict(os.environ, PUBSEARCH_HARVEST_BACKOFF="0")
            process = subprocess.Popen(
                [*argv, "--index", str(index_dir)], env=env, stdout=subprocess.PIPE
            )
            try:
                assert works.reached.wait(60), "the harvest never asked for page 3"
                asked_before = len(answers)
                while len(answers) < asked_before + 3:  # a few answers while it waits
                    assert asker.is_alive()
                    threading.Event().wait(0.05)
                works.release.set()
                out, _ = process.communicate(timeout=120)
            finally:
                if process.poll() is None:
                    process.kill()
            assert process.returncode == 0
            assert "31 records" in out.decode()
            asked_during = len(answers)
            while len(answers) < asked_during + 2:
                threading.Event().wait(0.05)
            stop.set()
            asker.join(30)
            status, after = search(site)
            title_hits = search(site, f'"{objects[35]["title"]}"')[1]["hits"]
    assert set(answers) == {200}
    assert totals[0] == 20 and totals[-1] == 50
    assert totals == sorted(totals)  # each generation served whole, never one going back
    assert any(20 < total < 50 for total in totals)  # a batch served before the end
    assert (status, after["total"]) == (200, 50)
    assert title_hits[0]["id"] == objects[35]["id"]
