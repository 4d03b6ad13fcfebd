"""The summary and session reports of `metrics` (T3), built on the accounting in metrics.py."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import datetime
from typing import Any

from index.stats.metrics import CORRECTION_KINDS, Usage, active_seconds, session_projects, usage_rows
from index.stats.pricing import Catalog
from index.store.filters import parse_ts
from lib import sqlite


def _span_h(a: str | None, b: str | None) -> float:
    if not a or not b:
        return 0.0
    return max((_dt(b) - _dt(a)).total_seconds(), 0.0) / 3600.0


def _dt(ts: str) -> datetime:
    dt = parse_ts(ts)
    if dt is None:
        raise ValueError(f"bad timestamp {ts!r}")
    return dt


def _sessions_in(conn: sqlite.Connection, since: str | None) -> list[tuple[Any, ...]]:
    return conn.execute(
        """SELECT session_id, project_key, title, first_ts, last_ts FROM sessions
           WHERE last_ts >= ?""",
        (since or "",),
    ).fetchall()


def summary(conn: sqlite.Connection, cat: Catalog, since: str | None = None, top: int = 5) -> dict[str, Any]:
    sessions = _sessions_in(conn, since)
    total = Usage()
    by_project: dict[str, Usage] = defaultdict(Usage)
    by_model: dict[str, Usage] = defaultdict(Usage)
    projects = session_projects(conn)
    for _day, sid, model, u in usage_rows(conn, cat, since, by_day=False, by_session=True):
        pkey = projects.get(sid, "?")
        total.add(u)
        by_project[pkey].add(u)
        by_model[model].add(u)
    denom = total.input + total.cache_read + total.cache_creation
    active = active_seconds(conn, since)
    wall = sum(_span_h(max(f or "", since or ""), last) for _sid, _p, _t, f, last in sessions)
    busiest = max(by_project.items(), key=lambda kv: (kv[1].turns, kv[1].total), default=None)
    sessions_per_project = Counter(p for _s, p, *_ in sessions)
    return {
        "since": since,
        "rates_as_of": cat.as_of,
        "sessions": len(sessions),
        "projects": len({p for _s, p, *_ in sessions}),
        "tokens": total.to_json(),
        "cache_hit_rate": round(total.cache_read / denom, 4) if denom else None,
        "cost_usd": round(total.cost, 6) if total.cost_known else None,
        "cost_known_usd": round(total.cost, 6),
        "unknown_models": sorted(total.unknown_models),
        "active_hours": round(sum(active.values()) / 3600.0, 2),
        "wall_hours": round(wall, 2),
        "models": [
            {"model": m, **u.to_json()} for m, u in sorted(by_model.items(), key=lambda kv: -kv[1].total)
        ],
        "busiest_project": None
        if busiest is None
        else {
            "project": busiest[0],
            "sessions": sessions_per_project.get(busiest[0], 0),
            **busiest[1].to_json(),
        },
        "top_corrections": top_corrections(conn, since, top),
    }


def top_corrections(
    conn: sqlite.Connection, since: str | None = None, limit: int = 5
) -> list[dict[str, Any]]:
    """The corrections the user repeated most (same text), newest first among equals."""
    marks = ",".join("?" * len(CORRECTION_KINDS))
    rows = conn.execute(
        f"""SELECT min(content), kind, count(*) AS n, max(ts) AS last, count(DISTINCT session_id)
            FROM extractions WHERE kind IN ({marks}) AND coalesce(ts, '') >= ?
            GROUP BY kind, lower(trim(content)) ORDER BY n DESC, last DESC LIMIT ?""",
        (*CORRECTION_KINDS, since or "", limit),
    ).fetchall()
    return [
        {"content": c, "kind": k, "count": n, "last_ts": last, "sessions": ns} for c, k, n, last, ns in rows
    ]


SESSION_SORTS = ("tokens", "cost", "duration", "active", "corrections")


def top_sessions(
    conn: sqlite.Connection, cat: Catalog, since: str | None = None, by: str = "tokens", limit: int = 10
) -> list[dict[str, Any]]:
    """Sessions ranked by tokens, cost, wall duration, active time or number of corrections."""
    if by not in SESSION_SORTS:
        raise ValueError(f"sort by one of {', '.join(SESSION_SORTS)}")
    usage: dict[str, Usage] = defaultdict(Usage)
    models: dict[str, set[str]] = defaultdict(set)
    for _day, sid, model, u in usage_rows(conn, cat, since, by_day=False, by_session=True):
        usage[sid].add(u)
        models[sid].add(model)
    marks = ",".join("?" * len(CORRECTION_KINDS))
    corr = dict(
        conn.execute(
            f"""SELECT session_id, count(*) FROM extractions WHERE kind IN ({marks}) AND coalesce(ts, '') >= ?
            GROUP BY session_id""",
            (*CORRECTION_KINDS, since or ""),
        ).fetchall()
    )
    active = active_seconds(conn, since)
    sessions = _sessions_in(conn, since)
    empty = Usage()
    key: Callable[[tuple[Any, ...]], float] = {
        "tokens": lambda r: usage.get(r[0], empty).total,
        "cost": lambda r: usage.get(r[0], empty).cost,
        "duration": lambda r: _span_h(r[3], r[4]),
        "active": lambda r: active.get(r[0], 0.0),
        "corrections": lambda r: corr.get(r[0], 0),
    }[by]
    sessions.sort(key=lambda r: (key(r), r[4] or ""), reverse=True)
    return [
        {
            "session_id": sid,
            "project": pkey,
            "title": title,
            "first_ts": first,
            "last_ts": last,
            "wall_hours": round(_span_h(first, last), 3),
            "active_hours": round(active.get(sid, 0.0) / 3600.0, 3),
            "corrections": corr.get(sid, 0),
            "models": sorted(models.get(sid, ())),
            **usage.get(sid, empty).to_json(),
        }
        for sid, pkey, title, first, last in sessions[:limit]
    ]
