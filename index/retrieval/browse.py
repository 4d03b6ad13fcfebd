"""Read-side queries for browsing the index page by page (the `ui` web viewer and its HTML exports):
a filtered, paged session list, one session's whole thread with tool results and subagents attached
to the calls that made them, and a stamp that changes whenever another connection commits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from index.store.fts_query import parse
from index.store.textstore import unpack
from lib import sqlite
from lib.memid import memory_id

PER_PAGE = 50
_LIST_COLS = """s.session_id, s.title, s.project_key, s.cwd, s.first_ts, s.last_ts, s.n_messages, s.n_prompts,
                s.n_tool_calls, s.models, s.git_branch"""
_LIST_KEYS = (
    "session_id",
    "title",
    "project_key",
    "cwd",
    "first_ts",
    "last_ts",
    "n_messages",
    "n_prompts",
    "n_tool_calls",
    "models",
    "git_branch",
)


@dataclass(slots=True)
class SessionFilter:
    """What the session list is narrowed to; every field optional. Dates are ISO days (inclusive)."""

    project: str | None = None
    since: str | None = None
    until: str | None = None
    text: str | None = None
    has_errors: bool = False
    model: str | None = None

    def sql(self) -> tuple[str, list[object]]:
        where: list[str] = []
        args: list[object] = []
        if self.project:
            where.append("s.project_key = ?")
            args.append(self.project)
        if self.since:
            where.append("s.last_ts >= ?")
            args.append(self.since)
        if self.until:
            where.append("s.first_ts < ?")
            args.append(self.until + "\uffff")  # inclusive: every timestamp of that day sorts below
        if self.model:
            where.append("s.models LIKE ?")
            args.append(f"%{self.model}%")
        if self.has_errors:
            where.append(
                """EXISTS(SELECT 1 FROM messages m WHERE m.session_id = s.session_id
                          AND (m.is_error = 1 OR m.kind = 'api_error'))"""
            )
        if self.text:
            q = parse(self.text)
            if q.empty:
                return "0", []
            where.append(
                """s.session_id IN (SELECT d.session_id FROM session_docs d WHERE d.id IN
                     (SELECT rowid FROM session_fts WHERE session_fts MATCH ?))"""
            )
            args.append(q.all_of())
        return (" AND ".join(where) or "1"), args


def list_sessions(
    conn: sqlite.Connection, f: SessionFilter, page: int = 1, per_page: int = PER_PAGE
) -> dict[str, Any]:
    """Sessions newest first (by last activity), one page of them, and how many match in all."""
    where, args = f.sql()
    total = conn.execute(f"SELECT count(*) FROM sessions s WHERE {where}", args).fetchone()[0]
    page = max(1, page)
    rows = [
        dict(zip(_LIST_KEYS, r))
        for r in conn.execute(
            f"""SELECT {_LIST_COLS} FROM sessions s WHERE {where}
                ORDER BY s.last_ts DESC, s.session_id LIMIT ? OFFSET ?""",
            [*args, per_page, (page - 1) * per_page],
        )
    ]
    return {"rows": rows, "total": total, "page": page, "pages": max(1, -(-total // per_page))}


def facets(conn: sqlite.Connection) -> dict[str, list[str]]:
    """The values the session filters offer: projects (most recent first) and models."""
    projects = [
        r[0]
        for r in conn.execute(
            """SELECT project_key FROM sessions WHERE project_key IS NOT NULL
               GROUP BY project_key ORDER BY max(last_ts) DESC"""
        )
    ]
    models: set[str] = set()
    for (m,) in conn.execute("SELECT DISTINCT models FROM sessions WHERE models IS NOT NULL"):
        models.update(x for x in str(m).split(",") if x)
    return {"projects": projects, "models": sorted(models)}


def session_errors(conn: sqlite.Connection, ids: list[str]) -> set[str]:
    """Which of these sessions hold a failed tool call or an API error."""
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    return {
        r[0]
        for r in conn.execute(
            f"""SELECT DISTINCT session_id FROM messages WHERE session_id IN ({marks})
                AND (is_error = 1 OR kind = 'api_error')""",
            ids,
        )
    }


_MSG_COLS = """m.uuid, m.parent_uuid, m.role, m.kind, m.ts, m.body, m.agent_id, m.is_sidechain, m.on_main,
               m.tool_name, m.tool_use_id, m.tool_target, m.is_error, m.model"""
_MSG_KEYS = (
    "uuid",
    "parent_uuid",
    "role",
    "kind",
    "ts",
    "text",
    "agent_id",
    "is_sidechain",
    "on_main",
    "tool_name",
    "tool_use_id",
    "tool_target",
    "is_error",
    "model",
)


def _message(r: tuple[Any, ...]) -> dict[str, Any]:
    m = dict(zip(_MSG_KEYS, r))
    m["text"] = unpack(m["text"])
    m["on_main"] = bool(m["on_main"])
    m["is_error"] = bool(m["is_error"])
    return m


def session_thread(conn: sqlite.Connection, session_id: str) -> dict[str, Any] | None:
    """Every stored message of a session as a thread: tool results folded under their calls, each
    subagent's thread under the call that spawned it (unlinked ones listed apart). Returns None for an
    unknown session. Text is as stored (scrubbed); callers escape it."""
    head = conn.execute(
        f"SELECT {_LIST_COLS}, s.resumed_from FROM sessions s WHERE s.session_id=?", (session_id,)
    )
    row = head.fetchone()
    if row is None:
        return None
    info: dict[str, Any] = dict(zip((*_LIST_KEYS, "resumed_from"), row))
    msgs = [
        _message(r)
        for r in conn.execute(
            f"SELECT {_MSG_COLS} FROM messages m WHERE m.session_id=? ORDER BY m.id", (session_id,)
        )
    ]
    calls = _call_ids(msgs)
    results: dict[str, dict[str, Any]] = {}
    for m in msgs:
        if m["kind"] == "tool_result" and m["tool_use_id"] in calls:
            results.setdefault(m["tool_use_id"], m)  # shown under its call; a result without one stays
    agents = {
        r[0]: {
            "agent_id": r[0],
            "spawn_tool_use_id": r[1],
            "subagent_type": r[2],
            "description": r[3],
            "is_compaction_helper": bool(r[4]),
            "messages": [],
        }
        for r in conn.execute(
            """SELECT agent_id, spawn_tool_use_id, subagent_type, description, is_compaction_helper
               FROM agents WHERE session_id=? ORDER BY first_ts""",
            (session_id,),
        )
    }
    main: list[dict[str, Any]] = []
    for m in msgs:
        if m["kind"] == "tool_result" and m["tool_use_id"] in results and results[m["tool_use_id"]] is m:
            continue  # shown under its call
        aid = m["agent_id"]
        if aid:
            agents.setdefault(
                aid,
                {
                    "agent_id": aid,
                    "spawn_tool_use_id": None,
                    "subagent_type": None,
                    "description": None,
                    "is_compaction_helper": False,
                    "messages": [],
                },
            )["messages"].append(m)
        else:
            main.append(m)
    spawned = {a["spawn_tool_use_id"]: a for a in agents.values() if a["spawn_tool_use_id"]}
    for m in msgs:
        if m["kind"] == "tool_use":
            m["result"] = results.get(m["tool_use_id"] or "")
            m["agent"] = spawned.get(m["tool_use_id"] or "")
    info["messages"] = main
    info["agents"] = list(agents.values())
    info["unlinked_agents"] = [a for a in agents.values() if a["spawn_tool_use_id"] not in calls]
    info["compactions"] = sum(1 for m in msgs if m["kind"] == "compact_boundary")
    info["abandoned"] = sum(1 for m in msgs if not m["on_main"])
    return info


def _call_ids(msgs: list[dict[str, Any]]) -> set[str]:
    return {m["tool_use_id"] for m in msgs if m["kind"] == "tool_use" and m["tool_use_id"]}


def session_extractions(conn: sqlite.Connection, session_id: str, limit: int = 200) -> list[dict[str, Any]]:
    """What was mined from this session: kind, content, confidence, the message it came from, and the
    short id (lib.memid) that `why` and `feedback` take."""
    out = []
    for r in conn.execute(
        """SELECT id, kind, content, score, source_uuid, ts, project_key FROM extractions WHERE session_id=?
           ORDER BY ts, id LIMIT ?""",
        (session_id, limit),
    ):
        e = dict(zip(("id", "kind", "content", "score", "source_uuid", "ts", "project_key"), r))
        e["item_id"] = memory_id(e["kind"], e["project_key"], e["content"])
        out.append(e)
    return out


def change_stamp(conn: sqlite.Connection) -> int:
    """A number that changes whenever another connection commits to the index (an index run, a
    memory action): `PRAGMA data_version` of a connection kept open by the caller."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])
