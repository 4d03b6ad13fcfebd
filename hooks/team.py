"""The hooks' side of team memory (issue 16), for projects opted in with `team enable`:

- SessionStart asks the server for the project's team items with a hard 300 ms bound (a thread joined
  with a timeout, over a socket timeout of the same length); when the answer is not there in time, or
  the server is down, refuses the credential or fails, the last pulled items (the local cache) are used
  and the reason goes to `events.jsonl` through the hook's record. Nothing is printed about it.
- UserPromptSubmit, when the policy recalls, adds up to two cached team items that share words with
  the prompt (the cache only: no network call on every prompt).
- Stop starts a detached `total-recall team sync` (push, then refresh the cache) and returns at once;
  at most one per minute and project (Stop fires after every turn).
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hooks.context import Ctx

TIMEOUT_S = 0.3
TEAM_ITEMS = 5
PROMPT_ITEMS = 2
SYNC_EVERY_S = 60
_WORD = re.compile(r"[a-z0-9_]{4,}")


def _enabled(ctx: Ctx, cwd: str | None) -> tuple[Any, str] | None:
    """(team config, project id) when this cwd's project is opted in and a server is configured."""
    from lib.project_id import resolve_project_id
    from total_recall.team.config import load

    if not cwd:
        return None
    cfg = load(ctx.state, ctx.settings.env)
    if not cfg.logged_in or not cfg.enabled:  # off (the common case): no git call, no network
        return None
    pid = resolve_project_id(cwd, ctx.settings.env)
    if pid is None or not cfg.is_enabled(pid.id):
        return None
    return cfg, pid.id


def fetch_bounded(cfg: Any, project_id: str, timeout: float = TIMEOUT_S) -> tuple[list[dict[str, Any]], str]:
    """(items, where from: server | cache) — never waits more than `timeout` for the server."""
    from total_recall.team.sync import Ledger, pull, read_cache

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["items"] = pull(cfg, project_id, Ledger(cfg.state, project_id), timeout=timeout)
        except Exception as exc:  # noqa: BLE001 - any failure means: use the cache
            box["error"] = f"{type(exc).__name__}: {exc}"[:300]

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout)
    if "items" in box:
        return box["items"], "server"
    box.setdefault("error", f"no answer within {int(timeout * 1000)} ms")
    return read_cache(cfg.state, project_id), "cache: " + str(box["error"])


def _isolated(fn: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    """Team memory never costs the hook its local answer: any failure is [] and a logged reason."""

    def run(ctx: Ctx, *args: Any) -> list[Any]:
        try:
            return fn(ctx, *args)
        except Exception as exc:  # noqa: BLE001 - logged in the hook's event record
            ctx.rec["team_error"] = f"{type(exc).__name__}: {exc}"[:300]
            return []

    return run


@_isolated
def team_items(ctx: Ctx, cwd: str | None) -> list[Any]:
    """The SessionStart bundle's Team memory items ([] when the project is not opted in)."""
    from index.briefing import Item

    found = _enabled(ctx, cwd)
    if found is None:
        return []
    cfg, project_id = found
    items, source = fetch_bounded(cfg, project_id)
    ctx.rec["team"] = {"project_id": project_id, "source": source, "items": len(items)}
    out = []
    for i in items[:TEAM_ITEMS]:
        who = str(i.get("created_by") or "teammate")
        out.append(Item(f"{who}: {i.get('title') or ''}", str(i.get("created_at") or "")[:10] or None))
    return out


def _words(text: str) -> set[str]:
    from lib.text import STOPWORDS

    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


@_isolated
def prompt_items(ctx: Ctx, cwd: str | None, prompt: str) -> list[Any]:
    """Team items for UserPromptSubmit, from the local cache only (no network on every prompt): those
    sharing at least two content words with the prompt, best first, at most PROMPT_ITEMS."""
    from index.briefing import Recalled, quote
    from total_recall.team.sync import read_cache

    found = _enabled(ctx, cwd)
    if found is None:
        return []
    cfg, project_id = found
    asked = _words(prompt[:3000])
    scored = []
    for item in read_cache(cfg.state, project_id):
        title = str(item.get("title") or "")
        shared = len(asked & _words(f"{title} {item.get('dense_summary') or ''}"))
        if shared >= 2:
            scored.append((shared, title, item))
    scored.sort(key=lambda s: -s[0])
    out = []
    for _, title, item in scored[:PROMPT_ITEMS]:
        date = str(item.get("created_at") or "")[:10] or None
        who = quote(str(item.get("created_by") or "teammate"), 40)
        line = f"[team memory, {date or '?'}, by {who}] {quote(title, 220)}"
        out.append(Recalled(f"team:{item.get('id')}", line, "memory", date, None, None))
    ctx.rec["team"] = {"project_id": project_id, "source": "cache", "items": len(out)}
    return out


def spawn_sync(ctx: Ctx, cwd: str | None) -> str:
    """Start `total-recall team sync` detached for an opted-in project; returns what happened."""
    found = _enabled(ctx, cwd)
    if found is None or cwd is None:
        return "off"
    from total_recall.team.config import project_file

    mark = project_file(ctx.state, found[1]).with_suffix(".sync")
    try:  # Stop fires after every turn: one sync per SYNC_EVERY_S is plenty
        if time.time() - mark.stat().st_mtime < SYNC_EVERY_S:
            return "recent"
    except OSError:
        pass
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
    except OSError:
        return "failed"
    cmd = [sys.executable, "-m", "total_recall", "--db", str(ctx.db), "team", "sync", "--cwd", str(cwd)]
    from hooks.spawn import spawn_detached

    return spawn_detached(cmd, Path(cwd))
