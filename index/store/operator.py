"""Operator tables (bans, standing decisions, failed attempts, goals), derived from extractions (I3).

They are a function of a project's extractions, folded in time order (ts, then source uuid), never
in the order files happened to arrive: so a re-read, a truncated or a forgotten file, or `--jobs 2`
give exactly what one full index gives. A project whose extractions change is marked in `pending`
inside the writer's transaction and re-folded whole by `refold_pending` when the run finalises (a
killed run leaves the mark, and the next run honours it).

bans and standing_decisions (standing decisions and standing orders, one table: the kind of a row is
its latest mention's extraction) are de-duplicated per project by a normalised key; a standing decision
that says "we moved from X to Y" supersedes the active ones about X. failed_attempts and goal_stack
keep one row per extraction; a new goal pauses the active one; a goal_progress row moves the goal
that was current when it was said. Every row keeps the source message uuid.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from extractors.model import STANDING_KINDS
from index.store.filters import parse_ts
from lib import sqlite


def row_kind(default: str = "standing_decision") -> str:
    """SQL for an operator row's kind (`t` the table, `e` its extraction joined on `t.extraction_id`):
    the latest mention's extraction kind, since standing decisions and standing orders share one table;
    `default` for a row whose extraction is gone."""
    return f"coalesce(e.kind, '{default}')"


_NORM = re.compile(r"[^a-z0-9]+")
GOAL_STATES = ("active", "paused", "blocked", "done", "abandoned")
OPEN_GOAL = ("active", "paused", "blocked")
PAUSE_AFTER_DAYS = 14  # an untouched active goal reads as paused after this
ABANDON_AFTER_DAYS = 60  # an untouched open goal reads as abandoned after this
KINDS = ("ban", *STANDING_KINDS, "failed_attempt", "goal", "goal_progress")
_KINDS_SQL = "('" + "','".join(KINDS) + "')"
TABLES = ("bans", "standing_decisions", "failed_attempts", "goal_stack")


def decayed_status(status: str, last_touch: str | None, now: datetime) -> str:
    """Goals nobody touched fade: active → paused after 14 days, open → abandoned after 60; never done."""
    if status not in ("active", "paused", "blocked"):
        return status
    dt = parse_ts(last_touch)
    if dt is None:
        return status
    days = (now - dt).total_seconds() / 86400
    if days > ABANDON_AFTER_DAYS:
        return "abandoned"
    if days > PAUSE_AFTER_DAYS and status == "active":
        return "paused"
    return status


def norm(text: str) -> str:
    return _NORM.sub(" ", text.lower()).strip()[:160]


# --- what changed ------------------------------------------------------------------------------------


def mark_projects(conn: sqlite.Connection, where: str, args: tuple[Any, ...]) -> None:
    """Mark the projects of the operator-kind extractions matching `where` for a re-fold. `where` is
    selective (an id range, a file, some records): `+kind` keeps SQLite from scanning every
    extraction of those kinds instead (once per chunk, that grew with the index)."""
    conn.execute(
        f"""INSERT OR IGNORE INTO pending(what, key)
                     SELECT DISTINCT 'operator', json_quote(project_key) FROM extractions
                     WHERE +kind IN {_KINDS_SQL} AND {where}""",
        args,
    )


def refold_pending(conn: sqlite.Connection) -> int:
    """Re-fold every project marked since the last run (inside the caller's transaction)."""
    keys = [orjson.loads(k) for (k,) in conn.execute("SELECT key FROM pending WHERE what='operator'")]
    refold(conn, keys)
    conn.execute("DELETE FROM pending WHERE what='operator'")
    return len(keys)


def fold_new(conn: sqlite.Connection, after_id: int) -> None:
    """Re-fold now the projects of extractions with id > after_id (e.g. one just promoted)."""
    refold(
        conn,
        [
            p
            for (p,) in conn.execute(
                f"SELECT DISTINCT project_key FROM extractions WHERE id > ? AND kind IN {_KINDS_SQL}",
                (after_id,),
            )
        ],
    )


# --- the fold -----------------------------------------------------------------------------------------


@dataclass
class _Rule:
    content: str
    first_ts: str | None
    last_ts: str | None
    sid: str | None
    src: str
    eid: int
    mentions: int = 1
    status: str = "active"
    superseded_by: str | None = None  # norm of the superseding decision
    from_text: str | None = None
    to_text: str | None = None


@dataclass
class _Goal:
    content: str
    status: str
    ts: str | None
    updated_ts: str | None
    sid: str | None
    src: str
    eid: int
    status_src: str


@dataclass
class _Project:
    bans: dict[str, _Rule] = field(default_factory=dict)
    decisions: dict[str, _Rule] = field(default_factory=dict)
    failed: list[tuple[Any, ...]] = field(default_factory=list)
    goals: list[_Goal] = field(default_factory=list)


def refold(conn: sqlite.Connection, projects: Iterable[str | None]) -> None:
    """Rebuild the operator rows of these projects from their extractions."""
    for project in dict.fromkeys(projects):
        for table in TABLES:
            # also rows left by an extraction whose id was freed and reused in this project
            conn.execute(
                f"""DELETE FROM {table} WHERE project_key IS ?1 OR extraction_id IN (
                               SELECT id FROM extractions WHERE project_key IS ?1)""",
                (project,),
            )
        p = _Project()
        for eid, kind, content, context, sid, src, ts in conn.execute(
            f"""SELECT id, kind, content, context, session_id, source_uuid, ts FROM extractions
                    WHERE project_key IS ? AND kind IN {_KINDS_SQL}
                    ORDER BY coalesce(ts, ''), source_uuid, id""",
            (project,),
        ).fetchall():
            ctx: dict[str, Any] = orjson.loads(context) if context else {}
            if kind == "ban":
                _mention(p.bans, eid, content, sid, src, ts)
            elif kind in STANDING_KINDS:
                _decision(p.decisions, eid, content, ctx, sid, src, ts)
            elif kind == "failed_attempt":
                p.failed.append(
                    (project, content, ctx.get("by") or "assistant", ctx.get("error"), ts, sid, src, eid)
                )
            elif kind == "goal":
                _goal(p.goals, eid, content, ctx, sid, src, ts)
            elif ctx.get("status") in GOAL_STATES:
                _progress(p.goals, ctx["status"], src, ts)
        _store(conn, project, p)


def _mention(
    rules: dict[str, _Rule], eid: int, content: str, sid: str | None, src: str, ts: str | None
) -> _Rule:
    key = norm(content)
    r = rules.get(key)
    if r is None:
        r = rules[key] = _Rule(content, ts, ts, sid, src, eid)
        return r
    r.mentions += 1
    r.last_ts = max(r.last_ts or ts or "", ts or r.last_ts or "") or None
    r.content, r.sid, r.src, r.eid = content, sid, src, eid  # the latest wording speaks for the rule
    return r


def _decision(
    rules: dict[str, _Rule],
    eid: int,
    content: str,
    ctx: dict[str, Any],
    sid: str | None,
    src: str,
    ts: str | None,
) -> None:
    r = _mention(rules, eid, content, sid, src, ts)
    r.status, r.superseded_by = "active", None  # said again: in force again
    old = ctx.get("supersedes") or ctx.get("from")
    if not old:
        return
    r.from_text, r.to_text = ctx.get("from"), ctx.get("to")
    words = [w for w in norm(str(old)).split() if len(w) > 2]
    to_words = norm(str(ctx.get("to") or "")).split()
    if not words:
        return
    key = norm(content)
    for other_key, other in rules.items():
        toks = set(other_key.split())
        if (
            other_key != key
            and other.status == "active"
            and all(w in toks for w in words)
            and not all(w in toks for w in to_words)
        ):
            other.status, other.superseded_by = "superseded", key


def _goal(
    goals: list[_Goal], eid: int, content: str, ctx: dict[str, Any], sid: str | None, src: str, ts: str | None
) -> None:
    status = str(ctx["status"]) if ctx.get("status") in GOAL_STATES else "active"
    if status == "active":
        for g in goals:  # a new active goal pauses the previous one in this project
            if g.status == "active":
                g.status = "paused"
    goals.append(_Goal(content, status, ts, ts, sid, src, eid, src))


def _progress(goals: list[_Goal], status: str, src: str, ts: str | None) -> None:
    """Move the goal that was current when this was said (the latest open one not newer than it)."""
    limit = ts or "~"
    open_goals = [
        (g.ts is not None, g.ts or "", i)
        for i, g in enumerate(goals)
        if g.status in OPEN_GOAL and (g.ts or "") <= limit
    ]
    if not open_goals:
        return
    g = goals[max(open_goals)[2]]
    if (g.updated_ts or "") <= limit:
        g.status, g.updated_ts, g.status_src = status, ts, src


def _store(conn: sqlite.Connection, project: str | None, p: _Project) -> None:
    for table, rules in (("bans", p.bans), ("standing_decisions", p.decisions)):
        conn.executemany(
            f"""INSERT INTO {table}(project_key, norm, content, first_ts, last_ts, mentions, session_id,
                source_uuid, extraction_id) VALUES(?,?,?,?,?,?,?,?,?)""",
            [
                (project, k, r.content, r.first_ts, r.last_ts, r.mentions, r.sid, r.src, r.eid)
                for k, r in rules.items()
            ],
        )
    decided = [
        (r.status, r.from_text, r.to_text, r.superseded_by, project, k)
        for k, r in p.decisions.items()
        if r.status != "active" or r.from_text is not None or r.to_text is not None
    ]
    conn.executemany(
        """UPDATE standing_decisions SET status=?1, from_text=?2, to_text=?3, superseded_by=(
             SELECT id FROM standing_decisions WHERE project_key IS ?5 AND norm = ?4)
           WHERE project_key IS ?5 AND norm = ?6""",
        decided,
    )
    conn.executemany(
        """INSERT INTO failed_attempts(project_key, content, by_role, error, ts, session_id, source_uuid,
           extraction_id) VALUES(?,?,?,?,?,?,?,?)""",
        p.failed,
    )
    conn.executemany(
        """INSERT INTO goal_stack(project_key, content, status, ts, updated_ts, session_id, source_uuid,
           extraction_id, status_source_uuid) VALUES(?,?,?,?,?,?,?,?,?)""",
        [
            (project, g.content, g.status, g.ts, g.updated_ts, g.sid, g.src, g.eid, g.status_src)
            for g in p.goals
        ],
    )
