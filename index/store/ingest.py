"""Incremental, parallel indexing (I4–I6): plan by stat, parse in workers, write with one writer."""

from __future__ import annotations

import errno
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from index.store.db import IndexCorrupt, IndexError_, access_problem, is_damage, open_writer, set_journal
from index.store.extractor_stamp import stamp_extractors
from index.store.finalize import finalize
from index.store.first_build import building_path, discard_build, is_first, publish
from index.store.lock import IndexBusy, writer_lock
from index.store.parsers import Unread, few_collections, parse_all
from index.store.plugins import vectors
from index.store.resets import drop_duplicates, reset_files
from index.store.skips import SKIPPED, Parsing, left_unread, record_skips
from index.store.tasks import Task, fingerprint_matches
from index.store.tx import rollback, transaction
from index.store.userstate import sync_tombstones
from index.store.writer import Deferred, Prepared, write_chunk
from lib import sqlite
from lib.discovery import Found, canonical_roots, key_path
from lib.sources import SOURCES

AgentRoots = Mapping[str, list[Path]]  # other agents' session roots (lib.sources.enabled_roots)

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
    files_skipped: int = 0  # left unread: their parser failed twice, in this run or an earlier one
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "files_unchanged": self.files_unchanged,
            "records": self.records,
            "messages_added": self.messages_added,
            "extractions_added": self.extractions_added,
            "bad_lines": dict(self.bad_lines),
            "bytes_read": self.bytes_read,
            "elapsed_s": round(self.elapsed_s, 3),
            "files_missing": self.files_missing,
            "files_skipped": self.files_skipped,
            "errors": self.errors,
        }


def plan(
    conn: sqlite.Connection, roots: list[Path], full: bool, agents: AgentRoots | None = None
) -> tuple[list[Task], int, set[str], int]:
    """Compare the disk with ingest_state; return (tasks, unchanged count, paths seen, files left
    unread because their parser failed on them as they are now: index/store/skips.py).

    A file is re-read from the start when it shrank (truncated), got a new inode (rotated), or no
    longer holds the bytes that were indexed (its fingerprint, head and tail, changed: rewritten);
    its rows, and those of every file sharing a session with it, are dropped first (`reset_files`).
    A file whose size, mtime and inode all match is not opened at all."""
    state = {
        r[0]: r
        for r in conn.execute(
            "SELECT path, size, mtime_ns, inode, offset, head_hash, carry, missing, id FROM ingest_state"
        )
    }
    found: dict[str, Found] = {}
    for f in _discover(roots, agents):
        found.setdefault(f.path, f)  # nested roots reach a file twice: one key, one task
    tasks: dict[str, Task] = {}
    unread = left_unread(conn, found, full)
    dups = drop_duplicates(conn, state, found)
    resets: set[int] = set(dups)
    for key, f in found.items():
        st = state.get(key)
        if key in unread:
            continue
        if st is not None and full:
            resets.add(st[8])
        if st is None or st[1] is None or full:
            tasks[key] = _task(f, 0, None, reset=st is not None)
            continue
        _, size, mtime_ns, inode, offset, hh, carry, missing, fid = st
        if size == f.size and mtime_ns == f.mtime_ns and inode == f.inode and not missing:
            continue
        if f.info.whole or inode != f.inode or f.size < offset or not fingerprint_matches(key, hh):
            tasks[key] = _task(
                f, 0, None, reset=True
            )  # one document changed; rotated, truncated or rewritten
            resets.add(fid)
        elif f.size == offset:
            # touched but nothing new: just refresh its stat
            conn.execute(
                "UPDATE ingest_state SET mtime_ns=?, size=?, missing=0 WHERE path=?",
                (f.mtime_ns, f.size, key),
            )
        else:
            tasks[key] = _task(f, offset, orjson.loads(carry) if carry else None, reset=False)
    if resets:
        for key in reset_files(conn, resets, set(found), drop=dups):
            if key not in tasks or tasks[key].start:
                tasks[key] = _task(found[key], 0, None, reset=True)
    forgotten = frozenset(r[0] for r in conn.execute("SELECT session_id FROM forgotten"))
    out = list(tasks.values())
    for t in out:
        t.forgotten = forgotten
    # Big files first so workers stay busy.
    out.sort(key=lambda t: t.size - t.start, reverse=True)
    left = unread - set(tasks)  # a reset of a session it shares reads it again all the same
    return out, len(found) - len(out) - len(left), set(found), len(left)


def _discover(roots: list[Path], agents: AgentRoots | None) -> Iterator[Found]:
    """Claude Code's transcripts under `roots`, then each other agent's under its own roots."""
    yield from SOURCES["claude"].discover(roots)
    for agent, paths in (agents or {}).items():
        yield from SOURCES[agent].discover(canonical_roots(paths))


def _task(f: Found, start: int, carry: dict[str, Any] | None, reset: bool) -> Task:
    return Task(f.path, f.root, f.project_dir, f.info, start, carry, reset, f.size, f.mtime_ns, f.inode)


def run_index(
    db: Path,
    roots: list[Path],
    *,
    full: bool = False,
    jobs: int = 1,
    progress: Progress | None = None,
    wait: float = 120.0,
    agents: AgentRoots | None = None,
) -> IndexReport:
    """Index what is new under `roots`; one run at a time (waits up to `wait` s for another).

    A write that fails (disk full, read-only place, I/O error) raises an `IndexError_` with a fix;
    what was committed before stays consistent, and the next run resumes from there."""
    try:
        with writer_lock(db, wait=wait):
            return _run_index(
                db, canonical_roots(roots), full=full, jobs=jobs, progress=progress, agents=agents
            )
    except (sqlite.Error, OSError, IndexCorrupt) as exc:
        # opening may fail for want of space or rights too, not only for damage
        cause = exc.__cause__ if isinstance(exc, IndexCorrupt) else exc
        known = write_error(cause, db) if isinstance(cause, (sqlite.Error, OSError)) else None
        if known is None:
            raise
        raise known from exc


def _run_index(
    db: Path,
    roots: list[Path],
    *,
    full: bool,
    jobs: int,
    progress: Progress | None,
    agents: AgentRoots | None,
) -> IndexReport:
    started = time.perf_counter()
    first = is_first(db)
    conn, path = _open(db, first)
    sync_tombstones(conn, db)  # forgotten sessions stay forgotten, even in a new database file
    report = IndexReport()
    note = Parsing(db)
    try:
        fresh = conn.execute("SELECT 1 FROM ingest_state LIMIT 1").fetchone() is None
        with transaction(conn):  # planning may drop rows (resets): all or nothing
            died = note.take(conn)  # the file a crash in the parser killed the last run on, if any
            tasks, report.files_unchanged, seen, report.files_skipped = plan(conn, roots, full, agents)
            if fresh:  # all this index will hold comes from these extractors, even if this run is cut short
                stamp_extractors(conn)
        report.errors += [died] if died else []
        report.files = len(tasks) + report.files_unchanged + report.files_skipped
        total = sum(t.size - t.start for t in tasks)
        done = 0
        batch = _Batch(conn)
        failed: list[Unread] = []
        with few_collections():
            for item in parse_all(tasks, jobs, note):
                if isinstance(item, Unread):
                    report.errors.append(
                        f"{item.reason} (failed twice; {SKIPPED})" if item.failed else item.reason
                    )
                    failed += [item] if item.failed else []
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
        with transaction(conn):
            record_skips(conn, failed)
        report.files_skipped += len(failed)
        every = roots + [r for paths in (agents or {}).values() for r in canonical_roots(paths)]
        report.files_missing = _mark_missing(conn, every, seen)
        if first:
            set_journal(conn, logged=True)  # finalize's helper reads while the writer writes
        finalize(conn, jobs, db)
        if full:
            with transaction(conn):  # every extraction now comes from this version's extractors
                stamp_extractors(conn)
        report.elapsed_s = time.perf_counter() - started
        _record_run(conn, report, jobs, "full" if full else "incremental")
    finally:
        note.close()
        conn.close()
    if first:
        publish(path, db)
    plugin = vectors()
    if plugin is not None and (report.messages_added or report.extractions_added):
        plugin.after_index(db)  # vectors: embed what this run added (V4)
    return report


def _open(db: Path, first: bool) -> tuple[sqlite.Connection, Path]:
    """The writer's connection and its file: `db`, or the building file of its first index; one the
    last run left damaged is started again (nothing but this run's own work is in it)."""
    if not first:
        return open_writer(db), db
    path = building_path(db)
    try:
        return open_writer(path, logged=False), path
    except IndexCorrupt:
        discard_build(db)
        return open_writer(path, logged=False), path


class IndexWriteError(IndexError_):
    """The index could not be written; what was committed before is intact."""


def write_error(exc: BaseException, db: Path) -> IndexError_ | None:
    """One line saying what went wrong writing the index at `db` and how to fix it, for failures of
    the place it lives in (space, rights, the disk, another process); None for anything else."""
    text = str(exc).lower()
    code = getattr(exc, "errno", None)
    where = db.parent
    resume = "then run `total-recall index` again (it resumes where it stopped)"
    if code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) or "disk is full" in text or "no space" in text:
        return IndexWriteError(
            f"no space left to write the index at {db}",
            f"free disk space on {where} (or move the index with --db), {resume}",
        )
    if code in (errno.EACCES, errno.EPERM, errno.EROFS) or "readonly" in text or "unable to open" in text:
        named = getattr(exc, "filename", None)  # the lock or the index itself
        denied = access_problem(Path(named) if named else db, write=True, detail=str(exc))
        if denied is not None:
            return denied
        return IndexWriteError(
            f"cannot write the index at {db} ({exc})",
            f"make {where} writable, or put the index elsewhere with --db or TOTAL_RECALL_DB",
        )
    if "locked" in text or "busy" in text:
        return IndexBusy(f"the index at {db} is locked by another process")
    if isinstance(exc, OSError) or "disk i/o error" in text:
        return IndexWriteError(
            f"could not write the index at {db} ({exc})", f"check the disk holding {where}, {resume}"
        )
    if is_damage(text):
        return IndexCorrupt(f"index {db} is damaged ({exc})")
    return None


class _Batch:
    """Group a few files per transaction: each file's rows and cursor still commit together,
    and FTS5 flushes its pending terms once per batch instead of once per file. Larger batches
    mean fewer FTS segments to merge and fewer checkpoints (at 736 MB, 32 MB batches spend 1.2 s
    less in the writer than 8 MB ones; 96 MB ones measured no less again, docs/benchmarks.md);
    readers of an index that exists see a batch when it commits, within 2 s (a first index shows whole,
    at the end: index/store/first_build.py)."""

    MAX_BYTES = 32 << 20
    MAX_SECONDS = 2.0

    def __init__(self, conn: sqlite.Connection) -> None:
        self.conn = conn
        self.open = False
        self.bytes = 0
        self.since = 0.0
        self.fts = Deferred()

    def write(self, item: Prepared) -> tuple[int, int]:
        if not self.open:
            self.conn.execute("BEGIN IMMEDIATE")
            self.open, self.bytes, self.since = True, 0, time.perf_counter()
        try:
            added = write_chunk(self.conn, item, self.fts)
        except BaseException:
            self.open = False
            self.fts.drop()
            rollback(self.conn)  # unless SQLite rolled back already (disk full)
            raise
        self.bytes += item.chunk.end - item.chunk.start
        if self.bytes >= self.MAX_BYTES or time.perf_counter() - self.since >= self.MAX_SECONDS:
            self.close()
        return added

    def close(self) -> None:
        if self.open:
            self.open = False
            try:
                self.fts.flush(self.conn)  # the batch's extractions, one FTS5 statement before it commits
                self.conn.execute("COMMIT")
            except BaseException:
                self.fts.drop()
                rollback(self.conn)
                raise


def _mark_missing(conn: sqlite.Connection, roots: list[Path], seen: set[str]) -> int:
    """Transcripts deleted from disk keep their memory; only their source is marked missing."""
    prefixes = tuple(str(r).rstrip(os.sep) + os.sep for r in roots)
    gone = [
        p
        for (p,) in conn.execute("SELECT path FROM ingest_state WHERE missing=0")
        if p not in seen and key_path(p).startswith(prefixes)
    ]
    if gone:
        with transaction(conn):
            conn.executemany("UPDATE ingest_state SET missing=1 WHERE path=?", [(p,) for p in gone])
            conn.executemany(
                """UPDATE sessions SET source_state='missing'
                                WHERE file_id=(SELECT id FROM ingest_state WHERE path=?)""",
                [(p,) for p in gone],
            )
    conn.execute("""UPDATE sessions SET source_state='present' WHERE source_state='missing' AND file_id IN
                    (SELECT id FROM ingest_state WHERE missing=0)""")
    return len(gone)


def _record_run(conn: sqlite.Connection, r: IndexReport, jobs: int, mode: str) -> None:
    conn.execute(
        """INSERT INTO ingest_runs(started_at, elapsed_s, mode, jobs, files, files_unchanged, records,
           messages_added, extractions_added, bytes_read, bad_lines, errors)
           VALUES(strftime('%Y-%m-%dT%H:%M:%fZ','now'),?,?,?,?,?,?,?,?,?,?,?)""",
        (
            r.elapsed_s,
            mode,
            jobs,
            r.files,
            r.files_unchanged,
            r.records,
            r.messages_added,
            r.extractions_added,
            r.bytes_read,
            orjson.dumps(dict(r.bad_lines)).decode(),
            len(r.errors),
        ),
    )
