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


def message_rows(messages: list[Message], bodies: tuple[bytes, ...]) -> list[tuple[Any, ...]]:
    """Messages as rows of `messages` with their packed bodies (without their file id, which the writer
    knows); in the worker. One comprehension, no call per row (`attrgetter` was slower: the bytecode's
    attribute reads are specialised for slots); the flags go as the ints 0 / 1 SQLite stores for them:
    the DB-API modules bind only exact ints directly, a bool goes through their adapters (a key tuple, a
    table look-up and a call: ≈ 0.13 µs each, two per row, in the writer).

    A row repeats the previous row's session id and model, and its parent is usually the previous
    message: those are put in as the previous row's objects (`sid`, `model`, `prev`), so the pickler
    writes each string once and the writer's unpickler builds it once instead of once per row (the
    parser makes a new string per record). Equal strings only: the rows compare equal either way. A
    comparison with the previous row costs less than a dict of every value (`setdefault` per field
    cost the parser more than it saved the pickling and the writer)."""
    sid = model = None
    prevs = [None, *[m.uuid for m in messages]][: len(messages)]  # each message's previous one
    return [
        (
            m.uuid,
            (sid := sid if m.session_id == sid else m.session_id),
            prev if m.parent_uuid == prev else m.parent_uuid,
            m.role,
            m.kind,
            m.ts,
            body,
            m.agent_id,
            1 if m.is_sidechain else 0,
            m.tool_name,
            m.tool_use_id,
            m.tool_target,
            1 if m.is_error else 0,
            m.message_id,
            (model := model if m.model == model else m.model),
            m.byte_offset,
            m.agent,
        )
        for m, body, prev in zip(messages, bodies, prevs, strict=True)
    ]


# Positions in a `message_rows` row that the writer reads.
PARENT, KIND, SIDECHAIN, TOOL_NAME, TOOL_USE_ID, MESSAGE_ID = 2, 4, 8, 9, 10, 13
