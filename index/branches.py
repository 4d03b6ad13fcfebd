"""Main branch vs abandoned forks (W6), recomputed per touched session.

The live branch is the path from the newest leaf to the root. Tool results hang off their
tool_use record (parallel calls fan out), so a result counts as live when its call is live.
"""

from __future__ import annotations

import sqlite3


def update_main_branch(conn: sqlite3.Connection, session_id: str) -> int:
    """Recompute `messages.on_main` for one session; returns how many rows changed."""
    rows = conn.execute(
        "SELECT id, uuid, parent_uuid, kind, on_main FROM messages WHERE session_id=? AND is_sidechain=0 ORDER BY id",
        (session_id,)).fetchall()
    if not rows:
        return 0
    parent = {r[1]: r[2] for r in rows}
    path: set[str] = set()
    p: str | None = rows[-1][1]
    while p is not None and p in parent and p not in path:
        path.add(p)
        p = parent[p]
    changed = []
    for rid, uuid, par, kind, cur in rows:
        live = uuid in path or (kind == "tool_result" and par in path)
        if int(live) != cur:
            changed.append((int(live), rid))
    if changed:
        conn.executemany("UPDATE messages SET on_main=? WHERE id=?", changed)
    conn.execute("UPDATE sessions SET main_leaf=? WHERE session_id=?", (rows[-1][1], session_id))
    return len(changed)
