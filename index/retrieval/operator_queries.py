"""Read-side queries over the operator tables (bans, standing decisions, goals, failed attempts) and
the extraction kinds that have no table of their own (corrections, truth rhetoric, preferences).

Every function takes the shared parameters (scope, cwd, since, limit) with one meaning, widens the
scope through `index.retrieval.scoped.walk`, and returns plain dicts that carry date, session and project.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import orjson

from extractors.model import STANDING_KINDS
from extractors.truth import CATEGORIES
from index.retrieval.recall import recall
from index.retrieval.rule_match import BANNED_AT, ban_matches, match_score, tokens
from index.retrieval.scoped import Scoped, and_where, provenance, walk
from index.store.labels import Label, project_labeller
from index.store.operator import decayed_status, row_kind
from index.store.stale import stale_of
from lib import sqlite
from lib.memid import memory_id

TRUTH_CATEGORIES = CATEGORIES  # the truth extractor's categories, one list (extractors/truth.py)


def _ctx(raw: str | None) -> dict[str, Any]:
    try:
        v = orjson.loads(raw or "{}")
    except orjson.JSONDecodeError:
        return {}
    return v if isinstance(v, dict) else {}


def extraction_item(
    label: Label,
    kind: str,
    content: str,
    context: str | dict[str, Any] | None,
    session_id: str | None,
    uuid: str | None,
    project_key: str | None,
    ts: str | None,
    confidence: float | None = None,
) -> dict[str, Any]:
    """The one shape of a recalled extraction: kind, content, calibrated confidence, provenance, useful
    context fields."""
    ctx = context if isinstance(context, dict) else _ctx(context)
    item: dict[str, Any] = {
        "kind": kind,
        "content": content,
        **provenance(label, session_id, ts, project_key, uuid),
    }
    if confidence is not None:
        item["confidence"] = round(float(confidence), 3)
    for key in (
        "rejected_approach",
        "rejected",
        "category",
        "status",
        "statement",
        "from",
        "to",
        "error",
        "by",
    ):
        if ctx.get(key):
            item[key] = ctx[key]
    return item


_E = "e.kind, e.content, e.context, e.session_id, e.source_uuid, e.project_key, e.ts, e.score"


def latest_extractions(
    conn: sqlite.Connection,
    kinds: tuple[str, ...],
    *,
    scope: str,
    cwd: str | None,
    since: str | None,
    limit: int,
    category: str | None = None,
) -> Scoped:
    """Newest extractions of some kinds (corrections, truth rhetoric, preferences…)."""
    marks = ",".join("?" * len(kinds))
    label = project_labeller(conn)

    def run(where: str, args: list[object]) -> list[dict[str, Any]]:
        extra, params = [f"e.kind IN ({marks})"], [*kinds]
        if since:
            extra.append("e.ts >= ?")
            params.append(since)
        if category:
            extra.append("json_extract(e.context, '$.category') = ?")
            params.append(category)
        rows = conn.execute(
            f"SELECT {_E} FROM extractions e WHERE 1=1 {and_where(where, ' AND '.join(extra))} "
            f"ORDER BY e.ts DESC, e.id DESC LIMIT ?",
            [*args, *params, limit],
        ).fetchall()
        return [extraction_item(label, *r) for r in rows]

    return walk(scope, cwd, run)


def recall_kinds(
    conn: sqlite.Connection,
    topic: str,
    kinds: tuple[str, ...],
    *,
    scope: str,
    cwd: str | None,
    since: str | None,
    limit: int,
    category: str | None = None,
) -> Scoped:
    """`index.retrieval.recall.recall` restricted to some kinds, as provenance-carrying dicts."""
    res = recall(
        conn,
        topic,
        kind=",".join(kinds),
        scope=scope,
        cwd=cwd,
        since=since,
        limit=limit * 3 if category else limit,
    )
    items, label = [], project_labeller(conn)
    for h in res.hits:
        if category and h.context.get("category") != category:
            continue
        it = extraction_item(
            label, h.kind, h.content, h.context, h.session_id, h.source_uuid, h.project, h.ts, h.confidence
        )
        it["score"] = h.score
        if h.stale:
            it["stale"] = True
        items.append(it)
    return Scoped(items[:limit], res.scope, res.note)


# --- rules: bans and standing decisions ---------------------------------------------------------------


def _rule_rows(
    conn: sqlite.Connection,
    table: str,
    cond: str,
    params: list[object],
    scope: str,
    cwd: str | None,
    since: str | None,
    limit: int,
    keep: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
) -> Scoped:
    """Rows of bans / standing_decisions in scope; `keep` filters (and annotates) them inside each scope,
    so a scope with rows but no match still widens."""
    cols = (
        "t.id, t.content, t.first_ts, t.last_ts, t.mentions, t.session_id, t.source_uuid, t.project_key, "
        "e.context"
    )
    if table == "standing_decisions":
        cols += ", t.status, t.superseded_by, t.from_text, t.to_text, " + row_kind()
    label = project_labeller(conn)

    def run(where: str, args: list[object]) -> list[dict[str, Any]]:
        extra = [cond] if cond else []
        ps = list(params)
        if since:
            extra.append("t.last_ts >= ?")
            ps.append(since)
        rows = conn.execute(
            f"""SELECT {cols} FROM {table} t LEFT JOIN extractions e ON e.id = t.extraction_id
                WHERE 1=1 {and_where(where.replace("e.project_key", "t.project_key"), " AND ".join(extra))}
                ORDER BY t.last_ts DESC, t.id DESC LIMIT ?""",
            [*args, *ps, 5000 if keep else limit],
        ).fetchall()
        out: list[dict[str, Any]] = []
        for r in rows:
            ctx = _ctx(r[8])
            item: dict[str, Any] = {
                "id": r[0],
                "content": r[1],
                **provenance(label, r[5], r[3], r[7], r[6]),
                "first_date": (r[2] or "")[:10] or None,
                "mentions": r[4],
            }
            if ctx.get("statement") and ctx["statement"] != r[1]:
                item["statement"] = ctx["statement"]
            kind = "ban"
            if table == "standing_decisions":
                kind = item["kind"] = r[13]  # a standing decision or a standing order
                item["status"] = r[9]
                if r[10]:
                    item["superseded_by"] = r[10]
                if r[11] or r[12]:
                    item["from"], item["to"] = r[11], r[12]
            item["id"] = memory_id(kind, r[7], r[1])
            kept = keep(item) if keep else item
            if kept is not None:
                out.append(kept)
        stale = stale_of(conn, [i["id"] for i in out])
        for it in out:
            if it["id"] in stale:
                it["stale"] = stale[it["id"]]  # the code it names is gone (index/briefing/staleness.py)
        return out

    return walk(scope, cwd, run)


def list_standing_decisions(
    conn: sqlite.Connection, *, status: str, scope: str, cwd: str | None, since: str | None, limit: int
) -> Scoped:
    params: list[object] = [] if status == "all" else [status]
    res = _rule_rows(
        conn, "standing_decisions", "t.status = ?" if params else "", params, scope, cwd, since, limit
    )
    _name_successors(conn, res.items)
    return res


def _name_successors(conn: sqlite.Connection, items: list[dict[str, Any]]) -> None:
    for it in items:
        if it.get("superseded_by"):
            row = conn.execute(
                "SELECT content, last_ts FROM standing_decisions WHERE id=?", (it["superseded_by"],)
            ).fetchone()
            if row:
                it["superseded_by"] = {
                    "id": it["superseded_by"],
                    "content": row[0],
                    "date": (row[1] or "")[:10],
                }


def check_banned(conn: sqlite.Connection, action: str, *, scope: str, cwd: str | None, limit: int) -> Scoped:
    """Bans whose wording overlaps `action`; verdict banned / possibly_banned / no_known_ban in `extra`."""
    query = tokens(action)
    checked = [0]

    def keep(ban: dict[str, Any]) -> dict[str, Any] | None:
        checked[0] += 1
        hit = ban_matches(ban["content"], ban.get("statement"), query)
        return {**ban, "match": hit[0], "matched_words": hit[1]} if hit else None

    res = _rule_rows(conn, "bans", "t.active = 1", [], scope, cwd, None, limit, keep)
    found = sorted(res.items, key=lambda b: -b["match"])
    verdict = "no_known_ban"
    if found:
        verdict = "banned" if found[0]["match"] >= BANNED_AT else "possibly_banned"
    return Scoped(found[:limit], res.scope, res.note, {"verdict": verdict, "bans_checked": checked[0]})


def decision_for_topic(
    conn: sqlite.Connection, topic: str, *, scope: str, cwd: str | None, since: str | None, limit: int
) -> Scoped:
    """Standing decisions about `topic` (by word overlap; superseded ones say by what) plus one-off
    decisions ranked by `index.retrieval.recall.recall`."""
    query = tokens(topic)

    def keep(d: dict[str, Any]) -> dict[str, Any] | None:
        score, words = match_score(d["content"], None, query, whole=True)
        return {**d, "match": score, "matched_words": words} if words else None

    rules = _rule_rows(conn, "standing_decisions", "", [], scope, cwd, since, limit, keep)
    standing = sorted(rules.items, key=lambda d: (d["status"] != "active", -d["match"]))[:limit]
    _name_successors(conn, standing)
    decisions = recall_kinds(
        conn, topic, ("decision", *STANDING_KINDS), scope=scope, cwd=cwd, since=since, limit=limit
    )
    scope_used = rules.scope if standing else decisions.scope
    note = rules.note if standing else decisions.note
    return Scoped(standing, scope_used, note, {"decisions": decisions.items})


# --- failed attempts and goals ------------------------------------------------------------------------


def list_failed_attempts(
    conn: sqlite.Connection, *, scope: str, cwd: str | None, since: str | None, limit: int
) -> Scoped:
    label = project_labeller(conn)

    def run(where: str, args: list[object]) -> list[dict[str, Any]]:
        extra = "t.ts >= ?" if since else ""
        rows = conn.execute(
            f"""SELECT t.content, t.by_role, t.error, t.ts, t.session_id, t.source_uuid, t.project_key
                FROM failed_attempts t LEFT JOIN extractions e ON e.id = t.extraction_id
                WHERE 1=1 {and_where(where.replace("e.project_key", "t.project_key"), extra)}
                ORDER BY t.ts DESC, t.id DESC LIMIT ?""",
            [*args, *([since] if since else []), limit],
        ).fetchall()
        out = []
        for content, by, error, ts, sid, src, project in rows:
            item = {"content": content, "by": by, **provenance(label, sid, ts, project, src)}
            if error:
                item["error"] = error
            out.append(item)
        return out

    return walk(scope, cwd, run)


def _goal_rows(
    conn: sqlite.Connection, where: str, args: list[object], since: str | None, limit: int, now: datetime
) -> list[dict[str, Any]]:
    extra = "max(coalesce(t.updated_ts,''), coalesce(t.ts,'')) >= ?" if since else ""
    rows = conn.execute(
        f"""SELECT t.id, t.content, t.status, t.ts, t.updated_ts, t.session_id, t.source_uuid, t.project_key,
                   t.status_source_uuid
            FROM goal_stack t LEFT JOIN extractions e ON e.id = t.extraction_id
            WHERE 1=1 {and_where(where.replace("e.project_key", "t.project_key"), extra)}
            ORDER BY max(coalesce(t.updated_ts,''), coalesce(t.ts,'')) DESC, t.id DESC LIMIT ?""",
        [*args, *([since] if since else []), limit],
    ).fetchall()
    out, label = [], project_labeller(conn)
    for gid, content, status, ts, updated, sid, src, project, status_src in rows:
        touch = max(ts or "", updated or "") or None
        eff = decayed_status(status, touch, now)
        item = {
            "id": gid,
            "content": content,
            "status": eff,
            **provenance(label, sid, ts, project, src),
            "last_touched": (touch or "")[:10] or None,
        }
        if eff != status:
            item["recorded_status"] = status
            item["status_note"] = f"untouched since {(touch or '?')[:10]}"
        if status_src and status_src != src:
            item["status_uuid"] = status_src
        out.append(item)
    return out


def list_goals(
    conn: sqlite.Connection,
    *,
    status: str | None,
    scope: str,
    cwd: str | None,
    since: str | None,
    limit: int,
    now: datetime | None = None,
) -> Scoped:
    now = now or datetime.now(timezone.utc)

    def run(where: str, args: list[object]) -> list[dict[str, Any]]:
        rows = _goal_rows(conn, where, args, since, 5000 if status else limit, now)
        return [g for g in rows if not status or g["status"] == status][:limit]

    return walk(scope, cwd, run)


def active_goal(
    conn: sqlite.Connection, *, scope: str, cwd: str | None, now: datetime | None = None
) -> Scoped:
    """The most recent goal still active (after decay), with the open (paused/blocked) ones under it."""
    now = now or datetime.now(timezone.utc)

    def run(where: str, args: list[object]) -> list[dict[str, Any]]:
        rows = _goal_rows(
            conn,
            where + (" AND " if where else "") + "t.status IN ('active','paused','blocked')",
            args,
            None,
            50,
            now,
        )
        return [g for g in rows if g["status"] != "abandoned"]

    res = walk(scope, cwd, run)
    active = [g for g in res.items if g["status"] == "active"]
    parked = [g for g in res.items if g["status"] != "active"]
    extra: dict[str, Any] = {"open": parked[:5], "latest": None}
    if not res.items:
        # nothing open anywhere in scope: the most recent goal, whatever became of it
        latest = walk(scope, cwd, lambda w, a: _goal_rows(conn, w, a, None, 1, now))
        extra["latest"] = latest.items[0] if latest.items else None
        return Scoped([], latest.scope, latest.note, extra)
    return Scoped(active[:1], res.scope, res.note, extra)
