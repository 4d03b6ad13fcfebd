"""Connections: one writer (WAL, busy timeout, migrations) and read-only readers.

Readers see the last committed snapshot (WAL) and never wait for the writer; they can only wait on
a lock when another process holds the file in `locking_mode=EXCLUSIVE` or is recovering a WAL left
by a crash. A reader given a deadline (the hooks) waits at most until then, for locks as for queries."""

from __future__ import annotations

import os
import time
from pathlib import Path

from index.store.first_build import building_path
from index.store.schema import SCHEMA_VERSION, current_version, migrate
from lib import sqlite


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


class IndexUnavailable(IndexError_):
    """The index is there but may not be opened (permissions, a read-only folder, a lock): not damage,
    so the fix never says rebuild, which would delete a healthy index."""

    fix = (
        "check the permissions of the index and its folder, and that no other program holds it; "
        "the index is not damaged: keep it"
    )


_DAMAGED = ("not a database", "malformed", "corrupt")  # SQLITE_NOTADB and SQLITE_CORRUPT
_TOO_LONG = ("pattern too complex", "too big")  # a LIKE pattern over 50 KB, SQLITE_TOOBIG: bad input


def is_damage(message: str) -> bool:
    """Whether an SQLite error message says the file is damaged (the one cause whose fix is a rebuild)."""
    low = message.lower()
    return any(d in low for d in _DAMAGED)


def open_failure(path: Path, exc: sqlite.Error, write: bool = False) -> IndexError_:
    """What an SQLite error on the index means, with the fix for that cause."""
    detail = str(exc)
    if is_damage(detail):
        return IndexCorrupt(f"index {path} is not a readable SQLite database ({detail})")
    if any(d in detail for d in _TOO_LONG):
        return IndexError_(f"a value is too long for the index ({detail})", "pass a shorter value")
    return access_problem(path, write, detail) or IndexUnavailable(f"index {path}: {detail}")


def access_problem(path: Path, write: bool = False, detail: str = "") -> IndexUnavailable | None:
    """The permission problem that keeps this process from `path` (the index or a file beside it)."""
    why = f" ({detail})" if detail else ""
    if path.exists() and not os.access(path, os.R_OK | (os.W_OK if write else 0)):
        return IndexUnavailable(
            f"permission denied on {path}{why}",
            f"give your user access to it (chmod u+rw {path}) or run as its owner",
        )
    folder = path.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        return IndexUnavailable(
            f"folder {folder} is read-only{why}",
            f"make it writable (chmod u+w {folder}): SQLite keeps -wal and -shm files "
            "beside the index, even to read it; or copy the index to a writable folder "
            "and set TOTAL_RECALL_DB",
        )
    return None


class IndexLocked(IndexError_):
    fix = "another process holds the index locked; try again when it finishes"


BUSY_MS = 5000


def _tune(conn: sqlite.Connection) -> None:
    """Cache settings; they read the schema, so the busy timeout must already be set."""
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-32000")


def open_writer(path: Path, *, logged: bool = True) -> sqlite.Connection:
    """The single writer: creates the DB if needed and migrates it. `logged=False`: a first index
    built beside the index path (`set_journal`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite.connect(str(path), isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        _tune(conn)
        set_journal(conn, logged)
        migrate(conn)
    except sqlite.DatabaseError as exc:
        raise open_failure(path, exc, write=True) from exc
    return conn


def set_journal(conn: sqlite.Connection, logged: bool) -> None:
    """WAL, so readers never wait for the writer, with commits made durable at checkpoints; or, for a
    first index that nobody reads yet (index/store/first_build.py), batches kept atomic by a rollback
    journal and nothing forced to disk until the end. That journal is kept between batches, its header
    zeroed at each commit (`PERSIST`; turning to WAL removes it): truncated at each commit (`TRUNCATE`),
    the kernel freed its pages and allocated them again for the next batch, ≈ 0.3 CPU-s of the
    writer's system time per 736 MB (docs/benchmarks.md, issue 18, sixth session)."""
    if logged:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    else:
        conn.execute("PRAGMA journal_mode=PERSIST")
        conn.execute("PRAGMA synchronous=OFF")


def open_existing_writer(path: Path) -> sqlite.Connection:
    """The writer for maintenance commands, which must not create an index that is not there."""
    if not path.exists():
        raise IndexMissing(f"no index at {path}")
    return open_writer(path)


def limit_to(conn: sqlite.Connection, until: float | None) -> None:
    """Stop queries (progress handler) and lock waits (busy timeout) at `until`, a time.monotonic()
    deadline; None restores the defaults. Call it again when the deadline changes."""
    if until is None:
        conn.set_progress_handler(None, 0)
        conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        return
    conn.set_progress_handler(lambda: 1 if time.monotonic() > until else 0, 5000)
    conn.execute(f"PRAGMA busy_timeout={max(0, int((until - time.monotonic()) * 1000))}")


def open_reader(path: Path, *, deadline: float | None = None) -> sqlite.Connection:
    """Read-only connection; raises IndexMissing/IndexCorrupt/IndexLocked with a fix. With a
    `deadline` (time.monotonic()) nothing on it, lock waits included, runs past that moment."""
    if not path.exists():
        if building_path(path).exists():
            raise IndexMissing(
                f"no index at {path} yet: its first index is being built, or was stopped",
                "wait for `total-recall index` to finish, or run it to go on where it stopped",
            )
        raise IndexMissing(f"no index at {path}")
    try:
        conn = sqlite.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
        limit_to(conn, deadline)
        _tune(conn)
        version = current_version(conn)
    except sqlite.DatabaseError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise IndexLocked(f"index {path} is locked by another process ({exc})") from exc
        raise open_failure(path, exc) from exc
    if version == 0:
        raise IndexMissing(f"index {path} is empty")
    if version > SCHEMA_VERSION:
        raise IndexCorrupt(
            f"index {path} has schema {version}, newer than this total-recall ({SCHEMA_VERSION})",
            "upgrade total-recall or run `total-recall rebuild --yes`",
        )
    return conn


def db_file(conn: sqlite.Connection) -> str:
    """Path of the main database behind a connection ('' for in-memory)."""
    for row in conn.execute("PRAGMA database_list"):
        if row[1] == "main":
            return str(row[2] or "")
    return ""
