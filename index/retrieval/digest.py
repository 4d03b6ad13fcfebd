"""Session digest without an LLM (S1): what was asked, investigated, learned, decided, corrected and
completed, which files were read and edited, how it ended and what is next — from rows already in the
index (sessions, messages' tool targets, extractions, goal_stack)."""

from __future__ import annotations

import re
import sqlite3
from typing import Any

import orjson

from index.retrieval.scoped import Scoped, and_where, walk
from index.stats.queries import find_session
from index.store.textstore import unpack
from lib.model import EDIT_TOOLS
from lib.project import display_name
from lib.text import clip

READ_TOOLS = ("Read", "NotebookRead")
SEARCH_TOOLS = ("Grep", "Glob", "WebSearch", "WebFetch")
OBSERVATION_TYPES = ("decision", "bugfix", "feature", "refactor", "discovery")

_BUGFIX = re.compile(
    r"\b(fix\w*|bug\w*|error\w*|fail\w*|crash\w*|flak\w*|broken|regression|root cause|"
    r"resolv\w*|patch\w*|workaround)\b",
    re.I,
)
_REFACTOR = re.compile(
    r"\b(refactor\w*|renam\w*|extract\w*|mov(?:e|ed|ing)|clean\w*|simplif\w*|split\w*|"
    r"restructur\w*|reorganis\w*|reorganiz\w*|dedup\w*|consolidat\w*)\b",
    re.I,
)
_FEATURE = re.compile(
    r"\b(add\w*|implement\w*|creat\w*|support\w*|introduc\w*|buil[dt]\w*|wir(?:e|ed|ing)|"
    r"new)\b",
    re.I,
)
_NEXT = re.compile(
    r"\b(next|remaining|todo|still need|follow[- ]up|left to|we should|you (?:can|could|should|may "
    r"want to)|once .{3,40} we can)\b",
    re.I,
)
_SENT = re.compile(r"(?<=[.!?])\s+|\n+")

_GROUPS: dict[str, tuple[str, ...]] = {
    "decisions": ("standing_decision", "decision"),
    "corrections": ("correction", "model_correction"),
    "completed": ("progress", "goal_progress"),
    "learned": ("domain_fact", "self_correction", "implicit_preference"),
    "failed_attempts": ("failed_attempt",),
    "rules": ("ban",),
}


def observation_type(kind: str, text: str) -> str | None:
    """decision / bugfix / feature / refactor / discovery for one extraction (None = not an observation)."""
    if kind in ("decision", "standing_decision"):
        return "decision"
    if kind in ("domain_fact", "self_correction"):
        return "discovery"
    if kind not in ("progress", "goal_progress", "failed_attempt", "model_correction"):
        return None
    if kind == "progress" and len(text.split()) < 3:
        return None  # "Done", "Fixed it"
    if _BUGFIX.search(text) or kind in ("failed_attempt", "model_correction"):
        return "bugfix"
    if _REFACTOR.search(text):
        return "refactor"
    if _FEATURE.search(text):
        return "feature"
    return None if kind == "progress" else "discovery"


def _rel(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd) and len(path) > len(cwd) + 1 and path[len(cwd)] in "/\\":
        return path[len(cwd) + 1 :]
    return path


def _targets(
    conn: sqlite3.Connection, sid: str, tools: tuple[str, ...], cwd: str | None, n: int
) -> tuple[list[dict[str, Any]], int]:
    rows = conn.execute(
        f"""SELECT tool_target, count(*), max(ts) FROM messages WHERE session_id = ? AND kind = 'tool_use'
            AND tool_name IN ({",".join("?" * len(tools))}) AND tool_target IS NOT NULL AND tool_target != ''
            GROUP BY tool_target ORDER BY count(*) DESC, max(ts) DESC""",
        (sid, *tools),
    ).fetchall()
    return [{"path": _rel(t, cwd), "times": c} for t, c, _ in rows[:n]], len(rows)


def _prompt(conn: sqlite3.Connection, sid: str, last: bool) -> dict[str, Any] | None:
    """First or last human prompt; envelopes typed into the prompt stream (<task-notification>…) are skipped
    when a real one exists."""
    rows = conn.execute(
        f"""SELECT uuid, ts, body FROM messages WHERE session_id = ? AND kind = 'prompt' AND is_sidechain = 0
            ORDER BY on_main DESC, id {"DESC" if last else "ASC"} LIMIT 6""",
        (sid,),
    ).fetchall()
    if not rows:
        return None
    texts = [(r[0], r[1], unpack(r[2])) for r in rows]
    uuid, ts, text = next((t for t in texts if not t[2].lstrip().startswith("<")), texts[0])
    return {"text": text, "uuid": uuid, "ts": ts}


def _ending(conn: sqlite3.Connection, sid: str) -> dict[str, Any] | None:
    row = conn.execute(
        """SELECT uuid, ts, body FROM messages WHERE session_id = ? AND kind = 'text' AND role = 'assistant'
           AND is_sidechain = 0 AND on_main = 1 ORDER BY id DESC LIMIT 1""",
        (sid,),
    ).fetchone()
    return {"text": unpack(row[2]), "uuid": row[0], "ts": row[1]} if row else None


def _next_steps(conn: sqlite3.Connection, sid: str, ending: dict[str, Any] | None) -> list[dict[str, Any]]:
    out = [
        {"text": c, "source": f"goal ({s})", "uuid": u}
        for c, s, u in conn.execute(
            """SELECT content, status, source_uuid FROM goal_stack WHERE session_id = ?
           AND status IN ('active','paused','blocked') ORDER BY updated_ts DESC LIMIT 3""",
            (sid,),
        )
    ]
    if ending:
        for sent in _SENT.split(ending["text"]):
            if _NEXT.search(sent) and len(sent.split()) >= 4:
                out.append({"text": clip(sent, 240), "source": "last answer", "uuid": ending["uuid"]})
            if len(out) >= 6:
                break
    return out


def session_digest(conn: sqlite3.Connection, session: str, *, items: int = 8) -> dict[str, Any] | None:
    """The digest of one session (id or unique prefix); None when no such session is indexed."""
    sid = (
        session
        if conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session,)).fetchone()
        else find_session(conn, session)
    )
    if sid is None:
        return None
    meta = conn.execute(
        """SELECT title, project_key, cwd, git_branch, first_ts, last_ts, n_messages, n_prompts, n_tool_calls,
                  n_compactions, models, resumed_from FROM sessions WHERE session_id = ?""",
        (sid,),
    ).fetchone()
    title, key, cwd, branch, first, last, n_msg, n_prompts, n_tools, n_compact, models, resumed = meta
    groups: dict[str, list[dict[str, Any]]] = {g: [] for g in _GROUPS}
    observations: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for kind, content, context, uuid, ts in conn.execute(
        """SELECT kind, content, context, source_uuid, ts FROM extractions WHERE session_id = ?
               ORDER BY ts, id""",
        (sid,),
    ):
        norm = " ".join(content.lower().split())[:120]
        if (kind, norm) in seen:
            continue
        seen.add((kind, norm))
        ctx = orjson.loads(context or "{}")
        item: dict[str, Any] = {"text": content, "date": (ts or "")[:10] or None, "uuid": uuid}
        if kind != "ban" and ctx.get("rejected_approach"):
            item["rejected"] = ctx["rejected_approach"]
        for group, kinds in _GROUPS.items():
            if kind in kinds:
                groups[group].append({**item, "kind": kind} if len(kinds) > 1 else item)
        otype = observation_type(kind, content)
        if otype:
            observations.append({"type": otype, "text": content, "uuid": uuid})
    files_read, n_read = _targets(conn, sid, READ_TOOLS, cwd, items * 2)
    files_edited, n_edited = _targets(conn, sid, EDIT_TOOLS, cwd, items * 2)
    searched, n_searched = _targets(conn, sid, SEARCH_TOOLS, cwd, items)
    errors = conn.execute(
        "SELECT count(*) FROM messages WHERE session_id = ? AND kind = 'tool_result' AND is_error = 1", (sid,)
    ).fetchone()[0]
    agents = conn.execute("SELECT count(*) FROM agents WHERE session_id = ?", (sid,)).fetchone()[0]
    ending = _ending(conn, sid)
    first_prompt, last_prompt = _prompt(conn, sid, False), _prompt(conn, sid, True)
    notes = [f"{n_tools or 0} tool calls, {errors} failed", f"{n_compact or 0} compactions"]
    if agents:
        notes.append(f"{agents} subagents")
    if resumed:
        notes.append(f"resumed from session {resumed}")
    by_type: dict[str, int] = {}
    for o in observations:
        by_type[o["type"]] = by_type.get(o["type"], 0) + 1
    return {
        "session_id": sid,
        "title": title,
        "project": display_name(key) if key else None,
        "project_key": key,
        "cwd": cwd,
        "branch": branch,
        "first_ts": first,
        "last_ts": last,
        "date": (first or "")[:10] or None,
        "counts": {"messages": n_msg, "prompts": n_prompts, "tool_calls": n_tools, "compactions": n_compact},
        "models": [m for m in (models or "").split(",") if m][:3],
        "request": first_prompt,
        "investigated": {"files_read": n_read, "searches": searched, "searches_total": n_searched},
        "learned": groups["learned"][-items:],
        "decisions": groups["decisions"][-items:],
        "corrections": groups["corrections"][-items:],
        "rules": groups["rules"][-items:],
        "failed_attempts": groups["failed_attempts"][-items:],
        "completed": groups["completed"][-items:],
        "files_read": files_read,
        "files_read_total": n_read,
        "files_edited": files_edited,
        "files_edited_total": n_edited,
        "last_prompt": last_prompt
        if last_prompt and first_prompt and last_prompt["uuid"] != first_prompt["uuid"]
        else None,
        "ended_with": ending,
        "next_steps": _next_steps(conn, sid, ending),
        "observations": observations[-items * 2 :],
        "observations_by_type": by_type,
        "notes": notes,
    }


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
    section("Completed", [i["text"] for i in d["completed"]])
    section("Failed attempts", [i["text"] for i in d["failed_attempts"]])
    section("Observations", [f"[{o['type']}] {o['text']}" for o in d["observations"]])
    section("Files edited", [f"{f['path']} ×{f['times']}" for f in d["files_edited"]])
    section("Files read", [f"{f['path']} ×{f['times']}" for f in d["files_read"]])
    last = d.get("last_prompt")
    section("Last prompt", [last["text"]] if last else [])
    end = d.get("ended_with")
    section("Ended with", [end["text"]] if end else [])
    section("Next steps", [n["text"] for n in d["next_steps"]])
    section("Notes", d["notes"])
    return "\n".join(lines).rstrip() + "\n"


def recent_sessions(
    conn: sqlite3.Connection,
    *,
    scope: str,
    cwd: str | None,
    since: str | None,
    limit: int,
    agent: str | None = None,
) -> Scoped:
    """Sessions in scope, newest first, with their first prompt (`prior_sessions_for_cwd`); `agent`
    keeps one coding agent's."""

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
                "project": display_name(r[4]) if r[4] else None,
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
