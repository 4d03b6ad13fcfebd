"""Read-side usage and cost queries (T1-T3) shared by `total-recall metrics`, MCP and benches.

Accounting (transcript-format.md §8): `turns` holds one row per API response (message id +
request id, the largest usage of its split records). Days are UTC calendar days of the response
timestamp; weeks start on Monday (labelled by that Monday's date); months are `YYYY-MM`.
Cost comes from `index.pricing`; a model the catalog does not price is reported, never guessed.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from index.pricing import Catalog

TOKEN_TYPES = ("input", "output", "cache_creation", "cache_read")
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
        for f in ("turns", "input", "output", "cache_creation", "cache_5m", "cache_1h", "cache_read",
                  "web_search", "cost", "unpriced_tokens"):
            setattr(self, f, getattr(self, f) + getattr(o, f))
        self.unknown_models |= o.unknown_models

    def to_json(self) -> dict[str, Any]:
        return {"turns": self.turns, "input_tokens": self.input, "output_tokens": self.output,
                "cache_creation_tokens": self.cache_creation, "cache_5m_tokens": self.cache_5m,
                "cache_1h_tokens": self.cache_1h, "cache_read_tokens": self.cache_read,
                "total_tokens": self.total, "web_search_requests": self.web_search,
                "cost_usd": round(self.cost, 6) if self.cost_known else None,
                "cost_known_usd": round(self.cost, 6), "cost_complete": self.cost_known,
                "unknown_models": sorted(self.unknown_models)}

    @property
    def cost_known(self) -> bool:
        return not self.unknown_models


def _banding(cat: Catalog) -> str:
    prompt = "(t.input_tokens + t.cache_read_tokens + t.cache_creation_tokens)"
    whens = " ".join(f"WHEN {prompt} > {th} THEN {th}" for th in cat.thresholds())
    return f"CASE {whens} ELSE 0 END" if whens else "0"


_GROUP_SQL = {
    "model": "t.model", "project": "coalesce(s.project_key, '?')", "session": "t.session_id", "none": "''",
}


def usage_rows(conn: sqlite3.Connection, cat: Catalog, since: str | None = None,
               group: str = "model") -> list[tuple[str, str, str, Usage]]:
    """(day, group key, model, priced Usage) for every (day, group, model, tier band)."""
    key = _GROUP_SQL[group]
    join = "LEFT JOIN sessions s ON s.session_id = t.session_id" if group == "project" else ""
    rows = conn.execute(
        f"""SELECT substr(t.ts, 1, 10), {key}, t.model, {_banding(cat)} AS band, count(*),
                   sum(t.input_tokens), sum(t.output_tokens), sum(t.cache_creation_tokens),
                   sum(max(t.cache_creation_tokens - t.cache_1h_tokens, 0)),
                   sum(min(t.cache_1h_tokens, t.cache_creation_tokens)), sum(t.cache_read_tokens),
                   sum(t.web_search_requests)
            FROM turns t {join} WHERE t.ts >= ? GROUP BY 1, 2, 3, 4""", (since or "",)).fetchall()
    out: list[tuple[str, str, str, Usage]] = []
    for day, gkey, model, band, n, i, o, cc, c5, c1, cr, ws in rows:
        u = Usage(n, i or 0, o or 0, cc or 0, c5 or 0, c1 or 0, cr or 0, ws or 0)
        cost = cat.cost(model, day, band + 1 if band else 0, u.input, u.output, u.cache_read, u.cache_5m,
                        u.cache_1h, u.web_search)
        if cost is None:
            u.unknown_models.add(model or "(none)")
            u.unpriced_tokens = u.total
        else:
            u.cost = cost
        out.append((day or "", gkey or "", model or "(none)", u))
    return out


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


def cost_report(conn: sqlite3.Connection, cat: Catalog, since: str | None = None, by: str = "day",
                group: str = "model") -> dict[str, Any]:
    """Usage and cost per period (day/week/month) and group (model/project), plus totals."""
    cells: dict[tuple[str, str], Usage] = defaultdict(Usage)
    total = Usage()
    for day, gkey, _model, u in usage_rows(conn, cat, since, group):
        cells[(period_of(day, by), gkey)].add(u)
        total.add(u)
    rows = [{"period": p, group: k, **u.to_json()} for (p, k), u in sorted(cells.items())]
    return {"since": since, "by": by, "group": group, "rates_as_of": cat.as_of, "rows": rows,
            "total": total.to_json()}


def _span_h(a: str | None, b: str | None) -> float:
    if not a or not b:
        return 0.0
    return max((_dt(b) - _dt(a)).total_seconds(), 0.0) / 3600.0


def _dt(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def active_seconds(conn: sqlite3.Connection, since: str | None = None) -> dict[str, float]:
    """Per session: sum of `turn_duration` records; sessions without any use the gaps < 30 min
    between consecutive API responses (subagent responses included)."""
    s = since or ""
    out: dict[str, float] = {sid: ms / 1000.0 for sid, ms in conn.execute(
        "SELECT session_id, sum(duration_ms) FROM turn_durations WHERE ts >= ? GROUP BY session_id", (s,))}
    has_durations = {sid for (sid,) in conn.execute("SELECT DISTINCT session_id FROM turn_durations")}
    for sid, secs in conn.execute(
            f"""SELECT session_id, sum(CASE WHEN gap < {GAP_S} THEN gap ELSE 0 END) FROM (
                  SELECT session_id, (julianday(ts) - julianday(lag(ts) OVER (PARTITION BY session_id ORDER BY ts)))
                         * 86400.0 AS gap
                  FROM turns WHERE ts >= ?) WHERE gap IS NOT NULL GROUP BY session_id""", (s,)):
        if sid not in has_durations:
            out[sid] = float(secs or 0.0)
    return out


def _sessions_in(conn: sqlite3.Connection, since: str | None) -> list[tuple[Any, ...]]:
    return conn.execute(
        """SELECT session_id, project_key, title, first_ts, last_ts FROM sessions
           WHERE last_ts >= ?""", (since or "",)).fetchall()


def summary(conn: sqlite3.Connection, cat: Catalog, since: str | None = None, top: int = 5) -> dict[str, Any]:
    sessions = _sessions_in(conn, since)
    total = Usage()
    by_project: dict[str, Usage] = defaultdict(Usage)
    by_model: dict[str, Usage] = defaultdict(Usage)
    for _day, pkey, model, u in usage_rows(conn, cat, since, "project"):
        total.add(u)
        by_project[pkey].add(u)
        by_model[model].add(u)
    denom = total.input + total.cache_read + total.cache_creation
    active = active_seconds(conn, since)
    wall = sum(_span_h(max(f or "", since or ""), last) for _sid, _p, _t, f, last in sessions)
    busiest = max(by_project.items(), key=lambda kv: (kv[1].turns, kv[1].total), default=None)
    sessions_per_project = Counter(p for _s, p, *_ in sessions)
    return {
        "since": since, "rates_as_of": cat.as_of,
        "sessions": len(sessions), "projects": len({p for _s, p, *_ in sessions}),
        "tokens": total.to_json(),
        "cache_hit_rate": round(total.cache_read / denom, 4) if denom else None,
        "cost_usd": round(total.cost, 4) if total.cost_known else None,
        "cost_known_usd": round(total.cost, 4), "unknown_models": sorted(total.unknown_models),
        "active_hours": round(sum(active.values()) / 3600.0, 2), "wall_hours": round(wall, 2),
        "models": [{"model": m, **u.to_json()} for m, u in sorted(by_model.items(), key=lambda kv: -kv[1].total)],
        "busiest_project": None if busiest is None else {
            "project": busiest[0], "sessions": sessions_per_project.get(busiest[0], 0), **busiest[1].to_json()},
        "top_corrections": top_corrections(conn, since, top),
    }


def top_corrections(conn: sqlite3.Connection, since: str | None = None, limit: int = 5) -> list[dict[str, Any]]:
    """The corrections the user repeated most (same text), newest first among equals."""
    marks = ",".join("?" * len(CORRECTION_KINDS))
    rows = conn.execute(
        f"""SELECT min(content), kind, count(*) AS n, max(ts) AS last, count(DISTINCT session_id)
            FROM extractions WHERE kind IN ({marks}) AND coalesce(ts, '') >= ?
            GROUP BY kind, lower(trim(content)) ORDER BY n DESC, last DESC LIMIT ?""",
        (*CORRECTION_KINDS, since or "", limit)).fetchall()
    return [{"content": c, "kind": k, "count": n, "last_ts": last, "sessions": ns} for c, k, n, last, ns in rows]


SESSION_SORTS = ("tokens", "cost", "duration", "active", "corrections")


def top_sessions(conn: sqlite3.Connection, cat: Catalog, since: str | None = None, by: str = "tokens",
                 limit: int = 10) -> list[dict[str, Any]]:
    """Sessions ranked by tokens, cost, wall duration, active time or number of corrections."""
    if by not in SESSION_SORTS:
        raise ValueError(f"sort by one of {', '.join(SESSION_SORTS)}")
    usage: dict[str, Usage] = defaultdict(Usage)
    models: dict[str, set[str]] = defaultdict(set)
    for _day, sid, model, u in usage_rows(conn, cat, since, "session"):
        usage[sid].add(u)
        models[sid].add(model)
    marks = ",".join("?" * len(CORRECTION_KINDS))
    corr = dict(conn.execute(
        f"""SELECT session_id, count(*) FROM extractions WHERE kind IN ({marks}) AND coalesce(ts, '') >= ?
            GROUP BY session_id""", (*CORRECTION_KINDS, since or "")).fetchall())
    active = active_seconds(conn, since)
    out = []
    for sid, pkey, title, first, last in _sessions_in(conn, since):
        u = usage.get(sid, Usage())
        out.append({"session_id": sid, "project": pkey, "title": title, "first_ts": first, "last_ts": last,
                    "wall_hours": round(_span_h(first, last), 3),
                    "active_hours": round(active.get(sid, 0.0) / 3600.0, 3),
                    "corrections": corr.get(sid, 0), "models": sorted(models.get(sid, ())), **u.to_json()})
    key = {"tokens": lambda r: r["total_tokens"], "cost": lambda r: r["cost_known_usd"],
           "duration": lambda r: r["wall_hours"], "active": lambda r: r["active_hours"],
           "corrections": lambda r: r["corrections"]}[by]
    out.sort(key=lambda r: (key(r), r["last_ts"] or ""), reverse=True)
    return out[:limit]


_WORD = re.compile(r"[a-z][a-z0-9_\-]{2,}")
_STOP_WORDS = """the and for you are with this that from into have has was were will would could should
can not but all any our your its it's let lets let's use using please make sure also then than them they
what when where which while who why how just like need want get got see run show check look work working
file files code new add fix about after again some more most other only over such very here there
session continue continued previous conversation context summary below above now one two each both out
want wants does did done doing into onto off per via yes okay claude read write edit help"""
_STOP = frozenset(_STOP_WORDS.split())


def topics(conn: sqlite3.Connection, since: str | None = None, projects: int = 8, terms: int = 8,
           titles: int = 3) -> list[dict[str, Any]]:
    """Per busy project: its most distinctive words (session titles and first prompts, tf x idf over
    projects) and its latest session titles. Cheap: reads the sessions table only."""
    rows = conn.execute(
        """SELECT coalesce(project_key, '?'), title, first_prompt, last_ts FROM sessions
           WHERE last_ts >= ? ORDER BY last_ts DESC""", (since or "",)).fetchall()
    tf: dict[str, Counter[str]] = defaultdict(Counter)
    latest: dict[str, list[str]] = defaultdict(list)
    count: Counter[str] = Counter()
    for pkey, title, prompt, _last in rows:
        count[pkey] += 1
        text = f"{title or ''} {(prompt or '')[:400]}".lower()
        tf[pkey].update(set(w.strip("-_") for w in _WORD.findall(text)) - _STOP)
        if title and len(latest[pkey]) < titles and title not in latest[pkey]:
            latest[pkey].append(title)
    df: Counter[str] = Counter()
    for c in tf.values():
        df.update(c.keys())
    n = max(len(tf), 1)
    out = []
    for pkey, sessions in count.most_common(projects):
        scored = sorted(((c * (1.0 + math.log(n / df[w])), c, w) for w, c in tf[pkey].items() if len(w) > 2),
                        reverse=True)
        out.append({"project": pkey, "sessions": sessions,
                    "terms": [{"term": w, "sessions": c} for _s, c, w in scored[:terms]],
                    "recent_titles": latest[pkey]})
    return out


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100); None for no values."""
    if not values:
        return None
    v = sorted(values)
    k = (len(v) - 1) * q / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def _r(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(x, nd)


def read_events(state_dir: Path, since: str | None = None) -> tuple[list[dict[str, Any]], int]:
    """Hook events from `events.jsonl.1` then `events.jsonl` (missing files are fine); (events, bad lines)."""
    import orjson

    events: list[dict[str, Any]] = []
    bad = 0
    for name in ("events.jsonl.1", "events.jsonl"):
        try:
            data = (state_dir / name).read_bytes()
        except OSError:
            continue
        for line in data.splitlines():
            if not line.strip():
                continue
            try:
                e = orjson.loads(line)
            except orjson.JSONDecodeError:
                bad += 1
                continue
            if isinstance(e, dict) and e.get("event") == "hook" and str(e.get("ts") or "") >= (since or ""):
                events.append(e)
    return events, bad


def hook_stats(state_dir: Path, since: str | None = None) -> dict[str, Any]:
    events, bad = read_events(state_dir, since)
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        by[str(e.get("hook") or "?")].append(e)
    hooks = []
    for name, evs in sorted(by.items()):
        lat = [float(e["latency_ms"]) for e in evs if isinstance(e.get("latency_ms"), (int, float))]
        errs = [e for e in evs if e.get("ok") is False or e.get("error")]
        hooks.append({"hook": name, "fired": len(evs), "errors": len(errs),
                      "latency_ms_p50": _r(percentile(lat, 50), 1), "latency_ms_p95": _r(percentile(lat, 95), 1),
                      "latency_ms_max": _r(max(lat), 1) if lat else None,
                      "last_ts": max(str(e.get("ts") or "") for e in evs) or None,
                      "last_error": str(errs[-1].get("error") or "failed") if errs else None})
    return {"events_file": str(state_dir / "events.jsonl"), "fired": len(events), "bad_lines": bad,
            "hooks": hooks}


def health(conn: sqlite3.Connection, db: Path, since: str | None = None, scan_disk: bool = True) -> dict[str, Any]:
    """Index freshness, ingest latency, errors, DB size and hook statistics."""
    runs = conn.execute("""SELECT started_at, elapsed_s, mode, files, files_unchanged, records, bytes_read,
                                  bad_lines, errors FROM ingest_runs WHERE started_at >= ?
                           ORDER BY id DESC LIMIT 500""", (since or "",)).fetchall()
    last = runs[0] if runs else None
    incr = [r[1] for r in runs if r[2] == "incremental" and r[1] is not None]
    allr = [r[1] for r in runs if r[1] is not None]
    n_files, n_missing, bad_lines, newest_ns = conn.execute(
        """SELECT count(*), coalesce(sum(missing), 0), coalesce(sum(bad_lines), 0), max(mtime_ns)
           FROM ingest_state""").fetchone()
    now = datetime.now(timezone.utc)
    fresh: dict[str, Any] = {
        "last_run_at": last[0] if last else None,
        "last_run_age_s": round((now - _dt(last[0])).total_seconds(), 1) if last else None,
        "newest_indexed_mtime": _iso_ns(newest_ns)}
    if scan_disk:
        fresh.update(_pending(conn))
    size = {s: (Path(str(db) + s).stat().st_size if Path(str(db) + s).exists() else 0) for s in ("", "-wal", "-shm")}
    return {
        "db": str(db), "db_bytes": sum(size.values()), "db_wal_bytes": size["-wal"],
        "freshness": fresh,
        "ingest": {"runs": len(runs), "p50_s": _r(percentile(allr, 50)), "p95_s": _r(percentile(allr, 95)),
                   "incremental_p50_s": _r(percentile(incr, 50)), "incremental_p95_s": _r(percentile(incr, 95)),
                   "last": None if last is None else {
                       "at": last[0], "elapsed_s": _r(last[1]), "mode": last[2], "files": last[3],
                       "files_unchanged": last[4], "records": last[5], "bytes_read": last[6],
                       "bad_lines": _loads(last[7]), "errors": last[8]}},
        "errors": {"ingest_errors": sum(r[8] or 0 for r in runs), "bad_lines": bad_lines,
                   "files": n_files, "files_missing": n_missing},
        "hooks": hook_stats(db.parent, since),
    }


def _loads(s: str | None) -> Any:
    import orjson

    try:
        return orjson.loads(s) if s else {}
    except orjson.JSONDecodeError:
        return {}


def _iso_ns(ns: int | None) -> str | None:
    if not ns:
        return None
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _pending(conn: sqlite3.Connection) -> dict[str, Any]:
    """Transcripts on disk that are new or changed since they were indexed (stat only)."""
    from lib.discovery import discover

    state = {p: (size, mtime) for p, size, mtime in conn.execute(
        "SELECT path, size, mtime_ns FROM ingest_state WHERE missing = 0")}
    roots = [Path(r) for (r,) in conn.execute("SELECT DISTINCT root FROM ingest_state WHERE root IS NOT NULL")]
    pending = 0
    newest = 0
    for f in discover([r for r in roots if r.is_dir()]):
        newest = max(newest, f.mtime_ns)
        if state.get(f.path) != (f.size, f.mtime_ns):
            pending += 1
    return {"roots": [str(r) for r in roots], "newest_transcript_mtime": _iso_ns(newest or None),
            "pending_files": pending, "up_to_date": pending == 0}
