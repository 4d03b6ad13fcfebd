"""`total-recall why ID` and the MCP `why` tool (issue 19): where an injected item comes from — its source
message, date, session, project and confidence — why it was chosen, where and when it was injected,
and what is known about it since (stale marks, the user's feedback).

The hooks' injection ledger (hooks/ledger.py) says what was injected under an id; a ban's id (the one
the PreToolUse hook quotes, or `bans list` prints) is also found in the bans table itself, and any other
memory by the id the viewer's Memory page shows (index.retrieval.memory_view.find_item)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from extractors.model import STANDING_KINDS
from index.retrieval.memory_view import find_item
from index.retrieval.rule_match import scope_bans
from index.store.labels import project_labeller
from index.store.stale import stale_of
from index.store.textstore import unpack
from index.store.userstate import load
from index.store.verdicts import record_feedback
from lib import sqlite
from lib.events import LEDGER, read_events
from lib.paths import state_dir
from lib.text import clip

SOURCE_CHARS = 800
MAX_INJECTIONS = 5  # the most recent injections listed


def _source(conn: sqlite.Connection, uuid: str | None) -> dict[str, Any] | None:
    if not uuid:
        return None
    row = conn.execute(
        "SELECT uuid, session_id, role, ts, body FROM messages WHERE uuid = ?", (uuid,)
    ).fetchone()
    if not row:
        return None
    return {
        "uuid": row[0],
        "session_id": row[1],
        "role": row[2],
        "date": (row[3] or "")[:10],
        "text": clip(unpack(row[4]), SOURCE_CHARS),
    }


def _from_ledger(entries: list[dict[str, Any]]) -> dict[str, Any]:
    last = entries[-1]
    out = {
        k: last.get(k)
        for k in ("id", "kind", "section", "content", "date", "session_id", "confidence", "reason")
    }
    out["project_key"] = last.get("project_key")
    out["source_uuid"] = last.get("source_uuid")
    out["injected"] = [
        {"at": e.get("ts"), "by": e.get("hook"), "into_session": e.get("into_session")}
        for e in entries[-MAX_INJECTIONS:]
    ]
    return out


def _from_bans(conn: sqlite.Connection, item_id: str) -> dict[str, Any] | None:
    found = scope_bans(conn, None, item_id)
    if not found:
        return None
    ban = found[0]
    src = conn.execute(
        """SELECT t.source_uuid, e.score FROM bans t LEFT JOIN extractions e ON e.id = t.extraction_id
           WHERE t.active = 1 AND t.project_key IS ? AND t.content = ?""",
        (ban.project_key, ban.content),
    ).fetchone()
    return {
        "id": ban.id,
        "kind": "ban",
        "content": ban.content,
        "date": ban.date,
        "session_id": ban.session_id,
        "confidence": round(float(src[1]), 3) if src and src[1] is not None else None,
        "reason": "a ban of this project (or stated operator-wide) that PreToolUse checks tool calls against",
        "project_key": ban.project_key,
        "source_uuid": src[0] if src else None,
        "injected": [],
    }


def _from_memory(conn: sqlite.Connection, item_id: str) -> dict[str, Any] | None:
    """An item of the viewer's Memory page that no hook has injected (yet): its provenance only."""
    it = find_item(conn, item_id)
    if it is None:
        return None
    return {
        "id": item_id,
        "kind": it["kind"],
        "content": it["content"],
        "date": it["date"],
        "session_id": it["session_id"],
        "confidence": it["confidence"],
        "reason": "not injected yet: listed by the viewer's Memory page",
        "project_key": it["project_key"],
        "source_uuid": it["uuid"],
        "injected": [],
    }


def explain(
    conn: sqlite.Connection, item_id: str, ledger: list[dict[str, Any]], feedback: dict[str, Any] | None
) -> dict[str, Any] | None:
    """Everything known about item `item_id`, or None when no injection or ban has that id."""
    entries = [e for e in ledger if e.get("event") == "injected" and e.get("id") == item_id]
    out = _from_ledger(entries) if entries else _from_bans(conn, item_id) or _from_memory(conn, item_id)
    if out is None:
        return None
    key = out.get("project_key")
    out["project"] = project_labeller(conn)(key) if key else None  # the index's unique label
    out["source_message"] = _source(conn, out.get("source_uuid"))
    out["stale"] = stale_of(conn, [item_id]).get(item_id) or _superseded(conn, out)
    out["feedback"] = feedback
    return out


def _superseded(conn: sqlite.Connection, item: dict[str, Any]) -> dict[str, Any] | None:
    """A standing decision a later session reversed (index/store/operator.py folds the supersession):
    stale too, with the decision that replaced it as the evidence."""
    if item.get("kind") not in STANDING_KINDS:
        return None
    row = conn.execute(
        """SELECT n.content, n.last_ts, n.session_id FROM standing_decisions t
           JOIN standing_decisions n ON n.id = t.superseded_by
           WHERE t.status = 'superseded' AND t.project_key IS ? AND t.content = ?""",
        (item.get("project_key"), item.get("content")),
    ).fetchone()
    if row is None:
        return None
    date = (row[1] or "")[:10] or None
    return {
        "reason": f"a later session decided otherwise ({date or '?'}): {clip(row[0], 200)}",
        "superseded_by": {"content": row[0], "date": date, "session_id": row[2]},
        "commit": None,
    }


def why(conn: sqlite.Connection, db: Path, item_id: str) -> dict[str, Any] | None:
    """`explain` with the ledger beside index `db` and the user's verdict from index.user.json."""
    ledger = read_events(state_dir(db), name=LEDGER)
    return explain(conn, item_id, ledger, load(db).feedback.get(item_id))


def feedback(conn: sqlite.Connection, db: Path, item_id: str, verdict: str) -> dict[str, Any]:
    """Keep the user's verdict on an injected item (LookupError when no item has that id); `wrong`
    keeps it out of every later injection. The caller holds the writer lock."""
    item = why(conn, db, item_id)
    if item is None:
        raise LookupError(f"no injected item or ban with id {item_id}")
    src = item.get("source_message") or {}
    rec = record_feedback(
        db,
        item_id,
        verdict,
        {
            "kind": item.get("kind"),
            "content": item.get("content"),
            "project_key": item.get("project_key"),
            "source_uuid": item.get("source_uuid") or src.get("uuid"),
            "confidence": item.get("confidence"),  # the verdicts calibrate the kind's threshold
        },
    )
    return {**rec, "section": item.get("section")}
