"""The one write transaction of index/: every writer runs its statements inside `transaction(conn)`
so a failure never leaves the connection inside a half-written transaction. Below `schema` (whose
migrations use it), so it imports nothing from index/."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from lib import sqlite


@contextmanager
def transaction(conn: sqlite.Connection) -> Iterator[sqlite.Connection]:
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


def rollback(conn: sqlite.Connection) -> None:
    """End the open transaction, if SQLite has not ended it already."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")
