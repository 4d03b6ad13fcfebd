"""Why-was-this-recalled and was-it-right tools (issue 19): every item a hook injects carries a short id
(`#a1b2c3d4`); `why` explains it, `feedback` keeps the verdict (a `wrong` item is never injected again).

No `from __future__ import annotations` here: the SDK builds each tool's JSON schema from these
runtime annotations."""

from typing import Annotated, Any, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from lib.memid import parse_id
from mcp_server.envelope import Runtime, invalid

ItemId = Annotated[
    str, Field(description="The id printed after an injected item, e.g. '#a1b2c3d4' or 'a1b2c3d4'.")
]
WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
LOCK_WAIT_S = 10.0


def _key(item_id: str) -> str:
    key = parse_id(item_id)
    if key is None:
        raise invalid(
            f"{item_id!r} is not an item id", "pass the 8 hex characters after '#' of an injected item"
        )
    return key


def why(rt: Runtime, item_id: ItemId) -> CallToolResult:
    """Why an injected memory was recalled: its source message, date, session, confidence, the reason it
    was chosen, when it was injected, and whether it is stale or was marked wrong. Call it when a
    recalled item looks doubtful before relying on it."""
    from index.briefing import why as explain

    key = _key(item_id)
    res = explain(rt.conn(), rt.db, key)
    if res is None:
        raise invalid(f"no injected item or ban with id {key}", "use an id printed with an injected item")
    return rt.answer(res, {})


def feedback(
    rt: Runtime,
    item_id: ItemId,
    verdict: Annotated[Literal["wrong", "helpful"], Field(description="wrong: never inject it again.")],
) -> CallToolResult:
    """Tell total-recall an injected memory was wrong (it is never injected again) or helpful. Call it
    when the user says a recalled item is outdated or mistaken, or when you verified it is."""
    from hooks.events import log_event
    from index.briefing import feedback as keep
    from index.store import writer_lock
    from lib.paths import state_dir

    key = _key(item_id)
    with writer_lock(rt.db, wait=LOCK_WAIT_S):
        try:
            res = keep(rt.conn(), rt.db, key, verdict)
        except LookupError as exc:
            raise invalid(str(exc), "use an id printed with an injected item") from exc
    event: dict[str, Any] = {"event": "feedback", "id": key, "verdict": verdict, "kind": res.get("kind")}
    log_event(state_dir(rt.db), {**event, "section": res.get("section"), "by": "mcp"})
    return rt.answer(res, {}, historical=False)


TOOLS = (why,)
WRITE_TOOLS = (feedback,)
