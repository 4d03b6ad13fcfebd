"""Operator tables folded from new extractions, inside the writer's transaction (I3).

bans and standing_decisions are de-duplicated per project by a normalised key; a standing decision
that says "we moved from X to Y" supersedes the active ones about X. failed_attempts and goal_stack
keep one row per extraction; a goal_progress row moves the project's most recent open goal.
Every row keeps the source message uuid.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

import orjson

_NORM = re.compile(r"[^a-z0-9]+")
GOAL_STATES = ("active", "paused", "blocked", "done", "abandoned")


def norm(text: str) -> str:
    return _NORM.sub(" ", text.lower()).strip()[:160]


_FOLDED = """SELECT id, kind, content, context, session_id, source_uuid, project_key, ts FROM extractions
              WHERE kind IN ('ban','standing_decision','failed_attempt','goal','goal_progress') AND """


def fold_new(conn: sqlite3.Connection, after_id: int) -> None:
    """Fold extractions with id > after_id (in id order) into the operator tables."""
    _fold(conn, conn.execute(_FOLDED + "id > ? ORDER BY id", (after_id,)).fetchall())


def fold_ids(conn: sqlite3.Connection, ids: list[int]) -> None:
    """Fold these extractions again (in id order), e.g. the other mentions of a rule whose row was deleted."""
    marks = ",".join("?" * len(ids))
    _fold(conn, conn.execute(_FOLDED + f"id IN ({marks}) ORDER BY id", ids).fetchall())


def _fold(conn: sqlite3.Connection, rows: list[Any]) -> None:
    for eid, kind, content, context, sid, src, project, ts in rows:
        ctx: dict[str, Any] = orjson.loads(context) if context else {}
        if kind == "ban":
            _upsert_rule(conn, "bans", eid, project, content, sid, src, ts)
        elif kind == "standing_decision":
            _standing(conn, eid, project, content, ctx, sid, src, ts)
        elif kind == "failed_attempt":
            conn.execute(
                """INSERT OR IGNORE INTO failed_attempts(project_key, content, by_role, error, ts, session_id,
                   source_uuid, extraction_id) VALUES(?,?,?,?,?,?,?,?)""",
                (project, content, ctx.get("by") or "assistant", ctx.get("error"), ts, sid, src, eid))
        elif kind == "goal":
            status = ctx.get("status") if ctx.get("status") in GOAL_STATES else "active"
            if status == "active":
                newer = conn.execute("""SELECT 1 FROM goal_stack WHERE project_key IS ? AND status='active'
                                        AND updated_ts > ?""", (project, ts or "")).fetchone()
                if newer:
                    status = "paused"  # files arrive in any order: an older goal never displaces a newer one
                else:
                    # a new active goal pauses the previous active one in this project
                    conn.execute("""UPDATE goal_stack SET status='paused' WHERE project_key IS ?
                                    AND status='active'""", (project,))
            conn.execute(
                """INSERT OR IGNORE INTO goal_stack(project_key, content, status, ts, updated_ts, session_id,
                   source_uuid, extraction_id, status_source_uuid) VALUES(?,?,?,?,?,?,?,?,?)""",
                (project, content, status, ts, ts, sid, src, eid, src))
        elif kind == "goal_progress":
            status = ctx.get("status")
            if status in GOAL_STATES:
                # the goal that was current when this was said (files arrive in any order)
                conn.execute(
                    """UPDATE goal_stack SET status=?, updated_ts=?, status_source_uuid=? WHERE id=(
                         SELECT id FROM goal_stack WHERE project_key IS ? AND status IN ('active','paused','blocked')
                         AND coalesce(ts, '') <= ? ORDER BY ts DESC, id DESC LIMIT 1)
                       AND coalesce(updated_ts, '') <= ?""", (status, ts, src, project, ts or "~", ts or "~"))


def _upsert_rule(conn: sqlite3.Connection, table: str, eid: int, project: str | None, content: str,
                 sid: str | None, src: str, ts: str | None) -> int:
    key = norm(content)
    conn.execute(
        f"""INSERT INTO {table}(project_key, norm, content, first_ts, last_ts, session_id, source_uuid, extraction_id)
            VALUES(?,?,?,?,?,?,?,?)
            ON CONFLICT(project_key, norm) DO UPDATE SET mentions=mentions+1,
              last_ts=max(coalesce(last_ts, excluded.last_ts), coalesce(excluded.last_ts, last_ts)),
              content=excluded.content, session_id=excluded.session_id, source_uuid=excluded.source_uuid,
              extraction_id=excluded.extraction_id""",
        (project, key, content, ts, ts, sid, src, eid))
    rid: int = conn.execute(f"SELECT id FROM {table} WHERE project_key IS ? AND norm=?", (project, key)).fetchone()[0]
    return rid


def _standing(conn: sqlite3.Connection, eid: int, project: str | None, content: str, ctx: dict[str, Any],
              sid: str | None, src: str, ts: str | None) -> None:
    rid = _upsert_rule(conn, "standing_decisions", eid, project, content, sid, src, ts)
    conn.execute("UPDATE standing_decisions SET status='active', superseded_by=NULL WHERE id=?", (rid,))
    # an older decision folded after the newer one that retired it (files arrive in any order)
    toks = set(norm(content).split())
    for newer_id, from_text, to_text in conn.execute(
            """SELECT id, from_text, to_text FROM standing_decisions WHERE project_key IS ? AND id != ?
               AND from_text IS NOT NULL AND coalesce(first_ts, '') > ?""", (project, rid, ts or "")).fetchall():
        words = [w for w in norm(from_text).split() if len(w) > 2]
        if words and all(w in toks for w in words) and not all(w in toks for w in norm(to_text or "").split()):
            conn.execute("UPDATE standing_decisions SET status='superseded', superseded_by=? WHERE id=?",
                         (newer_id, rid))
            break
    old = ctx.get("supersedes") or ctx.get("from")
    if not old:
        return
    conn.execute("UPDATE standing_decisions SET from_text=?, to_text=? WHERE id=?", (ctx.get("from"), ctx.get("to"), rid))
    words = [w for w in norm(str(old)).split() if len(w) > 2]
    if not words:
        return
    for other_id, other_norm in conn.execute(
            """SELECT id, norm FROM standing_decisions WHERE project_key IS ? AND status='active' AND id != ?
               AND coalesce(first_ts, '') <= ?""", (project, rid, ts or "~")).fetchall():
        toks = set(other_norm.split())
        if all(w in toks for w in words) and not all(w in toks for w in norm(str(ctx.get("to") or "")).split()):
            conn.execute("UPDATE standing_decisions SET status='superseded', superseded_by=? WHERE id=?",
                         (rid, other_id))
