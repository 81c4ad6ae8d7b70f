"""pubsearch.core.forked: a step run in a child process beside the rest of a build."""

from __future__ import annotations

import os
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
