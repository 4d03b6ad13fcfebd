"""What the index remembers, as one reviewable page (the `ui` Memory page): standing decisions with their
supersession chains, bans, goals, failed attempts and recent corrections, each with its date, source
message, confidence and the extraction id the memory actions (`index.store.promote` / `unpromote`) take."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from index.retrieval.ontology_queries import profile
from index.stats.metrics import CORRECTION_KINDS
from index.store.operator import decayed_status, row_kind
from lib import sqlite
from lib.memid import memory_id

_PROMOTED = '%"promoted": true%'


def _where(project: str | None, alias: str = "t") -> tuple[str, list[object]]:
    return (f"{alias}.project_key = ?", [project]) if project else ("1", [])


def _decisions(conn: sqlite.Connection, project: str | None, limit: int) -> list[dict[str, Any]]:
    where, args = _where(project)
    rows = conn.execute(
        f"""SELECT t.id, t.content, t.status, t.superseded_by, t.first_ts, t.last_ts, t.mentions,
                   t.session_id, t.source_uuid, t.project_key, t.extraction_id, e.score, e.context,
                   t.from_text, t.to_text, {row_kind()}
            FROM standing_decisions t LEFT JOIN extractions e ON e.id = t.extraction_id
            WHERE {where} ORDER BY t.status = 'superseded', t.last_ts DESC, t.id DESC LIMIT ?""",
        [*args, limit],
    ).fetchall()
    out = []
    for r in rows:
        item = _item(r[0], r[1], r[7], r[8], r[9], r[5], r[10], r[11], r[12])
        item.update(kind=r[15], status=r[2], first_ts=r[4], mentions=r[6], chain=_chain(conn, r[3]))
        if r[13] or r[14]:
            item["from"], item["to"] = r[13], r[14]
        out.append(item)
    return out


def _chain(conn: sqlite.Connection, succ: int | None) -> list[dict[str, Any]]:
    """The decisions that replaced this one, in order (a cycle — said again, in force again — stops)."""
    chain: list[dict[str, Any]] = []
    seen: set[int] = set()
    while succ and succ not in seen and len(chain) < 20:
        seen.add(succ)
        row = conn.execute(
            "SELECT id, content, last_ts, status, superseded_by FROM standing_decisions WHERE id=?", (succ,)
        ).fetchone()
        if row is None:
            break
        chain.append({"id": row[0], "content": row[1], "date": (row[2] or "")[:10], "status": row[3]})
        succ = row[4]
    return chain


def _bans(conn: sqlite.Connection, project: str | None, limit: int) -> list[dict[str, Any]]:
    where, args = _where(project)
    rows = conn.execute(
        f"""SELECT t.id, t.content, t.active, t.first_ts, t.last_ts, t.mentions, t.session_id,
                   t.source_uuid, t.project_key, t.extraction_id, e.score, e.context
            FROM bans t LEFT JOIN extractions e ON e.id = t.extraction_id
            WHERE {where} ORDER BY t.active DESC, t.last_ts DESC, t.id DESC LIMIT ?""",
        [*args, limit],
    ).fetchall()
    out = []
    for r in rows:
        item = _item(r[0], r[1], r[6], r[7], r[8], r[4], r[9], r[10], r[11])
        item.update(active=bool(r[2]), first_ts=r[3], mentions=r[5])
        out.append(item)
    return out


def _goals(conn: sqlite.Connection, project: str | None, limit: int, now: datetime) -> list[dict[str, Any]]:
    where, args = _where(project)
    rows = conn.execute(
        f"""SELECT t.id, t.content, t.status, t.ts, t.updated_ts, t.session_id, t.source_uuid,
                   t.project_key, t.extraction_id, e.score, e.context
            FROM goal_stack t LEFT JOIN extractions e ON e.id = t.extraction_id
            WHERE {where} ORDER BY max(coalesce(t.updated_ts,''), coalesce(t.ts,'')) DESC, t.id DESC
            LIMIT ?""",
        [*args, limit],
    ).fetchall()
    out = []
    for r in rows:
        touch = max(r[3] or "", r[4] or "") or None
        item = _item(r[0], r[1], r[5], r[6], r[7], touch, r[8], r[9], r[10])
        item["status"] = decayed_status(r[2], touch, now)
        out.append(item)
    return out


def _failed(conn: sqlite.Connection, project: str | None, limit: int) -> list[dict[str, Any]]:
    where, args = _where(project)
    rows = conn.execute(
        f"""SELECT t.id, t.content, t.ts, t.session_id, t.source_uuid, t.project_key, t.extraction_id,
                   e.score, e.context, t.error, t.by_role
            FROM failed_attempts t LEFT JOIN extractions e ON e.id = t.extraction_id
            WHERE {where} ORDER BY t.ts DESC, t.id DESC LIMIT ?""",
        [*args, limit],
    ).fetchall()
    out = []
    for r in rows:
        item = _item(r[0], r[1], r[3], r[4], r[5], r[2], r[6], r[7], r[8])
        item.update(error=r[9], by=r[10])
        out.append(item)
    return out


def _extractions(
    conn: sqlite.Connection, kinds: tuple[str, ...], project: str | None, limit: int, promoted: bool = False
) -> list[dict[str, Any]]:
    where, args = _where(project, "e")
    marks = ",".join("?" * len(kinds))
    rows = conn.execute(
        f"""SELECT e.id, e.content, e.session_id, e.source_uuid, e.project_key, e.ts, e.id, e.score,
                   e.context, e.kind
            FROM extractions e WHERE e.kind IN ({marks}) AND {where}
            {"AND e.context LIKE ?" if promoted else ""} ORDER BY e.ts DESC, e.id DESC LIMIT ?""",
        [*kinds, *args, *([_PROMOTED] if promoted else []), limit],
    ).fetchall()
    out = []
    for r in rows:
        item = _item(*r[:9])
        item["kind"] = r[9]
        out.append(item)
    return out


def _item(
    rid: int,
    content: str,
    session_id: str | None,
    uuid: str | None,
    project: str | None,
    ts: str | None,
    extraction_id: int | None,
    score: float | None,
    context: str | None,
) -> dict[str, Any]:
    return {
        "id": rid,
        "content": content,
        "session_id": session_id,
        "uuid": uuid,
        "project_key": project,
        "date": (ts or "")[:10] or None,
        "extraction_id": extraction_id,
        "confidence": None if score is None else round(float(score), 2),
        "promoted": '"promoted": true' in (context or ""),
    }


def memory_overview(
    conn: sqlite.Connection,
    project: str | None = None,
    limit: int = 100,
    promotable: tuple[str, ...] = (),
    now: datetime | None = None,
) -> dict[str, Any]:
    """Every section of the Memory page, newest first within each, for one project or all; `promotable`
    names the kinds whose promoted memories are listed apart (they can be unpromoted)."""
    now = now or datetime.now(timezone.utc)
    data, updated = profile(conn, "operator_profile")
    out: dict[str, Any] = {
        "decisions": _decisions(conn, project, limit),
        "bans": _bans(conn, project, limit),
        "goals": _goals(conn, project, limit, now),
        "failed": _failed(conn, project, limit),
        "corrections": _extractions(conn, CORRECTION_KINDS, project, min(limit, 30)),
        "promoted": _extractions(conn, promotable, project, limit, promoted=True) if promotable else [],
    }
    for section, items in out.items():
        for it in items:
            it.setdefault("kind", SECTION_KINDS.get(section))
            it["item_id"] = memory_id(it["kind"], it["project_key"], it["content"])
    return {**out, "profile": data, "profile_updated": updated}


# The kind each section's short id is made of: the one the hooks inject it under (index.briefing.bundle;
# a standing decisions row says itself whether it is a decision or an order)
SECTION_KINDS = {
    "decisions": "standing_decision",
    "bans": "ban",
    "goals": "goal",
    "failed": "failed_attempt",
}
# (kind of a row, table, its date): a standing decisions row takes its kind from its extraction.
_FIND = (
    (row_kind(), "standing_decisions t", "t.last_ts"),
    ("'ban'", "bans t", "t.last_ts"),
    ("'goal'", "goal_stack t", "coalesce(t.updated_ts, t.ts)"),
    ("'failed_attempt'", "failed_attempts t", "t.ts"),
)


def find_item(conn: sqlite.Connection, item_id: str) -> dict[str, Any] | None:
    """The memory whose short id (lib.memid) is `item_id`, as listed on the Memory page, or None: what
    `why` and `feedback` fall back to for an item shown there but never injected. A scan (ids are
    hashes), done only when an id is asked about."""
    for kind, table, ts in _FIND:
        rows = conn.execute(
            f"""SELECT t.id, t.content, t.session_id, t.source_uuid, t.project_key, {ts}, t.extraction_id,
                       e.score, e.context, {kind} FROM {table} LEFT JOIN extractions e ON e.id = t.extraction_id"""
        )
        for r in rows:
            if memory_id(r[9], r[4], r[1]) == item_id:
                return {**_item(*r[:9]), "kind": r[9]}
    marks = ",".join("?" * len(CORRECTION_KINDS))
    for r in conn.execute(
        f"""SELECT id, content, session_id, source_uuid, project_key, ts, id, score, context, kind
            FROM extractions WHERE kind IN ({marks}) OR context LIKE ?""",
        [*CORRECTION_KINDS, _PROMOTED],
    ):
        if memory_id(r[9], r[4], r[1]) == item_id:
            return {**_item(*r[:9]), "kind": r[9]}
    return None
