"""How the writer and the parsers share a full index: one `run_index(full=True, jobs=N)` in process,
with the CPU seconds of this process (the writer: unpickling, SQLite, finalisation) and of its parser
processes, the batches committed, and how often the main thread and the parsers were asleep (state S
or D in /proc, sampled every 20 ms while the parsers live): a parser asleep waits for a file to
parse, the main thread asleep waits for a parsed file. Finalisation (after the last file, with the
parsers gone; serial wall time) is timed on its own: its wall and the writer's CPU in it. The
hand-over is timed too (`HandOver`): the CPU of pickling the results in the parsers, of unpickling
them in the writer, and of the writer's GC.

Usage: python bench/bench_pipeline.py [--projects DIR] [--jobs 2] [--work DIR]
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import threading
import time
from collections import Counter
from multiprocessing.reduction import ForkingPickler
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import index.store.ingest as ingest  # noqa: E402
from bench.scratch import corpus_options, fresh, work_dir  # noqa: E402


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


class HandOver:
    """Thread CPU of the hand-over of parsed files: pickling in the parser processes (they inherit the
    patched `ForkingPickler.dumps` when forked, and append their figures to a file, since a parser
    process ends without running `atexit`), unpickling in the writer's result thread, the writer
    pickling the tasks, and the writer's cyclic GC (`gc.callbacks`), whatever triggered it."""

    def __init__(self, work: Path) -> None:
        self.log = work / "handover.log"
        self.log.unlink(missing_ok=True)
        self.spent = {"loads": 0.0, "other loads": 0.0, "tasks": 0.0, "gc": 0.0}
        self.gc_start = 0.0
        self.helpers: set[str] = set()  # pids of the digest helpers, whose pickles are not the parsers'

    def install(self) -> None:
        writer, log, spent = os.getpid(), self.log, self.spent
        dumps, loads = ForkingPickler.dumps.__func__, ForkingPickler.loads  # type: ignore[attr-defined]

        def timed_dumps(cls: type, obj: Any, protocol: int | None = None) -> Any:
            t = time.thread_time()
            out = dumps(cls, obj, protocol)
            if os.getpid() == writer:
                spent["tasks"] += time.thread_time() - t
            else:
                with log.open("a") as f:
                    f.write(f"{os.getpid()} {time.thread_time() - t} {len(out)}\n")
            return out

        def timed_loads(*a: Any, **k: Any) -> Any:
            t = time.thread_time()
            try:
                return loads(*a, **k)
            finally:  # the pool's results arrive in its manager thread, the digests in another
                pool = type(threading.current_thread()).__name__ == "_ExecutorManagerThread"
                spent["loads" if pool else "other loads"] += time.thread_time() - t

        ForkingPickler.dumps = classmethod(timed_dumps)  # type: ignore[assignment,method-assign]
        ForkingPickler.loads = staticmethod(timed_loads)
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.gc_start = time.thread_time()
        else:
            self.spent["gc"] += time.thread_time() - self.gc_start

    def summary(self) -> str:
        rows = [line.split() for line in self.log.read_text().splitlines()] if self.log.exists() else []
        parsed = [(float(c), int(b)) for pid, c, b in rows if pid not in self.helpers]
        return (
            f"hand-over: the parsers pickled {len(parsed)} results, {sum(b for _, b in parsed) / 1e6:.1f} MB, "
            f"in {sum(c for c, _ in parsed):.2f} CPU-s; the writer unpickled them in "
            f"{self.spent['loads']:.2f} (the helper's digests {self.spent['other loads']:.2f}) and pickled "
            f"the tasks in {self.spent['tasks']:.2f}; the writer's GC {self.spent['gc']:.2f} CPU-s"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    corpus_options(ap)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    work = work_dir(a.work, "tr-pipe-")
    db = fresh(work / "pipe.db")
    hand = HandOver(work)
    hand.install()
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
            hand.helpers.add(str(self.proc.pid))
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
    print(hand.summary())


if __name__ == "__main__":
    main()
