"""API-response usage -> `Turn` rows (W8), split from lib/records.py: billing, not the conversation."""

from __future__ import annotations

from typing import Any

from lib.model import FileInfo, Turn


def as_dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def as_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    return None


def turn_of(
    rec: dict[str, Any], msg: dict[str, Any], uuid: str, sid: str, model: str | None, info: FileInfo
) -> Turn | None:
    """The billed usage of one API response, or None when the message has no usage or id."""
    usage = msg.get("usage")
    mid = msg.get("id")
    if not isinstance(usage, dict) or not isinstance(mid, str):
        return None
    cc = usage.get("cache_creation")
    if not isinstance(cc, dict):
        cc = _EMPTY
    counts: tuple[Any, ...] = (
        usage.get("input_tokens"),
        usage.get("output_tokens"),
        usage.get("cache_creation_input_tokens"),
        cc.get("ephemeral_5m_input_tokens"),
        cc.get("ephemeral_1h_input_tokens"),
        usage.get("cache_read_input_tokens"),
    )
    if not _INTS.issuperset(map(type, counts)):  # 92 % are all exact ints: `as_int(v) or 0` is v
        counts = tuple([as_int(v) or 0 for v in counts])
    stu = usage.get("server_tool_use")
    aid = rec.get("agentId")
    inp, out, creation, c5m, c1h, read = counts
    # Positional, in the field order of `Turn` (keywords cost ~60 instructions each, per turn).
    return Turn(
        mid,
        str(rec.get("requestId") or ""),
        sid,
        uuid,
        rec.get("timestamp"),
        model,
        inp,
        out,
        creation,
        c5m,
        c1h,
        read,
        bool(rec.get("isSidechain")) or info.layout != "main",
        aid if isinstance(aid, str) else info.agent_id,
        (as_int(stu.get("web_search_requests")) or 0) if isinstance(stu, dict) else 0,
    )


_EMPTY: dict[str, Any] = {}
_INTS = frozenset((int,))


def mirrored_turn(rec: dict[str, Any], uuid: str, sid: str, info: FileInfo) -> Turn | None:
    """A subagent's API response mirrored in `agent_progress` is billed usage (format §8) even
    when the agent's own file is gone; the turns upsert de-duplicates it against that file."""
    data = as_dict(rec.get("data"))
    if data.get("type") != "agent_progress":
        return None
    inner = as_dict(data.get("message"))
    msg = as_dict(inner.get("message"))
    if inner.get("type") != "assistant" or not msg.get("usage"):
        return None
    model = msg.get("model") if isinstance(msg.get("model"), str) else None
    mirror = {
        "requestId": inner.get("requestId"),
        "timestamp": inner.get("timestamp") or rec.get("timestamp"),
        "isSidechain": True,
        "agentId": data.get("agentId"),
    }
    return turn_of(mirror, msg, str(inner.get("uuid") or uuid), sid, model, info)
