"""The per-record tables of a chunk (usage, durations, compactions, summaries, spawns, agents), split
from the writer: rows keyed by record, not messages or sessions, and the names of the Task results the
spawns explain. Called inside `write_chunk`'s transaction."""

from __future__ import annotations

from typing import Any

import orjson

from index.store.message_rows import KIND, TOOL_NAME, TOOL_USE_ID
from lib import sqlite
from lib.model import FileChunk, Turn


def turn_rows(turns: list[Turn]) -> list[tuple[Any, ...]]:
    """Turns as rows of `turns` (without their file id); built in the worker, written by the writer.
    One comprehension, no call per turn; `is_sidechain` goes as the int SQLite stores (see `message_rows`).
    A repeat of the previous row's session id and model is put in as that row's object (pickled and
    unpickled once: see `message_rows`)."""
    sid = model = None
    return [
        (
            t.message_id,
            t.request_id,
            (sid := sid if t.session_id == sid else t.session_id),
            t.uuid,
            t.ts,
            (model := model if t.model == model else t.model),
            t.input_tokens,
            t.output_tokens,
            t.cache_creation_tokens,
            t.cache_5m_tokens,
            t.cache_1h_tokens,
            t.cache_read_tokens,
            t.web_search_requests,
            1 if t.is_sidechain else 0,
            t.agent_id,
        )
        for t in turns
    ]


def _billed(row: tuple[Any, ...]) -> int:
    """The tokens the upsert compares (input, output, cache read, cache creation)."""
    return int(row[6] + row[7] + row[11] + row[8])


def fold_turns(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The chunk's `turn_rows` with each API response once, as `write_record_rows`' upsert would
    leave it (an assistant message is written once per content block, each with the response's
    usage): the first row's identity (session, model, side chain, agent) with the uuid, time and
    usage of the last row billing the most. Built in the worker, so the repeats are neither pickled
    nor upserted one by one; the upsert still folds them into the turns stored already."""
    out: dict[tuple[str, str], tuple[Any, ...]] = {}
    for r in rows:
        key = (r[0], r[1])
        have = out.get(key)
        if have is None:
            out[key] = r
        elif _billed(r) >= _billed(have):
            out[key] = (*have[:3], r[3], r[4], have[5], *r[6:13], *have[13:])
    return list(out.values())


def write_record_rows(conn: sqlite.Connection, c: FileChunk, turns: list[tuple[Any, ...]], fid: int) -> None:
    """Insert the chunk's rows of the per-record tables (`turns`: its `turn_rows`); a turn seen again
    keeps its largest usage."""
    if turns:
        conn.executemany(
            """INSERT INTO turns(message_id, request_id, session_id, uuid, ts, model, input_tokens, output_tokens,
               cache_creation_tokens, cache_5m_tokens, cache_1h_tokens, cache_read_tokens, web_search_requests,
               is_sidechain, agent_id, file_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
               ON CONFLICT(message_id, request_id) DO UPDATE SET
               uuid=excluded.uuid, ts=excluded.ts, input_tokens=excluded.input_tokens,
               output_tokens=excluded.output_tokens, cache_creation_tokens=excluded.cache_creation_tokens,
               cache_5m_tokens=excluded.cache_5m_tokens, cache_1h_tokens=excluded.cache_1h_tokens,
               cache_read_tokens=excluded.cache_read_tokens, web_search_requests=excluded.web_search_requests
               WHERE excluded.output_tokens + excluded.input_tokens + excluded.cache_read_tokens
                     + excluded.cache_creation_tokens
                   >= turns.output_tokens + turns.input_tokens + turns.cache_read_tokens + turns.cache_creation_tokens""",
            [t + (fid,) for t in turns],
        )
    if c.durations:
        conn.executemany(
            """INSERT OR IGNORE INTO turn_durations(uuid, session_id, parent_uuid, duration_ms, ts,
                            file_id) VALUES(?,?,?,?,?,?)""",
            [(d.uuid, d.session_id, d.parent_uuid, d.duration_ms, d.ts, fid) for d in c.durations],
        )
    if c.compactions:
        conn.executemany(
            """INSERT OR IGNORE INTO compactions(uuid, session_id, ts, kind, trigger, pre_tokens,
                            tokens_saved, logical_parent_uuid, file_id) VALUES(?,?,?,?,?,?,?,?,?)""",
            [
                (
                    x.uuid,
                    x.session_id,
                    x.ts,
                    x.kind,
                    x.trigger,
                    x.pre_tokens,
                    x.tokens_saved,
                    x.logical_parent_uuid,
                    fid,
                )
                for x in c.compactions
            ],
        )
    if c.summaries:
        conn.executemany(
            "INSERT OR IGNORE INTO summaries(leaf_uuid, summary, file_id) VALUES(?,?,?)",
            [(a, b, fid) for a, b in c.summaries],
        )
    if c.spawns:
        conn.executemany(
            """INSERT INTO task_spawns(tool_use_id, session_id, uuid, subagent_type, description, prompt_key,
               agent_id, file_id) VALUES(?,?,?,?,?,?,?,?) ON CONFLICT(tool_use_id) DO UPDATE SET
               agent_id=coalesce(excluded.agent_id, task_spawns.agent_id),
               subagent_type=coalesce(task_spawns.subagent_type, excluded.subagent_type),
               prompt_key=coalesce(task_spawns.prompt_key, excluded.prompt_key)""",
            [
                (
                    s.tool_use_id,
                    s.session_id,
                    s.uuid,
                    s.subagent_type,
                    s.description,
                    s.prompt_key,
                    s.agent_id,
                    fid,
                )
                for s in c.spawns
            ],
        )
    if c.agents:
        conn.executemany(
            """INSERT OR IGNORE INTO agents(agent_id, session_id, layout, file_id, is_compaction_helper,
               first_ts, prompt_key, subagent_type) VALUES(?,?,?,?,?,?,?,?)""",
            [
                (
                    a.agent_id,
                    a.session_id,
                    a.layout,
                    fid,
                    int(a.is_compaction_helper),
                    a.first_ts,
                    a.prompt_key,
                    a.subagent_type,
                )
                for a in c.agents
            ],
        )


def name_task_results(conn: sqlite.Connection, rows: list[tuple[Any, ...]]) -> None:
    """A Task call's result is named `Task` (as the walker names it within a chunk) also when the call
    was read in an earlier chunk or another file."""
    calls = [
        (r[TOOL_USE_ID], r[0])
        for r in rows
        if r[KIND] == "tool_result" and r[TOOL_NAME] is None and r[TOOL_USE_ID]
    ]
    if not calls:
        return
    # only the results of calls that spawned a task (few; probing the small task_spawns table first
    # spares reading every result row, whose columns lie past its body)
    spawned = {
        t
        for (t,) in conn.execute(
            "SELECT tool_use_id FROM task_spawns WHERE tool_use_id IN (SELECT value FROM json_each(?))",
            (orjson.dumps([t for t, _ in calls]).decode(),),
        )
    }
    ids = [u for t, u in calls if t in spawned]
    if ids:
        conn.execute(
            """UPDATE messages SET tool_name='Task' WHERE uuid IN (SELECT value FROM json_each(?))
                        AND tool_name IS NULL AND EXISTS(SELECT 1 FROM task_spawns t
                        WHERE t.tool_use_id = messages.tool_use_id AND t.uuid != messages.uuid)""",
            (orjson.dumps(ids).decode(),),
        )
