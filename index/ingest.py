"""Incremental, parallel indexing (I4–I6): plan by stat, parse in workers, write with one writer."""

from __future__ import annotations

import multiprocessing as mp
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from index.db import open_writer
from index.finalize import finalize
from index.lock import writer_lock
from index.tasks import Task, head_hash
from index.writer import Prepared, write_chunk
from lib.discovery import Found, discover

Progress = Callable[[int, int, str], None]  # (bytes_done, bytes_total, path)


@dataclass
class IndexReport:
    files: int = 0
    files_unchanged: int = 0
    records: int = 0
    messages_added: int = 0
    extractions_added: int = 0
    bad_lines: Counter[str] = field(default_factory=Counter)
    bytes_read: int = 0
    elapsed_s: float = 0.0
    files_missing: int = 0
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"files": self.files, "files_unchanged": self.files_unchanged, "records": self.records,
                "messages_added": self.messages_added, "extractions_added": self.extractions_added,
                "bad_lines": dict(self.bad_lines), "bytes_read": self.bytes_read,
                "elapsed_s": round(self.elapsed_s, 3), "files_missing": self.files_missing,
                "errors": self.errors}


def plan(conn: sqlite3.Connection, roots: list[Path], full: bool) -> tuple[list[Task], int, set[str]]:
    """Compare the disk with ingest_state; return (tasks, unchanged count, paths seen)."""
    state = {r[0]: r for r in conn.execute(
        "SELECT path, size, mtime_ns, inode, offset, head_hash, carry, missing FROM ingest_state")}
    tasks: list[Task] = []
    unchanged = 0
    seen: set[str] = set()
    forgotten = frozenset(r[0] for r in conn.execute("SELECT session_id FROM forgotten"))
    for f in discover(roots):
        seen.add(f.path)
        st = state.get(f.path)
        if st is None or st[1] is None or full:
            tasks.append(_task(f, 0, None, reset=st is not None))
            continue
        _, size, mtime_ns, inode, offset, hh, carry, missing = st
        if size == f.size and mtime_ns == f.mtime_ns and inode == f.inode and not missing:
            unchanged += 1
            continue
        if inode != f.inode or f.size < offset or (hh and _head_changed(f.path, hh)):
            tasks.append(_task(f, 0, None, reset=True))  # rotated, truncated or rewritten
        elif f.size == offset:
            unchanged += 1  # touched but nothing new; refresh stat below
            conn.execute("UPDATE ingest_state SET mtime_ns=?, size=?, missing=0 WHERE path=?",
                         (f.mtime_ns, f.size, f.path))
        else:
            tasks.append(_task(f, offset, orjson.loads(carry) if carry else None, reset=False))
    for t in tasks:
        t.forgotten = forgotten
    # Big files first so workers stay busy.
    tasks.sort(key=lambda t: t.size - t.start, reverse=True)
    return tasks, unchanged, seen


def _head_changed(path: str, stored: str) -> bool:
    try:
        n = int(stored.split(":", 1)[0])
        return head_hash(path, n) != stored
    except (ValueError, OSError):
        return True


def _task(f: Found, start: int, carry: dict | None, reset: bool) -> Task:
    return Task(f.path, f.root, f.project_dir, f.info, start, carry, reset, f.size, f.mtime_ns, f.inode)


def _run_tasks(tasks: list[Task], jobs: int) -> Iterator[Prepared | tuple[Task, str]]:
    if jobs <= 1 or len(tasks) < 2:
        for t in tasks:
            yield _safe_prepare(t)
        return
    ctx = mp.get_context("fork") if hasattr(os, "fork") else mp.get_context()
    with ctx.Pool(jobs) as pool:
        yield from pool.imap_unordered(_safe_prepare, tasks, chunksize=1)


def _safe_prepare(t: Task) -> Prepared | tuple[Task, str]:
    from index.prepare import prepare  # the extractors load only when there is something to parse

    try:
        return prepare(t)
    except OSError as exc:  # unreadable or vanished mid-run: report, never abort the run
        return (t, f"{t.path}: {exc.strerror or exc}")


def run_index(db: Path, roots: list[Path], *, full: bool = False, jobs: int = 1,
              progress: Progress | None = None, wait: float = 120.0) -> IndexReport:
    """Index what is new under `roots`; one run at a time (waits up to `wait` s for another)."""
    with writer_lock(db, wait=wait):
        return _run_index(db, roots, full=full, jobs=jobs, progress=progress)


def _run_index(db: Path, roots: list[Path], *, full: bool, jobs: int, progress: Progress | None) -> IndexReport:
    started = time.perf_counter()
    conn = open_writer(db)
    report = IndexReport()
    try:
        tasks, report.files_unchanged, seen = plan(conn, roots, full)
        report.files = len(tasks) + report.files_unchanged
        total = sum(t.size - t.start for t in tasks)
        done = 0
        batch = _Batch(conn)
        for item in _run_tasks(tasks, jobs):
            if isinstance(item, tuple):
                report.errors.append(item[1])
                continue
            c = item.chunk
            m_added, e_added = batch.write(item)
            report.messages_added += m_added
            report.extractions_added += e_added
            report.records += c.records
            report.bad_lines.update(c.bad_lines)
            report.bytes_read += c.end - c.start
            done += item.size - c.start
            if progress:
                progress(done, total, c.path)
        batch.close()
        report.files_missing = _mark_missing(conn, roots, seen)
        finalize(conn, touched=bool(tasks))
        report.elapsed_s = time.perf_counter() - started
        _record_run(conn, report, jobs, "full" if full else "incremental")
    finally:
        conn.close()
    if report.messages_added or report.extractions_added:  # vectors: embed what this run added (V4)
        from vec.backfill import after_index

        after_index(db)
    return report


class _Batch:
    """Group a few files per transaction: each file's rows and cursor still commit together,
    and FTS5 flushes its pending terms once per batch instead of once per file."""

    MAX_BYTES = 8 << 20
    MAX_SECONDS = 0.5

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.open = False
        self.bytes = 0
        self.since = 0.0

    def write(self, item: Prepared) -> tuple[int, int]:
        if not self.open:
            self.conn.execute("BEGIN IMMEDIATE")
            self.open, self.bytes, self.since = True, 0, time.perf_counter()
        try:
            added = write_chunk(self.conn, item)
        except BaseException:
            self.conn.execute("ROLLBACK")
            self.open = False
            raise
        self.bytes += item.chunk.end - item.chunk.start
        if self.bytes >= self.MAX_BYTES or time.perf_counter() - self.since >= self.MAX_SECONDS:
            self.close()
        return added

    def close(self) -> None:
        if self.open:
            self.conn.execute("COMMIT")
            self.open = False


def _mark_missing(conn: sqlite3.Connection, roots: list[Path], seen: set[str]) -> int:
    """Transcripts deleted from disk keep their memory; only their source is marked missing."""
    prefixes = tuple(str(r).rstrip(os.sep) + os.sep for r in roots)
    gone = [p for (p,) in conn.execute("SELECT path FROM ingest_state WHERE missing=0")
            if p.startswith(prefixes) and p not in seen]
    if gone:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("UPDATE ingest_state SET missing=1 WHERE path=?", [(p,) for p in gone])
        conn.executemany("""UPDATE sessions SET source_state='missing'
                            WHERE file_id=(SELECT id FROM ingest_state WHERE path=?)""", [(p,) for p in gone])
        conn.execute("COMMIT")
    conn.execute("""UPDATE sessions SET source_state='present' WHERE source_state='missing' AND file_id IN
                    (SELECT id FROM ingest_state WHERE missing=0)""")
    return len(gone)


def _record_run(conn: sqlite3.Connection, r: IndexReport, jobs: int, mode: str) -> None:
    conn.execute(
        """INSERT INTO ingest_runs(started_at, elapsed_s, mode, jobs, files, files_unchanged, records,
           messages_added, extractions_added, bytes_read, bad_lines, errors)
           VALUES(strftime('%Y-%m-%dT%H:%M:%fZ','now'),?,?,?,?,?,?,?,?,?,?,?)""",
        (r.elapsed_s, mode, jobs, r.files, r.files_unchanged, r.records, r.messages_added, r.extractions_added,
         r.bytes_read, orjson.dumps(dict(r.bad_lines)).decode(), len(r.errors)))
