"""`pubsearch serve`: a real waitress server, safe defaults, the URL to open."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
import werkzeug.test
from click.testing import CliRunner

from pubsearch.cli.main import _browser_url, main
from pubsearch.core import memory
from pubsearch.web import serving


def test_help_says_the_defaults_and_how_to_expose_it() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "--host TEXT" in text and "[default: 127.0.0.1]" in text
    assert "--port" in text and "[default: 5000; 0<=x<=65535]" in text
    assert "--host 0.0.0.0 exposes the page to your network" in text
    assert "--index" in text and "--threads" in text


def test_python_dash_m_runs_the_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pubsearch", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "serve" in result.stdout and "query" in result.stdout


def test_browser_url() -> None:
    assert _browser_url("127.0.0.1", 5000) == "http://127.0.0.1:5000/"
    assert _browser_url("0.0.0.0", 8080) == "http://127.0.0.1:8080/"
    assert _browser_url("::1", 80) == "http://[::1]:80/"


def test_real_server_serves_the_page_and_the_api(live_server: str) -> None:
    with urllib.request.urlopen(live_server + "/?q=batch+size") as response:
        assert response.status == 200
        assert response.headers["Server"].startswith("waitress")
        assert "default-src 'self'" in response.headers["Content-Security-Policy"]
        assert "<strong>6</strong> results" in response.read().decode()
    with urllib.request.urlopen(live_server + "/api/search?q=batch") as response:
        assert response.headers["Content-Type"] == "application/json"
    with urllib.request.urlopen(live_server + "/static/pubsearch.css") as response:
        assert response.status == 200


# -- several server processes (pubsearch.web.serving) ---------------------------------------

ServeProcess = Callable[..., AbstractContextManager[tuple[str, "subprocess.Popen[bytes]"]]]

linux_only = pytest.mark.skipif(
    not Path("/proc/self/task").is_dir() or not hasattr(os, "fork"),
    reason="reads child processes from /proc and forks (Linux)",
)


def _children(pid: int, expected: int) -> list[int]:
    """The direct child processes of ``pid``, from /proc (Linux), once there are
    ``expected`` of them (the port is open before the server processes are all forked)."""
    deadline = time.monotonic() + 15
    while True:
        try:
            found = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            found = []
        if len(found) >= expected or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _gone(pid: int, within: float) -> bool:
    """Whether process ``pid`` has exited (or is a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, response.read().decode()


def test_help_says_what_processes_cost() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    text = " ".join(result.output.split())
    assert "--processes" in text and "[default: 2, or 1 with one CPU]" in text
    assert "memory grows with them" in text


def test_default_processes_follow_the_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert serving.default_processes() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert serving.default_processes() == (2 if hasattr(os, "fork") else 1)


@linux_only
def test_processes_share_the_port_and_stop_with_the_server(
    seed_index: Path, tmp_path: Path, serve_process: ServeProcess
) -> None:
    log = tmp_path / "serve.log"
    with serve_process(seed_index, log, ["--processes", "3", "--threads", "2"]) as (url, proc):
        children = _children(proc.pid, 3)
        assert len(children) == 3, log.read_text()
        # Concurrent requests, each answered in full, whichever process takes it.
        with ThreadPoolExecutor(max_workers=6) as pool:
            answers = list(pool.map(_get, [url + "/?q=batch+size"] * 12))
        assert all(status == 200 for status, _ in answers)
        assert all("<strong>6</strong> results" in page for _, page in answers)
        assert "3 processes of 2 threads" in log.read_text()
        proc.terminate()
        assert proc.wait(timeout=15) == 0, log.read_text()
    assert all(_gone(child, within=5) for child in children)
    assert "Traceback" not in log.read_text()


@linux_only
def test_a_killed_server_leaves_no_process_behind(
    seed_index: Path, tmp_path: Path, serve_process: ServeProcess
) -> None:
    with serve_process(seed_index, tmp_path / "serve.log", ["--processes", "2"]) as (url, proc):
        assert _get(url + "/api/search?q=batch")[0] == 200
        children = _children(proc.pid, 2)
        assert len(children) == 2
        proc.kill()  # no chance to stop its children: they notice their parent is gone
        proc.wait(timeout=10)
        assert all(_gone(child, within=10) for child in children)


@linux_only
def test_a_dead_server_process_stops_the_server_with_one_line(
    seed_index: Path, tmp_path: Path, serve_process: ServeProcess
) -> None:
    log = tmp_path / "serve.log"
    with serve_process(seed_index, log, ["--processes", "2"]) as (url, proc):
        first, second = _children(proc.pid, 2)
        os.kill(first, signal.SIGKILL)
        assert proc.wait(timeout=20) == 1
        assert _gone(second, within=10)
    text = log.read_text()
    assert f"Error: server process {first} was killed by signal 9; the server stopped" in text
    assert "Traceback" not in text


@pytest.mark.parametrize("processes", ["1", "2"])
def test_a_port_in_use_is_one_line(seed_index: Path, processes: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "pubsearch", "serve", "--index", str(seed_index)]
            + ["--port", str(port), "--processes", processes],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"Error: cannot listen on 127.0.0.1:{port}: Address already in use"
    )


def _start(
    index_dir: Path, log: Path, *options: str, preexec_fn: Callable[[], object] | None = None
) -> subprocess.Popen[bytes]:
    """`python -m pubsearch serve` of ``index_dir`` with ``options``, its output in ``log``
    (for the tests that watch it start: the fixtures wait until it listens)."""
    with open(log, "w", encoding="utf-8") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "pubsearch", "serve", "--index", str(index_dir), *options],
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=preexec_fn,
        )


def test_port_zero_announces_the_port_it_got(seed_index: Path, tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    proc = _start(seed_index, log, "--port", "0", "--processes", "2")
    try:
        deadline = time.monotonic() + 30
        found = None
        while found is None and time.monotonic() < deadline and proc.poll() is None:
            found = re.search(r"on (http://127\.0\.0\.1:(\d+)/)", log.read_text())
            time.sleep(0.1)
        assert found, log.read_text()
        assert int(found.group(2)) > 0
        assert _get(found.group(1) + "api/search?q=batch")[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@linux_only
def test_stopped_while_its_processes_start(seed_index: Path, tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    proc = _start(seed_index, log, "--port", "0", "--processes", "4")
    try:
        children = _children(proc.pid, 1)
        proc.send_signal(signal.SIGTERM)  # while the others are being forked
        assert proc.wait(timeout=20) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    seen = set(children) | set(_children(proc.pid, 0))
    assert seen and all(_gone(child, within=10) for child in seen)
    assert "Traceback" not in log.read_text()


# A program that serves with two processes and has a second thread, which takes the
# SIGTERM once the servers are up: the main thread, waiting for its children, gets no EINTR.
_STOPPED_THROUGH_ANOTHER_THREAD = """
import os, signal, sys, threading, time
from pathlib import Path
from pubsearch.web import create_app, serving

def children():
    pid = os.getpid()
    with open(f"/proc/{pid}/task/{pid}/children") as listing:
        return listing.read().split()

def stop_from_this_thread():
    deadline = time.monotonic() + 30
    while len(children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the main thread is waiting by now
    print("children", *children(), flush=True)
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)

threading.Thread(target=stop_from_this_thread, daemon=True).start()
serving.serve(
    lambda: create_app(Path(sys.argv[1])),
    host="127.0.0.1", port=0, threads=2, processes=2, announce=lambda addresses: None,
)
print("stopped", flush=True)
"""


@linux_only
def test_a_stop_signal_taken_by_another_thread_stops_the_server(
    seed_index: Path, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _STOPPED_THROUGH_ANOTHER_THREAD, str(seed_index)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == "stopped" and lines[0].startswith("children ")
    children = [int(pid) for pid in lines[0].split()[1:]]
    assert len(children) == 2 and all(_gone(child, within=10) for child in children)
    assert "Traceback" not in result.stderr


@linux_only
def test_a_dead_server_process_is_noticed_when_child_exits_were_ignored(
    seed_index: Path, tmp_path: Path
) -> None:
    """Started with SIGCHLD ignored (it is inherited through exec), the kernel would reap
    the children unseen: the server still notices one that dies."""
    log = tmp_path / "serve.log"
    ignore = lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # noqa: E731
    proc = _start(seed_index, log, "--port", "0", "--processes", "2", preexec_fn=ignore)
    try:
        first, second = _children(proc.pid, 2)
        time.sleep(0.5)
        os.kill(first, signal.SIGKILL)
        assert proc.wait(timeout=20) == 1, log.read_text()
        assert _gone(second, within=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert f"Error: server process {first} was killed by signal 9" in log.read_text()


@linux_only
def test_a_second_stop_signal_kills_a_stuck_server_process(
    seed_index: Path, tmp_path: Path, serve_process: ServeProcess
) -> None:
    log = tmp_path / "serve.log"
    with serve_process(seed_index, log, ["--processes", "2"]) as (url, proc):
        stuck, other = _children(proc.pid, 2)
        os.kill(stuck, signal.SIGSTOP)  # it cannot act on SIGTERM
        started = time.monotonic()
        proc.terminate()
        assert not _gone(stuck, within=1)
        proc.terminate()  # as a second Ctrl-C: do not wait the 10 s
        assert proc.wait(timeout=serving.STOP_SECONDS - 3) == 0, log.read_text()
        assert time.monotonic() - started < serving.STOP_SECONDS
        assert _gone(stuck, within=5) and _gone(other, within=5)
    assert "Traceback" not in log.read_text()


def test_each_answer_of_a_server_process_is_noted_for_trimming() -> None:
    class Counting(memory.Trimmer):
        def __init__(self) -> None:
            super().__init__(interval=3600)
            self.answers = 0

        def used(self) -> None:
            self.answers += 1

    def app(environ: dict[str, object], start_response: Callable[..., object]) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    trimmer = Counting()
    client = werkzeug.test.Client(serving._trimming(app, trimmer))
    assert client.get("/").data == b"ok"
    assert client.get("/x").data == b"ok"
    assert trimmer.answers == (2 if trimmer.available else 0)
