"""A step run beside the rest, in a forked child process: a build's last steps are
pure-Python work on tables it already holds, and a second CPU would otherwise wait.

The child inherits the parent's memory (copy on write: the tables are not copied or
pickled), runs the function, reports the first line of an error through a pipe and ends
without the interpreter's teardown. It must not share open files with the parent (their
offsets would be shared too): what it reads, it opens itself. Where ``fork`` is not a start
method (Windows) or ``PUBSEARCH_NO_FORK=1``, the step runs in this process when waited
for.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable

from pubsearch.core.errors import PubsearchError

ENV_NO_FORK = "PUBSEARCH_NO_FORK"


class StepFailed(PubsearchError):
    """A step run in a child process failed (the message is the child's error)."""


class Step:
    """``step()`` started in a child process; :meth:`wait` for it."""

    def __init__(self, step: Callable[[], None], name: str) -> None:
        self.name = name
        self._step: Callable[[], None] | None = step
        self._pid = 0
        self._read = -1
        if not hasattr(os, "fork") or os.environ.get(ENV_NO_FORK) == "1":
            return  # run by wait()
        read, write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        with warnings.catch_warnings():
            # Python 3.12 warns of a fork beside other threads (a server's, a test's):
            # the child touches no lock of theirs, only the tables it was given.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child
            os.close(read)
            code = 0
            try:
                step()
            except BaseException as exc:  # reported to the parent, which raises it
                message = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else ""
                os.write(write, (message or type(exc).__name__).encode("utf-8", "replace"))
                code = 1
            finally:
                os.close(write)
                os._exit(code)
        os.close(write)
        self._pid, self._read, self._step = pid, read, None

    def wait(self) -> None:
        """Wait for the step; raise :class:`StepFailed` if it failed."""
        if self._step is not None:  # not forked: run it here
            step, self._step = self._step, None
            step()
            return
        if not self._pid:
            return
        chunks = []
        while chunk := os.read(self._read, 4096):
            chunks.append(chunk)
        os.close(self._read)
        _, status = os.waitpid(self._pid, 0)
        self._pid = 0
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            message = b"".join(chunks).decode("utf-8", "replace") or f"exit status {code}"
            raise StepFailed(f"{self.name} failed: {message}")

    def cancel(self) -> None:
        """Stop the step if it still runs (the build failed elsewhere)."""
        if self._pid:
            import signal

            try:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            except OSError:
                pass
            os.close(self._read)
            self._pid = 0
        self._step = None
