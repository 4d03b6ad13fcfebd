"""Main branch vs abandoned forks (W6), recomputed per touched session.

The live branch is the path from the newest leaf to the root. Parallel tool calls fan out: the
next turn hangs off whichever result was written last, so the path can skip sibling calls. Hence a
whole API response (records sharing message_id) is live when any of its records is, and a tool
result is live when its call is. A parent written nowhere (a damaged line) does not abandon the
history before it: the walk continues with the preceding record in file order.
"""

from __future__ import annotations

from index.store.branch_rows import Row
from index.store.pending import mark_digest
from lib import sqlite


def update_main_branch(conn: sqlite.Connection, session_id: str, known: list[Row] | None = None) -> int:
    """Recompute `messages.on_main` for one session; returns how many rows changed. `known`: the rows
    the query below would return, when the writer has them already (index/store/branch_rows.py)."""
    rows = known
    if rows is None:
        rows = conn.execute(
            """SELECT id, uuid, parent_uuid, kind, on_main, message_id FROM messages
               WHERE session_id=? AND is_sidechain=0 ORDER BY id""",
            (session_id,),
        ).fetchall()
    if not rows:
        return 0
    parent = {r[1]: r[2] for r in rows}
    pos = {r[1]: i for i, r in enumerate(rows)}
    path: set[str] = set()
    p: str | None = rows[-1][1]
    while p is not None and p in parent and p not in path:
        path.add(p)
        nxt = parent[p]
        if nxt is not None and nxt not in parent and pos[p] > 0:
            # dangling parent (a lost line, an unresolved bridge): continue in file order
            nxt = rows[pos[p] - 1][1]
        p = nxt
    live_responses = {r[5] for r in rows if r[1] in path and r[5]}
    live = {r[1] for r in rows if r[1] in path or (r[5] and r[5] in live_responses)}
    changed = []
    for rid, uuid, par, kind, cur, _ in rows:
        on = uuid in live or (kind == "tool_result" and par in live)
        if int(on) != cur:
            changed.append((int(on), rid))
    if changed:
        conn.executemany("UPDATE messages SET on_main=? WHERE id=?", changed)
    mark_digest(conn, session_id)  # touched by this chunk: its digest is rebuilt when the run finalises
    conn.execute("UPDATE sessions SET main_leaf=? WHERE session_id=?", (rows[-1][1], session_id))
    return len(changed)
