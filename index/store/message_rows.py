"""The message rows a worker builds for the writer: each message's fields, its packed body and its FTS
fields (text and identifier parts), ready for SQL (index/store/writer.py writes them)."""

from __future__ import annotations

from typing import Any

from index.store.idents import identifier_parts
from index.store.textstore import pack
from lib.model import Message


def fts_fields(text: str, memo: dict[bytes, tuple[str, ...]]) -> tuple[bytes, str, str]:
    """(packed body, FTS text, FTS identifier parts) for one message; runs in the worker. `memo`:
    one file's identifier parts by word (`identifier_parts`)."""
    return pack(text), text, identifier_parts(text, memo)


def message_rows(messages: list[Message], bodies: tuple[bytes, ...]) -> list[tuple[Any, ...]]:
    """Messages as rows of `messages` with their packed bodies (without their file id, which the writer
    knows); in the worker. One comprehension, no call per row (`attrgetter` was slower: the bytecode's
    attribute reads are specialised for slots); the flags stay bools, which SQLite stores as 0 / 1."""
    return [
        (
            m.uuid,
            m.session_id,
            m.parent_uuid,
            m.role,
            m.kind,
            m.ts,
            body,
            m.agent_id,
            m.is_sidechain,
            m.tool_name,
            m.tool_use_id,
            m.tool_target,
            m.is_error,
            m.message_id,
            m.model,
            m.byte_offset,
            m.agent,
        )
        for m, body in zip(messages, bodies, strict=True)
    ]


# Positions in a `message_rows` row that the writer reads.
PARENT, KIND, TOOL_NAME, TOOL_USE_ID = 2, 4, 9, 10
