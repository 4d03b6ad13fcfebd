"""Where a full index spends its CPU: the parser worker's side and the single writer's, measured
separately in one process (all files parsed first, then all written), so neither hides in the
other's waits, and in CPU time (`time.process_time`), so the figures hold on a busy machine.

Usage: python bench/profile_index.py [--projects DIR] [--work DIR] [--top N]
Stages are timed by wrapping the functions that do them (no profiler overhead); `--top N` adds a
cProfile listing of each side (whose overhead inflates Python-heavy code about 2x).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import index.store.finalize as fin  # noqa: E402
import index.store.prepare as prep  # noqa: E402
import index.store.writer as wr  # noqa: E402
from bench.scratch import corpus_options, fresh, work_dir  # noqa: E402
from index.store.db import open_writer  # noqa: E402
from index.store.ingest import _Batch, plan  # noqa: E402
from index.store.tx import transaction  # noqa: E402
from lib.discovery import canonical_roots  # noqa: E402

SPENT: dict[str, float] = defaultdict(float)
# (module, function, label): the worker's stages, then the writer's
WORKER = [
    (prep, "parse", "parse (orjson + records + tree)"),
    (prep, "scrub_chunk", "scrub"),
    (prep, "_extract", "extract"),
    (prep, "chunk_counters", "profile counters"),
    (prep, "fts_columns", "pack + identifier parts"),
    (prep, "head_hash", "fingerprint"),
]
WRITER = [
    (wr, "write_extractions", "extractions + their FTS"),
    (wr, "write_record_rows", "turns, spawns, agents"),
    (wr, "write_sessions", "sessions (upsert)"),
    (wr, "count_sessions", "session counts"),
    (wr, "update_main_branches", "main branch"),
    (wr, "_take_over", "take-over check"),
    (wr, "name_task_results", "Task result names"),
    (fin, "refold_pending", "finalize: operator folding"),
    (fin, "materialise", "finalize: profiles"),
    (fin, "refresh_session_docs", "finalize: session documents"),
    (fin, "_titles", "finalize: titles"),
    (fin, "_link_agents", "finalize: subagent links"),
    (fin, "refresh_digests", "finalize: digests"),
    (fin, "merge_message_index", "finalize: merge messages_fts"),
]
# Statements of write_chunk itself, told apart by their text.
SQL = [
    ("INSERT OR IGNORE INTO messages(", "message rows + their B-trees"),
    ("INSERT INTO messages_fts(rowid", "FTS insert (messages)"),
    ("COMMIT", "commit (WAL write)"),
]


_INNER: list[float] = [0.0]  # time spent in timed calls nested in the current one (exclusive figures)


def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(*a: Any, **k: Any) -> Any:
        _INNER.append(0.0)
        t = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            spent = time.process_time() - t
            SPENT[label] += spent - _INNER.pop()
            _INNER[-1] += spent

    return run


class TimedConn:
    """The writer's connection with its statements timed by kind (duck-types sqlite3.Connection)."""

    def __init__(self, conn: Any) -> None:
        self._c = conn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._c, name)

    def _label(self, sql: str) -> str:
        s = sql.lstrip()
        return next((lab for pre, lab in SQL if s.startswith(pre)), "other: " + " ".join(s.split())[:50])

    def execute(self, sql: str, *a: Any) -> Any:
        if len(_INNER) > 1:  # inside a timed stage: its statements are its own
            return self._c.execute(sql, *a)
        return timed(self._label(sql), self._c.execute)(sql, *a)

    def executemany(self, sql: str, *a: Any) -> Any:
        if len(_INNER) > 1:
            return self._c.executemany(sql, *a)
        return timed(self._label(sql), self._c.executemany)(sql, *a)


def main() -> None:
    ap = argparse.ArgumentParser()
    corpus_options(ap)
    ap.add_argument("--top", type=int, default=0, help="also print the N costliest functions of each side")
    a = ap.parse_args()
    work = work_dir(a.work, "tr-prof-")
    db = fresh(work / "prof.db")
    raw = open_writer(db)
    with transaction(raw):
        tasks, _, _, _ = plan(raw, canonical_roots([a.projects]), True)
    mb = sum(t.size for t in tasks) / 1e6
    for mod, name, label in WORKER + WRITER:
        setattr(mod, name, timed(label, getattr(mod, name)))

    profs = [cProfile.Profile(time.process_time) for _ in range(2)] if a.top else []
    t0 = time.process_time()
    if profs:
        profs[0].enable()
    prepared = [prep.prepare(t) for t in tasks]
    if profs:
        profs[0].disable()
    worker_cpu = time.process_time() - t0
    worker = {label: SPENT.pop(label, 0.0) for _, _, label in WORKER}

    conn = TimedConn(raw)
    t0 = time.process_time()
    if profs:
        profs[1].enable()
    batch = _Batch(conn)  # type: ignore[arg-type]
    batch.MAX_SECONDS = 1e9  # batches by bytes only, so the split does not depend on the clock
    for p in prepared:
        batch.write(p)
    batch.close()
    fin.finalize(conn)  # type: ignore[arg-type]
    if profs:
        profs[1].disable()
    writer_cpu = time.process_time() - t0
    raw.close()

    total = worker_cpu + writer_cpu
    print(f"corpus {mb:.1f} MB, {len(tasks)} files; CPU seconds (process time)")
    print(
        f"worker side (parse + derive, split over the parsers): {worker_cpu:.2f} s = {mb / worker_cpu:.0f} MB/CPU-s"
    )
    for label, s in worker.items():
        print(f"  {label:36s} {s:5.2f} s  {100 * s / total:4.1f} %")
    print(f"  {'(rest: pickling excluded, glue)':36s} {worker_cpu - sum(worker.values()):5.2f} s")
    print(
        f"writer side (serial): {writer_cpu:.2f} s = {mb / writer_cpu:.0f} MB/CPU-s, {100 * writer_cpu / total:.0f} % of all"
    )
    rest = 0.0
    for label, s in sorted(SPENT.items(), key=lambda kv: -kv[1]):
        if s < 0.005 * total:
            rest += s
            continue
        print(f"  {label:36s} {s:5.2f} s  {100 * s / total:4.1f} %")
    print(f"  {'(every other statement and stage)':36s} {rest:5.2f} s  {100 * rest / total:4.1f} %")
    for title, prof in zip(("worker", "writer"), profs):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(a.top)
        print(f"\n{title} (cProfile):\n{buf.getvalue()}")


if __name__ == "__main__":
    main()
