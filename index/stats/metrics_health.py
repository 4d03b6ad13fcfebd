"""Index health for `total-recall metrics health`: freshness, ingest latency, errors, DB size and
hook statistics read from `events.jsonl` (NDJSON beside the DB, rotated as `events.jsonl.1`)."""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from index.store.filters import parse_ts
from index.store.skips import skipped_files
from lib import sqlite
from lib.events import read_events


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


def _stats(evs: list[dict[str, Any]]) -> dict[str, Any]:
    lat = [float(e["latency_ms"]) for e in evs if isinstance(e.get("latency_ms"), (int, float))]
    errs = [e for e in evs if e.get("ok") is False or e.get("error")]
    return {
        "fired": len(evs),
        "errors": len(errs),
        "latency_ms_p50": _r(percentile(lat, 50), 1),
        "latency_ms_p95": _r(percentile(lat, 95), 1),
        "latency_ms_max": _r(max(lat), 1) if lat else None,
        "last_ts": max(str(e.get("ts") or "") for e in evs) or None,
        "last_error": str(errs[-1].get("error") or "failed") if errs else None,
    }


def hook_stats(state_dir: Path, since: str | None = None) -> dict[str, Any]:
    """Per hook: fire count, failures, latency p50/p95/max; plus the detached background index runs."""
    events = read_events(state_dir, since)
    bad = events.bad
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        if e.get("event") == "hook":
            by[str(e.get("hook") or "?")].append(e)
    bg = [e for e in events if e.get("event") == "index"]
    return {
        "events_file": str(state_dir / "events.jsonl"),
        "fired": sum(len(v) for v in by.values()),
        "bad_lines": bad,
        "hooks": [{"hook": name, **_stats(evs)} for name, evs in sorted(by.items())],
        "background_index": _stats(bg) if bg else None,
    }


def health(
    conn: sqlite.Connection, db: Path, since: str | None = None, scan_disk: bool = True
) -> dict[str, Any]:
    """Index freshness, ingest latency, errors, DB size and hook statistics."""
    runs = conn.execute(
        """SELECT started_at, elapsed_s, mode, files, files_unchanged, records, bytes_read,
                                  bad_lines, errors FROM ingest_runs WHERE started_at >= ?
                           ORDER BY id DESC LIMIT 500""",
        (since or "",),
    ).fetchall()
    last = runs[0] if runs else None
    incr = [r[1] for r in runs if r[2] == "incremental" and r[1] is not None]
    allr = [r[1] for r in runs if r[1] is not None]
    n_files, n_missing, bad_lines, newest_ns = conn.execute(
        """SELECT count(*), coalesce(sum(missing), 0), coalesce(sum(bad_lines), 0), max(mtime_ns)
           FROM ingest_state"""
    ).fetchone()
    now = datetime.now(timezone.utc)
    fresh: dict[str, Any] = {
        "last_run_at": last[0] if last else None,
        "last_run_age_s": round((now - _dt(last[0])).total_seconds(), 1) if last else None,
        "newest_indexed_mtime": _iso_ns(newest_ns),
    }
    if scan_disk:
        fresh.update(_pending(conn))
    size = {
        s: (Path(str(db) + s).stat().st_size if Path(str(db) + s).exists() else 0)
        for s in ("", "-wal", "-shm")
    }
    return {
        "db": str(db),
        "db_bytes": sum(size.values()),
        "db_wal_bytes": size["-wal"],
        "freshness": fresh,
        "ingest": {
            "runs": len(runs),
            "p50_s": _r(percentile(allr, 50)),
            "p95_s": _r(percentile(allr, 95)),
            "incremental_p50_s": _r(percentile(incr, 50)),
            "incremental_p95_s": _r(percentile(incr, 95)),
            "last": None
            if last is None
            else {
                "at": last[0],
                "elapsed_s": _r(last[1]),
                "mode": last[2],
                "files": last[3],
                "files_unchanged": last[4],
                "records": last[5],
                "bytes_read": last[6],
                "bad_lines": _loads(last[7]),
                "errors": last[8],
            },
        },
        "errors": {
            "ingest_errors": sum(r[8] or 0 for r in runs),
            "bad_lines": bad_lines,
            "files": n_files,
            "files_missing": n_missing,
            "files_skipped": len(skipped_files(conn)),
        },
        "hooks": hook_stats(db.parent, since),
    }


def indexed_files_by_root(conn: sqlite.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT root, count(*) FROM ingest_state GROUP BY root").fetchall())


def _loads(s: str | None) -> Any:
    try:
        return orjson.loads(s) if s else {}
    except orjson.JSONDecodeError:
        return {}


def _iso_ns(ns: int | None) -> str | None:
    if not ns:
        return None
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _pending(conn: sqlite.Connection) -> dict[str, Any]:
    """Transcripts on disk that are new or changed since they were indexed (stat only)."""
    from lib.discovery import discover

    state = {
        p: (size, mtime)
        for p, size, mtime in conn.execute("SELECT path, size, mtime_ns FROM ingest_state WHERE missing = 0")
    }
    # a file left unread since its parser failed (index/store/skips.py) waits for no run
    skipped = {f["path"]: (f["size"], f["mtime_ns"]) for f in skipped_files(conn)}
    roots = [
        Path(r) for (r,) in conn.execute("SELECT DISTINCT root FROM ingest_state WHERE root IS NOT NULL")
    ]
    pending = 0
    newest = 0
    for f in discover([r for r in roots if r.is_dir()]):
        newest = max(newest, f.mtime_ns)
        if (f.size, f.mtime_ns) not in (state.get(f.path), skipped.get(f.path)):
            pending += 1
    return {
        "roots": [str(r) for r in roots],
        "newest_transcript_mtime": _iso_ns(newest or None),
        "pending_files": pending,
        "up_to_date": pending == 0,
    }


def _dt(ts: str) -> datetime:
    dt = parse_ts(ts)
    if dt is None:
        raise ValueError(f"bad timestamp {ts!r}")
    return dt
