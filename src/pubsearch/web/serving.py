"""Running the web application: one waitress server, or several processes sharing its port.

Python runs one thread at a time in a process, so a single server process uses about one
CPU however many threads it has. With ``processes`` above one, the parent binds the
listening sockets, forks that many children and waits; each child builds its own
application (its own searchers and facet tables: nothing is shared but the sockets) and
runs a waitress server on the inherited sockets, and the kernel hands each new connection
to one of them. On 2 CPUs two processes answer about 1.7 times the requests of one
(``bench/load.py``; the runs are in docs/performance.md).

The parent stops every child when it is stopped (SIGTERM, Ctrl-C) and when any child
exits on its own (which it reports); a child that has not stopped after
:data:`STOP_SECONDS` is killed, or at once on a second stop signal. The parent waits on a
pipe the signals are written to (:class:`_Signals`), so none is lost however it arrives.
A child whose parent is gone stops within a second.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from waitress import create_server
from waitress.adjustments import Adjustments

from pubsearch.core import config, memory
from pubsearch.core.errors import PubsearchError, ServerProcessError, UsageError

Address = tuple[str, int]
AppFactory = Callable[[], Any]  # a WSGI application, built in the process that serves it

# How often a child checks that its parent is still there.
PARENT_CHECK_SECONDS = 1.0
# Connections the kernel queues before a server process accepts them (waitress's default).
BACKLOG = 1024
# How long stopping waits for the children before killing them.
STOP_SECONDS = 10.0


def can_fork() -> bool:
    return hasattr(os, "fork")


def default_processes() -> int:
    """:func:`pubsearch.core.config.default_processes`, or one where there is no fork."""
    return config.default_processes() if can_fork() else 1


def serve(
    make_app: AppFactory,
    *,
    host: str,
    port: int,
    threads: int,
    processes: int,
    announce: Callable[[list[Address]], None],
) -> None:
    """Serve ``make_app()`` on ``host``:``port`` until stopped; ``announce`` is given the
    addresses listened on (the real port when ``port`` is 0) once they are bound."""
    if processes < 1:
        raise UsageError(f"--processes: must be at least 1, not {processes}")
    if processes == 1:
        _serve_here(make_app, host=host, port=port, threads=threads, announce=announce)
        return
    if not can_fork():
        raise UsageError("--processes: more than one needs os.fork (Linux, macOS); use 1")
    sockets = _bind(host, port)
    try:
        announce([_address(sock) for sock in sockets])
        _supervise(make_app, sockets, threads, processes)
    finally:
        for sock in sockets:
            sock.close()


def _serve_here(
    make_app: AppFactory,
    *,
    host: str,
    port: int,
    threads: int,
    announce: Callable[[list[Address]], None],
) -> None:
    app = _trimming(make_app())
    try:
        server: Any = create_server(app, host=host, port=port, threads=threads)
    except OSError as exc:
        raise PubsearchError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    listening = getattr(server, "effective_listen", None) or [
        (server.effective_host, server.effective_port)
    ]
    announce([(str(address), int(bound)) for address, bound, *_ in listening])
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def _trimming(app: Any, trimmer: memory.Trimmer | None = None) -> Any:
    """``app`` in a server process that hands freed memory back while it is busy (see
    pubsearch.core.memory): each answer tells ``trimmer`` (a new one) that memory was used."""
    trimmer = trimmer or memory.Trimmer()
    if not trimmer.available:
        return app
    trimmer.start()

    def answer(environ: dict[str, Any], start_response: Any) -> Any:
        try:
            return app(environ, start_response)
        finally:
            trimmer.used()

    return answer


def _bind(host: str, port: int) -> list[socket.socket]:
    """Bound sockets for ``host``:``port``, one per address waitress would listen on."""
    bound: list[socket.socket] = []
    try:
        for family, socktype, proto, sockaddr in Adjustments(host=host, port=port).listen:
            sock = socket.socket(family, socktype, proto)
            bound.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(sockaddr)
            # Listening now queues the connections that come while the children start.
            sock.listen(BACKLOG)
    except OSError as exc:
        for sock in bound:
            sock.close()
        raise PubsearchError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return bound


def _address(sock: socket.socket) -> Address:
    name = sock.getsockname()
    return str(name[0]), int(name[1])


def _supervise(
    make_app: AppFactory, sockets: list[socket.socket], threads: int, processes: int
) -> None:
    """Fork ``processes`` servers on ``sockets`` and wait until stopped or one exits."""
    parent = os.getpid()
    children: set[int] = set()
    with _Signals() as signals:
        try:
            for _ in range(processes):
                sys.stdout.flush()
                sys.stderr.flush()
                # The signals wait while the child installs its own handlers (else the
                # parent's would run in the child); the parent counts it before it can stop.
                held = signal.pthread_sigmask(signal.SIG_BLOCK, _Signals.NOTED)
                try:
                    pid = os.fork()
                    if pid == 0:
                        _run_child(make_app, sockets, threads, parent, signals, held)  # no return
                    children.add(pid)
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, held)
                if _done(signals.take(timeout=0), children):
                    return
            while not _done(signals.take(timeout=None), children):
                pass
        finally:
            _stop(children, signals)


class _Signals:
    """Stop signals (SIGTERM, SIGINT) and child exits (SIGCHLD) noted on a pipe while
    the parent supervises. The C-level handler writes each signal's number to the pipe
    (:func:`signal.set_wakeup_fd`) as it arrives, in whichever thread takes it, so one
    that comes just before the parent waits is not lost: the wait returns at once."""

    NOTED = {signal.SIGTERM, signal.SIGINT, signal.SIGCHLD}
    STOP = {signal.SIGTERM, signal.SIGINT}

    def __enter__(self) -> _Signals:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._wakeup = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        self._handlers = {signum: signal.signal(signum, _noted) for signum in self.NOTED}
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self._handlers.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(self._wakeup)
        os.close(self._read)
        os.close(self._write)

    def forget(self) -> None:
        """In a forked child: drop the parent's pipe and handlers (its own come next)."""
        signal.set_wakeup_fd(-1)
        os.close(self._read)
        os.close(self._write)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)

    def take(self, timeout: float | None) -> set[int]:
        """The signals noted since the last call, waiting up to ``timeout`` seconds
        (``None``: until one comes) when there are none."""
        if not select.select([self._read], [], [], timeout)[0]:
            return set()
        noted: set[int] = set()
        try:
            while chunk := os.read(self._read, 512):
                noted.update(chunk)
        except BlockingIOError:
            pass
        return noted


def _noted(signum: int, frame: Any) -> None:
    """The Python-level handler of :class:`_Signals`: its pipe has the signal already."""


def _done(noted: set[int], children: set[int]) -> bool:
    """Whether supervision ends, given the signals ``noted``: a stop signal, or a child
    that exited (reaped here). A child that failed raises :class:`ServerProcessError`."""
    if noted & _Signals.STOP:
        return True
    if signal.SIGCHLD not in noted:
        return False
    exited = _reap(children)
    for pid, code in exited.items():
        if code != 0:  # 0: it was interrupted (Ctrl-C reaches every process)
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
            raise ServerProcessError(f"server process {pid} {how}; the server stopped")
    return bool(exited)


def _reap(children: set[int]) -> dict[int, int]:
    """The exit codes of ``children`` that have exited, which are reaped and removed."""
    exited: dict[int, int] = {}
    for pid in list(children):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            children.discard(pid)
            exited[pid] = os.waitstatus_to_exitcode(status)
    return exited


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _stop(children: set[int], signals: _Signals) -> None:
    """Stop ``children`` (SIGTERM, then SIGKILL after :data:`STOP_SECONDS`, or at once on
    a second stop signal) and reap them."""
    for pid in children:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    killed = False
    _reap(children)
    while children:
        if killed:
            signals.take(timeout=1.0)
        else:
            left = deadline - time.monotonic()
            if left <= 0 or signals.take(timeout=left) & _Signals.STOP:
                for pid in children:
                    _signal(pid, signal.SIGKILL)
                killed = True
        _reap(children)


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _run_child(
    make_app: AppFactory,
    sockets: list[socket.socket],
    threads: int,
    parent: int,
    signals: _Signals,
    held: set[int | signal.Signals],
) -> None:
    """A forked server process (its signals blocked; ``held``, the mask to restore):
    serve until stopped, then leave without returning into the parent's code
    (``os._exit``)."""
    code = 0
    try:
        signals.forget()
        signal.signal(signal.SIGTERM, _interrupt)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
        server: Any = create_server(_trimming(make_app()), sockets=sockets, threads=threads)
        try:
            server.run()
        finally:
            server.close()
    except KeyboardInterrupt:
        pass
    except BaseException as exc:  # reported in one line; the parent then stops the rest
        print(f"error: server process {os.getpid()}: {exc}", file=sys.stderr)
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _exit_with_parent(parent: int) -> None:
    """Stop this process once ``parent`` is gone (it was killed: nothing else stops us)."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)
