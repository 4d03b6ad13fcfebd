"""Recall over extractions (decisions, corrections, bans, goals…): the `recall` command, hooks and MCP."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

import orjson

from extractors.model import STANDING_KINDS
from index.store.filters import recency
from index.store.fts_query import bounded, parse
from index.store.plugins import require_vectors
from index.store.scope import Scope, widen
from index.store.textstore import unpack
from lib import sqlite

# Durable knowledge ranks above one-off observations.
KIND_WEIGHT = {
    "ban": 1.3,
    **dict.fromkeys(STANDING_KINDS, 1.3),
    "correction": 1.15,
    "model_correction": 1.15,
    "decision": 1.1,
    "goal": 1.05,
    "failed_attempt": 1.0,
    "implicit_preference": 1.0,
    "domain_fact": 1.0,
    "self_correction": 0.9,
    "away_summary": 0.9,
    "progress": 0.8,
    "goal_progress": 0.7,
    "truth_rhetoric": 0.5,
}


@dataclass(slots=True)
class RecallHit:
    id: int
    kind: str
    content: str
    context: dict[str, Any]
    session_id: str | None
    source_uuid: str
    cwd: str | None
    project: str | None
    ts: str | None
    score: float
    stale: bool = False  # superseded standing decision, or older than a newer one on the same topic
    confidence: float = 0.0  # the extraction's calibrated confidence (extractors/confidence.py)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class RecallResult:
    hits: list[RecallHit]
    scope: str
    note: str | None = None


def recall(
    conn: sqlite.Connection,
    topic: str,
    *,
    kind: str | None = None,
    scope: str = "global",
    cwd: str | None = None,
    since: str | None = None,
    limit: int = 10,
    now: datetime | None = None,
    hybrid: bool | None = None,
) -> RecallResult:
    """Extractions about `topic`, FTS-ranked and, when a vector plugin is registered (hybrid None = auto,
    False on hot paths such as hooks), fused with their vector neighbours by the same RRF as search."""
    now = now or datetime.now(timezone.utc)
    topic = bounded(topic)  # the vector side gets the same capped query as FTS
    q = parse(topic, idents=False) if topic.strip() else None
    kinds = [k for k in (kind or "").split(",") if k]

    def run(sc: Scope) -> list[RecallHit]:
        hits = _query(
            conn, q.any_of() if q and not q.empty else None, kinds, sc.where, sc.args, since, limit, now
        )
        if q and not q.empty and hybrid is not False:
            hits = _fuse(conn, topic, hits, kinds, sc.where, sc.args, since, limit, now, bool(hybrid))
        return hits

    hits, used, note = widen(scope, cwd, run)
    _mark_stale(conn, hits)
    return RecallResult(hits, used, note)


def _conditions(
    kinds: list[str], where: str, args: list[object], since: str | None
) -> tuple[str, list[object]]:
    conds: list[str] = []
    params: list[object] = []
    if where:
        conds.append(where)
        params += args
    if kinds:
        conds.append(f"e.kind IN ({','.join('?' * len(kinds))})")
        params += kinds
    if since:
        conds.append("e.ts >= ?")
        params.append(since)
    return ((" AND " + " AND ".join(conds)) if conds else ""), params


def _hit(r: tuple[Any, ...], score: float) -> RecallHit:
    return RecallHit(
        r[0],
        r[1],
        r[2],
        orjson.loads(r[3] or "{}"),
        r[4],
        r[5],
        r[6],
        r[7],
        r[8],
        round(score, 4),
        confidence=round(float(r[9]), 3),
    )


def _query(
    conn: sqlite.Connection,
    match: str | None,
    kinds: list[str],
    where: str,
    args: list[object],
    since: str | None,
    limit: int,
    now: datetime,
) -> list[RecallHit]:
    cond, params = _conditions(kinds, where, args, since)
    if match:
        rows = conn.execute(
            f"""SELECT e.id, e.kind, e.content, e.context, e.session_id, e.source_uuid, e.cwd, e.project_key, e.ts,
                       e.score, bm25(extractions_fts, 1.0, 0.3)
                FROM extractions_fts JOIN extractions e ON e.id = extractions_fts.rowid
                WHERE extractions_fts MATCH ? {cond} ORDER BY bm25(extractions_fts, 1.0, 0.3) LIMIT ?""",
            [match, *params, max(limit * 5, 50)],
        ).fetchall()
    else:
        rows = conn.execute(
            f"""SELECT e.id, e.kind, e.content, e.context, e.session_id, e.source_uuid, e.cwd, e.project_key, e.ts,
                       e.score, -1.0 FROM extractions e WHERE 1=1 {cond} ORDER BY e.ts DESC LIMIT ?""",
            [*params, max(limit * 5, 50)],
        ).fetchall()
    scored = []
    for r in rows:
        s = -float(r[10]) * KIND_WEIGHT.get(r[1], 0.8) * (0.5 + float(r[9])) * recency(r[8], now, 0.8, 90.0)
        scored.append(_hit(r, s))
    scored.sort(key=lambda h: -h.score)
    best: dict[tuple[str, str], RecallHit] = {}  # one hit per memory, at the rank of its best copy
    for h in scored:
        key = (h.kind, h.content.lower()[:120])
        if key not in best:
            best[key] = h
        elif h.confidence > best[key].confidence:  # e.g. the promoted copy (1.0) of a mined memory:
            h.score = best[key].score  # the copy that may be injected stands in for the others
            best[key] = h
    return list(best.values())[:limit]


def _fuse(
    conn: sqlite.Connection,
    topic: str,
    hits: list[RecallHit],
    kinds: list[str],
    where: str,
    args: list[object],
    since: str | None,
    limit: int,
    now: datetime,
    explicit: bool,
) -> list[RecallHit]:
    """Reorder by reciprocal rank fusion with the vector neighbours; vector-only ids pass the same filters."""
    vectors = require_vectors(explicit)
    order = (
        None
        if vectors is None
        else vectors.fuse_ids(conn, topic, [h.id for h in hits], "extraction", explicit)
    )
    if not order:
        return hits
    have = {h.id: h for h in hits}
    extra = [int(i) for i in order[: limit * 3] if i not in have]
    if extra:
        cond, params = _conditions(kinds, where, args, since)
        rows = conn.execute(
            f"""SELECT e.id, e.kind, e.content, e.context, e.session_id, e.source_uuid, e.cwd, e.project_key, e.ts,
                       e.score, 0.0 FROM extractions e WHERE e.id IN ({",".join("?" * len(extra))}) {cond}""",
            [*extra, *params],
        ).fetchall()
        for r in rows:
            have[r[0]] = _hit(r, 0.0)
    out = []
    for i in order:
        h = have.get(int(i)) if not isinstance(i, int) else have.get(i)
        if h is not None and h not in out:
            out.append(h)
        if len(out) >= limit:
            break
    return out


def _mark_stale(conn: sqlite.Connection, hits: list[RecallHit]) -> None:
    for h in hits:
        if h.kind in STANDING_KINDS:
            row = conn.execute(
                "SELECT status FROM standing_decisions WHERE extraction_id=? OR source_uuid=?",
                (h.id, h.source_uuid),
            ).fetchone()
            h.stale = bool(row and row[0] == "superseded")


def iter_extractions(conn: sqlite.Connection, kind: str | None = None) -> Iterator[dict[str, Any]]:
    """All extraction rows for `dump`, oldest first."""
    sql = (
        """SELECT kind, source_uuid, session_id, content, context, score, ts, cwd, project_key, ordinal, id
             FROM extractions"""
        + (" WHERE kind = ?" if kind else "")
        + " ORDER BY ts, id"
    )
    for r in conn.execute(sql, (kind,) if kind else ()):
        yield {
            "kind": r[0],
            "source_uuid": r[1],
            "session_id": r[2],
            "content": r[3],
            "context": orjson.loads(r[4] or "{}"),
            "score": r[5],
            "ts": r[6],
            "cwd": r[7],
            "project": r[8],
            "ordinal": r[9],
            "id": r[10],
        }


def iter_messages(conn: sqlite.Connection, kind: str | None = None) -> Iterator[dict[str, Any]]:
    """All message rows for `dump`, in index order."""
    sql = (
        """SELECT m.uuid, m.session_id, m.parent_uuid, m.role, m.kind, m.ts, m.body, s.cwd, s.project_key,
                    m.agent_id, m.is_sidechain, m.on_main, m.tool_name FROM messages m
             LEFT JOIN sessions s ON s.session_id = m.session_id"""
        + (" WHERE m.kind = ?" if kind else "")
        + " ORDER BY m.id"
    )
    for r in conn.execute(sql, (kind,) if kind else ()):
        yield {
            "uuid": r[0],
            "source_uuid": r[0],
            "session_id": r[1],
            "parent_uuid": r[2],
            "role": r[3],
            "kind": r[4],
            "ts": r[5],
            "content": unpack(r[6]),
            "cwd": r[7],
            "project": r[8],
            "agent_id": r[9],
            "is_sidechain": bool(r[10]),
            "on_main": bool(r[11]),
            "tool_name": r[12],
            "context": {},
            "score": None,
        }


def kinds_by_uuid(conn: sqlite.Connection, uuids: list[str]) -> dict[str, set[str]]:
    """Extraction kinds per source message (for `eval extractors`)."""
    out: dict[str, set[str]] = {}
    for i in range(0, len(uuids), 500):
        part = uuids[i : i + 500]
        for uuid, kind in conn.execute(
            f"SELECT source_uuid, kind FROM extractions WHERE source_uuid IN ({','.join('?' * len(part))})",
            part,
        ):
            out.setdefault(uuid, set()).add(kind)
    return out
