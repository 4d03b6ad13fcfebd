"""The one write transaction of index/: every writer runs its statements inside `transaction(conn)`
so a failure never leaves the connection inside a half-written transaction. Below `schema` (whose
migrations use it), so it imports nothing from index/."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE (take the write lock now, not at the first write) … COMMIT; on any failure,
    including a failed COMMIT, ROLLBACK and re-raise. The rollback is skipped when SQLite already
    rolled back by itself (a full disk, an I/O error), so the original error is the one raised."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def rollback(conn: sqlite3.Connection) -> None:
    """End the open transaction, if SQLite has not ended it already."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")
