"""PreToolUse (issue 19): bans enforced before a tool runs. The tool call's shape (a Bash command, an
edit's path and added identifiers, an MCP tool's arguments) is matched against this project's bans and
the operator-wide ones with the `check-banned` matcher (`index.retrieval.rule_match`).

- `warn` (the default): the call goes on; the agent gets an `additionalContext` note quoting the ban
  with its date and session.
- `block`: `permissionDecision: "deny"` with the reason; per ban (`total-recall bans enforce ID`, kept
  in index.user.json) or for every ban with TOTAL_RECALL_ENFORCE=block.

It runs before every tool call, so it imports only the matcher and lib/ (SQLite through lib/sqlite.py)
until a ban matches (then the user state and the quoting helpers); every decision is logged in
events.jsonl by the runner, and any failure lets the call through (fail-open)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hooks.context import Ctx, answer_json, open_db

if TYPE_CHECKING:
    from index.retrieval import BanHit

MODES = ("warn", "block")
ENV = "TOTAL_RECALL_ENFORCE"
MAX_QUOTE = 200


def enforce_mode(env: Mapping[str, str]) -> str:
    """The operator-wide mode: TOTAL_RECALL_ENFORCE=block|warn (anything else: warn), from the settings'
    environment snapshot (lib/settings.py)."""
    value = env.get(ENV, "").strip().lower()
    return value if value in MODES else "warn"


def enforced_ids(db: Path) -> set[str]:
    """Ban ids set to block with `total-recall bans enforce` (index.user.json). Loaded only when a ban
    matched: most calls never read the file."""
    from index.store import enforced

    return {k for k, v in enforced(db).items() if isinstance(v, dict) and v.get("mode") == "block"}


def pre_tool_use(ctx: Ctx) -> str:
    tool = ctx.str_field("tool_name")
    ctx.rec["tool"] = tool
    if not tool:
        ctx.rec["decision"] = "skip"
        return ""
    from index.retrieval import tool_action

    action = tool_action(tool, ctx.data.get("tool_input"))
    if not action or not ctx.db.exists():
        ctx.rec["decision"] = "skip"
        return ""
    from index.retrieval import bans_for_action

    conn = open_db(ctx)  # read-only, every statement bounded by the hook's deadline
    try:
        hits = bans_for_action(conn, action, ctx.str_field("cwd"))
    finally:
        conn.close()
    if not hits:
        ctx.rec["decision"] = "allow"
        return ""
    mode = enforce_mode(ctx.settings.env)
    blocking = hits if mode == "block" else [h for h in hits if h.id in enforced_ids(ctx.db)]
    ban = (blocking or hits)[0]
    ctx.rec.update(
        decision="deny" if blocking else "warn",
        ban_id=ban.id,
        match=ban.score,
        matched_words=ban.words,
        bans_matched=len(hits),
    )
    reason = _reason(ban, blocked=bool(blocking))
    out: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if blocking:
        out.update(permissionDecision="deny", permissionDecisionReason=reason)
    else:
        out["additionalContext"] = reason
    return answer_json(out)


def _reason(ban: BanHit, blocked: bool) -> str:
    """The ban quoted (recalled text: one line, clipped) with its date, session and id."""
    from index.briefing import provenance, quote

    where = provenance(ban.date, ban.session_id)
    head = "Blocked by total-recall" if blocked else "total-recall note"
    tail = (
        "The operator asked for this ban to be enforced; do something else or ask them."
        if blocked
        else "This tool call matches it; the call was allowed. Check it still holds before going on."
    )
    return (
        f"{head}: a ban from your past sessions{where}: {quote(ban.content, MAX_QUOTE)} [#{ban.id}] "
        f"(matched: {', '.join(ban.words)}). {tail} Details: `total-recall why {ban.id}`."
    )
