"""The single writer: applies one parsed file chunk (rows + cursor) in one transaction (I4)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

import orjson

from index.branches import update_main_branch
from index.idents import identifier_parts
from lib.model import FileChunk, Message
from lib.project import project_key


@dataclass(slots=True)
class Prepared:
    """A chunk plus what the worker derived from it (extraction rows), ready to write."""

    chunk: FileChunk
    root: str
    project_dir: str
    layout: str
    size: int
    mtime_ns: int
    inode: int
    head_hash: str
    reset: bool  # the file was truncated/rewritten/rotated: drop its rows first
    extractions: list[tuple[Any, ...]] = field(default_factory=list)


def _msg_row(m: Message, path: str) -> tuple[Any, ...]:
    return (m.uuid, m.session_id, m.parent_uuid, m.role, m.kind, m.ts, m.text, identifier_parts(m.text),
            m.agent_id, int(m.is_sidechain), m.tool_name, m.tool_use_id, m.tool_target, int(m.is_error),
            m.message_id, m.model, m.cwd, path, m.byte_offset)


def delete_file_rows(conn: sqlite3.Connection, path: str) -> None:
    """Forget every row that came from `path` (before re-reading it from the start)."""
    conn.execute("""INSERT INTO messages_fts(messages_fts, rowid, text, idents)
                    SELECT 'delete', id, text, idents FROM messages WHERE source_file=?""", (path,))
    conn.execute("DELETE FROM messages WHERE source_file=?", (path,))
    conn.execute("""INSERT INTO extractions_fts(extractions_fts, rowid, content, context)
                    SELECT 'delete', id, content, context FROM extractions WHERE source_file=?""", (path,))
    conn.execute("DELETE FROM extractions WHERE source_file=?", (path,))
    for table in ("aliases", "turns", "turn_durations", "compactions", "summaries", "task_spawns", "agents"):
        conn.execute(f"DELETE FROM {table} WHERE source_file=?", (path,))


def resolve_parent(conn: sqlite3.Connection, parent: str | None, fallback: str | None) -> str | None:
    """Follow skipped nodes (aliases) until a stored message; dangling bridges use the fallback."""
    p = parent
    for _ in range(10000):
        if p is None:
            return None
        if conn.execute("SELECT 1 FROM messages WHERE uuid=?", (p,)).fetchone():
            return p
        row = conn.execute("SELECT parent_uuid FROM aliases WHERE uuid=?", (p,)).fetchone()
        if row is None:
            break
        p = row[0]
    if fallback is not None and fallback != parent:
        return resolve_parent(conn, fallback, None)
    return p


def write_chunk(conn: sqlite3.Connection, prep: Prepared) -> tuple[int, int]:
    """Write rows and advance the cursor atomically. Returns (messages_added, extractions_added)."""
    c = prep.chunk
    path = c.path
    conn.execute("BEGIN IMMEDIATE")
    try:
        if prep.reset:
            delete_file_rows(conn, path)
        if c.aliases:
            conn.executemany("INSERT OR IGNORE INTO aliases VALUES(?,?,?,?)",
                             [(a.uuid, a.parent_uuid, a.session_id, path) for a in c.aliases])
        for m in c.messages:
            if m.parent_external:
                m.parent_uuid = resolve_parent(conn, m.parent_uuid, m.fallback_parent)
        last = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
        conn.executemany(
            """INSERT OR IGNORE INTO messages(uuid, session_id, parent_uuid, role, kind, ts, text, idents,
               agent_id, is_sidechain, tool_name, tool_use_id, tool_target, is_error, message_id, model, cwd,
               source_file, byte_offset) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
            [_msg_row(m, path) for m in c.messages])
        added = conn.execute("""INSERT INTO messages_fts(rowid, text, idents)
                                SELECT id, text, idents FROM messages WHERE id > ?""", (last,)).rowcount
        ext_added = write_extractions(conn, prep.extractions, path)
        _write_metrics(conn, c, path)
        _write_sessions(conn, c, path, prep.layout)
        _update_main_branch(conn, c, last)
        conn.execute(
            """INSERT INTO ingest_state(path, root, project_dir, layout, size, mtime_ns, inode, offset, head_hash,
               carry, missing, records, lines, bad_lines, indexed_at)
               VALUES(?,?,?,?,?,?,?,?,?,?,0,?,?,?,strftime('%Y-%m-%dT%H:%M:%fZ','now'))
               ON CONFLICT(path) DO UPDATE SET root=excluded.root, project_dir=excluded.project_dir,
               layout=excluded.layout, size=excluded.size, mtime_ns=excluded.mtime_ns, inode=excluded.inode,
               offset=excluded.offset, head_hash=excluded.head_hash, carry=excluded.carry, missing=0,
               records=CASE WHEN ? THEN excluded.records ELSE ingest_state.records + excluded.records END,
               lines=CASE WHEN ? THEN excluded.lines ELSE ingest_state.lines + excluded.lines END,
               bad_lines=CASE WHEN ? THEN excluded.bad_lines ELSE ingest_state.bad_lines + excluded.bad_lines END,
               indexed_at=excluded.indexed_at""",
            (path, prep.root, prep.project_dir, prep.layout, prep.size, prep.mtime_ns, prep.inode, c.end,
             prep.head_hash, orjson.dumps(c.carry.to_json()).decode(), c.records, c.lines,
             sum(c.bad_lines.values()), prep.reset, prep.reset, prep.reset))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return max(added, 0), ext_added


def write_extractions(conn: sqlite3.Connection, rows: list[tuple[Any, ...]], path: str) -> int:
    """rows: (kind, content, context_json, score, session_id, source_uuid, ordinal, cwd, project_key, ts, scope)."""
    if not rows:
        return 0
    last = conn.execute("SELECT coalesce(max(id), 0) FROM extractions").fetchone()[0]
    conn.executemany(
        """INSERT OR IGNORE INTO extractions(kind, content, context, score, session_id, source_uuid, ordinal,
           cwd, project_key, ts, scope, source_file) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)""",
        [r + (path,) for r in rows])
    n: int = conn.execute("""INSERT INTO extractions_fts(rowid, content, context)
                             SELECT id, content, context FROM extractions WHERE id > ?""", (last,)).rowcount
    return max(n, 0)


def _write_metrics(conn: sqlite3.Connection, c: FileChunk, path: str) -> None:
    if c.turns:
        conn.executemany(
            """INSERT INTO turns(message_id, request_id, session_id, uuid, ts, model, input_tokens, output_tokens,
               cache_creation_tokens, cache_5m_tokens, cache_1h_tokens, cache_read_tokens, web_search_requests,
               is_sidechain, agent_id, source_file) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
               ON CONFLICT(message_id, request_id) DO UPDATE SET
               uuid=excluded.uuid, ts=excluded.ts, input_tokens=excluded.input_tokens,
               output_tokens=excluded.output_tokens, cache_creation_tokens=excluded.cache_creation_tokens,
               cache_5m_tokens=excluded.cache_5m_tokens, cache_1h_tokens=excluded.cache_1h_tokens,
               cache_read_tokens=excluded.cache_read_tokens, web_search_requests=excluded.web_search_requests
               WHERE excluded.output_tokens + excluded.input_tokens + excluded.cache_read_tokens
                     + excluded.cache_creation_tokens
                   >= turns.output_tokens + turns.input_tokens + turns.cache_read_tokens + turns.cache_creation_tokens""",
            [(t.message_id, t.request_id, t.session_id, t.uuid, t.ts, t.model, t.input_tokens, t.output_tokens,
              t.cache_creation_tokens, t.cache_5m_tokens, t.cache_1h_tokens, t.cache_read_tokens,
              t.web_search_requests, int(t.is_sidechain), t.agent_id, path) for t in c.turns])
    if c.durations:
        conn.executemany("INSERT OR IGNORE INTO turn_durations VALUES(?,?,?,?,?,?)",
                         [(d.uuid, d.session_id, d.parent_uuid, d.duration_ms, d.ts, path) for d in c.durations])
    if c.compactions:
        conn.executemany("INSERT OR IGNORE INTO compactions VALUES(?,?,?,?,?,?,?,?,?)",
                         [(x.uuid, x.session_id, x.ts, x.kind, x.trigger, x.pre_tokens, x.tokens_saved,
                           x.logical_parent_uuid, path) for x in c.compactions])
    if c.summaries:
        conn.executemany("INSERT OR IGNORE INTO summaries VALUES(?,?,?)", [(a, b, path) for a, b in c.summaries])
    if c.spawns:
        conn.executemany(
            """INSERT INTO task_spawns VALUES(?,?,?,?,?,?,?,?) ON CONFLICT(tool_use_id) DO UPDATE SET
               agent_id=coalesce(excluded.agent_id, task_spawns.agent_id),
               subagent_type=coalesce(task_spawns.subagent_type, excluded.subagent_type),
               prompt_key=coalesce(task_spawns.prompt_key, excluded.prompt_key)""",
            [(s.tool_use_id, s.session_id, s.uuid, s.subagent_type, s.description, s.prompt_key, s.agent_id, path)
             for s in c.spawns])
    if c.agents:
        conn.executemany(
            """INSERT OR IGNORE INTO agents(agent_id, session_id, layout, source_file, is_compaction_helper,
               first_ts, prompt_key, subagent_type) VALUES(?,?,?,?,?,?,?,?)""",
            [(a.agent_id, a.session_id, a.layout, path, int(a.is_compaction_helper), a.first_ts, a.prompt_key,
              a.subagent_type) for a in c.agents])


def _write_sessions(conn: sqlite3.Connection, c: FileChunk, path: str, layout: str) -> None:
    for d in c.sessions.values():
        pkey = project_key(d.cwd)
        conn.execute(
            """INSERT INTO sessions(session_id, project_key, cwd, git_branch, first_prompt, first_ts, last_ts,
               version, models, resumed_from, source_file, title, title_source)
               VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)
               ON CONFLICT(session_id) DO UPDATE SET
               project_key=CASE WHEN excluded.cwd IS NOT NULL AND (sessions.cwd IS NULL OR ?=0)
                                THEN excluded.project_key ELSE sessions.project_key END,
               cwd=CASE WHEN excluded.cwd IS NOT NULL AND (sessions.cwd IS NULL OR ?=0)
                        THEN excluded.cwd ELSE sessions.cwd END,
               git_branch=coalesce(excluded.git_branch, sessions.git_branch),
               first_prompt=coalesce(sessions.first_prompt, excluded.first_prompt),
               first_ts=min(coalesce(sessions.first_ts, excluded.first_ts), coalesce(excluded.first_ts, sessions.first_ts)),
               last_ts=max(coalesce(sessions.last_ts, excluded.last_ts), coalesce(excluded.last_ts, sessions.last_ts)),
               version=coalesce(excluded.version, sessions.version),
               models=CASE WHEN excluded.models = '' THEN sessions.models
                           WHEN sessions.models IS NULL OR sessions.models = '' THEN excluded.models
                           ELSE sessions.models || ',' || excluded.models END,
               resumed_from=coalesce(sessions.resumed_from, excluded.resumed_from),
               source_file=CASE WHEN ?='main' THEN coalesce(sessions.source_file, excluded.source_file)
                                ELSE sessions.source_file END,
               title=CASE WHEN excluded.title_source='custom' OR (excluded.title_source='ai'
                          AND coalesce(sessions.title_source,'') NOT IN ('custom','summary'))
                          THEN excluded.title ELSE sessions.title END,
               title_source=CASE WHEN excluded.title_source='custom' OR (excluded.title_source='ai'
                          AND coalesce(sessions.title_source,'') NOT IN ('custom','summary'))
                          THEN excluded.title_source ELSE sessions.title_source END""",
            (d.session_id, pkey, d.cwd, d.git_branch, d.first_prompt, d.first_ts, d.last_ts, d.version,
             ",".join(sorted(d.models)), d.resumed_from, path if layout == "main" else None,
             d.titles.get("custom") or d.titles.get("ai"),
             "custom" if "custom" in d.titles else ("ai" if "ai" in d.titles else None),
             int(d.is_agent_only), int(d.is_agent_only), layout))
    for sid in c.sessions:
        conn.execute(
            """UPDATE sessions SET
               n_messages=(SELECT count(*) FROM messages WHERE session_id=?1),
               n_prompts=(SELECT count(*) FROM messages WHERE session_id=?1 AND kind='prompt'),
               n_tool_calls=(SELECT count(*) FROM messages WHERE session_id=?1 AND kind='tool_use'),
               n_compactions=(SELECT count(*) FROM compactions WHERE session_id=?1 AND kind='compact')
               WHERE session_id=?1""", (sid,))


def _update_main_branch(conn: sqlite3.Connection, c: FileChunk, last_id: int) -> None:
    """Mark the live branch (the one holding the newest leaf) for each touched session (W6)."""
    for sid in c.sessions:
        update_main_branch(conn, sid)
