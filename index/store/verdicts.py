"""The user's verdicts on what total-recall injects (issue 19), kept in index.user.json
(`index.store.userstate`) so `rebuild` never undoes them:

- feedback on an injected item (`total-recall feedback ID wrong|helpful`, the MCP `feedback` tool):
  a `wrong` item is never injected again — matched by its id or by its normalised text, so the same
  memory reached through another path (a bundle rule, a prompt-recall hit) stays out too;
- bans set to block at PreToolUse (`total-recall bans enforce ID`) or back to warn (`bans relax ID`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from index.store.userstate import load, now_iso, save
from lib.memid import norm_text

VERDICTS = ("wrong", "helpful")
MIN_JUDGED = 5  # verdicts on one kind before they may move its injection threshold
TARGET_PRECISION = 0.8  # share of `helpful` wanted among the judged items a threshold lets through
MAX_FLOOR = 0.99  # a threshold never shuts a kind out entirely (promoted memories carry 1.0)


@dataclass(slots=True)
class Wrong:
    """What the user marked wrong: ids, normalised texts and source messages. `blocks` says if an item
    is one of them (a past message that is the source of a wrong memory would bring it back)."""

    ids: set[str] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)
    sources: set[str] = field(default_factory=set)
    floors: dict[str, float] = field(default_factory=dict)  # per kind, from the verdicts: `calibrate`

    def cut(self, kind: str, threshold: float) -> float:
        """The confidence an item of `kind` needs: the model's threshold, raised by the verdicts."""
        return max(threshold, self.floors.get(kind, 0.0))

    def blocks(self, item_id: str | None, text: str | None, source: str | None = None) -> bool:
        return (
            bool(item_id and item_id in self.ids)
            or (bool(text) and norm_text(text) in self.texts)
            or bool(source and source in self.sources)
        )


def wrong_items(db: Path) -> Wrong:
    """The `wrong` verdicts of this index's user state (empty when there are none)."""
    fb = load(db).feedback
    marked = [(k, v) for k, v in fb.items() if isinstance(v, dict) and v.get("verdict") == "wrong"]
    return Wrong(
        {k for k, _ in marked},
        {str(v.get("norm")) for _, v in marked if v.get("norm")},
        {str(v.get("source_uuid")) for _, v in marked if v.get("source_uuid")},
        calibrate([v for v in fb.values() if isinstance(v, dict)]),
    )


def calibrate(verdicts: list[dict[str, Any]]) -> dict[str, float]:
    """Per kind, the least confidence at which the user's verdicts say injected items are right often
    enough: among the judged items (with a confidence) at or above it, at least TARGET_PRECISION were
    `helpful`. Only kinds with MIN_JUDGED verdicts, and only where the verdicts ask for a raise (a
    kind whose judged items are right often enough keeps the model's threshold: floor 0)."""
    by_kind: dict[str, list[tuple[float, bool]]] = {}
    for v in verdicts:
        conf, kind = v.get("confidence"), v.get("kind")
        if isinstance(conf, (int, float)) and isinstance(kind, str) and v.get("verdict") in VERDICTS:
            by_kind.setdefault(kind, []).append((float(conf), v["verdict"] == "helpful"))
    floors: dict[str, float] = {}
    for kind, judged in by_kind.items():
        if len(judged) < MIN_JUDGED:
            continue
        judged.sort()
        for i, (conf, _) in enumerate(judged):
            above = judged[i:]
            if sum(ok for _, ok in above) >= TARGET_PRECISION * len(above):
                if i:
                    floors[kind] = min(MAX_FLOOR, conf)
                break
        else:
            floors[kind] = min(MAX_FLOOR, judged[-1][0] + 0.01)
    return floors


def record_feedback(db: Path, item_id: str, verdict: str, item: dict[str, Any]) -> dict[str, Any]:
    """Keep the user's verdict on item `item_id` (described by `item`: kind, content, provenance).
    A later verdict replaces an earlier one."""
    if verdict not in VERDICTS:
        raise ValueError(f"verdict {verdict!r}: use one of {', '.join(VERDICTS)}")
    state = load(db)
    entry = {
        "verdict": verdict,
        "at": now_iso(),
        "kind": item.get("kind"),
        "norm": norm_text(str(item.get("content") or "")),
        "content": str(item.get("content") or "")[:400],
        "project_key": item.get("project_key"),
        "source_uuid": item.get("source_uuid"),
        "confidence": item.get("confidence"),
    }
    state.feedback[item_id] = entry
    save(db, state)
    return {"id": item_id, **entry}


def set_enforcement(db: Path, ban: dict[str, Any], mode: str) -> dict[str, Any]:
    """`block`: the ban denies matching tool calls; `warn`: back to the default (the entry is removed)."""
    state = load(db)
    if mode == "block":
        state.enforced[ban["id"]] = {
            "mode": "block",
            "at": now_iso(),
            "content": str(ban.get("content") or "")[:400],
            "project_key": ban.get("project_key"),
        }
    else:
        state.enforced.pop(ban["id"], None)
    save(db, state)
    return {"id": ban["id"], "mode": mode, "content": ban.get("content")}


def enforced(db: Path) -> dict[str, dict[str, Any]]:
    return load(db).enforced
