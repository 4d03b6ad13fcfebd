"""Stale marks (issue 19, schema v7): the result of checking a memory against its project's repository
at one HEAD (`index.briefing.staleness` runs the git checks). Derived state: git is the truth, so a
rebuilt index starts without marks and the next check recomputes them; nothing here is user state.

Readers tolerate an index created before v7 (no table: no marks)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from lib import sqlite

WRITE_WAIT_MS = 200  # a hook saving marks waits this long for an index run's write lock, then gives up


@dataclass(slots=True)
class Mark:
    item_id: str
    head: str
    stale: bool
    ref: str | None = None  # what the memory names: utils/retry.py::backoff, --flag, package:x, a path
    reason: str | None = None
    commit: str | None = None  # the commit that removed it
    commit_date: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "reason": self.reason,
            "commit": self.commit,
            "commit_date": self.commit_date,
            "head": self.head,
        }


def read_marks(conn: sqlite.Connection, ids: list[str]) -> dict[str, Mark]:
    """The marks of these items (any HEAD); {} on an index without the table."""
    out: dict[str, Mark] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        try:
            rows = conn.execute(
                f"""SELECT item_id, head, stale, ref, reason, commit_sha, commit_date FROM stale_marks
                    WHERE item_id IN ({",".join("?" * len(chunk))})""",
                chunk,
            ).fetchall()
        except sqlite.OperationalError:
            return {}
        for r in rows:
            out[r[0]] = Mark(r[0], r[1], bool(r[2]), r[3], r[4], r[5], r[6])
    return out


def stale_of(conn: sqlite.Connection, ids: list[str]) -> dict[str, dict[str, Any]]:
    """Only the stale ones, as JSON: what MCP answers show under `stale`."""
    return {k: m.to_json() for k, m in read_marks(conn, ids).items() if m.stale}


def write_marks(conn: sqlite.Connection, marks: list[Mark]) -> int:
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    conn.executemany(
        """INSERT OR REPLACE INTO stale_marks(item_id, head, stale, ref, reason, commit_sha, commit_date,
           checked_at) VALUES(?,?,?,?,?,?,?,?)""",
        [(m.item_id, m.head, int(m.stale), m.ref, m.reason, m.commit, m.commit_date, now) for m in marks],
    )
    return len(marks)


def save_marks(db: Path, marks: list[Mark]) -> bool:
    """Store marks from a read-only caller (the SessionStart hook): a short connection of its own that
    waits at most WRITE_WAIT_MS for the write lock. False when it could not (the marks are recomputed
    next time)."""
    if not marks:
        return True
    try:
        conn = sqlite.connect(str(db), isolation_level=None, timeout=WRITE_WAIT_MS / 1000)
        try:
            write_marks(conn, marks)
        finally:
            conn.close()
        return True
    except sqlite.Error:
        return False
