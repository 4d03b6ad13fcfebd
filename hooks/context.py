"""What every hook handler shares: the per-run context (`Ctx`), the JSON answer, the deadline-bound
reader and the transcript roots to index. Its own module so the event modules and the dispatcher
(`hooks/handlers.py`) import it without importing each other."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from lib import sqlite
from lib.settings import Settings

MAX_CONTEXT = 9500  # Claude Code spills additionalContext over 10,000 chars to a file
PACKET_BUDGET = 1600  # characters of the continuation packet (saved at PreCompact, restored after)


class Ctx:
    """One hook run. A plain class, not a dataclass: importing dataclasses (inspect, ast, dis) cost
    ~8 ms of every hook process, most of the PreToolUse budget."""

    __slots__ = ("event", "data", "db", "state", "deadline", "settings", "rec", "started")

    def __init__(
        self,
        event: str,
        data: dict[str, Any],
        db: Path,
        state: Path,
        deadline: float,
        settings: Settings,
        rec: dict[str, Any] | None = None,
        started: float | None = None,
    ) -> None:
        self.event = event
        self.data = data
        self.db = db
        self.state = state
        self.deadline = deadline
        self.settings = settings  # the runner's one read of the environment
        self.rec: dict[str, Any] = {} if rec is None else rec
        self.started = time.perf_counter() if started is None else started  # when the hook began

    def str_field(self, name: str) -> str | None:
        v = self.data.get(name)
        return v if isinstance(v, str) and v else None


def answer(event_name: str, text: str) -> str:
    if not text:
        return ""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text[:MAX_CONTEXT]}},
        ensure_ascii=False,
    )


def answer_json(specific: dict[str, Any]) -> str:
    """A `hookSpecificOutput` answer with other fields than additionalContext (PreToolUse's decision)."""
    return json.dumps({"hookSpecificOutput": specific}, ensure_ascii=False)


def open_db(ctx: Ctx) -> sqlite.Connection:
    """Read-only connection whose queries and lock waits stop at the hook's deadline."""
    from index.store import open_reader

    return open_reader(ctx.db, deadline=ctx.deadline)


def roots(ctx: Ctx) -> list[Path]:
    """Transcript roots to index: the configured ones, plus the `projects` folder holding this
    session's transcript when it belongs to a known agent home. Anything else (a stray
    `/tmp/x/stray.jsonl` would make `/tmp` a root, `/stray.jsonl` the whole disk) is refused and
    logged as `refused_root`."""
    out = ctx.settings.projects_roots()
    tp = ctx.str_field("transcript_path")
    if not tp:
        return out
    root, refused = derived_root(tp, out, ctx.settings)
    if refused is not None:
        ctx.rec["refused_root"] = refused
    elif root is not None and root.is_dir() and not any(root == r or r in root.parents for r in out):
        out.append(root)
    return out


def agent_homes(configured: list[Path], settings: Settings) -> set[Path]:
    """Claude Code config dirs we know of: CLAUDE_CONFIG_DIR, ~/.claude, the parents of the configured roots."""
    homes = {Path.home() / ".claude", *(r.parent for r in configured)}
    config = settings.claude_config_dir()
    if config is not None:
        homes.add(config)
    return homes


def derived_root(
    transcript_path: str, configured: list[Path], settings: Settings
) -> tuple[Path | None, str | None]:
    """(root, None) when the transcript sits in `<agent home>/projects/<project>/` (a main session file)
    or `…/<project>/<session>/subagents/`, where the agent home is a known one or a `.claude` folder;
    else (None, the folder that would have been walked)."""
    path = Path(transcript_path).expanduser()
    guess = path.parent.parent
    if not path.is_absolute():
        return None, str(guess)
    homes = agent_homes(configured, settings)
    for root in (
        path.parents[1] if len(path.parents) > 1 else None,
        path.parents[3] if len(path.parents) > 3 else None,
    ):
        if root is None or root.name != "projects":
            continue
        home = root.parent
        if home in (Path(home.anchor), Path.home()) or not (home in homes or home.name == ".claude"):
            return None, str(root)
        return root, None
    return None, str(guess)
