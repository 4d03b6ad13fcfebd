"""The message rows a worker builds for the writer: each message's fields, its packed body and its FTS
fields (text and identifier parts), ready for SQL (index/store/writer.py writes them)."""

from __future__ import annotations

from itertools import repeat
from typing import Any

from index.store.idents import utf8_parts
from index.store.textstore import pack_utf8
from lib.model import Message


def fts_columns(messages: list[Message]) -> tuple[tuple[bytes, ...], tuple[str, ...], tuple[str, ...]]:
    """(packed bodies, FTS texts, FTS identifier parts) of `messages`, in their order (a uuid seen twice:
    its last text in both rows); runs in the worker. One `map` per column, no call or pair per message;
    each text encoded once for both; `memo` keeps one file's identifier parts by word (`identifier_parts`)."""
    texts = [m.text for m in messages]
    uuids = [m.uuid for m in messages]
    if len(set(uuids)) != len(uuids):
        last = dict(zip(uuids, texts))
        texts = [last[u] for u in uuids]
    data = [t.encode("utf-8", "replace") for t in texts]  # once for both
    memo: dict[bytes, tuple[str, ...]] = {}
    return tuple(map(pack_utf8, data)), tuple(texts), tuple(map(utf8_parts, data, repeat(memo)))


def message_rows(
    messages: list[Message], bodies: tuple[bytes, ...], same: dict[Any, Any]
) -> list[tuple[Any, ...]]:
    """Messages as rows of `messages` with their packed bodies (without their file id, which the writer
    knows); in the worker. One comprehension, no call per row (`attrgetter` was slower: the bytecode's
    attribute reads are specialised for slots); the flags stay bools, which SQLite stores as 0 / 1.

    Equal ids and names are put in the rows as one object (`same`): the parser builds a new string for
    each record's session id, model, tool name, message id and parent, and the pickler writes (and the
    writer's unpickler builds) each object once, so a repeat costs a reference instead of a string.
    `same` holds them for the chunk's other rows (aliases, turns, extractions) too."""
    put = same.setdefault
    return [
        (
            put(m.uuid, m.uuid),
            put(m.session_id, m.session_id),
            put(m.parent_uuid, m.parent_uuid),
            m.role,
            m.kind,
            m.ts,
            body,
            put(m.agent_id, m.agent_id),
            m.is_sidechain,
            put(m.tool_name, m.tool_name),
            put(m.tool_use_id, m.tool_use_id),
            m.tool_target,
            m.is_error,
            put(m.message_id, m.message_id),
            put(m.model, m.model),
            m.byte_offset,
            m.agent,
        )
        for m, body in zip(messages, bodies, strict=True)
    ]


# Positions in a `message_rows` row that the writer reads.
PARENT, KIND, TOOL_NAME, TOOL_USE_ID = 2, 4, 9, 10
