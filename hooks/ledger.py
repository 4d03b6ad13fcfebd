"""The injection ledger (issue 19): every item a hook injects is written to `injected.jsonl` beside the
index, by its short id, with its source, date, session, confidence and why it was chosen — what
`total-recall why ID` and the MCP `why` tool show, and what `feedback ID` attaches the verdict to.
Written with the event log's appender (one write per line, rotated); never raises."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hooks.events import log_event
from lib.events import LEDGER

CONTENT_CHARS = 300


def record(state: Path, hook: str, session_id: str | None, items: list[dict[str, Any]]) -> int:
    """Append one ledger line per item (each a dict with at least `id`); how many were written."""
    n = 0
    for it in items:
        rec = {"event": "injected", "hook": hook, "into_session": session_id, **it}
        rec["content"] = str(rec.get("content") or "")[:CONTENT_CHARS]
        n += log_event(state, rec, name=LEDGER)
    return n


def record_bundle(state: Path, session_id: str | None, bundle: Any) -> int:
    """The bundle's items that made it into the text (the budget may have dropped some)."""
    from index.briefing import bundle_line

    items = []
    for section, its in bundle.sections.items():
        for it in its:
            if it.extra.get("id") and bundle_line(it) in bundle.text:
                items.append(
                    {
                        "section": section,
                        "content": it.content,
                        "date": it.date,
                        "session_id": it.session_id,
                        **{
                            k: it.extra.get(k)
                            for k in ("id", "kind", "source_uuid", "project_key", "reason", "confidence")
                        },
                    }
                )
    return record(state, "session-start", session_id, items)


def forget_sessions(state: Path, session_ids: list[str]) -> int:
    """Drop the ledger lines that quote a forgotten session (its text, or text injected into it);
    how many were dropped. Each file is rewritten atomically."""
    import os

    gone = set(session_ids)
    dropped = 0
    for name in (LEDGER + ".1", LEDGER):
        path = state / name
        try:
            lines = path.read_bytes().splitlines(keepends=True)
        except OSError:
            continue
        keep = [ln for ln in lines if not any(sid.encode() in ln for sid in gone)]
        if len(keep) == len(lines):
            continue
        dropped += len(lines) - len(keep)
        tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.writelines(keep)
        os.replace(tmp, path)
    return dropped
