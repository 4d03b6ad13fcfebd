"""Maintenance writes: forget (I5), consolidate (decay and tidy-up), export of one session."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from typing import Any

from index.idents import identifier_parts
from index.textstore import unpack

# Goals untouched this long decay (design: time-based decay of the goal state machine).
PAUSE_AFTER_DAYS = 14
ABANDON_AFTER_DAYS = 60
_SESSION_TABLES = ("turns", "turn_durations", "compactions", "agents", "task_spawns")


def sessions_for(conn: sqlite3.Connection, session: str | None, project: str | None) -> list[str]:
    if session:
        return [r[0] for r in conn.execute("SELECT session_id FROM sessions WHERE session_id LIKE ?", (session + "%",))]
    if project:
        return [r[0] for r in conn.execute(
            "SELECT session_id FROM sessions WHERE project_key = ? OR project_key LIKE ?", (project, f"%{project}"))]
    return []


def forget(conn: sqlite3.Connection, session_ids: list[str], reason: str = "user request") -> dict[str, int]:
    """Delete everything stored for these sessions and remember not to store them again."""
    counts = {"sessions": 0, "messages": 0, "extractions": 0}
    conn.execute("BEGIN IMMEDIATE")
    try:
        for sid in session_ids:
            # files holding the session are re-read next run (their rows dropped first), so per-file
            # profile counters are recomputed without it
            conn.execute("""UPDATE ingest_state SET head_hash='0:forget', mtime_ns=-1 WHERE id IN (
                              SELECT file_id FROM messages WHERE session_id=? UNION
                              SELECT file_id FROM sessions WHERE session_id=?)""", (sid, sid))
            rows = conn.execute("SELECT id, body FROM messages WHERE session_id=?", (sid,)).fetchall()
            conn.executemany("INSERT INTO messages_fts(messages_fts, rowid, text, idents) VALUES('delete', ?, ?, ?)",
                             [(rid, t, identifier_parts(t)) for rid, t in ((r[0], unpack(r[1])) for r in rows)])
            counts["messages"] += conn.execute("DELETE FROM messages WHERE session_id=?", (sid,)).rowcount
            conn.execute("""INSERT INTO extractions_fts(extractions_fts, rowid, content, context)
                            SELECT 'delete', id, content, context FROM extractions WHERE session_id=?""", (sid,))
            counts["extractions"] += conn.execute("DELETE FROM extractions WHERE session_id=?", (sid,)).rowcount
            for table in ("bans", "standing_decisions", "failed_attempts", "goal_stack"):
                conn.execute(f"DELETE FROM {table} WHERE session_id=?", (sid,))
            for table in _SESSION_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE session_id=?", (sid,))
            counts["sessions"] += conn.execute("DELETE FROM sessions WHERE session_id=?", (sid,)).rowcount
            conn.execute("INSERT OR REPLACE INTO forgotten VALUES(?, strftime('%Y-%m-%dT%H:%M:%fZ','now'), ?)",
                         (sid, reason))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return counts


def consolidate(conn: sqlite3.Connection, now: datetime | None = None) -> dict[str, Any]:
    """Persist goal decay, retire duplicate open goals, and compact the FTS indexes."""
    now = now or datetime.now(timezone.utc)
    fmt = "%Y-%m-%dT%H:%M:%S.000Z"
    pause_before = (now - timedelta(days=PAUSE_AFTER_DAYS)).strftime(fmt)
    abandon_before = (now - timedelta(days=ABANDON_AFTER_DAYS)).strftime(fmt)
    conn.execute("BEGIN IMMEDIATE")
    try:
        abandoned = conn.execute(
            """UPDATE goal_stack SET status='abandoned' WHERE status IN ('active','paused','blocked')
               AND updated_ts < ?""", (abandon_before,)).rowcount
        paused = conn.execute("UPDATE goal_stack SET status='paused' WHERE status='active' AND updated_ts < ?",
                              (pause_before,)).rowcount
        dup = conn.execute(
            """UPDATE goal_stack SET status='done' WHERE status IN ('active','paused') AND id NOT IN (
                 SELECT max(id) FROM goal_stack GROUP BY project_key, lower(content))""").rowcount
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES('optimize')")
    conn.execute("INSERT INTO extractions_fts(extractions_fts) VALUES('optimize')")
    conn.execute("PRAGMA optimize")
    open_goals = dict(conn.execute("SELECT status, count(*) FROM goal_stack GROUP BY status").fetchall())
    return {"goals_paused": paused, "goals_abandoned": abandoned, "duplicate_goals_closed": dup,
            "goals_by_status": open_goals, "fts_optimized": True}


def session_transcript(conn: sqlite3.Connection, session_id: str, include_tools: bool = False) -> list[dict[str, Any]]:
    """The live conversation of one session, in order, for `export`."""
    kinds = ("prompt", "text", "compact_summary", "away_summary") + (("tool_use", "tool_result") if include_tools else ())
    marks = ",".join("?" * len(kinds))
    return [{"uuid": r[0], "ts": r[1], "role": r[2], "kind": r[3], "text": unpack(r[4]), "on_main": bool(r[5]),
             "agent_id": r[6]}
            for r in conn.execute(
                f"""SELECT uuid, ts, role, kind, body, on_main, agent_id FROM messages
                    WHERE session_id=? AND kind IN ({marks}) ORDER BY id""", (session_id, *kinds))]


PROMOTABLE = ("ban", "standing_decision", "goal", "implicit_preference", "domain_fact")


def promote(conn: sqlite3.Connection, kind: str, *, text: str | None = None, extraction_id: int | None = None,
            cwd: str | None = None) -> dict[str, Any]:
    """Make a memory durable on request: free text, or an existing extraction (e.g. a one-off decision),
    becomes a ban / standing decision / goal / preference for the project, folded like any other row.
    The new row's source is the original message, or `manual:<id>` for typed text."""
    import uuid as uuidlib

    from index.operator import fold_new
    from index.writer import write_extractions
    from lib.project import project_key

    if kind not in PROMOTABLE:
        raise ValueError(f"kind {kind!r}: use one of {', '.join(PROMOTABLE)}")
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    if extraction_id is not None:
        row = conn.execute("SELECT content, session_id, source_uuid, cwd, project_key FROM extractions WHERE id=?",
                           (extraction_id,)).fetchone()
        if row is None:
            raise LookupError(f"no extraction with id {extraction_id}")
        content, session_id, source, cwd_, project = row
    else:
        if not text or not text.strip():
            raise ValueError("nothing to promote: give a text or an extraction id")
        content, session_id, source, cwd_, project = text.strip(), None, f"manual:{uuidlib.uuid4()}", cwd, \
            project_key(cwd)
    ordinal = conn.execute("SELECT count(*) FROM extractions WHERE kind=? AND source_uuid=?", (kind, source)).fetchone()[0]
    ctx = '{"promoted": true}' if kind != "goal" else '{"promoted": true, "status": "active"}'
    conn.execute("BEGIN IMMEDIATE")
    try:
        last = conn.execute("SELECT coalesce(max(id), 0) FROM extractions").fetchone()[0]
        write_extractions(conn, [(kind, content, ctx, 1.0, session_id, source, ordinal, cwd_, project, now)], None)
        fold_new(conn, last)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return {"kind": kind, "content": content, "project": project, "source_uuid": source, "ts": now}
