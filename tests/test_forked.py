"""pubsearch.core.forked: a step run in a child process beside the rest of a build, forked
or in a fresh interpreter."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pubsearch.core import forked


def test_a_step_runs_in_a_child_and_its_writes_are_seen(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    parent = os.getpid()

    def step() -> None:
        target.write_text(str(os.getpid()))

    beside = forked.Step(step, "the test step")
    beside.wait()
    child = int(target.read_text())
    assert child != parent  # it ran in another process
    beside.wait()  # waiting again does nothing


def test_a_failed_step_raises_its_first_line_in_the_parent() -> None:
    def step() -> None:
        raise ValueError("the table is wrong\nsecond line")

    beside = forked.Step(step, "the people table")
    with pytest.raises(forked.StepFailed) as caught:
        beside.wait()
    assert str(caught.value) == "the people table failed: ValueError: the table is wrong"


def test_without_fork_the_step_runs_here_when_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(forked.ENV_NO_FORK, "1")
    ran: list[int] = []
    beside = forked.Step(lambda: ran.append(os.getpid()), "the test step")
    assert ran == []
    beside.wait()
    assert ran == [os.getpid()]


def test_a_cancelled_step_is_stopped(tmp_path: Path) -> None:
    target = tmp_path / "late.txt"

    def step() -> None:
        time.sleep(30)
        target.write_text("too late")

    started = time.monotonic()
    beside = forked.Step(step, "a slow step")
    beside.cancel()
    beside.wait()  # nothing left to wait for
    assert time.monotonic() - started < 10
    assert not target.exists()


# A spawned step's function is module-level: the fresh interpreter imports it by name.


def _write_pid(path: str) -> None:
    Path(path).write_text(str(os.getpid()))


def _fail(message: str) -> None:
    raise ValueError(message)


def _sleep_then_write(path: str) -> None:
    time.sleep(30)
    Path(path).write_text("too late")


def _exit_at_once(code: int) -> None:
    os._exit(code)


def _killed_by(signal_number: int) -> None:
    os.kill(os.getpid(), signal_number)
    time.sleep(30)  # (not reached)


def test_a_spawned_step_killed_by_the_system_says_it_may_have_run_out_of_memory() -> None:
    # The kernel's out-of-memory killer sends SIGKILL: a number alone told the user nothing.
    beside = forked.Spawned(_killed_by, (signal.SIGKILL,), "the people table")
    with pytest.raises(forked.StepFailed) as caught:
        beside.wait()
    message = str(caught.value)
    assert message.startswith("the people table failed: killed by SIGKILL (signal 9)")
    assert "memory" in message and "\n" not in message


def test_a_forked_step_killed_by_a_signal_names_it() -> None:
    beside = forked.Step(lambda: _killed_by(signal.SIGTERM), "the people table")
    with pytest.raises(forked.StepFailed) as caught:
        beside.wait()
    assert str(caught.value) == "the people table failed: killed by SIGTERM (signal 15)"


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (0, "exit status 0"),
        (3, "exit status 3"),
        (-15, "killed by SIGTERM (signal 15)"),
        (-200, "killed by signal 200"),
    ],
)
def test_how_a_child_ended_is_said_in_words(code: int, said: str) -> None:
    assert forked.how_it_ended(code) == said


def test_a_spawned_step_runs_in_another_process_and_its_writes_are_seen(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    beside = forked.Spawned(_write_pid, (str(target),), "the test step")
    beside.wait()
    assert int(target.read_text()) != os.getpid()
    beside.wait()  # waiting again does nothing


def test_a_failed_spawned_step_raises_its_first_line_in_the_parent() -> None:
    beside = forked.Spawned(_fail, ("the words were not saved\nsecond line",), "the people table")
    with pytest.raises(forked.StepFailed) as caught:
        beside.wait()
    assert str(caught.value) == ("the people table failed: ValueError: the words were not saved")


def test_a_spawned_step_that_ends_without_a_word_says_its_exit_status() -> None:
    beside = forked.Spawned(_exit_at_once, (3,), "the people table")
    with pytest.raises(forked.StepFailed, match=r"^the people table failed: exit status 3$"):
        beside.wait()


def test_without_fork_a_spawned_step_runs_here_when_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(forked.ENV_NO_FORK, "1")
    target = tmp_path / "out.txt"
    beside = forked.Spawned(_write_pid, (str(target),), "the test step")
    assert not target.exists()
    beside.wait()
    assert int(target.read_text()) == os.getpid()


def test_a_cancelled_spawned_step_is_stopped(tmp_path: Path) -> None:
    target = tmp_path / "late.txt"
    started = time.monotonic()
    beside = forked.Spawned(_sleep_then_write, (str(target),), "a slow step")
    beside.cancel()
    beside.wait()  # nothing left to wait for
    assert time.monotonic() - started < 10
    assert not target.exists()


PARENT = """
import os, sys, time
from pathlib import Path
from pubsearch.core import forked

def step(path):
    Path(path).write_text(str(os.getpid()))
    time.sleep(60)

if __name__ == "__main__":
    forked.Spawned(step, (sys.argv[1],), "a long step")
    time.sleep(60)
"""


def test_a_spawned_step_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    marker = tmp_path / "child.pid"
    parent = subprocess.Popen([sys.executable, str(script), str(marker)])
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() or not marker.read_text():
            assert time.monotonic() < deadline, "the spawned step never started"
            time.sleep(0.1)
        child = int(marker.read_text())
        os.kill(child, 0)  # it runs
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while _running(child):
        assert time.monotonic() < deadline, "the spawned step outlived its parent"
        time.sleep(0.1)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (ended, not yet reaped by init) has ended too.
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split(") ", 1)[1].startswith("Z"))
