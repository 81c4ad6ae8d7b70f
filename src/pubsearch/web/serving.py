"""Running the web application: one waitress server, or several processes sharing its port.

Python runs one thread at a time in a process, so a single server process uses about one
CPU however many threads it has. With ``processes`` above one, the parent binds the
listening sockets, forks that many children and waits; each child builds its own
application (its own searchers and facet tables: nothing is shared but the sockets) and
runs a waitress server on the inherited sockets, and the kernel hands each new connection
to one of them. Measured with ``bench/load.py`` (102,289 records, 8 clients, 2 CPUs, runs
back to back): one process of 4 threads answered 22.1 requests/s (p95 952 ms), one of 8
threads 18.5 (p95 2,057 ms), two processes of 4 threads 37.1 (p95 525 ms).

The parent stops every child when it is stopped (SIGTERM, Ctrl-C) and when any child
exits on its own (which it reports). A child whose parent is gone stops within a second.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from waitress import create_server
from waitress.adjustments import Adjustments

from pubsearch import config
from pubsearch.errors import PubsearchError, UsageError

Address = tuple[str, int]
AppFactory = Callable[[], Any]  # a WSGI application, built in the process that serves it

# How often a child checks that its parent is still there.
PARENT_CHECK_SECONDS = 1.0
# Connections the kernel queues before a server process accepts them (waitress's default).
BACKLOG = 1024
# How long stopping waits for the children before killing them.
STOP_SECONDS = 10.0


class ServerProcessError(PubsearchError):
    """A server process exited while the server was running."""


def can_fork() -> bool:
    return hasattr(os, "fork")


def default_processes() -> int:
    """:func:`pubsearch.config.default_processes`, or one where there is no fork."""
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
    app = make_app()
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
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        for _ in range(processes):
            sys.stdout.flush()
            sys.stderr.flush()
            # A stop signal waits until the child has its own handlers (else the parent's
            # would run in the child, in the parent's code).
            # The child is counted before the signal can stop the loop.
            held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
            try:
                pid = os.fork()
                if pid == 0:
                    _run_child(make_app, sockets, threads, parent, held)  # never returns
                children.add(pid)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
        pid, status = os.wait()
        children.discard(pid)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:  # 0: it was interrupted (Ctrl-C reaches every process)
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
            raise ServerProcessError(f"server process {pid} {how}; the server stopped")
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        _stop(children)


_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _stop(children: set[int]) -> None:
    """Stop ``children`` (SIGTERM, then SIGKILL after :data:`STOP_SECONDS`) and reap them."""
    for pid in children:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    while children:
        for pid in list(children):
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                children.discard(pid)
        if children and time.monotonic() > deadline:
            for pid in children:
                _signal(pid, signal.SIGKILL)
            deadline = float("inf")
        if children:
            time.sleep(0.05)


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
    held: set[int | signal.Signals],
) -> None:
    """A forked server process (its stop signals blocked; ``held``, the mask to restore):
    serve until stopped, then leave without returning into the parent's code
    (``os._exit``)."""
    code = 0
    try:
        signal.signal(signal.SIGTERM, _interrupt)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
        server: Any = create_server(make_app(), sockets=sockets, threads=threads)
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
