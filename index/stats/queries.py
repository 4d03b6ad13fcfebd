"""Read-side queries shared by the CLI, hooks and MCP server (status, inspect, doctor)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from index.store.extractor_stamp import extractors_state
from index.store.filters import MAX_KEY_CHARS, Filters
from index.store.plugins import vectors
from index.store.schema import SCHEMA_VERSION, current_version
from index.store.skips import skipped_files
from index.store.textstore import unpack
from lib import sqlite
from lib.discovery import key_path
from lib.model import EDIT_TOOLS


def status(conn: sqlite.Connection, db: Path) -> dict[str, Any]:

    def one(sql: str) -> Any:
        return conn.execute(sql).fetchone()[0]

    last = conn.execute("""SELECT started_at, elapsed_s, mode, files, records, messages_added, bad_lines
                           FROM ingest_runs ORDER BY id DESC LIMIT 1""").fetchone()
    kinds = dict(conn.execute("SELECT kind, count(*) FROM extractions GROUP BY kind").fetchall())
    size = sum(p.stat().st_size for p in (db, Path(str(db) + "-wal")) if p.exists())
    return {
        "db": str(db),
        "schema_version": current_version(conn),
        "db_bytes": size,
        "sessions": one("SELECT count(*) FROM sessions"),
        "sessions_by_agent": dict(
            conn.execute("SELECT agent, count(*) FROM sessions GROUP BY agent").fetchall()
        ),
        "projects": one("SELECT count(DISTINCT project_key) FROM sessions"),
        "messages": one("SELECT count(*) FROM messages"),
        "prompts": one("SELECT count(*) FROM messages WHERE kind='prompt'"),
        "extractions": sum(kinds.values()),
        "extractions_by_kind": kinds,
        "subagents": one("SELECT count(*) FROM agents"),
        "turns": one("SELECT count(*) FROM turns"),
        "compactions": one("SELECT count(*) FROM compactions"),
        "files": one("SELECT count(*) FROM ingest_state"),
        "files_missing": one("SELECT count(*) FROM ingest_state WHERE missing=1"),
        "raw_bytes": one("SELECT coalesce(sum(size), 0) FROM ingest_state"),
        "bad_lines": one("SELECT coalesce(sum(bad_lines), 0) FROM ingest_state"),
        "skipped_files": skipped_files(conn),  # their parser failed twice: unread until they change
        "first_ts": one("SELECT min(first_ts) FROM sessions"),
        "last_ts": one("SELECT max(last_ts) FROM sessions"),
        "vectors": _describe_vectors(conn),
        "extractors": extractors_state(conn),  # an upgrade's extractors vs the ones the index was made with
        "last_run": None
        if last is None
        else {
            "at": last[0],
            "elapsed_s": last[1],
            "mode": last[2],
            "files": last[3],
            "records": last[4],
            "messages_added": last[5],
        },
    }


def _describe_vectors(conn: sqlite.Connection) -> dict[str, Any]:
    """The vector store as the registered plugin sees it (none registered: no store to describe)."""
    plugin = vectors()
    return {"exists": False} if plugin is None else plugin.describe(conn)


def find_session(conn: sqlite.Connection, prefix: str) -> str | None:
    if len(prefix) > MAX_KEY_CHARS:
        return None
    rows = conn.execute(
        "SELECT session_id FROM sessions WHERE session_id LIKE ? LIMIT 2", (prefix + "%",)
    ).fetchall()
    return rows[0][0] if len(rows) == 1 else None


def inspect_session(
    conn: sqlite.Connection, session_id: str, messages: int | None = 40, chars: int | None = 300
) -> dict[str, Any] | None:
    """Everything stored about one session: `messages` conversation messages (None: all), each text
    cut at `chars` (None: whole); `conversation_messages` says how many there are in all."""
    cols = [d[1] for d in conn.execute("PRAGMA table_info(sessions)")]
    row = conn.execute("SELECT * FROM sessions WHERE session_id=?", (session_id,)).fetchone()
    if row is None:
        return None
    out: dict[str, Any] = dict(zip(cols, row))
    out["source_file"] = (
        conn.execute("SELECT path FROM ingest_state WHERE id=?", (out.pop("file_id"),)).fetchone() or (None,)
    )[0]
    out["agents"] = [
        dict(
            zip(
                (
                    "agent_id",
                    "layout",
                    "subagent_type",
                    "description",
                    "spawn_tool_use_id",
                    "spawn_uuid",
                    "is_compaction_helper",
                    "source_file",
                ),
                r,
            )
        )
        for r in conn.execute(
            """SELECT a.agent_id, a.layout, a.subagent_type, a.description, a.spawn_tool_use_id, a.spawn_uuid,
                  a.is_compaction_helper, f.path FROM agents a LEFT JOIN ingest_state f ON f.id = a.file_id
           WHERE a.session_id=? ORDER BY a.first_ts""",
            (session_id,),
        )
    ]
    out["compactions"] = [
        dict(zip(("uuid", "ts", "kind", "trigger", "pre_tokens"), r))
        for r in conn.execute(
            "SELECT uuid, ts, kind, trigger, pre_tokens FROM compactions WHERE session_id=? ORDER BY ts",
            (session_id,),
        )
    ]
    out["resumed_by"] = [
        r[0] for r in conn.execute("SELECT session_id FROM sessions WHERE resumed_from=?", (session_id,))
    ]
    out["kinds"] = dict(
        conn.execute(
            "SELECT kind, count(*) FROM messages WHERE session_id=? GROUP BY kind", (session_id,)
        ).fetchall()
    )
    out["tools"] = dict(
        conn.execute(
            """SELECT tool_name, count(*) FROM messages WHERE session_id=? AND kind='tool_use'
               AND tool_name IS NOT NULL GROUP BY tool_name ORDER BY count(*) DESC, tool_name""",
            (session_id,),
        ).fetchall()
    )
    out["files_edited"] = dict(
        conn.execute(
            f"""SELECT tool_target, count(*) FROM messages WHERE session_id=? AND kind='tool_use'
                AND tool_name IN ({",".join("?" * len(EDIT_TOOLS))}) AND tool_target IS NOT NULL
                GROUP BY tool_target ORDER BY min(id)""",
            (session_id, *EDIT_TOOLS),
        ).fetchall()
    )
    out["off_main_branch"] = conn.execute(
        "SELECT count(*) FROM messages WHERE session_id=? AND on_main=0", (session_id,)
    ).fetchone()[0]
    out["files"] = [
        r[0]
        for r in conn.execute(
            """SELECT path FROM ingest_state WHERE id IN (SELECT DISTINCT file_id FROM messages WHERE session_id=?)""",
            (session_id,),
        )
    ]
    out["extractions"] = [
        dict(zip(("kind", "content", "ts", "source_uuid"), r))
        for r in conn.execute(
            "SELECT kind, content, ts, source_uuid FROM extractions WHERE session_id=? ORDER BY ts LIMIT 50",
            (session_id,),
        )
    ]
    talk = "session_id=? AND kind IN ('prompt','text','compact_boundary','away_summary')"
    out["conversation_messages"] = conn.execute(
        f"SELECT count(*) FROM messages WHERE {talk}", (session_id,)
    ).fetchone()[0]
    out["messages"] = [
        dict(
            zip(
                ("uuid", "parent_uuid", "ts", "role", "kind", "agent_id", "on_main", "text"),
                (*r[:7], unpack(r[7])[:chars]),
            )
        )
        for r in conn.execute(
            f"""SELECT uuid, parent_uuid, ts, role, kind, agent_id, on_main, body FROM messages
                WHERE {talk} ORDER BY id LIMIT ?""",
            (session_id, -1 if messages is None else messages),
        )
    ]
    return out


def recent_sessions(
    conn: sqlite.Connection, where: Filters, since: str | None, text: str | None, limit: int
) -> list[dict[str, Any]]:
    """The most recent sessions (by last activity) matching project/cwd filters, activity since `since`
    and `text` in the title or first prompt; with the transcript's size."""
    cond, args = where.sql(m="s", s="s")
    extra = [
        c for c, on in (("s.last_ts >= ?", since), ("(s.title LIKE ? OR s.first_prompt LIKE ?)", text)) if on
    ]
    args += [a for a in (since,) if a] + ([f"%{text}%"] * 2 if text else [])
    sql_where = " AND ".join([c for c in [cond, *extra] if c]) or "1"
    cols = ("session_id", "project", "cwd", "title", "first_ts", "last_ts", "messages", "prompts", "bytes")
    return [
        dict(zip(cols, r))
        for r in conn.execute(
            f"""SELECT s.session_id, s.project_key, s.cwd, coalesce(s.title, s.first_prompt), s.first_ts,
                       s.last_ts, s.n_messages, s.n_prompts, f.size
                FROM sessions s LEFT JOIN ingest_state f ON f.id = s.file_id
                WHERE {sql_where} ORDER BY s.last_ts DESC LIMIT ?""",
            (*args, limit),
        )
    ]


def doctor(conn: sqlite.Connection) -> list[tuple[str, bool, str]]:
    """(check, ok, detail) rows."""
    checks: list[tuple[str, bool, str]] = []
    ver = current_version(conn)
    checks.append(("schema version", ver == SCHEMA_VERSION, f"{ver} (expected {SCHEMA_VERSION})"))
    res = conn.execute("PRAGMA quick_check").fetchone()[0]
    checks.append(("sqlite integrity", res == "ok", res))
    for fts in ("messages_fts", "extractions_fts"):
        try:
            conn.execute(f"INSERT INTO {fts}({fts}, rank) VALUES('integrity-check', 1)")
            checks.append((f"{fts} integrity", True, "ok"))
        except sqlite.DatabaseError as exc:
            checks.append((f"{fts} integrity", False, str(exc)))
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    checks.append(("journal mode", mode == "wal", mode))
    n, missing = conn.execute("SELECT count(*), coalesce(sum(missing), 0) FROM ingest_state").fetchone()
    checks.append(("transcripts tracked", True, f"{n} files, {missing} missing on disk (memory kept)"))
    gone = [
        p
        for (p,) in conn.execute("SELECT path FROM ingest_state WHERE missing=0 LIMIT 5000")
        if not os.path.exists(key_path(p))
    ]
    checks.append(("sources on disk", not gone, f"{len(gone)} vanished since last index" if gone else "ok"))
    return checks


def has_messages(conn: sqlite.Connection) -> bool:
    return conn.execute("SELECT 1 FROM messages LIMIT 1").fetchone() is not None
