"""PreCompact (design.md §5): build the continuation packet, save it for SessionStart(compact), and
hand it to the compaction instructions on plain stdout."""

from __future__ import annotations

from hooks.context import PACKET_BUDGET, Ctx, open_db
from hooks.state import continuation_file, write_json

PRECOMPACT_LEAD = (
    "Keep in the summary where this session stood; total-recall recorded it from the transcript "
    "(copy the block with its total-recall-memory tags):"
)


def pre_compact(ctx: Ctx) -> str:
    from index.briefing import continuation_packet as continuation
    from index.store import IndexError_

    sid = ctx.str_field("session_id")
    if not sid:
        ctx.rec["skipped"] = "no session_id"
        return ""
    conn = None
    if ctx.db.exists():
        try:
            conn = open_db(ctx)
        except IndexError_ as exc:
            ctx.rec["index"] = type(exc).__name__
    packet = continuation(
        conn, sid, cwd=ctx.str_field("cwd"), transcript_path=ctx.str_field("transcript_path")
    )
    ctx.rec["trigger"] = ctx.str_field("trigger")
    ctx.rec["packet_sources"] = packet.sources
    ctx.rec["saved"] = write_json(continuation_file(ctx.state, sid), packet.to_json())
    text = packet.render(PACKET_BUDGET)
    ctx.rec["packet_chars"] = len(text)
    # PreCompact's plain stdout joins the compaction instructions (JSON would not).
    return f"{PRECOMPACT_LEAD}\n{text}" if text else ""
