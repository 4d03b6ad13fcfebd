"""SessionStart (design.md §3): the operator bundle for this project, the continuation packet after a
compaction, and a background re-index when the last one is old (the whole index on first run)."""

from __future__ import annotations

import json
import time

from hooks.context import PACKET_BUDGET, Ctx, answer, open_db, roots
from hooks.state import continuation_file, first_banner, read_json
from lib import sqlite

BUNDLE_BUDGET = 1800
STALE_CHECK_S = 0.4  # git checks of the memories about to be injected (stored per HEAD: rerun after a commit)
STARTUP_REINDEX_AFTER_S = 120
BANNER = (
    "total-recall: first run — indexing your Claude Code history in the background. "
    "Memory from past sessions will appear in your next sessions."
)


def session_start(ctx: Ctx) -> str:
    from index.store import IndexMissing

    source = ctx.str_field("source") or "startup"
    ctx.rec["source"] = source
    if not ctx.db.exists():
        return _bootstrap(ctx)
    try:
        conn = open_db(ctx)
    except IndexMissing:
        ctx.rec["index"] = "building"
        return ""
    cwd, sid = ctx.str_field("cwd"), ctx.str_field("session_id")
    parts = []
    if source == "compact" and sid:
        packet_text = restore_packet(ctx, conn, sid, cwd)
        ctx.rec["packet_chars"] = len(packet_text)
        if packet_text:
            parts.append(packet_text)
    from hooks.ledger import record_bundle
    from hooks.team import team_items
    from index.briefing import operator_context
    from index.store import save_marks, wrong_items

    bundle = operator_context(
        conn,
        cwd,
        budget=BUNDLE_BUDGET,
        session_id=sid,
        team=team_items(ctx, cwd),
        wrong=wrong_items(ctx.db),
        stale_budget_s=STALE_CHECK_S,
    )
    ctx.rec["bundle_chars"] = len(bundle.text)
    ctx.rec["bundle_tokens"] = bundle.tokens
    ctx.rec["dropped"] = bundle.dropped
    if bundle.left_out:
        ctx.rec["left_out"] = [{k: x.get(k) for k in ("id", "why", "ref", "commit")} for x in bundle.left_out]
    if bundle.new_marks:
        ctx.rec["stale_checked"] = len(bundle.new_marks)
        ctx.rec["marks_saved"] = save_marks(ctx.db, bundle.new_marks)
    if bundle.text:
        parts.append(bundle.text)
        ctx.rec["items"] = record_bundle(ctx.state, sid, bundle)
    if source in ("startup", "resume") and _index_is_stale(ctx):
        from hooks.spawn import spawn_index

        ctx.rec["spawn"] = spawn_index(ctx.db, roots(ctx), trigger="session-start")
    text = "\n\n".join(parts)
    ctx.rec["injected_chars"] = len(text)
    return answer("SessionStart", text)


def _bootstrap(ctx: Ctx) -> str:
    """No index yet: build it in the background; tell the user once."""
    from hooks.spawn import spawn_index

    ctx.rec["spawn"] = spawn_index(ctx.db, roots(ctx), full=True, jobs=2, trigger="first-run")
    if first_banner(ctx.state):
        ctx.rec["banner"] = True
        return json.dumps({"systemMessage": BANNER})
    return ""


def _index_is_stale(ctx: Ctx) -> bool:
    from hooks.spawn import LAST

    try:
        return time.time() - (ctx.state / LAST).stat().st_mtime > STARTUP_REINDEX_AFTER_S
    except OSError:
        return True


def restore_packet(ctx: Ctx, conn: sqlite.Connection | None, sid: str, cwd: str | None) -> str:
    """The packet PreCompact saved for this session, or one rebuilt from the index and transcript."""
    from index.briefing import Packet
    from index.briefing import continuation_packet as continuation

    saved = read_json(continuation_file(ctx.state, sid))
    if isinstance(saved, dict):
        try:
            ctx.rec["packet_source"] = "saved"
            return Packet.from_json(saved).render(PACKET_BUDGET)
        except Exception:  # noqa: BLE001 - a damaged file: rebuild the packet instead
            pass
    ctx.rec["packet_source"] = "rebuilt"
    return continuation(conn, sid, cwd=cwd, transcript_path=ctx.str_field("transcript_path")).render(
        PACKET_BUDGET
    )
