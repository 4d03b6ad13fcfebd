"""Whole-process latency (p50/p95) of each `total-recall metrics` subcommand on a given index.

    python bench/bench_metrics.py --db /tmp/big/index.db [--runs 20] [--json]

To get a large index whose `turns` scale with its size, build one from the shared corpus: every
copy gets fresh uuids *and* fresh message / request ids (otherwise the one-row-per-API-response
dedupe folds the copies back into one):

    python bench/bench_metrics.py --build /tmp/big --copies 12     # ~590 MB of JSONL, then indexes it
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [
    ["metrics", "summary"],
    ["metrics", "summary", "--since", "30d"],
    ["metrics", "cost"],
    ["metrics", "cost", "--by", "month", "--group", "project"],
    ["metrics", "sessions"],
    ["metrics", "sessions", "--by", "cost"],
    ["metrics", "topics"],
    ["metrics", "health"],
]
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_API_ID = re.compile(rb'"((?:msg|req)_[A-Za-z0-9]+)"')


def build(out: Path, copies: int, source: Path) -> Path:
    projects = out / "projects"
    total = 0
    for i in range(copies):
        ns = uuid.uuid5(uuid.NAMESPACE_OID, f"metrics-copy-{i}")

        def remap(m: re.Match[bytes], ns: uuid.UUID = ns) -> bytes:
            return str(uuid.uuid5(ns, m.group(0).decode())).encode()

        def api(m: re.Match[bytes], i: int = i) -> bytes:
            return b'"' + m.group(1) + f"c{i}".encode() + b'"'

        for f in source.rglob("*.jsonl"):
            parts = list(f.relative_to(source).parts)
            parts[0] = f"{parts[0]}-copy{i}"
            dest = projects.joinpath(*[_UUID.sub(remap, p.encode()).decode() for p in parts])
            dest.parent.mkdir(parents=True, exist_ok=True)
            data = _API_ID.sub(api, _UUID.sub(remap, f.read_bytes()))
            dest.write_bytes(data)
            total += len(data)
    print(f"wrote {total / 1e6:.0f} MB of transcripts under {projects}", file=sys.stderr)
    db = out / "index.db"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "total_recall",
            "--db",
            str(db),
            "index",
            "--projects-root",
            str(projects),
            "--jobs",
            "2",
            "--json",
        ],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    return db


def pct(v: list[float], q: float) -> float:
    s = sorted(v)
    k = (len(s) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def bench(db: Path, runs: int) -> list[dict[str, object]]:
    # As installed: byte-code is cached (the warm-up run writes it even if the shell disables that).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = []
    for cmd in COMMANDS:
        argv = [sys.executable, "-m", "total_recall", "--db", str(db), *cmd, "--json"]
        subprocess.run(argv, check=True, cwd=ROOT, capture_output=True, env=env)  # warm page and pyc caches
        times, cpu = [], []
        for _ in range(runs):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run(argv, check=True, cwd=ROOT, capture_output=True, env=env)
            times.append((time.perf_counter() - t) * 1000)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000)
        # wall time is what a user sees; CPU time (user + sys) is the part a busy machine cannot inflate
        out.append(
            {
                "command": " ".join(cmd),
                "runs": runs,
                "p50_ms": round(statistics.median(times), 1),
                "p95_ms": round(pct(times, 95), 1),
                "max_ms": round(max(times), 1),
                "cpu_p50_ms": round(statistics.median(cpu), 1),
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", help="index to benchmark")
    ap.add_argument("--build", metavar="DIR", help="first build a large corpus + index in DIR")
    ap.add_argument("--copies", type=int, default=12)
    ap.add_argument("--source", default=str(ROOT.parent / "shared" / "corpus" / "projects"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.build:
        db = build(Path(args.build), args.copies, Path(args.source))
    elif args.db:
        db = Path(args.db)
    else:
        ap.error("pass --db PATH or --build DIR")
    raw = sum(r for r in _raw_bytes(db))
    rows = bench(db, args.runs)
    if args.json:
        print(
            json.dumps(
                {"db": str(db), "db_bytes": db.stat().st_size, "raw_bytes": raw, "results": rows}, indent=2
            )
        )
        return
    print(f"{db}: DB {db.stat().st_size / 1e6:.0f} MB, transcripts {raw / 1e6:.0f} MB, {args.runs} runs each")
    print(f"{'command':<45} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu p50':>8}")
    for r in rows:
        print(f"{r['command']:<45} {r['p50_ms']:>8} {r['p95_ms']:>8} {r['max_ms']:>8} {r['cpu_p50_ms']:>8}")
    print(f"load average during the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


def _raw_bytes(db: Path) -> list[int]:
    out = subprocess.run(
        [sys.executable, "-m", "total_recall", "--db", str(db), "status", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    try:
        return [int(json.loads(out.stdout).get("raw_bytes") or 0)]
    except (ValueError, AttributeError):
        return [0]


if __name__ == "__main__":
    main()
