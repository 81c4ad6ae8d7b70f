"""What the tests of the API harvests share: the command run in-process or as a process
(killed between pages), and the index's documents."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from api_server import Works
from click.testing import CliRunner, Result

from pubsearch.cli.main import main
from pubsearch.index import storage


def harvest(source: list[str], index_dir: Path, endpoint: str, *args: str) -> Result:
    """``pubsearch harvest SOURCE``, without a delay, each page added as it comes unless
    ``args`` set ``--batch``."""
    argv = ["harvest", *source, "--endpoint", endpoint, "--delay", "0"]
    batch = [] if "--batch" in args else ["--batch", "1"]
    return CliRunner().invoke(main, [*argv, "--index", str(index_dir), *batch, *args])


def indexed(index_dir: Path) -> dict[str, dict[str, Any]]:
    """The stored fields of every document, by id."""
    _, ix = storage.open_current(index_dir)
    try:
        with ix.searcher() as searcher:
            return {doc["id"]: doc for doc in searcher.all_stored_fields()}
    finally:
        ix.close()


def killed_between_pages(
    works: Works, source: list[str], index_dir: Path, endpoint: str, page: int, *args: str
) -> None:
    """The command run as a process with each page added as it comes, killed (SIGKILL)
    while it waits for page ``page``."""
    argv = [sys.executable, "-m", "pubsearch", "harvest", *source, "--endpoint", endpoint]
    argv += ["--delay", "0", "--batch", "1", "--index", str(index_dir), *args]
    env = dict(os.environ, PUBSEARCH_HARVEST_BACKOFF="0")
    works.block_at = page
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert works.reached.wait(60), f"the harvest never asked for page {page}"
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
    works.block_at = None
    works.release.set()
