"""The `pending` mark: a run that wrote anything leaves it in the same transaction as its rows, and
finalisation (index/store/finalize.py) clears it, so a run killed in between is finished by the next
one. Its own module so the writer needs nothing from finalisation."""

from __future__ import annotations

from lib import sqlite


def mark_pending(conn: sqlite.Connection) -> None:
    """Inside a writer's transaction: this run (or a later one) must finalise."""
    conn.execute("INSERT OR IGNORE INTO pending(what, key) VALUES('finalize', '')")


def mark_digest(conn: sqlite.Connection, session_id: str) -> None:
    """A chunk touched the session: its digest must be rebuilt, even when its counts do not show it (a
    record taken over by a better copy, a main branch that moved); index/store/digests.py clears it."""
    conn.execute("INSERT OR IGNORE INTO pending(what, key) VALUES('digest', ?)", (session_id,))
