"""A step run beside the rest, in a child process: a build's last steps are pure-Python
work, and a second CPU would otherwise wait.

:class:`Step`: a forked child inherits the parent's memory (copy on write: the tables are
not copied or pickled), runs the function, reports the first line of an error through a
pipe and ends without the interpreter's teardown. It must not share open files with the
parent (their offsets would be shared too): what it reads, it opens itself. Where ``fork``
is not a start method (Windows) or ``PUBSEARCH_NO_FORK=1``, the step runs in this process
when waited for.

:class:`Spawned`: a fresh interpreter (multiprocessing's ``spawn``) runs a module-level
function of its pickled arguments, reading what it needs from files. A forked child keeps
every page of its parent's alive while it runs, whatever the parent frees meanwhile: at
millions of records the two held the build's tables twice over (docs/growth.md). A spawned
one holds only its own. With ``PUBSEARCH_NO_FORK=1`` it too runs in this process when
waited for.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

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
                os.write(write, _first_line(exc).encode("utf-8", "replace"))
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
            message = b"".join(chunks).decode("utf-8", "replace") or how_it_ended(code)
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


def how_it_ended(code: int) -> str:
    """A child's end from its exit code (negative: the signal that ended it), in words: a
    child killed by SIGKILL that did not kill itself was most likely stopped by the
    kernel for want of memory, and the user should hear that rather than a number."""
    import signal

    if code >= 0:
        return f"exit status {code}"
    number = -code
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"killed by signal {number}"
    if number == signal.SIGKILL:
        return (
            f"killed by {name} (signal {number}), most likely by the system for want of "
            "memory: see `dmesg`, or free memory and run it again"
        )
    return f"killed by {name} (signal {number})"


def _first_line(exc: BaseException) -> str:
    message = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else ""
    return message or type(exc).__name__


def _spawned(function: Callable[..., None], args: tuple[Any, ...], report: Any) -> None:
    """A spawned child's life: ``function(*args)``, the first line of its error sent on
    ``report``; it ends as soon as its parent is gone (a build killed with SIGKILL: the next
    build removes what it wrote), and without the interpreter's teardown."""
    import multiprocessing
    import multiprocessing.connection

    parent = multiprocessing.parent_process()
    if parent is not None:
        sentinel = parent.sentinel

        def watch() -> None:
            multiprocessing.connection.wait([sentinel])
            os._exit(1)

        threading.Thread(target=watch, name="pubsearch-parent-watch", daemon=True).start()
    code = 0
    try:
        function(*args)
    except BaseException as exc:  # reported to the parent, which raises it
        report.send(_first_line(exc))
        code = 1
    finally:
        report.close()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class Spawned:
    """``function(*args)`` started in a fresh interpreter; :meth:`wait` for it. The
    function is module-level and its arguments pickle (paths and numbers: what it reads,
    it reads from files)."""

    def __init__(self, function: Callable[..., None], args: tuple[Any, ...], name: str) -> None:
        self.name = name
        self._here: tuple[Callable[..., None], tuple[Any, ...]] | None = None
        self._process: Any = None
        self._report: Any = None
        if os.environ.get(ENV_NO_FORK) == "1":
            self._here = (function, args)  # run by wait()
            return
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        report, send = context.Pipe(duplex=False)
        sys.stdout.flush()
        sys.stderr.flush()
        process = context.Process(target=_spawned, args=(function, args, send), name=name)
        process.start()
        send.close()
        self._process, self._report = process, report

    def wait(self) -> None:
        """Wait for the step; raise :class:`StepFailed` if it failed."""
        if self._here is not None:
            (function, args), self._here = self._here, None
            function(*args)
            return
        process, report = self._process, self._report
        if process is None:
            return
        self._process = self._report = None
        message = ""
        try:
            message = str(report.recv())
        except (EOFError, OSError):
            pass  # it ended without a word: its exit status says how
        report.close()
        process.join()
        code = process.exitcode
        if code != 0:
            raise StepFailed(f"{self.name} failed: {message or how_it_ended(code)}")

    def cancel(self) -> None:
        """Stop the step if it still runs (the build failed elsewhere)."""
        process, report = self._process, self._report
        self._process = self._report = self._here = None
        if process is not None:
            process.kill()
            process.join()
            report.close()
