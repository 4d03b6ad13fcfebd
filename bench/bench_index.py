"""Index benchmarks: full-index MB/s (--jobs 1/2), the share of it spent building session digests,
no-op re-index, one appended turn, search latency (in process and whole command), peak RSS, index
size vs raw bytes.

Usage: python bench/bench_index.py [--projects DIR] [--work DIR]
Prints one line per figure; docs/benchmarks.md records the results.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.scratch import fresh  # noqa: E402
from index.retrieval.search import search_messages, search_sessions  # noqa: E402
from index.store.digests import refresh as refresh_digests  # noqa: E402
from index.store.ingest import run_index  # noqa: E402
from lib import sqlite  # noqa: E402

CLI = [sys.executable, "-m", "total_recall"]
GOLD = ROOT.parent / "shared" / "eval" / "retrieval-dev.jsonl"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def raw_bytes(root: Path) -> int:
    return sum(f.stat().st_size for f in root.rglob("*.jsonl"))


def run_cli(db: Path, *args: str) -> tuple[float, str]:
    t = time.perf_counter()
    out = subprocess.run([*CLI, "--db", str(db), *args], capture_output=True, text=True, check=True, cwd=ROOT)
    return time.perf_counter() - t, out.stdout


def bench_full(projects: Path, work: Path, jobs: int) -> Path:
    db = fresh(work / f"full-j{jobs}.db")
    el, out = run_cli(db, "index", "--projects-root", str(projects), "--jobs", str(jobs), "--json")
    rep = json.loads(out)
    bench_digests(db, rep["elapsed_s"])
    mb = rep["bytes_read"] / 1e6
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"full index --jobs {jobs}: {mb:.1f} MB in {el:.2f}s whole process = {mb / el:.1f} MB/s "
        f"(in-run {rep['elapsed_s']:.2f}s = {mb / rep['elapsed_s']:.1f} MB/s); peak RSS so far {rss:.0f} MB"
    )
    return db


def bench_digests(db: Path, full_s: float) -> None:
    """Build every digest again, as the full index did in its finalisation, and compare with the run."""
    conn = sqlite.connect(db)
    try:
        conn.execute("DELETE FROM digest_items")
        conn.execute("DELETE FROM digests")
        conn.commit()
        t = time.perf_counter()
        n = refresh_digests(conn)
        el = time.perf_counter() - t
    finally:
        conn.close()
    print(f"  digests: {n} sessions in {el * 1000:.0f} ms = {100 * el / full_s:.1f} % of the full index run")


def bench_digest_overhead(projects: Path, work: Path, rounds: int) -> None:
    """Full index in process with and without the digest step, alternated, medians compared."""
    import index.store.finalize as fin

    keep = fin.refresh_digests
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(rounds):
        for with_digests in (False, True):
            db = fresh(work / f"ab-{with_digests}.db")
            fin.refresh_digests = keep if with_digests else (lambda conn: 0)  # type: ignore[assignment]
            t = time.perf_counter()
            run_index(db, [projects], jobs=1)
            times[with_digests].append(time.perf_counter() - t)
    fin.refresh_digests = keep
    a, b = statistics.median(times[False]), statistics.median(times[True])
    print(
        f"full index in process, median of {rounds}: {a:.2f}s without digests, {b:.2f}s with = +{100 * (b - a) / a:.1f} %"
    )


def bench_noop(projects: Path, db: Path) -> None:
    times = [run_cli(db, "index", "--projects-root", str(projects), "--json")[0] for _ in range(7)]
    print(
        f"no-op re-index (whole process): p50 {statistics.median(times) * 1000:.0f} ms, "
        f"max {max(times) * 1000:.0f} ms"
    )


def bench_append(projects: Path, work: Path) -> None:
    """Index one big session, then append one turn at a time and time the incremental run."""
    src = max(projects.rglob("*.jsonl"), key=lambda f: f.stat().st_size)
    root = work / "append" / "projects" / "-tmp-append"
    shutil.rmtree(root.parent, ignore_errors=True)
    root.mkdir(parents=True)
    target = root / src.name
    shutil.copy(src, target)
    db = work / "append.db"
    for s in ("", "-wal", "-shm"):
        Path(str(db) + s).unlink(missing_ok=True)
    run_index(db, [root.parent])
    sid = src.stem
    times = []
    parent = None
    for i in range(30):
        u = str(uuid.uuid4())
        a = str(uuid.uuid4())
        recs = [
            {
                "type": "user",
                "uuid": u,
                "parentUuid": parent,
                "sessionId": sid,
                "timestamp": "2026-11-01T00:00:00Z",
                "cwd": "/tmp/x",
                "message": {"role": "user", "content": f"please also check the retry path {i}"},
            },
            {
                "type": "assistant",
                "uuid": a,
                "parentUuid": u,
                "sessionId": sid,
                "timestamp": "2026-11-01T00:00:01Z",
                "cwd": "/tmp/x",
                "requestId": f"req_{i}",
                "message": {
                    "id": f"msg_{i}",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929",
                    "content": [
                        {"type": "text", "text": f"Done. The retry path {i} is covered; tests pass."}
                    ],
                    "usage": {"input_tokens": 10, "output_tokens": 20},
                },
            },
        ]
        parent = a
        with open(target, "ab") as f:
            for r in recs:
                f.write(json.dumps(r).encode() + b"\n")
        t = time.perf_counter()
        rep = run_index(db, [root.parent])
        times.append(time.perf_counter() - t)
        assert rep.messages_added == 2, rep
    print(
        f"one appended turn (in process, {src.stat().st_size / 1e6:.1f} MB session): "
        f"p50 {statistics.median(times) * 1000:.1f} ms, p95 {pct(times, 95) * 1000:.1f} ms"
    )


def queries() -> list[str]:
    if GOLD.exists():
        return [json.loads(line)["query"] for line in GOLD.read_text().splitlines() if line.strip()]
    return ["retry logic", "failing test", "decided to use", "parseConfig", "ERR_TIMEOUT"]


def bench_search(db: Path) -> None:
    conn = sqlite.connect(f"file:{db}?mode=ro", uri=True)
    qs = queries()
    for q in qs[:5]:
        search_messages(conn, q)  # warm the cache
    for name, fn in (("search", search_messages), ("search --sessions", search_sessions)):
        times = []
        for q in qs:
            t = time.perf_counter()
            fn(conn, q, limit=10)
            times.append(time.perf_counter() - t)
        print(
            f"{name} in process ({len(qs)} queries): p50 {statistics.median(times) * 1000:.1f} ms, "
            f"p95 {pct(times, 95) * 1000:.1f} ms"
        )
    times = []
    for q in qs[:20]:
        times.append(run_cli(db, "search", q, "--json")[0])
    print(
        f"search whole command (20 queries): p50 {statistics.median(times) * 1000:.0f} ms, "
        f"p95 {pct(times, 95) * 1000:.0f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--projects", default=str(ROOT.parent / "shared" / "corpus" / "projects"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--skip-append", action="store_true")
    ap.add_argument("--digest-rounds", type=int, default=3, help="with/without-digest full indexes (0: skip)")
    args = ap.parse_args()
    projects = Path(args.projects)
    work = Path(args.work or tempfile.mkdtemp(prefix="tr-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    raw = raw_bytes(projects)
    print(f"corpus: {projects} ({raw / 1e6:.1f} MB)")
    bench_full(projects, work, 1)
    db = bench_full(projects, work, 2)
    size = sum(Path(str(db) + s).stat().st_size for s in ("", "-wal") if Path(str(db) + s).exists())
    print(f"index size: {size / 1e6:.1f} MB = {100 * size / raw:.1f} % of raw")
    if args.digest_rounds:
        bench_digest_overhead(projects, work, args.digest_rounds)
    bench_noop(projects, db)
    if not args.skip_append:
        bench_append(projects, work)
    bench_search(db)
    print(
        f"peak RSS of child processes: {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB"
    )


if __name__ == "__main__":
    main()
