"""UserPromptSubmit (H3, D2): judge the previous decision, decide with the policy, recall when it
fires, remember what was injected, and record everything for `total-recall adaptive`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from detector.policy import (
    MAX_INJECTIONS,
    PolicyState,
    advance,
    decide,
    filter_items,
    identifiers,
    is_trivial,
    judge,
)
from hooks.context import Ctx, answer, open_db
from hooks.state import read_json, session_file, write_json
from lib import sqlite

if TYPE_CHECKING:
    from index.briefing import Recalled

# Past-message search: at most SEARCH_BUDGET_S, and no later than IN_HOOK_TARGET_S after the hook began
# (memory items are kept when it runs out), so a loaded machine still answers near the p95 target.
SEARCH_BUDGET_S = 0.12
PROMPT_BUDGET = 1600  # characters of recall injected with one prompt (issue 4: ≤ ~1,600)
IN_HOOK_TARGET_S = 0.16
MIN_SEARCH_S = 0.03
_ACTION_TEXT = {
    "acknowledge_and_verify": "acknowledge the problem and verify before claiming success",
    "slow_down_and_confirm": "slow down and confirm the plan with the operator",
    "stop_and_ask": "stop and ask the operator how to proceed",
}


def user_prompt_submit(ctx: Ctx) -> str:
    prompt = ctx.data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        ctx.rec["skipped"] = "no prompt"
        return ""
    if not ctx.db.exists():
        ctx.rec["skipped"] = "no index"
        return ""
    return answer("UserPromptSubmit", prompt_context(ctx, lambda: open_db(ctx), prompt))


def escalation_note(esc: dict[str, object]) -> str:
    lines = []
    if esc.get("state") not in (None, "calm"):
        reasons = esc.get("reasons") or []
        why = "; ".join(str(r) for r in reasons[:3]) if isinstance(reasons, list) else ""
        lines.append(
            f"Operator signals (total-recall): {esc['state']} ({why}). Suggested: "
            f"{_ACTION_TEXT.get(str(esc.get('action')), 'proceed')}."
        )
    typos = esc.get("typos") or []
    if isinstance(typos, list) and typos:
        from index.briefing import safe_text  # typos come from the index: recalled text like any other

        lines.append(
            "Known typos of this operator in the prompt: "
            + ", ".join(
                f"{safe_text(str(t['typo']), 40)}→{safe_text(str(t['meant']), 40)}"
                for t in typos[:5]
                if isinstance(t, dict)
            )
            + "."
        )
    return "\n".join(lines)


def prompt_context(ctx: Ctx, connect: Callable[[], sqlite.Connection], prompt: str) -> str:
    """The policy-gated recall for `prompt` ("" when the policy does not fire). The DB is opened only
    when a prompt is worth looking up; an index still being built counts as no results."""
    sid = ctx.str_field("session_id") or "unknown"
    cwd = ctx.str_field("cwd")
    path = session_file(ctx.state, sid)
    state = PolicyState.from_json(read_json(path), sid)
    now = time.time()
    ctx.rec["session_id"] = sid
    outcome = judge(state.pending, prompt)
    if outcome is not None:
        ctx.rec["outcome"] = outcome
    trivial = is_trivial(prompt) or prompt.lstrip().startswith("/")
    idents = [] if trivial else identifiers(prompt)
    conn = None
    hits = 0
    esc: dict[str, object] = {}
    if not trivial and state.injections < MAX_INJECTIONS:
        conn = _connect(ctx, connect)
        if conn is not None:
            from detector.escalation import assess
            from index.briefing import gather_escalation as gather

            esc = assess(prompt, gather(conn, prompt=prompt, session_id=sid, cwd=cwd))
            ctx.rec["escalation"] = {k: esc[k] for k in ("score", "state", "action")}
        if conn is not None and idents:
            from index.briefing import ident_hits

            hits = ident_hits(conn, idents)
    decision = decide(prompt, state, now=now, ident_hits=hits, idents=idents)
    text = ""
    keys: list[str] = []
    suppressors = list(decision.suppressors)
    if decision.fire and conn is None:
        suppressors.append("no_index")
    elif decision.fire and conn is not None:
        budget = min(
            SEARCH_BUDGET_S, max(MIN_SEARCH_S, IN_HOOK_TARGET_S - (time.perf_counter() - ctx.started))
        )
        from hooks.team import prompt_items

        team = prompt_items(ctx, cwd, prompt)
        text, items, more = _recall(ctx, conn, prompt, cwd, sid, idents, state, esc, budget, team)
        keys = [i.key for i in items]
        suppressors += more
        if items:
            from hooks.ledger import record

            record(ctx.state, "user-prompt-submit", sid, [i.to_ledger() for i in items])
    advance(state, prompt, decision, keys, now)
    write_json(path, state.to_json())
    ctx.rec["policy"] = {
        "fire": bool(text),
        "decided": decision.fire,
        "reason": decision.reason,
        "triggers": decision.triggers,
        "suppressors": suppressors,
        "identifiers": len(idents),
        "identifier_hits": hits,
        "items": len(keys),
        "injections": state.injections,
    }
    ctx.rec["injected_chars"] = len(text)
    return text


def _connect(ctx: Ctx, connect: Callable[[], sqlite.Connection]) -> sqlite.Connection | None:
    from index.store import IndexMissing

    try:
        return connect()
    except IndexMissing:
        ctx.rec["index"] = "building"
        return None


def _recall(
    ctx: Ctx,
    conn: sqlite.Connection,
    prompt: str,
    cwd: str | None,
    sid: str,
    idents: list[str],
    state: PolicyState,
    esc: dict[str, object],
    search_budget: float,
    team: list[Any] | None = None,
) -> tuple[str, list[Recalled], list[str]]:
    """The rendered recall, the items in it (teammates' items, hooks/team.py, after this machine's own
    memories), and why items were left out."""
    from index.briefing import Gate, render
    from index.briefing import gather_prompt_recall as gather_items
    from index.store import wrong_items

    notes: list[str] = []
    gate = Gate.open(conn, wrong_items(ctx.db), 0.0)  # stored stale marks apply; no git on this path
    items = gather_items(
        conn,
        prompt,
        cwd=cwd,
        session_id=sid,
        idents=idents,
        search_budget_s=search_budget,
        deadline=ctx.deadline,
        notes=notes,
        gate=gate,
    )
    items += team or []
    if gate.left_out:
        ctx.rec["left_out"] = [{k: x.get(k) for k in ("id", "why")} for x in gate.left_out]
    kept_pairs, why = filter_items([(i.key, i.line) for i in items], prompt, state)
    why += notes
    kept_keys = {k for k, _ in kept_pairs}
    kept = [i for i in items if i.key in kept_keys]
    if not kept:
        return "", [], why + ["no_results" if not items else "nothing_new"]
    rendered = render(kept, PROMPT_BUDGET, footer=escalation_note(esc))  # the note inside the fence
    if not rendered.text:
        return "", [], why + ["over_budget"]
    return rendered.text, rendered.items, why
