"""Instruction counts and statement counts of the single writer alone: every file of a corpus
prepared once (`--save FILE`: the parsers' side, pickled as the pool sends it), then written and
finalised from that file (`--load FILE`), so a tree's writer can be measured on the very rows another
tree's parsers made (the `Prepared` shape is shared). Each phase ends with `os.getppid()`, so

    PYTHONHASHSEED=0 valgrind --tool=callgrind --dump-before=getppid \\
        --callgrind-out-file=/tmp/cg.out python bench/cg_writer.py --load FILE

writes one profile per phase (`.1` start-up and unpickling, `.2` the batches of `write_chunk`, `.3`
finalize with `jobs=1`); `callgrind_annotate FILE | head -20` gives each phase's total. `--stats`
instead runs without valgrind and prints each statement's calls and CPU (process time, so the GIL
hand-offs of pysqlite's steps are in it), costliest first. `--first` writes as a first index is written
(a rollback journal, no syncs: index/store/first_build.py), `--journal MODE` and `--cache N` override
its journal mode and page cache; every run prints the write phase's user and system CPU and its read and
write system calls (Linux).
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import index.store.finalize as fin  # noqa: E402
import index.store.prepare as prep  # noqa: E402
from bench.scratch import corpus_options, fresh, work_dir  # noqa: E402
from index.store.db import open_writer  # noqa: E402
from index.store.ingest import _Batch, plan  # noqa: E402
from index.store.parsers import few_collections  # noqa: E402
from index.store.tx import transaction  # noqa: E402
from lib.discovery import canonical_roots  # noqa: E402

CALLS: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])


class CountingConn:
    """The writer's connection with each statement's calls and CPU tallied by its text."""

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._c, name)

    def _run(self, fn: Any, sql: str, *a: Any) -> Any:
        t = time.process_time()
        cur = fn(sql, *a)
        rows = cur.fetchall() if sql.lstrip().upper().startswith("SELECT") else None
        tally = CALLS[("many " if fn == self._c.executemany else "") + " ".join(sql.split())[:90]]
        tally[0] += 1
        tally[1] += time.process_time() - t
        return _Rows(rows) if rows is not None else cur

    def execute(self, sql: str, *a: Any) -> Any:
        return self._run(self._c.execute, sql, *a)

    def executemany(self, sql: str, *a: Any) -> Any:
        return self._run(self._c.executemany, sql, *a)


class _Rows:
    """A cursor's rows fetched already (so their CPU counts to the statement)."""

    def __init__(self, rows: list[Any]) -> None:
        self._it = iter(rows)

    def __iter__(self) -> Any:
        return self._it

    def fetchone(self) -> Any:
        return next(self._it, None)

    def fetchall(self) -> list[Any]:
        return list(self._it)


def _io() -> dict[str, int]:
    """This process's I/O counters (Linux): read and write system calls so far."""
    with open("/proc/self/io") as f:
        return {k: int(v) for k, v in (line.split(": ") for line in f)}


def main() -> None:
    ap = argparse.ArgumentParser()
    corpus_options(ap)
    ap.add_argument("--save", type=Path, help="prepare every file and pickle the results here")
    ap.add_argument("--load", type=Path, help="write and finalise the pickled results")
    ap.add_argument("--stats", action="store_true", help="tally each statement's calls and CPU")
    ap.add_argument("--first", action="store_true", help="write as a first index does (rollback journal)")
    ap.add_argument("--cache", type=int, help="PRAGMA cache_size for the writer (negative: KiB)")
    ap.add_argument("--journal", help="PRAGMA journal_mode for the writes (with --first)")
    a = ap.parse_args()
    raw = open_writer(fresh(work_dir(a.work, "tr-cgw-") / "cgw.db"), logged=not (a.first and a.load))
    if a.journal:
        raw.execute(f"PRAGMA journal_mode={a.journal}")
    if a.cache is not None:
        raw.execute(f"PRAGMA cache_size={a.cache}")
    if a.save:
        with transaction(raw):
            tasks = plan(raw, canonical_roots([a.projects]), True)[0]
        a.save.write_bytes(pickle.dumps([prep.prepare(t) for t in tasks], protocol=pickle.HIGHEST_PROTOCOL))
        return
    prepared = pickle.loads(a.load.read_bytes())
    conn: Any = CountingConn(raw) if a.stats else raw
    os.getppid()
    t0, io0, os0 = time.process_time(), _io(), os.times()
    batch = _Batch(conn)
    batch.MAX_SECONDS = 1e9  # batches by bytes only, so the split does not depend on the clock
    with few_collections():  # as `run_index` writes
        for p in prepared:
            batch.write(p)
        batch.close()
    t1, io1, os1 = time.process_time(), _io(), os.times()
    os.getppid()
    fin.finalize(conn)
    t2 = time.process_time()
    os.getppid()
    raw.close()
    print(f"write {t1 - t0:.2f} CPU-s, finalize {t2 - t1:.2f} CPU-s", file=sys.stderr)
    print(
        f"write: user {os1.user - os0.user:.2f} s, system {os1.system - os0.system:.2f} s, "
        f"read calls {io1['syscr'] - io0['syscr']}, write calls {io1['syscw'] - io0['syscw']}",
        file=sys.stderr,
    )
    if a.stats:
        total = sum(v[1] for v in CALLS.values())
        print(f"{len(CALLS)} statements, {sum(v[0] for v in CALLS.values())} calls, {total:.2f} CPU-s")
        for sql, (n, s) in sorted(CALLS.items(), key=lambda kv: -kv[1][1])[:45]:
            print(f"{s:6.2f} s {n:7d}  {sql}")


if __name__ == "__main__":
    main()
