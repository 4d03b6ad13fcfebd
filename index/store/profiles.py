"""Profiles and ontology (X12–X17), materialised after every index run from additive counters,
sessions and extractions — so they are right after an incremental run, not only after a rebuild."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import orjson

from extractors.profiles import KNOWN_TYPOS
from index.store.labels import Label, project_labeller
from lib import sqlite

PROFILE_NAMES = (
    "operator_profile",
    "voice_profile",
    "workflow_profile",
    "satisfaction_profile",
    "implicit_preferences",
)
_HOME = re.compile(r"^(?:/Users/|/home/|[A-Za-z]:\\Users\\)([^/\\]+)")


def _counters(conn: sqlite.Connection) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for profile, key, value in conn.execute(
        "SELECT profile, key, sum(value) FROM profile_counters GROUP BY profile, key"
    ):
        out[profile][key] = value
    return out


def _top(d: dict[str, float], n: int, min_count: float = 1) -> list[tuple[str, int]]:
    return [(k, int(v)) for k, v in sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))[:n] if v >= min_count]


def _ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else 0.0


def materialise(conn: sqlite.Connection) -> None:
    """Rebuild the profiles, projects, machines and vocabulary tables (inside the caller's transaction)."""
    c = _counters(conn)
    label = project_labeller(conn)  # the projects' unique labels: `work/api` and `home/api`
    profiles = {
        "operator_profile": _operator(conn, c, label),
        "voice_profile": _voice(c),
        "workflow_profile": _workflow(conn, c),
        "satisfaction_profile": _satisfaction(conn, c),
        "implicit_preferences": {"items": _implicit(conn, c)},
    }
    conn.executemany(
        """INSERT INTO profiles(name, data, updated_at) VALUES(?,?,strftime('%Y-%m-%dT%H:%M:%fZ','now'))
           ON CONFLICT(name) DO UPDATE SET data=excluded.data, updated_at=excluded.updated_at""",
        [(k, orjson.dumps(v).decode()) for k, v in profiles.items()],
    )
    _projects(conn, label)
    _machines(conn, c)
    _vocabulary(conn, c, label)


def _operator(conn: sqlite.Connection, c: dict[str, dict[str, float]], label: Label) -> dict[str, Any]:
    sessions, projects, first, last = conn.execute(
        "SELECT count(*), count(DISTINCT project_key), min(first_ts), max(last_ts) FROM sessions"
    ).fetchone()
    models: dict[str, float] = defaultdict(float)
    for (ms,) in conn.execute("SELECT models FROM sessions WHERE models IS NOT NULL AND models != ''"):
        for m in set(ms.split(",")):
            if m and m != "<synthetic>":
                models[m] += 1
    users: dict[str, float] = defaultdict(float)
    for key, n in c.get("machine", {}).items():
        users[key.split("|", 1)[1]] += n
    top_projects = [
        (label(p), n)
        for p, n in conn.execute(
            """SELECT project_key, count(*) n FROM sessions WHERE project_key IS NOT NULL
           GROUP BY project_key ORDER BY n DESC LIMIT 5"""
        )
    ]
    return {
        "usernames": [u for u, _ in _top(users, 3)],
        "sessions": sessions,
        "projects": projects,
        "first_ts": first,
        "last_ts": last,
        "prompts": int(c.get("voice", {}).get("prompts", 0)),
        "active_hours_utc": [h for h, _ in _top(c.get("hour", {}), 6)],
        "languages": _top(c.get("lang", {}), 6),
        "tools": _top(c.get("tool", {}), 8),
        "package_managers": _top(c.get("pkg", {}), 4),
        "test_runners": _top(c.get("test_runner", {}), 3),
        "models": _top(dict(models), 4),
        "top_projects": top_projects,
    }


def _voice(c: dict[str, dict[str, float]]) -> dict[str, Any]:
    v = c.get("voice", {})
    n = v.get("prompts", 0)
    typos = sorted(
        (
            (k.split(">", 1)[0], k.split(">", 1)[1], int(cnt))
            for k, cnt in c.get("typo", {}).items()
            if cnt >= 2 or k.split(">", 1)[0] in KNOWN_TYPOS
        ),  # learned ones must recur
        key=lambda t: (-t[2], t[0]),
    )
    avg = round(v.get("words", 0) / n, 1) if n else 0.0
    style = []
    if n:
        style.append("terse" if avg < 20 else ("detailed" if avg > 60 else "medium-length"))
        if _ratio(v.get("lowercase_start", 0), n) > 0.5:
            style.append("starts lowercase")
        if _ratio(v.get("no_final_punct", 0), n) > 0.5:
            style.append("rarely ends with punctuation")
        if _ratio(v.get("questions", 0), n) > 0.4:
            style.append("asks many questions")
        if _ratio(v.get("please", 0), n) > 0.2:
            style.append("polite (please)")
    return {
        "prompts": int(n),
        "avg_words": avg,
        "avg_chars": round(v.get("chars", 0) / n, 1) if n else 0.0,
        "short_ratio": _ratio(v.get("short_prompts", 0), n),
        "long_ratio": _ratio(v.get("long_prompts", 0), n),
        "lowercase_start_ratio": _ratio(v.get("lowercase_start", 0), n),
        "no_final_punct_ratio": _ratio(v.get("no_final_punct", 0), n),
        "question_ratio": _ratio(v.get("questions", 0), n),
        "exclaim_ratio": _ratio(v.get("exclaims", 0), n),
        "please_ratio": _ratio(v.get("please", 0), n),
        "emoji_ratio": _ratio(v.get("emoji", 0), n),
        "openers": _top(c.get("opener", {}), 8, 2),
        "typos": [{"typo": t, "meant": f, "count": k} for t, f, k in typos[:20]],
        "style": style,
    }


def _workflow(conn: sqlite.Connection, c: dict[str, dict[str, float]]) -> dict[str, Any]:
    w = c.get("workflow", {})
    tools = c.get("tool", {})
    calls = sum(tools.values())
    sessions = conn.execute(
        "SELECT count(*), avg(n_prompts), avg(n_messages) FROM sessions WHERE n_prompts > 0"
    ).fetchone()
    return {
        "sessions_with_prompts": sessions[0],
        "avg_prompts_per_session": round(sessions[1] or 0, 1),
        "avg_messages_per_session": round(sessions[2] or 0, 1),
        "tool_calls": int(calls),
        "tool_mix": _top(tools, 10),
        "tool_error_rate": _ratio(w.get("tool_errors", 0), calls),
        "edits": int(w.get("edits", 0)),
        "subagents_spawned": int(w.get("subagents", 0)),
        "plans": int(w.get("plans", 0)),
        "todo_updates": int(w.get("todo_updates", 0)),
        "compactions": int(w.get("compactions", 0)),
        "git": _top(c.get("git", {}), 8),
        "test_runners": _top(c.get("test_runner", {}), 4),
        "slash_commands": _top(c.get("command", {}), 8),
    }


def _satisfaction(conn: sqlite.Connection, c: dict[str, dict[str, float]]) -> dict[str, Any]:
    s = c.get("satisfaction", {})
    kinds = dict(
        conn.execute("""SELECT kind, count(*) FROM extractions WHERE kind IN
                                ('correction','model_correction','self_correction') GROUP BY kind""").fetchall()
    )
    prompts = c.get("voice", {}).get("prompts", 0)
    corrections = kinds.get("correction", 0)
    pos, neg = s.get("positive", 0), s.get("negative", 0)
    score = round((pos - neg - 0.5 * corrections) / prompts, 3) if prompts else 0.0
    return {
        "prompts": int(prompts),
        "positive": int(pos),
        "negative": int(neg),
        "corrections": corrections,
        "model_corrections": kinds.get("model_correction", 0),
        "self_corrections": kinds.get("self_correction", 0),
        "interrupts": int(s.get("interrupts", 0)),
        "correction_rate": _ratio(corrections, prompts),
        "score": score,
        "mood": "satisfied" if score > 0.05 else ("frustrated" if score < -0.1 else "neutral"),
    }


def _implicit(conn: sqlite.Connection, c: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for group, label in (
        ("pkg", "package manager"),
        ("test_runner", "test runner"),
        ("lang", "language (files edited)"),
    ):
        top = _top(c.get(group, {}), 3, 2)
        if top:
            lead, n = top[0]
            rest = ", ".join(f"{k} ({v})" for k, v in top[1:])
            items.append(
                {
                    "preference": f"{label}: {lead}",
                    "evidence": f"used {n} times" + (f"; vs {rest}" if rest else ""),
                    "count": n,
                    "source": "observed",
                }
            )
    for content, uuid, ts, n in conn.execute(
        """SELECT content, source_uuid, max(ts), count(*) FROM extractions WHERE kind='implicit_preference'
               GROUP BY lower(content) ORDER BY max(ts) DESC LIMIT 30"""
    ):
        items.append(
            {
                "preference": content,
                "evidence": "stated",
                "count": n,
                "source": "stated",
                "source_uuid": uuid,
                "ts": ts,
            }
        )
    return items


def _projects(conn: sqlite.Connection, label: Label) -> None:
    conn.execute("DELETE FROM projects")
    rows = conn.execute(
        """SELECT project_key, group_concat(DISTINCT cwd), count(*), sum(n_prompts), min(first_ts), max(last_ts),
                  group_concat(DISTINCT git_branch), group_concat(DISTINCT models)
           FROM sessions WHERE project_key IS NOT NULL GROUP BY project_key"""
    ).fetchall()
    conn.executemany(
        """INSERT INTO projects(project_key, name, cwds, sessions, prompts, first_ts, last_ts, branches, models)
           VALUES(?,?,?,?,?,?,?,?,?)""",
        [
            (p, label(p), _uniq(cw, 8), n, pr or 0, f, last, _uniq(br, 10), _uniq(md, 6))
            for p, cw, n, pr, f, last, br, md in rows
        ],
    )


def _uniq(csv: str | None, n: int) -> str:
    seen: dict[str, None] = {}
    for x in (csv or "").split(","):
        if x and x != "<synthetic>":
            seen[x] = None
    return ",".join(list(seen)[:n])


def _machines(conn: sqlite.Connection, c: dict[str, dict[str, float]]) -> None:
    conn.execute("DELETE FROM machines")
    agg: dict[str, dict[str, Any]] = {}
    for cwd, first, last in conn.execute("SELECT cwd, first_ts, last_ts FROM sessions WHERE cwd IS NOT NULL"):
        m = _HOME.match(cwd)
        os_name = "windows" if ":\\" in cwd[:4] else ("macos" if cwd.startswith("/Users/") else "linux")
        user = m.group(1) if m else "?"
        key = f"{os_name}:{user}"
        a = agg.setdefault(
            key, {"os": os_name, "users": user, "homes": set(), "n": 0, "first": first, "last": last}
        )
        if m:
            a["homes"].add(cwd[: m.end()])
        a["n"] += 1
        a["first"] = min(a["first"] or first or "", first or "") or None
        a["last"] = max(a["last"] or "", last or "") or None
    hosts = ",".join(h for h, _ in _top(c.get("host", {}), 12))
    conn.executemany(
        """INSERT INTO machines(machine, os, users, homes, sessions, first_ts, last_ts, hosts)
                        VALUES(?,?,?,?,?,?,?,?)""",
        [
            (k, a["os"], a["users"], ",".join(sorted(a["homes"])), a["n"], a["first"], a["last"], hosts)
            for k, a in agg.items()
        ],
    )


def _vocabulary(conn: sqlite.Connection, c: dict[str, dict[str, float]], label: Label) -> None:
    conn.execute("DELETE FROM vocabulary")
    terms = _top(c.get("vocab", {}), 300, 2)
    # which projects use a term: counters are per file, and a main file's sessions name its project
    where: dict[str, set[str]] = defaultdict(set)
    for key, project in conn.execute(
        # sessions first, then their files' counters by primary key: the other way round SQLite
        # scanned every session for each counter (quadratic; 1.5 s at 736 MB)
        """SELECT DISTINCT pc.key, s.project_key FROM sessions s CROSS JOIN profile_counters pc
               ON pc.file_id = s.file_id AND pc.profile = 'vocab' WHERE s.project_key IS NOT NULL"""
    ):
        where[key].add(label(project))
    rows = []
    for term, uses in terms:
        d = conn.execute(
            # the term's matches once, as a list: joined instead, SQLite ran the FTS query again
            # for every domain fact (newest first, the same order this walks)
            """SELECT e.content, e.source_uuid FROM extractions e WHERE e.kind = 'domain_fact'
               AND e.id IN (SELECT rowid FROM extractions_fts WHERE extractions_fts MATCH ?)
               ORDER BY e.ts DESC LIMIT 1""",
            ('"' + term.replace('"', "") + '"',),
        ).fetchone()
        rows.append(
            (
                term,
                uses,
                ",".join(sorted(where.get(term, ()))) or None,
                d[0] if d else None,
                d[1] if d else None,
            )
        )
    conn.executemany(
        """INSERT OR REPLACE INTO vocabulary(term, uses, projects, definition, source_uuid)
                        VALUES(?,?,?,?,?)""",
        rows,
    )
