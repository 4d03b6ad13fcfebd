"""The record path reads each field once (speed pass, branch wt-rec5): what it replaced still holds.

`RecordState.record` used to call `note_session` for the session's metadata and `_base` (with
`_agent_for`, once more for a sidechain record) for each message's common fields, reading the same keys
again each time. Here those old steps, kept as they were, run beside the record path on random records
(any type, missing or mistyped fields, sidechains, compactions, every layout): the same session deltas,
the same common fields of every message, the same tree, for every record sequence.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from lib.content import tool_summary
from lib.model import Carry, FileChunk, FileInfo, Message, SessionDelta
from lib.records import RecordState

MISSING = object()  # a key the record does not have


def old_note_session(d: SessionDelta, rec: dict[str, Any]) -> None:
    """`session_meta.note_session` as it was."""
    ts = rec.get("timestamp")
    if isinstance(ts, str):
        if d.first_ts is None or ts < d.first_ts:
            d.first_ts = ts
        if d.last_ts is None or ts > d.last_ts:
            d.last_ts = ts
    if not rec.get("isSidechain"):
        cwd = rec.get("cwd")
        if isinstance(cwd, str) and cwd:
            d.cwd = cwd
        br = rec.get("gitBranch")
        if isinstance(br, str) and br:
            d.git_branch = br
    else:
        d.is_agent_only = d.cwd is None
        if d.cwd is None and isinstance(rec.get("cwd"), str):
            d.cwd = rec["cwd"]
    v = rec.get("version")
    if isinstance(v, str):
        d.version = v


def old_agent_for(
    inline: dict[str, str], info: FileInfo, rec: dict[str, Any], uuid: str, parent: str | None
) -> tuple[str | None, bool]:
    """`RecordState._agent_for` as it was."""
    side = bool(rec.get("isSidechain"))
    aid = rec.get("agentId") if isinstance(rec.get("agentId"), str) else None
    if info.layout != "main":
        return aid or info.agent_id, True
    if side and aid is None:
        aid = inline.get(parent or "") or ("inline-" + uuid[:8] if parent is None else None)
        if aid:
            inline[uuid] = aid
    return aid, side


def old_fields(
    inline: dict[str, str], info: FileInfo, rec: dict[str, Any], uuid: str, parent: str | None
) -> tuple[Any, ...]:
    """A message's common fields as `_base` made them."""
    aid, side = old_agent_for(inline, info, rec, uuid, parent)
    return (
        parent,
        rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None,
        rec.get("cwd") if isinstance(rec.get("cwd"), str) else None,
        rec.get("gitBranch") or None,
        aid,
        side,
        rec.get("version") if isinstance(rec.get("version"), str) else None,
    )


def expected(records: list[dict[str, Any]], info: FileInfo) -> tuple[dict[str, SessionDelta], dict[int, Any]]:
    """The session deltas and, per record offset, the common fields of the message it may become."""
    sessions: dict[str, SessionDelta] = {}
    inline: dict[str, str] = {}
    fields: dict[int, Any] = {}
    for offset, rec in enumerate(records):
        t = rec.get("type")
        uuid, sid = rec.get("uuid"), rec.get("sessionId")
        if t not in ("user", "assistant", "system", "progress", "attachment"):
            if t in ("custom-title", "ai-title") and isinstance(sid, str) and rec.get("customTitle"):
                sessions.setdefault(sid, SessionDelta(sid)).titles[
                    "custom" if t == "custom-title" else "ai"
                ] = rec["customTitle"]
            continue
        if not isinstance(uuid, str) or not isinstance(sid, str):
            continue
        parent = rec.get("parentUuid") if isinstance(rec.get("parentUuid"), str) else None
        if info.layout == "main" and rec.get("isSidechain"):
            old_agent_for(inline, info, rec, uuid, parent)
        if t in ("progress", "attachment"):
            continue
        old_note_session(sessions.setdefault(sid, SessionDelta(sid)), rec)
        if info.layout == "main" and sid != info.stem and info.agent == "claude":
            stem = sessions.setdefault(info.stem, SessionDelta(info.stem))
            stem.resumed_from = stem.resumed_from or sid
        if t == "system" and rec.get("subtype") == "compact_boundary":
            logical = rec.get("logicalParentUuid") if isinstance(rec.get("logicalParentUuid"), str) else None
            parent = parent or logical
        fields[offset] = old_fields(inline, info, rec, uuid, parent)
    return sessions, fields


def facts(sessions: dict[str, SessionDelta]) -> dict[str, tuple[Any, ...]]:
    return {
        sid: (
            d.first_ts,
            d.last_ts,
            d.cwd,
            d.git_branch,
            d.version,
            d.is_agent_only,
            d.resumed_from,
            d.titles,
        )
        for sid, d in sessions.items()
    }


def present(values: list[Any]) -> Any:
    return st.sampled_from([MISSING, *values])


RECORD = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["user", "assistant", "system", "progress", "attachment", "custom-title", "x", 3]
        ),
        "uuid": present(["u1", "u2", "u3", "u4", "u5", "u6", 9]),
        "sessionId": present(["s1", "s2", "stem"]),
        "parentUuid": present([None, "", "u1", "u2", "u3", "u9", 5]),
        "isSidechain": present([True, False, 1, 0, None]),
        "agentId": present(["a1", None, 7]),
        "timestamp": present(["2026-01-02", "2026-01-01", "2026-01-03", None, 5]),
        "cwd": present(["/w", "/v", "", None, 3]),
        "gitBranch": present(["main", "dev", "", None, 0]),
        "version": present(["1.0", "2.0", None, 2]),
        "subtype": present(["compact_boundary", "turn_duration", "away_summary"]),
        "logicalParentUuid": present(["u1", "u8", None]),
        "content": present(["summary text", 4]),
        "customTitle": present(["title"]),
        "message": present(
            [
                {"content": "a prompt"},
                {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
                {"content": [{"type": "text", "text": "said"}], "model": "m", "id": "msg_1", "usage": {}},
                {"content": [{"type": "thinking", "thinking": "hm"}]},
                {"content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/f"}}]},
                {"content": 7},
            ]
        ),
    }
).map(lambda r: {k: v for k, v in r.items() if v is not MISSING})


SIDE = {"sessionId": "s1", "isSidechain": True}
# A compaction with no parent takes its logical parent's inline agent, not a new one of its own.
LOGICAL = [
    {"type": "user", "uuid": "u1", "message": {"content": "go"}, **SIDE},
    {"type": "system", "subtype": "compact_boundary", "uuid": "u2", "logicalParentUuid": "u1", **SIDE},
]


@settings(max_examples=400, deadline=None)
@example(records=LOGICAL, layout="main", agent="claude", agent_id=None)
@given(
    records=st.lists(RECORD, max_size=12),
    layout=st.sampled_from(["main", "flat", "nested", "compaction"]),
    agent=st.sampled_from(["claude", "codex"]),
    agent_id=st.sampled_from([None, "f1"]),
)
def test_record_path_equals_the_calls_it_replaced(
    records: list[dict[str, Any]], layout: str, agent: str, agent_id: str | None
) -> None:
    info = FileInfo(layout, "stem", agent_id, agent=agent)
    chunk = FileChunk(path="p", start=0, end=0, carry=Carry())
    state = RecordState(chunk, info)
    for offset, rec in enumerate(records):
        state.record(rec, offset)
    sessions, fields = expected(records, info)
    assert facts(chunk.sessions) == facts(sessions)
    for m in chunk.messages:
        common = (m.ts, m.cwd, m.git_branch, m.agent_id, m.is_sidechain, m.version)
        assert common == fields[m.byte_offset][1:]
        assert m.role == records[m.byte_offset]["type"]
    state.finish()
    for m in chunk.messages:  # parents followed through aliases as before
        p = fields[m.byte_offset][0]
        hops = 0
        while p is not None and p in state.alias_parent and hops < 10000:
            p, hops = state.alias_parent[p], hops + 1
        assert m.parent_uuid == p
        assert m.parent_external == (p is not None and p not in state.msg_index)


def old_target(inp: dict[str, Any]) -> str | None:
    """`tool_summary`'s target before the Task rule, as it was: the key loop ran for every input."""
    target: str | None = None
    if "command" in inp and isinstance(inp["command"], str):
        target = inp["command"][:300]
    for key in ("file_path", "notebook_path", "path", "url", "pattern", "query", "skill"):
        v = inp.get(key)
        if isinstance(v, str) and v:
            target = target or v[:300]
            break
    return target


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["command", "file_path", "path", "url", "query", "skill", "other"]),
        st.one_of(st.sampled_from(["", "ls -l", "/a/b", "x"]), st.none(), st.integers(0, 3)),
    )
)
def test_tool_target_skips_the_key_loop_only_when_it_changes_nothing(inp: dict[str, Any]) -> None:
    assert tool_summary("Grep", inp)[0] == old_target(inp)


def test_message_fields_in_the_order_record_passes_them() -> None:
    """`RecordState.record` makes each `Message` with every field positional: a field added or moved
    must be added there too."""
    assert [f.name for f in fields(Message)] == [
        "uuid",
        "session_id",
        "parent_uuid",
        "role",
        "kind",
        "ts",
        "text",
        "cwd",
        "git_branch",
        "agent_id",
        "is_sidechain",
        "tool_name",
        "tool_use_id",
        "tool_target",
        "is_error",
        "message_id",
        "model",
        "version",
        "byte_offset",
        "parent_external",
        "fallback_parent",
        "agent",
    ]
