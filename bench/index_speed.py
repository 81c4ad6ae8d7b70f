"""How fast ``pubsearch index`` builds an index, end to end, and its peak memory.

Runs ``pubsearch index --index DIR SLICE --workers N`` under ``/usr/bin/time -v`` on the
first ``--size`` records of the corpus (written once as a gzip slice under ``--tmp``) and
prints records/s; the CPU time (user + system, workers included: steadier than wall time
on a busy machine); and the peak resident memory: ``/usr/bin/time``'s (the largest RSS of
any one process of the build); sampled every 0.2 s, the largest sum of RSS over the build's
process tree (pages a forked child shares with its parent, and mapped index files, counted
in each process); and sampled every second, the largest sum of the tree's Pss_Anon (its
own memory, each shared page once: what the machine must find for the build).

Run from the repository root, one at a time (the machine is shared)::

    .venv/bin/python bench/index_speed.py --size 20000 --workers 1
    .venv/bin/python bench/index_speed.py --size 0 --workers 2     # all records
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import speed

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "arxiv-2024-2026" / "records.jsonl.gz"


def write_slice(data: Path, size: int, out: Path) -> int:
    """The first ``size`` lines of ``data`` (all of them for 0) as a gzip file."""
    count = 0
    with gzip.open(data, "rb") as src, gzip.open(out, "wb", compresslevel=6) as dst:
        for line in src:
            if size and count >= size:
                break
            dst.write(line)
            count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--size", type=int, default=20_000, help="records; 0 for all")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--keep", action="store_true", help="keep the index built")
    parser.add_argument(
        "--src", type=Path, default=REPO / "src", help="the pubsearch sources to run (a baseline)"
    )
    parser.add_argument("--verbose", action="store_true", help="print time -v's output")
    args = parser.parse_args()

    args.tmp.mkdir(parents=True, exist_ok=True)
    slice_path = args.tmp / f"pubsearch-bench-{args.size or 'all'}.jsonl.gz"
    if not slice_path.exists():
        write_slice(args.data, args.size, slice_path)
    count = sum(1 for _ in gzip.open(slice_path, "rb"))
    index_dir = Path(tempfile.mkdtemp(prefix="pubsearch-bench-index-", dir=args.tmp))
    pubsearch = Path(sys.executable).parent / "pubsearch"
    env = dict(os.environ, PYTHONPATH=str(args.src.resolve()))
    command = ["/usr/bin/time", "-v", str(pubsearch), "index", "--index", str(index_dir)]
    command += ["--workers", str(args.workers), str(slice_path)]
    started = time.monotonic()
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak_tree = [0, 0]

    def sample() -> None:
        tick = 0
        while proc.poll() is None:
            pids = speed.tree_pids(proc.pid)
            peak_tree[0] = max(peak_tree[0], sum(speed.rss_kb(pid) for pid in pids))
            if tick % 5 == 0:
                peak_tree[1] = max(peak_tree[1], sum(speed.pss_anon_kb(pid) for pid in pids))
            tick += 1
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate()
    done = subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)
    elapsed = time.monotonic() - started
    if args.verbose or done.returncode:
        print(done.stdout, done.stderr, sep="\n")
    if done.returncode:
        raise SystemExit(done.returncode)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    size = sum(f.stat().st_size for f in index_dir.rglob("*") if f.is_file())
    peak_mb = int(peak.group(1)) / 1024 if peak else 0.0
    # CPU seconds of the build and its workers: steadier than wall time on a busy machine.
    cpu = sum(
        float(m.group(1))
        for m in re.finditer(r"(?:User|System) time \(seconds\): ([\d.]+)", done.stderr)
    )
    print(
        f"records={count} workers={args.workers} seconds={elapsed:.1f} "
        f"records/s={count / elapsed:.0f} peak_rss_mb={peak_mb:.0f} "
        f"peak_tree_rss_mb={peak_tree[0] / 1024:.0f} peak_own_mb={peak_tree[1] / 1024:.0f} "
        f"cpu_s={cpu:.1f} cpu_ms_per_record={1000 * cpu / count:.2f} "
        f"index_mb={size / 2**20:.0f} load={os.getloadavg()[0]:.2f}"
    )
    if not args.keep:
        shutil.rmtree(index_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
