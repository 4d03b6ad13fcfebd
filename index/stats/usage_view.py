"""Usage as chart series (the `ui` Usage page and `report --html`): tokens and cost per period by model and
by project, the cache hit rate, sessions per day. Built on `cost_report`, so the figures are the CLI's."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from index.stats.metrics import cost_report, usage_rows
from index.stats.pricing import Catalog
from lib import sqlite

TOP_GROUPS = 8  # series beyond these are summed into "other": a chart of 40 colours says nothing


def _series(rows: list[dict[str, Any]], group: str, periods: list[str]) -> dict[str, Any]:
    tokens: dict[str, dict[str, float]] = defaultdict(dict)
    cost: dict[str, dict[str, float]] = defaultdict(dict)
    for r in rows:
        key = str(r[group] or "?")
        tokens[key][r["period"]] = tokens[key].get(r["period"], 0) + r["total_tokens"]
        cost[key][r["period"]] = cost[key].get(r["period"], 0) + (r["cost_known_usd"] or 0.0)
    ranked = sorted(tokens, key=lambda k: -sum(tokens[k].values()))
    keep, rest = ranked[:TOP_GROUPS], ranked[TOP_GROUPS:]

    def fold(src: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
        out = [{"label": k, "data": [round(src[k].get(p, 0), 4) for p in periods]} for k in keep]
        if rest:
            out.append(
                {"label": "other", "data": [round(sum(src[k].get(p, 0) for k in rest), 4) for p in periods]}
            )
        return out

    return {"tokens": fold(tokens), "cost": fold(cost)}


def usage_series(
    conn: sqlite.Connection,
    cat: Catalog,
    by: str = "day",
    since: str | None = None,
) -> dict[str, Any]:
    """Per period (day/week/month): tokens and cost by model and by project, totals, cache hit rate
    (cache reads over all prompt tokens) and sessions started per day."""
    by_model = cost_report(conn, cat, since, by, "model")
    by_project = cost_report(conn, cat, since, by, "project")
    periods = sorted({r["period"] for r in by_model["rows"]})
    total = by_model["total"]
    prompt = total["input_tokens"] + total["cache_read_tokens"] + total["cache_creation_tokens"]
    per_day = conn.execute(
        """SELECT substr(first_ts, 1, 10), count(*) FROM sessions WHERE first_ts >= ? GROUP BY 1 ORDER BY 1""",
        (since or "",),
    ).fetchall()
    return {
        "by": by,
        "periods": periods,
        "model": _series(by_model["rows"], "model", periods),
        "project": _series(by_project["rows"], "project", periods),
        "total": total,
        "cache_hit_rate": round(total["cache_read_tokens"] / prompt, 4) if prompt else None,
        "sessions_per_day": {"days": [d for d, _ in per_day], "counts": [n for _, n in per_day]},
        "rates_as_of": by_model["rates_as_of"],
    }


def session_costs(conn: sqlite.Connection, cat: Catalog, ids: list[str]) -> dict[str, float | None]:
    """Cost of each of these sessions (subagents included), None where a model has no price."""
    out: dict[str, float | None] = {sid: 0.0 for sid in ids}
    for _day, sid, _model, u in usage_rows(conn, cat, by_day=True, by_session=True, sessions=ids):
        cur = out.get(sid)
        out[sid] = None if cur is None or not u.cost_known else cur + u.cost
    return out
