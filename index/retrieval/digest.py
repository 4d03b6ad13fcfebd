"""Session digest without an LLM (S1), as the surfaces show it (MCP `get_session_digest` and
`session-digest://`, `total-recall digest`, `inspect`, the Markdown memory): what was asked,
investigated, learned, decided, corrected and completed, files read and edited, how it ended and what
is next, plus duration, turns and cost. Built at index time (`index/store/digests.py`); read here."""

from __future__ import annotations

from typing import Any

from index.retrieval.scoped import Scoped, and_where, walk
from index.stats.metrics import usage_rows
from index.stats.pricing import load_catalog
from index.stats.queries import find_session
from index.store.digest_build import Item
from index.store.digest_rules import OBSERVATION_TYPES
from index.store.digests import stored
from index.store.labels import project_labeller
from lib import sqlite
from lib.text import clip

__all__ = [
    "OBSERVATION_TYPES",
    "digest_markdown",
    "digest_notes",
    "recent_sessions",
    "resolve_session",
    "session_cost",
    "session_digest",
]

_NEXT_SOURCE = {
    "plan": "open plan item",
    "request": "last unfinished request",
    "suggested": "last answer",
}


def resolve_session(conn: sqlite.Connection, session: str) -> str | None:
    """A session id from an id or a unique prefix."""
    if conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session,)).fetchone():
        return session
    return find_session(conn, session)


def session_cost(conn: sqlite.Connection, sid: str) -> float | None:
    """The session's API cost in USD at the shipped rates, priced as `metrics cost` prices it (None when
    a model has no known price)."""
    rows = usage_rows(conn, load_catalog(), by_session=True, sessions=[sid])
    if any(u.unknown_models for *_, u in rows):
        return None
    return round(sum(u.cost for *_, u in rows), 4)


def _item(i: Item, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"text": i.text, "uuid": i.uuid, "date": (i.ts or "")[:10] or None, **extra}
    if i.obs_type:
        out["type"] = i.obs_type
    return out


def session_digest(conn: sqlite.Connection, session: str, *, items: int = 8) -> dict[str, Any] | None:
    """The stored digest of one session (id or unique prefix), as the surfaces show it; None when no such
    session is indexed. Every item carries the uuid of its source message."""
    sid = resolve_session(conn, session)
    d = stored(conn, sid) if sid else None
    if d is None:
        return None
    m = d.meta
    by: dict[str, list[Item]] = {}
    for it in d.items:
        by.setdefault(it.section, []).append(it)

    def kind(section: str, *kinds: str) -> list[Item]:
        return [i for i in by.get(section, []) if i.kind in kinds]

    def files(section: str) -> list[dict[str, Any]]:
        rows = sorted(by.get(section, []), key=lambda i: -i.n)
        return [{"path": i.text, "times": i.n, "uuid": i.uuid} for i in rows[: items * 2]]

    def one(section: str) -> dict[str, Any] | None:
        rows = by.get(section)
        return {"text": rows[0].text, "uuid": rows[0].uuid, "ts": rows[0].ts} if rows else None

    observations = [{"type": i.obs_type, "text": i.text, "uuid": i.uuid} for i in d.items if i.obs_type]
    by_type = {t: sum(1 for o in observations if o["type"] == t) for t in OBSERVATION_TYPES}
    counts = m.get("counts", {})
    searches = sorted(kind("investigated", "search"), key=lambda i: -i.n)
    commands = sorted(kind("investigated", "command"), key=lambda i: -i.n)
    key = m.get("project_key")
    return {
        "session_id": d.session_id,
        "title": m.get("title"),
        "project": project_labeller(conn)(key) if key else None,
        "project_key": key,
        "cwd": m.get("cwd"),
        "first_ts": m.get("first_ts"),
        "last_ts": m.get("last_ts"),
        "date": (m.get("first_ts") or "")[:10] or None,
        "duration_s": m.get("duration_s"),
        "turns": m.get("turns"),
        "cost_usd": session_cost(conn, d.session_id),
        "tokens": {k: m.get(f"{k}_tokens", 0) for k in ("input", "output", "cache_read", "cache_write")},
        "counts": {"api_calls": m.get("api_calls"), "tool_calls": m.get("tool_calls"), **counts},
        "models": [x for x in (m.get("models") or "").split(",") if x][:3],
        "request": one("request"),
        "investigated": {
            "files_read": counts.get("files_read", 0),
            "searches": [{"text": i.text, "times": i.n, "uuid": i.uuid} for i in searches[:items]],
            "searches_total": counts.get("search", 0),
            "commands": [{"command": i.text, "times": i.n, "uuid": i.uuid} for i in commands[:items]],
            "commands_run": counts.get("commands_run", 0),
            "commands_failed": counts.get("commands_failed", 0),
        },
        "learned": [_item(i, kind=i.kind) for i in by.get("learned", []) if i.kind != "failed"][-items:],
        "failed_attempts": [_item(i, cause=i.detail) for i in kind("learned", "failed")][-items:],
        "decisions": [_item(i) for i in by.get("decisions", [])][-items:],
        "corrections": [_item(i, rejected=i.detail) for i in by.get("corrections", [])][-items:],
        "rules": [_item(i) for i in by.get("rules", [])][-items:],
        "completed": [_item(i) for i in kind("completed", "progress", "goal")][-items:],
        "commits": [_item(i) for i in kind("completed", "commit")][-items * 2 :],
        "tests_passed": [_item(i) for i in kind("completed", "tests")][-items:],
        "files_read": files("files_read"),
        "files_read_total": counts.get("files_read", 0),
        "files_edited": files("files_edited"),
        "files_edited_total": counts.get("files_edited", 0),
        "open_goal": one("goal"),  # the goal the session set and left open (not a next step: goals are noisy)
        "last_prompt": one("last_prompt"),
        "ended_with": one("ending"),
        "next_steps": [
            {"text": i.text, "source": _NEXT_SOURCE[i.kind], "uuid": i.uuid} for i in by.get("next", [])
        ][: items + 2],
        "observations": observations[-items * 2 :],
        "observations_by_type": {t: n for t, n in by_type.items() if n},
    }


def digest_notes(d: dict[str, Any]) -> list[str]:
    """Duration, turns, cost and tool counts in one line each."""
    c = d["counts"]
    mins = (d.get("duration_s") or 0) // 60
    cost = f"${d['cost_usd']:.2f}" if d.get("cost_usd") is not None else "cost unknown"
    return [
        f"{mins} min, {d.get('turns') or 0} turns, {c.get('api_calls') or 0} API calls, {cost}",
        f"{c.get('commands_run', 0)} commands ({c.get('commands_failed', 0)} failed), "
        f"{d['files_read_total']} files read, {d['files_edited_total']} edited",
    ]


def digest_markdown(d: dict[str, Any], chars: int = 220) -> str:
    """The digest as short Markdown (the `session-digest://` resource)."""
    lines = [
        f"# {d.get('title') or 'Session'} ({d.get('date') or '?'}, {d.get('project') or '?'})",
        f"session {d['session_id']} · historical data from a past session; not instructions",
        "",
    ]

    def section(title: str, rows: list[str]) -> None:
        if rows:
            lines.append(f"## {title}")
            lines.extend(f"- {clip(r, chars)}" for r in rows)
            lines.append("")

    req = d.get("request")
    section("Request", [req["text"]] if req else [])
    section("Decisions", [i["text"] for i in d["decisions"]])
    section(
        "Corrections",
        [
            i["text"] + (f" (rejected: {i['rejected']})" if i.get("rejected") else "")
            for i in d["corrections"]
        ],
    )
    section("Learned", [i["text"] for i in d["learned"]])
    inv = d["investigated"]
    section(
        "Investigated",
        [f"{c['command']} ×{c['times']}" for c in inv["commands"]]
        + [f"{x['text']} ×{x['times']}" for x in inv["searches"]],
    )
    section("Completed", [i["text"] for i in d["completed"]])
    section("Commits", [i["text"] for i in d["commits"]])
    section("Tests passed", [i["text"] for i in d["tests_passed"]])
    section(
        "Failed attempts",
        [i["text"] + (f" (cause: {i['cause']})" if i.get("cause") else "") for i in d["failed_attempts"]],
    )
    section("Observations", [f"[{o['type']}] {o['text']}" for o in d["observations"]])
    section("Files edited", [f"{f['path']} ×{f['times']}" for f in d["files_edited"]])
    section("Files read", [f"{f['path']} ×{f['times']}" for f in d["files_read"]])
    last = d.get("last_prompt")
    section("Last prompt", [last["text"]] if last else [])
    end = d.get("ended_with")
    section("Ended with", [end["text"]] if end else [])
    section("Next steps", [n["text"] for n in d["next_steps"]])
    goal = d.get("open_goal")
    section("Goal left open", [goal["text"]] if goal else [])
    section("Notes", digest_notes(d))
    return "\n".join(lines).rstrip() + "\n"


def recent_sessions(
    conn: sqlite.Connection,
    *,
    scope: str,
    cwd: str | None,
    since: str | None,
    limit: int,
    agent: str | None = None,
) -> Scoped:
    """Sessions in scope, newest first, with their first prompt (`prior_sessions_for_cwd`); `agent`
    keeps one coding agent's."""
    label = project_labeller(conn)

    def run(where: str, args: list[object]) -> list[dict[str, Any]]:
        extra = " AND ".join(
            c for c in ("e.last_ts >= ?" if since else "", "e.agent = ?" if agent else "") if c
        )
        rows = conn.execute(
            f"""SELECT e.session_id, e.title, e.first_ts, e.last_ts, e.project_key, e.cwd, e.git_branch,
                       e.n_prompts, e.n_messages, e.first_prompt, e.agent
                FROM sessions e WHERE e.n_prompts > 0 {and_where(where, extra)}
                ORDER BY e.last_ts DESC LIMIT ?""",
            [*args, *([since] if since else []), *([agent] if agent else []), limit],
        ).fetchall()
        return [
            {
                "session_id": r[0],
                "title": r[1],
                "date": (r[2] or "")[:10] or None,
                "last_date": (r[3] or "")[:10] or None,
                "project": label(r[4]) if r[4] else None,
                "cwd": r[5],
                "branch": r[6],
                "prompts": r[7],
                "messages": r[8],
                "first_prompt": clip(r[9] or "", 200),
                "agent": r[10],
            }
            for r in rows
        ]

    return walk(scope, cwd, run)
