"""The `sessions` rows of a chunk and the main branch of each session it touched (split from the
writer; called inside `write_chunk`'s transaction)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from index.store.branch_rows import KnownRows
from index.store.branches import update_main_branch
from lib import sqlite
from lib.discovery import key_path
from lib.model import FileChunk
from lib.project import project_key


def copy_rank(path: str, session_id: str) -> tuple[int, str]:
    """Which copy of a record is kept: its session's own file first, then the first path."""
    return (0 if os.path.basename(key_path(path)) == f"{session_id}.jsonl" else 1, path)


def write_sessions(conn: sqlite.Connection, c: FileChunk, fid: int, layout: str) -> None:
    for d in c.sessions.values():
        pkey = project_key(d.cwd)
        row = conn.execute(
            """SELECT s.models, s.file_id, f.path FROM sessions s LEFT JOIN ingest_state f
                              ON f.id = s.file_id WHERE s.session_id=?""",
            (d.session_id,),
        ).fetchone()
        # models: a set, whatever the number of files and runs that mention the session
        models = set(d.models) | (set(row[0].split(",")) if row and row[0] else set())
        # the session's file: of the main files that hold it, the one that ranks first (its own)
        session_file = row[1] if row else None
        if layout == "main" and (
            not row or row[2] is None or copy_rank(c.path, d.session_id) <= copy_rank(row[2], d.session_id)
        ):
            session_file = fid
        # the session's file speaks last for what can change along it (cwd, branch, version); other
        # files (resume copies, subagents) only fill what is unknown, whatever order they come in
        primary = session_file == fid
        conn.execute(
            """INSERT INTO sessions(session_id, project_key, cwd, git_branch, first_prompt, first_ts, last_ts,
               version, models, resumed_from, file_id, title, title_source, agent)
               VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?16)
               ON CONFLICT(session_id) DO UPDATE SET
               project_key=CASE WHEN excluded.cwd IS NOT NULL AND (sessions.cwd IS NULL OR ?14)
                                THEN excluded.project_key ELSE sessions.project_key END,
               cwd=CASE WHEN excluded.cwd IS NOT NULL AND (sessions.cwd IS NULL OR ?14)
                        THEN excluded.cwd ELSE sessions.cwd END,
               git_branch=CASE WHEN ?15 THEN coalesce(excluded.git_branch, sessions.git_branch)
                               ELSE coalesce(sessions.git_branch, excluded.git_branch) END,
               first_prompt=coalesce(sessions.first_prompt, excluded.first_prompt),
               first_ts=min(coalesce(sessions.first_ts, excluded.first_ts), coalesce(excluded.first_ts, sessions.first_ts)),
               last_ts=max(coalesce(sessions.last_ts, excluded.last_ts), coalesce(excluded.last_ts, sessions.last_ts)),
               version=CASE WHEN ?15 THEN coalesce(excluded.version, sessions.version)
                            ELSE coalesce(sessions.version, excluded.version) END,
               models=CASE WHEN excluded.models = '' THEN sessions.models ELSE excluded.models END,
               resumed_from=coalesce(sessions.resumed_from, excluded.resumed_from),
               file_id=excluded.file_id,
               title=CASE WHEN excluded.title_source='custom' OR (excluded.title_source='ai'
                          AND coalesce(sessions.title_source,'') NOT IN ('custom','summary'))
                          THEN excluded.title ELSE sessions.title END,
               title_source=CASE WHEN excluded.title_source='custom' OR (excluded.title_source='ai'
                          AND coalesce(sessions.title_source,'') NOT IN ('custom','summary'))
                          THEN excluded.title_source ELSE sessions.title_source END""",
            (
                d.session_id,
                pkey,
                d.cwd,
                d.git_branch,
                d.first_prompt,
                d.first_ts,
                d.last_ts,
                d.version,
                ",".join(sorted(models)),
                d.resumed_from,
                session_file,
                d.titles.get("custom") or d.titles.get("ai"),
                "custom" if "custom" in d.titles else ("ai" if "ai" in d.titles else None),
                int(primary and not d.is_agent_only),
                int(primary),
                d.agent,
            ),
        )


def count_sessions(conn: sqlite.Connection, session_ids: Iterable[str]) -> None:
    """Recount the messages, prompts, tool calls and compactions of the sessions a chunk touched."""
    for sid in session_ids:
        conn.execute(
            """UPDATE sessions SET
               (n_messages, n_prompts, n_tool_calls) = (SELECT count(*), count(*) FILTER (WHERE kind='prompt'),
                   count(*) FILTER (WHERE kind='tool_use') FROM messages WHERE session_id=?1),
               n_compactions=(SELECT count(*) FROM compactions WHERE session_id=?1 AND kind='compact')
               WHERE session_id=?1""",
            (sid,),
        )


def update_main_branches(
    conn: sqlite.Connection, session_ids: Iterable[str], known: KnownRows | None = None
) -> None:
    """Mark the live branch (the one holding the newest leaf) for each touched session (W6); from the
    rows the batch `known`s where it has them all."""
    for sid in session_ids:
        update_main_branch(conn, sid, None if known is None else known.rows(sid))
