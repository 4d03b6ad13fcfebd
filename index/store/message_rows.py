"""The message rows a worker builds for the writer: each message's fields, its packed body and its FTS
fields (text and identifier parts), ready for SQL (index/store/writer.py writes them)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain, repeat
from operator import attrgetter
from typing import Any

from index.store.idents import utf8_parts
from index.store.textstore import pack_utf8
from lib.model import FileChunk, Message

Share = Callable[[Any, Any], Any]  # share(value, value): the chunk's one object equal to value


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


def sharer(chunk: FileChunk) -> Share:
    """The chunk's `Share`: `setdefault` of a new dict, which keeps the first object of each value, when
    every id and name field it will be given holds a str or None (the readers' rows always do; checked in
    C, once per chunk); else one that keeps every value as it is, so a damaged record's unhashable value
    reaches the writer as before."""
    fields = chain(
        chain.from_iterable(map(_MESSAGE_IDS, chunk.messages)),
        chain.from_iterable(map(_TURN_IDS, chunk.turns)),
        chain.from_iterable(map(_ALIAS_IDS, chunk.aliases)),
    )
    if set(map(type, fields)) <= _PLAIN:
        same: dict[Any, Any] = {}
        return same.setdefault
    return _kept


def _kept(value: Any, _: Any) -> Any:
    return value


_MESSAGE_IDS = attrgetter(
    "uuid", "session_id", "parent_uuid", "agent_id", "tool_name", "tool_use_id", "message_id", "model"
)
_TURN_IDS = attrgetter("message_id", "session_id", "uuid", "model", "agent_id")
_ALIAS_IDS = attrgetter("uuid", "parent_uuid")
_PLAIN = {str, type(None)}


def message_rows(messages: list[Message], bodies: tuple[bytes, ...], put: Share) -> list[tuple[Any, ...]]:
    """Messages as rows of `messages` with their packed bodies (without their file id, which the writer
    knows); in the worker. One comprehension, no call per row (`attrgetter` was slower: the bytecode's
    attribute reads are specialised for slots); the flags stay bools, which SQLite stores as 0 / 1.

    Equal ids and names are put in the rows as one object (`put`, the chunk's `sharer`): the parser
    builds a new string for each record's session id, model, tool name, message id and parent, and the
    pickler writes (and the writer's unpickler builds) each object once, so a repeat costs a reference
    instead of a string. The chunk's other rows (aliases, turns, extractions) share the same objects."""
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
