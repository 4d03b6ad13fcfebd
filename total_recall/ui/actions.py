"""The memory actions of the Memory and Session pages, through the same index functions as the CLI's
`promote`, `unpromote`, `forget` and `feedback` (and under the same index lock): promote an item,
demote/forget an item, mark it wrong or helpful, forget a whole session (confirmed on its own page)."""

from __future__ import annotations

from pathlib import Path

from index.store import forget, maintenance, promote, sessions_for, unpromote
from lib.memid import parse_id
from total_recall.cmd_feedback import give_feedback
from total_recall.cmd_manage import drop_hook_state

WAIT_S = 10.0  # a browser should not hang for the CLI's two minutes behind an index run


def _back(form: dict[str, str], default: str) -> str:
    """Where to go after the action: a path of this app only (never another site)."""
    back = form.get("back") or default
    return back if back.startswith("/") and not back.startswith("//") and "\\" not in back else default


def _id(form: dict[str, str]) -> int:
    try:
        return int(form.get("extraction_id", ""))
    except ValueError:
        raise ValueError("no memory id in the form: reload the page") from None


def run(db: Path, action: str, form: dict[str, str]) -> tuple[str, str]:
    """Do one action; returns a one-line note for the page and the page to go back to."""
    if action == "promote":
        kind = form.get("kind", "")
        with maintenance(db, WAIT_S) as conn:
            res = promote(conn, db, kind, extraction_id=_id(form))
        return f"promoted to {res['kind']}: {res['content'][:120]}", _back(form, "/memory")
    if action == "forget-item":
        with maintenance(db, WAIT_S) as conn:
            res = unpromote(conn, db, _id(form))
        verb = "unpromoted" if res["action"] == "unpromoted" else "forgot"
        return f"{verb} {res['kind']}: {res['content'][:120]}", _back(form, "/memory")
    if action == "feedback":
        key, verdict = parse_id(form.get("item_id", "")), form.get("verdict", "")
        if key is None:
            raise ValueError("no item id in the form: reload the page")
        res = give_feedback(db, key, verdict, WAIT_S, "ui")
        done = "will not be injected again" if verdict == "wrong" else "noted as helpful"
        return f"#{key} {done}: {str(res.get('content'))[:120]}", _back(form, "/memory")
    if action == "forget-session":
        sid = form.get("session_id", "")
        if form.get("confirm") != "yes":
            raise ValueError("forgetting a session needs the confirmation box ticked")
        with maintenance(db, WAIT_S) as conn:
            if sid not in sessions_for(conn, sid, None):
                raise LookupError(f"no session {sid!r} in the index")
            counts = forget(conn, db, [sid])
        drop_hook_state(db, [sid])
        return f"forgot session {sid[:8]} ({counts['messages']} messages); it will not be indexed again", "/"
    raise LookupError(f"unknown action {action!r}")
