"""Connections: one writer (WAL, busy timeout, migrations) and read-only readers.

Readers see the last committed snapshot (WAL) and never wait for the writer; they can only wait on
a lock when another process holds the file in `locking_mode=EXCLUSIVE` or is recovering a WAL left
by a crash. A reader given a deadline (the hooks) waits at most until then, for locks as for queries."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from index.schema import SCHEMA_VERSION, current_version, migrate


class IndexError_(Exception):
    """Base for index problems that the CLI turns into one-line errors with a fix."""

    fix = ""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.fix = fix or self.fix


class IndexMissing(IndexError_):
    fix = "run `total-recall index` first"


class IndexCorrupt(IndexError_):
    fix = "run `total-recall doctor`, then `total-recall rebuild --yes`"


class IndexLocked(IndexError_):
    fix = "another process holds the index locked; try again when it finishes"


BUSY_MS = 5000


def _tune(conn: sqlite3.Connection) -> None:
    """Cache settings; they read the schema, so the busy timeout must already be set."""
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-32000")


def open_writer(path: Path) -> sqlite3.Connection:
    """The single writer: creates the DB if needed and migrates it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        _tune(conn)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        migrate(conn)
    except sqlite3.DatabaseError as exc:
        raise IndexCorrupt(f"cannot open index {path}: {exc}") from exc
    return conn


def open_existing_writer(path: Path) -> sqlite3.Connection:
    """The writer for maintenance commands, which must not create an index that is not there."""
    if not path.exists():
        raise IndexMissing(f"no index at {path}")
    return open_writer(path)


def limit_to(conn: sqlite3.Connection, until: float | None) -> None:
    """Stop queries (progress handler) and lock waits (busy timeout) at `until`, a time.monotonic()
    deadline; None restores the defaults. Call it again when the deadline changes."""
    if until is None:
        conn.set_progress_handler(None, 0)
        conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        return
    conn.set_progress_handler(lambda: 1 if time.monotonic() > until else 0, 5000)
    conn.execute(f"PRAGMA busy_timeout={max(0, int((until - time.monotonic()) * 1000))}")


def open_reader(path: Path, *, deadline: float | None = None) -> sqlite3.Connection:
    """Read-only connection; raises IndexMissing/IndexCorrupt/IndexLocked with a fix. With a
    `deadline` (time.monotonic()) nothing on it, lock waits included, runs past that moment."""
    if not path.exists():
        raise IndexMissing(f"no index at {path}")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
        limit_to(conn, deadline)
        _tune(conn)
        version = current_version(conn)
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise IndexLocked(f"index {path} is locked by another process ({exc})") from exc
        raise IndexCorrupt(f"index {path} is not a readable SQLite database ({exc})") from exc
    except sqlite3.DatabaseError as exc:
        raise IndexCorrupt(f"index {path} is not a readable SQLite database ({exc})") from exc
    if version == 0:
        raise IndexMissing(f"index {path} is empty")
    if version > SCHEMA_VERSION:
        raise IndexCorrupt(f"index {path} has schema {version}, newer than this total-recall ({SCHEMA_VERSION})",
                           "upgrade total-recall or run `total-recall rebuild --yes`")
    return conn
