"""Maintenance writes: forget (I5), consolidate (decay and tidy-up), export of one session.

Every maintenance writer holds the index lock (`maintenance`), as index runs do: a hook-spawned
index run and a `forget` must never interleave.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import index.store.userstate as userstate
from index.store.db import open_existing_writer
from index.store.idents import identifier_parts
from index.store.lock import writer_lock
from index.store.memories import delete_extractions, reapply_memories
from index.store.operator import ABANDON_AFTER_DAYS, PAUSE_AFTER_DAYS
from index.store.plugins import vectors
from index.store.profiles import materialise
from index.store.schema import FTS_TABLES, session_token
from index.store.textstore import unpack
from index.store.tx import transaction
from lib import sqlite

# Goals untouched this long decay (design: time-based decay of the goal state machine).
_SESSION_TABLES = (
    "turns",
    "turn_durations",
    "compactions",
    "agents",
    "task_spawns",
    "bans",
    "standing_decisions",
    "failed_attempts",
    "goal_stack",
)
WAIT_S = 120.0  # as `index --wait`


@contextmanager
def maintenance(db: Path, wait: float = WAIT_S) -> Iterator[sqlite.Connection]:
    """The writer connection for a maintenance command, under the index lock (waits up to `wait` s for
    an index run, then raises IndexBusy)."""
    with writer_lock(db, wait=wait):
        conn = open_existing_writer(db)
        try:
            yield conn
        finally:
            conn.close()


def reapply(db: Path) -> dict[str, int]:
    """Apply the user-state file to the index (after a rebuild): counts of what it holds."""
    conn = open_existing_writer(db)
    try:
        userstate.sync_tombstones(conn, db)
        with transaction(conn):
            reapply_memories(conn, db)
    finally:
        conn.close()
    state = userstate.load(db)
    return {"forgotten": len(state.forgotten), "promoted": len(state.promoted), "demoted": len(state.demoted)}


def sessions_for(conn: sqlite.Connection, session: str | None, project: str | None) -> list[str]:
    if session:
        return [
            r[0]
            for r in conn.execute("SELECT session_id FROM sessions WHERE session_id LIKE ?", (session + "%",))
        ]
    if project:
        return [
            r[0]
            for r in conn.execute(
                "SELECT session_id FROM sessions WHERE project_key = ? OR project_key LIKE ?",
                (project, f"%{project}"),
            )
        ]
    return []


def forget(
    conn: sqlite.Connection, db: Path, session_ids: list[str], reason: str = "user request"
) -> dict[str, Any]:
    """Delete everything stored for these sessions, remember not to store them again (in the index and
    in the user-state file, which a rebuild keeps), then compact so the text is gone from the file."""
    leaves = {sid: _summary_leaves(conn, sid) for sid in session_ids}
    state = userstate.load(db)
    at = userstate.now_iso()
    for sid in session_ids:
        state.forgotten[sid] = {"at": at, "reason": reason, "leaves": leaves[sid]}
    state.promoted = [p for p in state.promoted if p.get("session_id") not in leaves]
    userstate.save(db, state)  # first: if anything below fails, the next run still honours it
    counts = {"sessions": 0, "messages": 0, "extractions": 0, "summaries": 0}
    conn.execute("PRAGMA secure_delete=ON")  # deleted cells and freed pages are overwritten with zeros
    with transaction(conn):
        for sid in session_ids:
            for k, n in _delete_session(conn, sid, leaves[sid]).items():
                counts[k] += n
            conn.executemany(
                "INSERT OR REPLACE INTO forgotten(session_id, at, reason) VALUES(?,?,?)",
                [(k, at, reason) for k in [sid, *(userstate.LEAF + u for u in leaves[sid])]],
            )
        materialise(conn)  # profiles, projects, machines and vocabulary without them
    return {**counts, "vectors_removed": _prune_vectors(db), **compact(conn)}


def _summary_leaves(conn: sqlite.Connection, sid: str) -> list[str]:
    """Leaf uuids of `summary` records (usually in another session's file) about this session."""
    return [
        r[0]
        for r in conn.execute(
            """SELECT DISTINCT leaf_uuid FROM summaries WHERE leaf_uuid IN (
             SELECT uuid FROM messages WHERE session_id=?1 UNION
             SELECT a.uuid FROM aliases a JOIN sessions s ON s.file_id = a.file_id WHERE s.session_id=?1)
           ORDER BY leaf_uuid""",
            (sid,),
        )
    ]


def _delete_session(conn: sqlite.Connection, sid: str, leaves: list[str]) -> dict[str, int]:
    files = [
        r[0]
        for r in conn.execute(
            """SELECT file_id FROM messages WHERE session_id=?1 UNION SELECT file_id FROM sessions WHERE session_id=?1
           UNION SELECT file_id FROM extractions WHERE session_id=?1""",
            (sid,),
        )
        if r[0] is not None
    ]
    fmarks = ",".join("?" * len(files))
    # The files that held the session are re-read next run (their rows dropped first, the forgotten
    # session skipped), so per-file counters and the carried context are rebuilt without it; until
    # then nothing derived from those files is kept.
    conn.execute(
        f"""UPDATE ingest_state SET head_hash='0:forget', mtime_ns=-1, carry=NULL
                     WHERE id IN ({fmarks})""",
        files,
    )
    for table in ("profile_counters", "aliases"):
        conn.execute(f"DELETE FROM {table} WHERE file_id IN ({fmarks})", files)
    n_sum = conn.executemany("DELETE FROM summaries WHERE leaf_uuid=?", [(u,) for u in leaves]).rowcount
    rows = conn.execute("SELECT id, body FROM messages WHERE session_id=?", (sid,)).fetchall()
    conn.executemany(
        "INSERT INTO messages_fts(messages_fts, rowid, text, idents, session) VALUES('delete', ?, ?, ?, ?)",
        [
            (rid, t, identifier_parts(t), session_token(sid))
            for rid, t in ((r[0], unpack(r[1])) for r in rows)
        ],
    )
    n_msg = conn.execute("DELETE FROM messages WHERE session_id=?", (sid,)).rowcount
    n_ext = delete_extractions(
        conn, [r[0] for r in conn.execute("SELECT id FROM extractions WHERE session_id=?", (sid,))]
    )
    for table in _SESSION_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE session_id=?", (sid,))
    n_ses = conn.execute("DELETE FROM sessions WHERE session_id=?", (sid,)).rowcount
    return {"sessions": n_ses, "messages": n_msg, "extractions": n_ext, "summaries": max(n_sum, 0)}


def _prune_vectors(db: Path) -> int:
    """Drop the vectors of deleted rows (embeddings are derived from the text) through the registered
    vector plugin; -1 when a vector store exists but cannot be opened here. None registered: 0."""
    plugin = vectors()
    return 0 if plugin is None else plugin.after_delete(db)


def compact(conn: sqlite.Connection) -> dict[str, Any]:
    """Make deleted text unrecoverable from the files: merge the FTS indexes (a deleted term stays in
    its old segment until a merge), VACUUM (no free page or page gap keeps old bytes), then fold the
    WAL into the database and truncate it. `wal_truncated` is False when a reader kept it open."""
    for fts in FTS_TABLES:
        conn.execute(f"INSERT INTO {fts}({fts}) VALUES('optimize')")
    conn.execute("VACUUM")
    busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    return {"wal_truncated": not busy}


def consolidate(conn: sqlite.Connection, now: datetime | None = None) -> dict[str, Any]:
    """Persist goal decay, retire duplicate open goals, and compact the FTS indexes."""
    now = now or datetime.now(timezone.utc)
    fmt = "%Y-%m-%dT%H:%M:%S.000Z"
    pause_before = (now - timedelta(days=PAUSE_AFTER_DAYS)).strftime(fmt)
    abandon_before = (now - timedelta(days=ABANDON_AFTER_DAYS)).strftime(fmt)
    with transaction(conn):
        abandoned = conn.execute(
            """UPDATE goal_stack SET status='abandoned' WHERE status IN ('active','paused','blocked')
               AND updated_ts < ?""",
            (abandon_before,),
        ).rowcount
        paused = conn.execute(
            "UPDATE goal_stack SET status='paused' WHERE status='active' AND updated_ts < ?", (pause_before,)
        ).rowcount
        dup = conn.execute(
            """UPDATE goal_stack SET status='done' WHERE status IN ('active','paused') AND id NOT IN (
                 SELECT max(id) FROM goal_stack GROUP BY project_key, lower(content))"""
        ).rowcount
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES('optimize')")
    conn.execute("INSERT INTO extractions_fts(extractions_fts) VALUES('optimize')")
    conn.execute("PRAGMA optimize")
    open_goals = dict(conn.execute("SELECT status, count(*) FROM goal_stack GROUP BY status").fetchall())
    return {
        "goals_paused": paused,
        "goals_abandoned": abandoned,
        "duplicate_goals_closed": dup,
        "goals_by_status": open_goals,
        "fts_optimized": True,
    }


def session_transcript(
    conn: sqlite.Connection, session_id: str, include_tools: bool = False
) -> list[dict[str, Any]]:
    """The live conversation of one session, in order, for `export`."""
    kinds = ("prompt", "text", "compact_summary", "away_summary") + (
        ("tool_use", "tool_result") if include_tools else ()
    )
    marks = ",".join("?" * len(kinds))
    return [
        {
            "uuid": r[0],
            "ts": r[1],
            "role": r[2],
            "kind": r[3],
            "text": unpack(r[4]),
            "on_main": bool(r[5]),
            "agent_id": r[6],
        }
        for r in conn.execute(
            f"""SELECT uuid, ts, role, kind, body, on_main, agent_id FROM messages
                    WHERE session_id=? AND kind IN ({marks}) ORDER BY id""",
            (session_id, *kinds),
        )
    ]
