"""Read-side usage and cost queries (T1-T3) shared by `total-recall metrics`, MCP and benches.

Accounting (transcript-format.md §8): `turns` holds one row per API response (message id +
request id, the largest usage of its split records). Days are UTC calendar days of the response
timestamp; weeks start on Monday (labelled by that Monday's date); months are `YYYY-MM`.
Cost comes from `index.stats.pricing`; a model the catalog does not price is reported, never guessed.
The summary and session reports built on these rows are in reports.py, `topics` in topic_words.py.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Any

from index.stats.pricing import Catalog
from index.store.filters import since_day
from lib import sqlite

GAP_S = 30 * 60  # inactivity longer than this ends an active stretch
CORRECTION_KINDS = ("correction", "model_correction")


@dataclass(slots=True)
class Usage:
    """Summed usage of a group of API responses, with its cost (None when a model is unpriced)."""

    turns: int = 0
    input: int = 0
    output: int = 0
    cache_creation: int = 0
    cache_5m: int = 0
    cache_1h: int = 0
    cache_read: int = 0
    web_search: int = 0
    cost: float = 0.0
    unpriced_tokens: int = 0
    unknown_models: set[str] = field(default_factory=set)

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_creation + self.cache_read

    def add(self, o: Usage) -> None:
        self.turns += o.turns
        self.input += o.input
        self.output += o.output
        self.cache_creation += o.cache_creation
        self.cache_5m += o.cache_5m
        self.cache_1h += o.cache_1h
        self.cache_read += o.cache_read
        self.web_search += o.web_search
        self.cost += o.cost
        self.unpriced_tokens += o.unpriced_tokens
        if o.unknown_models:
            self.unknown_models |= o.unknown_models

    def to_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "input_tokens": self.input,
            "output_tokens": self.output,
            "cache_creation_tokens": self.cache_creation,
            "cache_5m_tokens": self.cache_5m,
            "cache_1h_tokens": self.cache_1h,
            "cache_read_tokens": self.cache_read,
            "total_tokens": self.total,
            "web_search_requests": self.web_search,
            "cost_usd": round(self.cost, 6) if self.cost_known else None,
            "cost_known_usd": round(self.cost, 6),
            "cost_complete": self.cost_known,
            "unknown_models": sorted(self.unknown_models),
        }

    @property
    def cost_known(self) -> bool:
        return not self.unknown_models


def _banding(cat: Catalog) -> str:
    prompt = "(t.input_tokens + t.cache_read_tokens + t.cache_creation_tokens)"
    whens = " ".join(f"WHEN {prompt} > {th} THEN {th}" for th in cat.thresholds())
    return f"CASE {whens} ELSE 0 END" if whens else "0"


def _era(cat: Catalog) -> tuple[str, list[str]]:
    """SQL mapping a response to the price era it falls in, and a day label inside each era."""
    b = cat.boundaries()
    whens = " ".join(f"WHEN t.ts < '{d}' THEN {i}" for i, d in enumerate(b))
    return (f"CASE {whens} ELSE {len(b)} END" if b else "0"), ["0000-00-00", *b]


def usage_rows(
    conn: sqlite.Connection,
    cat: Catalog,
    since: str | None = None,
    by_day: bool = True,
    by_session: bool = False,
    sessions: list[str] | None = None,
    tz: tzinfo | None = None,
) -> list[tuple[str, str, str, Usage]]:
    """(UTC day or '', session id or '', model, priced Usage) per (day, session, model, tier band);
    with `sessions`, those sessions' turns only (a session digest's cost, the viewer's rows).

    Without `by_day`, rows are only split by price era (dates where a rate changed), which keeps the
    GROUP BY sort small; the first element is then ''."""
    era_sql, labels = _era(cat)
    day = f"substr(t.ts, 1, {_bucket(tz)})" if by_day else era_sql
    sess = "t.session_id" if by_session else "''"
    where = (["t.ts >= ?"] if since else []) + (
        [f"t.session_id IN ({','.join('?' * len(sessions))})"] if sessions is not None else []
    )
    rows = conn.execute(
        f"""SELECT {day}, {sess}, t.model, {_banding(cat)} AS band, count(*), sum(t.input_tokens),
                   sum(t.output_tokens), sum(t.cache_creation_tokens), sum(t.cache_1h_tokens),
                   sum(t.cache_read_tokens), sum(t.web_search_requests)
            FROM turns t {"WHERE " + " AND ".join(where) if where else ""} GROUP BY 1, 2, 3, 4""",
        [*([since] if since else []), *(sessions or [])],
    ).fetchall()
    out: list[tuple[str, str, str, Usage]] = []
    for d, sid, model, band, n, i, o, cc, c1, cr, ws in rows:
        cc, c1 = cc or 0, c1 or 0
        # 1h writes are part of cache_creation; older records have no split (all 5m)
        u = Usage(n, i or 0, o or 0, cc, max(cc - c1, 0), min(c1, cc), cr or 0, ws or 0)
        pday = d[:10] if by_day else labels[d]  # prices change on UTC days
        cost = cat.cost(
            model,
            pday,
            band + 1 if band else 0,
            u.input,
            u.output,
            u.cache_read,
            u.cache_5m,
            u.cache_1h,
            u.web_search,
        )
        if cost is None:
            u.unknown_models.add(model or "(none)")
            u.unpriced_tokens = u.total
        else:
            u.cost = cost
        out.append((_local_day(d, tz) if by_day else "", sid or "", model or "(none)", u))
    return out


def _bucket(tz: tzinfo | None) -> int:
    """How much of the UTC timestamp to group by: the day in UTC, the hour for a zone a whole number of
    hours away, the minute for the others (India, Nepal…), so each bucket falls in one local day."""
    if tz is None or tz == timezone.utc:
        return 10
    off = datetime.now(tz).utcoffset() or timedelta()
    return 13 if off.total_seconds() % 3600 == 0 else 16


def _local_day(bucket: str, tz: tzinfo | None) -> str:
    return bucket if tz is None or len(bucket) <= 10 else since_day(bucket, tz)


def session_projects(conn: sqlite.Connection) -> dict[str, str]:
    return {sid: p or "?" for sid, p in conn.execute("SELECT session_id, project_key FROM sessions")}


def session_agents(conn: sqlite.Connection) -> dict[str, str]:
    return {sid: a for sid, a in conn.execute("SELECT session_id, agent FROM sessions")}


def period_of(day: str, by: str) -> str:
    if by == "day" or not day:
        return day
    if by == "month":
        return day[:7]
    if by == "week":
        d = date.fromisoformat(day)
        return (d - timedelta(days=d.weekday())).isoformat()
    if by == "all":
        return ""
    raise ValueError(f"unknown period {by!r}")


def cost_report(
    conn: sqlite.Connection,
    cat: Catalog,
    since: str | None = None,
    by: str = "day",
    group: str = "model",
    tz: tzinfo | None = None,
) -> dict[str, Any]:
    """Usage and cost per period (day/week/month of zone `tz`, default UTC) and group (model/project, or
    agent: each coding agent's models), plus totals."""
    if group not in ("model", "project", "agent"):
        raise ValueError("group by model, project or agent")
    cells: dict[tuple[str, str, str], Usage] = defaultdict(Usage)
    total = Usage()
    owner = session_projects(conn) if group == "project" else session_agents(conn) if group == "agent" else {}
    for day, sid, model, u in usage_rows(conn, cat, since, by_day=True, by_session=group != "model", tz=tz):
        key = model if group == "model" else owner.get(sid, "?")
        cells[(period_of(day, by), key, model if group == "agent" else "")].add(u)
        total.add(u)
    rows = [
        {"period": p, group: k, **({"model": m} if group == "agent" else {}), **u.to_json()}
        for (p, k, m), u in sorted(cells.items())
    ]
    return {
        "since": since,
        "by": by,
        "group": group,
        "rates_as_of": cat.as_of,
        "rows": rows,
        "total": total.to_json(),
    }


def active_seconds(conn: sqlite.Connection, since: str | None = None) -> dict[str, float]:
    """Per session: sum of `turn_duration` records; sessions without any use the gaps < 30 min
    between consecutive API responses (subagent responses included)."""
    s = since or ""
    out: dict[str, float] = {
        sid: ms / 1000.0
        for sid, ms in conn.execute(
            "SELECT session_id, sum(duration_ms) FROM turn_durations WHERE ts >= ? GROUP BY session_id", (s,)
        )
    }
    # Gaps in Python: a plain sorted scan is cheaper than SQLite's window functions here.
    prev, last, acc = None, 0.0, 0.0
    for sid, secs in conn.execute(
        """SELECT session_id, julianday(ts) * 86400.0 FROM turns
               WHERE ts >= ? AND session_id NOT IN (SELECT session_id FROM turn_durations)
               ORDER BY session_id, ts""",
        (s,),
    ):
        if secs is None:
            continue
        if sid != prev:
            if prev is not None:
                out[prev] = round(acc, 3)
            prev, last, acc = sid, secs, 0.0
            continue
        if secs - last < GAP_S:
            acc += secs - last
        last = secs
    if prev is not None:
        out[prev] = round(acc, 3)
    return out


def turn_keys(conn: sqlite.Connection) -> set[tuple[str, str]]:
    """(message id, request id) of every counted API response ('' when a record had no requestId)."""
    return set(conn.execute("SELECT message_id, request_id FROM turns").fetchall())


def tiered_cells(conn: sqlite.Connection, cat: Catalog) -> set[tuple[str, str]]:
    """(UTC day, model) cells holding at least one request priced at a long-context tier."""
    out = set()
    for day, model, band in conn.execute(
        f"SELECT DISTINCT substr(t.ts, 1, 10), t.model, {_banding(cat)} AS band FROM turns t WHERE band > 0"
    ):
        mp = cat.price(model)
        if mp is not None and any(th <= band for th in mp.thresholds()):
            out.add((day, model))
    return out
