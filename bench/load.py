"""Load test: concurrent clients against a real ``pubsearch serve`` on 127.0.0.1.

A script, not a test. It builds (or reuses) an index of the arXiv corpus, starts the
server as a subprocess, sends a fixed, seeded mix of page and API requests (queries,
facet filters, paging) from N client threads for a bounded number of requests, and
prints throughput, latency percentiles, the error count and the server's memory.

    .venv/bin/python bench/load.py                       # 8 clients, 4,000 requests
    .venv/bin/python bench/load.py --index /tmp/arxiv-ix --clients 16 --requests 8000
    .venv/bin/python bench/load.py --index /tmp/arxiv-ix --processes 2 --threads 4

Traffic goes only to 127.0.0.1, and every loop is bounded by count and by time.
"""

from __future__ import annotations

import argparse
import http.client
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"

WORDS = [
    "learning",
    "quantum",
    "graph",
    "neural",
    "language",
    "model",
    "diffusion",
    "robot",
    "optimization",
    "transformer",
    "reinforcement",
    "privacy",
    "federated",
    "attention",
    "benchmark",
    "retrieval",
    "causal",
    "bayesian",
    "spectral",
    "protein",
    "galaxy",
    "compiler",
    "energy",
    "vision",
    "speech",
    "agents",
    "reasoning",
    "kernel",
    "sparse",
]
PHRASES = [
    '"large language models"',
    '"graph neural network"',
    '"reinforcement learning"',
    '"diffusion models"',
    '"neural network"',
]
FIELDED = [
    "title:quantum",
    "title:diffusion AND abstract:image",
    "author:wang",
    "subject:cs.LG",
    "year:2025 learning",
    "ti:transformer",
    "cat:cs.CV vision",
]
SUBJECTS = ["cs.LG", "cs.CV", "cs.CL", "cs.AI", "quant-ph", "stat.ML", "cs.RO"]
YEARS = ["2024", "2025", "2024..2025", "2025..2026"]


def request_mix(count: int, seed: int) -> list[str]:
    """``count`` request paths: half pages, half API calls; queries, filters, paging."""
    rng = random.Random(seed)
    paths = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.3:
            q = rng.choice(WORDS)
        elif kind < 0.55:
            q = " ".join(rng.sample(WORDS, rng.choice([2, 3])))
        elif kind < 0.7:
            q = rng.choice(PHRASES)
        elif kind < 0.9:
            q = rng.choice(FIELDED)
        else:
            q = ""
        params: list[tuple[str, str]] = [("q", q)] if q else []
        if rng.random() < 0.35:
            params += [("subject", s) for s in rng.sample(SUBJECTS, rng.choice([1, 1, 2]))]
        if rng.random() < 0.25:
            params.append(("year", rng.choice(YEARS)))
        if rng.random() < 0.2:
            params.append(("page", str(rng.randint(2, 5))))
        if rng.random() < 0.1:
            params.append(("sort", rng.choice(["newest", "oldest"])))
        route = "/api/search" if rng.random() < 0.5 else "/"
        paths.append(route + "?" + urllib.parse.urlencode(params))
    return paths


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def client(port: int, paths: list[str], tally: Tally, deadline: float) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for path in paths:
        if time.monotonic() > deadline:
            break
        started = time.perf_counter()
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            status = response.status
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            with tally.lock:
                tally.errors.append(f"{path}: {exc!r}")
            continue
        elapsed = time.perf_counter() - started
        with tally.lock:
            tally.latencies.append(elapsed)
            if status != 200:
                tally.errors.append(f"{path}: HTTP {status}")
    conn.close()


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident memory of ``pid`` and its child processes (the server processes), in MB.
    ``field`` is a line of /proc/PID/status: VmRSS (all of it), RssAnon (the memory the
    processes made themselves) or RssFile (pages of files they map, the index's segments
    among them: the kernel's page cache, counted once per process that maps them)."""
    total = 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                total += int(line.split()[1]) / 1024
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:  # the process is gone
        return total
    return total + sum(rss_mb(int(child), field) for child in children)


def pss_mb(pid: int) -> float:
    """Proportional memory of ``pid`` and its child processes, in MB: what they take from
    the machine, each page shared with other processes (the index's mapped files, between
    the server processes) counted as its share (/proc/PID/smaps_rollup's Pss)."""
    total = 0.0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1]) / 1024
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:  # the process is gone, or the kernel has no rollup
        return total
    return total + sum(pss_mb(int(child)) for child in children)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with status {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("server did not start listening")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000


@dataclass
class LoadResult:
    """What one load run measured: latencies (seconds), errors, the server's memory (MB)."""

    tally: Tally
    wall: float
    rss_start: float
    samples: list[float]
    # At the end: the part of RSS the processes made themselves, and the mapped files.
    anon_end: float = 0.0
    file_end: float = 0.0
    # ... and the processes' proportional share of the machine's memory (see pss_mb).
    pss_end: float = 0.0

    @property
    def rss_end(self) -> float:
        return self.samples[-1] if self.samples else self.rss_start


def run_load(
    index_dir: Path,
    *,
    clients: int,
    requests: int,
    threads: int,
    processes: int,
    seed: int,
    max_seconds: float,
) -> LoadResult:
    """Start ``pubsearch serve`` on ``index_dir``, warm it up with 20 requests, send
    ``requests`` of the mix from ``clients`` threads, sampling the server's memory."""
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pubsearch",
            "serve",
            "--index",
            str(index_dir),
            "--port",
            str(port),
            "--threads",
            str(threads),
            "--processes",
            str(processes),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, server, timeout=300)
        # Warm up: the first request opens the index and loads the facet tables.
        warm = Tally()
        client(port, request_mix(20, seed + 1), warm, time.monotonic() + 300)
        rss_start = rss_mb(server.pid)

        paths = request_mix(requests, seed)
        shares = [paths[i::clients] for i in range(clients)]
        tally = Tally()
        samples: list[float] = []
        deadline = time.monotonic() + max_seconds
        workers = [
            threading.Thread(target=client, args=(port, share, tally, deadline)) for share in shares
        ]
        started = time.perf_counter()
        for t in workers:
            t.start()
        while any(t.is_alive() for t in workers):
            samples.append(rss_mb(server.pid))
            time.sleep(0.25)
        for t in workers:
            t.join()
        samples.append(rss_mb(server.pid))
        anon, mapped = rss_mb(server.pid, "RssAnon"), rss_mb(server.pid, "RssFile")
        pss = pss_mb(server.pid)
        wall = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=30)
    return LoadResult(tally, wall, rss_start, samples, anon, mapped, pss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="corpus to index")
    parser.add_argument("--index", type=Path, help="index directory (built when empty)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=4000, help="total requests")
    parser.add_argument("--threads", type=int, default=8, help="threads per server process")
    parser.add_argument("--processes", type=int, default=1, help="server processes")
    parser.add_argument("--max-seconds", type=float, default=600, help="stop after this long")
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args()

    index_dir = args.index or Path(tempfile.mkdtemp(prefix="pubsearch-load-"))
    if not (index_dir / "CURRENT").exists():
        print(f"indexing {args.data} into {index_dir} ...", flush=True)
        subprocess.run(
            [sys.executable, "-m", "pubsearch", "index", "--index", str(index_dir), str(args.data)],
            check=True,
        )
    run = run_load(
        index_dir,
        clients=args.clients,
        requests=args.requests,
        threads=args.threads,
        processes=args.processes,
        seed=args.seed,
        max_seconds=args.max_seconds,
    )
    tally, samples, rss_start, wall = run.tally, run.samples, run.rss_start, run.wall
    done = len(tally.latencies)
    half = samples[len(samples) // 2 :] or [rss_start]
    print()
    print("| server | clients | requests | wall s | req/s | p50 ms | p95 ms | p99 ms | errors |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {args.processes} × {args.threads} threads | {args.clients} | {done:,} | "
        f"{wall:.1f} | {done / wall:.1f} | "
        f"{pct(tally.latencies, 0.5):.0f} | {pct(tally.latencies, 0.95):.0f} | "
        f"{pct(tally.latencies, 0.99):.0f} | {len(tally.errors)} |"
    )
    print()
    print(
        f"server RSS: {rss_start:.0f} MB after warm-up, peak {max(samples or [rss_start]):.0f} MB, "
        f"second half {min(half):.0f}-{max(half):.0f} MB (mean {statistics.mean(half):.0f} MB), "
        f"end {run.rss_end:.0f} MB ({run.anon_end:.0f} MB its own, {run.file_end:.0f} MB "
        f"of mapped files; proportional set {run.pss_end:.0f} MB, shared pages counted once)"
    )
    for error in tally.errors[:10]:
        print("error:", error)
    if tally.errors:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
