"""Full index against the naive floor, side by side in one run: the project's `index --full` and
`../shared/bench/naive_index.py` (one process, orjson + one FTS5 table) over the same corpus,
alternating, each as a child of this process at the same CPU priority (nice 10, as `index` from a
terminal runs), so a busy machine slows both alike. Prints MB/s by the wall clock and per CPU
second (user + sys of the child and its parsers), and the project/naive ratio of each.

Usage: python bench/bench_ratio.py [--projects DIR] [--jobs 2] [--rounds 2] [--work DIR] [--baseline TREE]

`--baseline TREE` adds a third contender: the project as checked out in TREE (e.g. `git archive
<commit> | tar -x -C TREE`), run from there with this interpreter, so before and after share one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.scratch import corpus_options, fresh  # noqa: E402

NAIVE = ROOT.parent / "shared" / "bench" / "naive_index.py"


def run(cmd: list[str], cwd: Path = ROOT) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child tree, stdout) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=cwd).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, out


def main() -> None:
    ap = argparse.ArgumentParser()
    corpus_options(ap)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout of the project to compare")
    a = ap.parse_args()
    work = a.work or Path(tempfile.mkdtemp(prefix="tr-ratio-"))
    work.mkdir(parents=True, exist_ok=True)
    os.nice(max(0, 10 - os.nice(0)))  # both sides at the priority `index` gives itself
    mb = sum(f.stat().st_size for f in a.projects.rglob("*.jsonl")) / 1e6

    def project(db: str) -> list[str]:
        cmd = [sys.executable, "-m", "total_recall", "--db", str(work / db), "index", "--full"]
        return cmd + ["--projects-root", str(a.projects), "--jobs", str(a.jobs), "--json"]

    naive = [sys.executable, str(NAIVE), "index", str(a.projects), str(work / "n.db")]
    order = [("naive", naive, "n.db", ROOT), ("project", project("p.db"), "p.db", ROOT)]
    if a.baseline:
        order.append(("baseline", project("b.db"), "b.db", a.baseline.resolve()))
    got: dict[str, list[tuple[float, float]]] = {name: [] for name, *_ in order}
    for r in range(a.rounds):
        for name, cmd, db, cwd in order if r % 2 == 0 else order[::-1]:
            fresh(work / db)
            wall, cpu, out = run(cmd, cwd)
            if name != "naive":
                json.loads(out)  # a run that failed would not print its report
            got[name].append((wall, cpu))
            print(
                f"round {r + 1} {name:8s} wall {wall:6.2f} s = {mb / wall:6.1f} MB/s, "
                f"CPU {cpu:6.2f} s = {mb / cpu:6.1f} MB/CPU-s",
                flush=True,
            )
    med = {
        k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in got.items()
    }
    print(f"corpus {mb:.1f} MB, --jobs {a.jobs}, {a.rounds} rounds, medians; load {os.getloadavg()[0]:.1f}")
    for name in med:
        if name != "naive":
            print(
                f"ratio {name}/naive: wall {med['naive'][0] / med[name][0]:.2f}x, "
                f"CPU {med['naive'][1] / med[name][1]:.2f}x (throughput; 1.0 = the naive loop's speed)"
            )


if __name__ == "__main__":
    main()
