"""How the writer and the parsers share a full index: one `run_index(full=True, jobs=N)` in process,
with the CPU seconds of this process (the writer: unpickling, SQLite, finalisation) and of its parser
processes, the batches committed, and how often the main thread and the parsers were asleep (state S
or D in /proc, sampled every 20 ms while the parsers live): a parser asleep waits for a file to
parse, the main thread asleep waits for a parsed file. Finalisation (after the last file, with the
parsers gone; serial wall time) is timed on its own: its wall and the writer's CPU in it.

Usage: python bench/bench_pipeline.py [--projects DIR] [--jobs 2] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import index.store.ingest as ingest  # noqa: E402
from bench.scratch import fresh, work_dir  # noqa: E402


def _state(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _cpu(pid: int | None) -> float:
    """User + system CPU seconds of a child, read before it is reaped (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Sampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: Counter[tuple[str, str | None]] = Counter()
        self.stop = False

    def run(self) -> None:
        me = os.getpid()
        while not self.stop:
            with open(f"/proc/{me}/task/{me}/children") as f:
                kids = f.read().split()
            if kids:  # only while the parsers live
                self.seen["main", _state(f"/proc/{me}/task/{me}/stat")] += 1
                for k in kids:
                    self.seen["parser", _state(f"/proc/{k}/stat")] += 1
            time.sleep(0.02)

    def asleep(self, who: str) -> float:
        total = sum(v for (w, _), v in self.seen.items() if w == who) or 1
        return sum(v for (w, s), v in self.seen.items() if w == who and s in ("S", "D")) / total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--projects", type=Path, default=ROOT.parent / "shared" / "corpus" / "projects")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", type=Path, default=None)
    a = ap.parse_args()
    db = fresh(work_dir(a.work, "tr-pipe-") / "pipe.db")
    commits = [0]
    close = ingest._Batch.close

    def counted(self: Any) -> None:
        commits[0] += bool(self.open)
        close(self)

    ingest._Batch.close = counted  # type: ignore[method-assign]
    final = vars(ingest)["finalize"]  # imported there by name: patched there
    spent = [0.0, 0.0]  # finalize: wall, CPU of this process

    def timed(*args: Any) -> bool:
        w, c = time.perf_counter(), time.process_time()
        try:
            return bool(final(*args))
        finally:
            spent[0] += time.perf_counter() - w
            spent[1] += time.process_time() - c

    vars(ingest)["finalize"] = timed
    helper_cpu = [0.0]
    share = sys.modules.get("index.store.digest_share")  # absent from trees before the helper
    if share is not None:
        stop = share.Helper.stop

        def stopped(self: Any) -> None:
            helper_cpu[0] += _cpu(self.proc.pid)
            stop(self)

        share.Helper.stop = stopped
    sampler = Sampler()
    sampler.start()
    t = time.perf_counter()
    report = ingest.run_index(db, [a.projects], full=True, jobs=a.jobs)
    wall = time.perf_counter() - t
    sampler.stop = True
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"{report.bytes_read / 1e6:.1f} MB, --jobs {a.jobs}: wall {wall:.2f} s, CPU writer (this process) "
        f"{me.ru_utime + me.ru_stime:.2f} s (finalize {spent[1]:.2f} s CPU, {spent[0]:.2f} s wall), "
        f"parsers and helpers {kids.ru_utime + kids.ru_stime:.2f} s (the digest helper {helper_cpu[0]:.2f}); "
        f"{commits[0]} batches; asleep: main thread {100 * sampler.asleep('main'):.0f} %, "
        f"parsers {100 * sampler.asleep('parser'):.0f} %; peak RSS of this process "
        f"{me.ru_maxrss // 1024} MB; load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
