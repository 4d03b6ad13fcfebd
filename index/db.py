"""Connections: one writer (WAL, busy timeout, migrations) and read-only readers."""

from __future__ import annotations

import sqlite3
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


def _tune(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-32000")


def open_writer(path: Path) -> sqlite3.Connection:
    """The single writer: creates the DB if needed and migrates it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        _tune(conn)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        migrate(conn)
        from index.userstate import sync_tombstones  # forgotten sessions stay forgotten in a new file

        sync_tombstones(conn, path)
    except sqlite3.DatabaseError as exc:
        raise IndexCorrupt(f"cannot open index {path}: {exc}") from exc
    return conn


def open_existing_writer(path: Path) -> sqlite3.Connection:
    """The writer for maintenance commands, which must not create an index that is not there."""
    if not path.exists():
        raise IndexMissing(f"no index at {path}")
    return open_writer(path)


def open_reader(path: Path) -> sqlite3.Connection:
    """Read-only connection; raises IndexMissing/IndexCorrupt with a fix."""
    if not path.exists():
        raise IndexMissing(f"no index at {path}")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
        _tune(conn)
        version = current_version(conn)
    except sqlite3.DatabaseError as exc:
        raise IndexCorrupt(f"index {path} is not a readable SQLite database ({exc})") from exc
    if version == 0:
        raise IndexMissing(f"index {path} is empty")
    if version > SCHEMA_VERSION:
        raise IndexCorrupt(f"index {path} has schema {version}, newer than this total-recall ({SCHEMA_VERSION})",
                           "upgrade total-recall or run `total-recall rebuild --yes`")
    return conn
