"""What a record tells about its session and tree, apart from its message (split from lib/records.py)."""

from __future__ import annotations

from typing import Any

from lib.model import SessionDelta


def note_session(d: SessionDelta, rec: dict[str, Any]) -> None:
    """The session's time span, cwd, branch and version, as one record shows them."""
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


def through_aliases(p: str | None, alias_parent: dict[str, str | None]) -> str | None:
    """The nearest stored ancestor: `p` followed through skipped (aliased) nodes, at most 10,000 hops."""
    hops = 0
    while p is not None and p in alias_parent and hops < 10000:
        p = alias_parent[p]
        hops += 1
    return p
