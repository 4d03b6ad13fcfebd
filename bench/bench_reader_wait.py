"""What a reader waits for while a full index runs: each hook-like read (open the index read-only,
one search, close) split into its own CPU time, time spent runnable but not running (the run queue,
`/proc/self/schedstat`) and the rest — blocked: a lock, a busy handler, a checkpoint, I/O. A reader
that never waits for the writer shows ~0 blocked time during the index as before it.

Usage: python bench/bench_reader_wait.py [--projects DIR] [--db PATH] [--runs 60]
The index (`total-recall index --full --jobs 2`, which lowers its own priority as from a terminal)
runs in this process's session, as an agent's Bash tool would start it, and is restarted whenever it
finishes; the reads run at normal priority, as hooks do.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from index.retrieval.search import search_messages  # noqa: E402
from index.store.db import open_reader  # noqa: E402
from index.store.ingest import run_index  # noqa: E402

QUERIES = ["why did the build fail", "database migration", "rounding error in totals", "hook latency"]


def schedstat() -> tuple[float, float]:
    """(seconds on the CPU, seconds waiting on a run queue) of this thread so far."""
    with open("/proc/thread-self/schedstat") as f:
        run, wait, _ = f.read().split()
    return int(run) / 1e9, int(wait) / 1e9


def read_once(db: Path, query: str) -> tuple[float, float, float]:
    """(wall, cpu, run-queue wait) of one hook-like read."""
    t, (c0, w0) = time.perf_counter(), schedstat()
    conn = open_reader(db, deadline=time.monotonic() + 5)
    search_messages(conn, query, limit=5, hybrid=False)
    conn.close()
    c1, w1 = schedstat()
    return time.perf_counter() - t, c1 - c0, w1 - w0


def series(db: Path, runs: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"wall": [], "cpu": [], "runqueue": [], "blocked": []}
    for i in range(runs):
        wall, cpu, wait = read_once(db, QUERIES[i % len(QUERIES)])
        out["wall"].append(wall)
        out["cpu"].append(cpu)
        out["runqueue"].append(wait)
        out["blocked"].append(max(0.0, wall - cpu - wait))
        time.sleep(0.05)
    return out


def show(label: str, s: dict[str, list[float]]) -> None:
    def p95(xs: list[float]) -> float:
        return sorted(xs)[int(0.95 * (len(xs) - 1))]

    parts = [f"{k} p50 {statistics.median(v) * 1000:6.1f} / p95 {p95(v) * 1000:6.1f}" for k, v in s.items()]
    print(f"{label:7s} " + " | ".join(parts) + " ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--projects", type=Path, default=ROOT.parent / "shared" / "corpus" / "projects")
    ap.add_argument("--db", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=60)
    a = ap.parse_args()
    db = a.db or Path(tempfile.mkdtemp(prefix="tr-wait-")) / "index.db"
    if not db.exists():
        run_index(db, [a.projects])
    for q in QUERIES:  # warm the OS cache and the imports
        read_once(db, q)
    show("idle", series(db, a.runs))
    cmd = [sys.executable, "-m", "total_recall", "--db", str(db), "index", "--full", "--jobs", "2"]
    cmd += ["--projects-root", str(a.projects), "--json"]
    index = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # past start-up, into the parse/write loop
    try:
        during: dict[str, list[float]] = {"wall": [], "cpu": [], "runqueue": [], "blocked": []}
        while len(during["wall"]) < a.runs:
            if index.poll() is not None:
                index = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1.0)
            got = series(db, 5)
            if index.poll() is None:  # only reads that ended while the index still ran
                for k, v in got.items():
                    during[k].extend(v)
    finally:
        index.terminate()
        index.wait()
    show("during", during)
    if a.db is None:
        shutil.rmtree(db.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
