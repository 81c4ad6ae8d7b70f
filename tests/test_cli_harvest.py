"""What `pubsearch harvest` shows: a bar on a terminal (tqdm: records of how many, the
rate, the time left, pages), nothing but the closing line elsewhere."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from api_server import Works, sample_objects, serving
from harvest_support import harvest


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUBSEARCH_HARVEST_BACKOFF", "0")


def test_a_terminal_gets_a_bar(tmp_path: Path) -> None:
    works = Works("openalex", sample_objects(50))
    with serving(works) as url:
        argv = [sys.executable, "-m", "pubsearch", "harvest", "openalex", "--endpoint", url]
        argv += ["--delay", "0.05", "--per-page", "10", "--batch", "1"]
        argv += ["--index", str(tmp_path / "ix")]
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        env = dict(os.environ, PUBSEARCH_HARVEST_BACKOFF="0")
        process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=follower)
        os.close(follower)
        shown = b""
        while select.select([leader], [], [], 60)[0]:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            shown += chunk
        out, _ = process.communicate(timeout=60)
        os.close(leader)
    text = shown.decode("utf-8", "replace")
    assert process.returncode == 0, text[-2000:]  # what the terminal last showed
    assert "harvesting" in text
    assert "| 50/50 [" in text  # of how many the service says, and the time left
    assert "records/s" in text
    assert "page 5" in text and "new" in text
    assert "harvested 50 records in 6 pages" in out.decode()


def test_elsewhere_only_the_closing_line(tmp_path: Path) -> None:
    works = Works("crossref", sample_objects(20))
    with serving(works) as url:
        result = harvest(["crossref"], tmp_path / "ix", url, "--rows", "10")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    (line,) = result.stdout.strip().splitlines()
    assert line.startswith("harvested 20 records in 3 pages, ")
    assert line.endswith(": 20 new, 0 updated, 0 unchanged; the next run starts since 2026-06-23")
