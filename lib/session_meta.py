"""What a record tells about its session and tree, apart from its message (split from lib/records.py):
the records outside the conversation tree, and the walk through skipped nodes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lib.content import strip_private
from lib.model import FileChunk, SessionDelta

NON_TREE = {
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "permission-mode",
    "last-prompt",
    "pr-link",
    "custom-title",
    "ai-title",
    "agent-name",
    "mode",
}
TREE = frozenset(("user", "assistant", "system", "attachment", "progress"))  # records in the tree


def other_record(
    chunk: FileChunk, session: Callable[[str], SessionDelta], rec: dict[str, Any], t: Any, tname: str
) -> None:
    """A record of type `t` outside TREE (`tname`: `t`, or "?" when not a string): a summary's or a
    title's text is kept, every other record is counted as skipped (and as unknown if not NON_TREE)."""
    if t == "summary":
        leaf, title = rec.get("leafUuid"), rec.get("summary")
        if isinstance(leaf, str) and isinstance(title, str) and title.strip():
            chunk.summaries.append((leaf, strip_private(title.strip())))
        return
    if t in ("custom-title", "ai-title"):
        sid = rec.get("sessionId")
        title = rec.get("customTitle") or rec.get("aiTitle") or rec.get("title")
        if isinstance(sid, str) and isinstance(title, str) and title.strip():
            session(sid).titles["custom" if t == "custom-title" else "ai"] = strip_private(title.strip())
        return
    if t not in NON_TREE:
        chunk.record_types["unknown:" + tname] += 1
    chunk.skipped += 1


def through_aliases(p: str | None, alias_parent: dict[str, str | None]) -> str | None:
    """The nearest stored ancestor: `p` followed through skipped (aliased) nodes, at most 10,000 hops."""
    hops = 0
    while p is not None and p in alias_parent and hops < 10000:
        p = alias_parent[p]
        hops += 1
    return p
