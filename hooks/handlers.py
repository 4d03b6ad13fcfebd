"""What each hook does (design.md §3, §5). The runner owns stdin/stdout, the deadline, failure
handling and the event record; a handler returns the text to print ("" for nothing) and adds its
own fields to `ctx.rec`. Everything heavy is imported inside the handler that needs it."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hooks.state import continuation_file, first_banner, read_json, write_json

BUNDLE_BUDGET = 1800
PACKET_BUDGET = 1600
MAX_CONTEXT = 9500  # Claude Code spills additionalContext over 10,000 chars to a file
STARTUP_REINDEX_AFTER_S = 120
BANNER = ("total-recall: first run — indexing your Claude Code history in the background. "
          "Memory from past sessions will appear in your next sessions.")
PRECOMPACT_LEAD = ("Keep in the summary where this session stood; total-recall recorded it from the transcript "
                   "(copy the block with its total-recall-memory tags):")


@dataclass
class Ctx:
    event: str
    data: dict[str, Any]
    db: Path
    state: Path
    deadline: float
    rec: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)  # when the hook began (perf_counter)

    def str_field(self, name: str) -> str | None:
        v = self.data.get(name)
        return v if isinstance(v, str) and v else None


def answer(event_name: str, text: str) -> str:
    if not text:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event_name,
                                              "additionalContext": text[:MAX_CONTEXT]}}, ensure_ascii=False)


def open_db(ctx: Ctx) -> sqlite3.Connection:
    """Read-only connection whose queries and lock waits stop at the hook's deadline."""
    from index.db import open_reader

    return open_reader(ctx.db, deadline=ctx.deadline)


def roots(ctx: Ctx) -> list[Path]:
    """Transcript roots to index: the configured ones, plus the `projects` folder holding this
    session's transcript when it belongs to a known agent home. Anything else (a stray
    `/tmp/x/stray.jsonl` would make `/tmp` a root, `/stray.jsonl` the whole disk) is refused and
    logged as `refused_root`."""
    from lib.paths import projects_roots

    out = projects_roots()
    tp = ctx.str_field("transcript_path")
    if not tp:
        return out
    root, refused = derived_root(tp, out)
    if refused is not None:
        ctx.rec["refused_root"] = refused
    elif root is not None and root.is_dir() and not any(root == r or r in root.parents for r in out):
        out.append(root)
    return out


def agent_homes(configured: list[Path]) -> set[Path]:
    """Claude Code config dirs we know of: CLAUDE_CONFIG_DIR, ~/.claude, the parents of the configured roots."""
    homes = {Path.home() / ".claude", *(r.parent for r in configured)}
    if os.environ.get("CLAUDE_CONFIG_DIR"):
        homes.add(Path(os.environ["CLAUDE_CONFIG_DIR"]).expanduser())
    return homes


def derived_root(transcript_path: str, configured: list[Path]) -> tuple[Path | None, str | None]:
    """(root, None) when the transcript sits in `<agent home>/projects/<project>/` (a main session file)
    or `…/<project>/<session>/subagents/`, where the agent home is a known one or a `.claude` folder;
    else (None, the folder that would have been walked)."""
    path = Path(transcript_path).expanduser()
    guess = path.parent.parent
    if not path.is_absolute():
        return None, str(guess)
    homes = agent_homes(configured)
    for root in (path.parents[1] if len(path.parents) > 1 else None,
                 path.parents[3] if len(path.parents) > 3 else None):
        if root is None or root.name != "projects":
            continue
        home = root.parent
        if home in (Path(home.anchor), Path.home()) or not (home in homes or home.name == ".claude"):
            return None, str(root)
        return root, None
    return None, str(guess)


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


def session_start(ctx: Ctx) -> str:
    from index.db import IndexMissing

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
    from index.bundle import operator_context

    bundle = operator_context(conn, cwd, budget=BUNDLE_BUDGET, session_id=sid)
    ctx.rec["bundle_chars"] = len(bundle.text)
    ctx.rec["dropped"] = bundle.dropped
    if bundle.text:
        parts.append(bundle.text)
    if source in ("startup", "resume") and _index_is_stale(ctx):
        from hooks.spawn import spawn_index

        ctx.rec["spawn"] = spawn_index(ctx.db, roots(ctx), trigger="session-start")
    text = "\n\n".join(parts)
    ctx.rec["injected_chars"] = len(text)
    return answer("SessionStart", text)


def restore_packet(ctx: Ctx, conn: sqlite3.Connection | None, sid: str, cwd: str | None) -> str:
    from index.continuation import Packet, continuation

    saved = read_json(continuation_file(ctx.state, sid))
    if isinstance(saved, dict):
        try:
            ctx.rec["packet_source"] = "saved"
            return Packet.from_json(saved).render(PACKET_BUDGET)
        except Exception:  # noqa: BLE001 - a damaged file: rebuild the packet instead
            pass
    ctx.rec["packet_source"] = "rebuilt"
    return continuation(conn, sid, cwd=cwd, transcript_path=ctx.str_field("transcript_path")).render(PACKET_BUDGET)


def pre_compact(ctx: Ctx) -> str:
    from index.continuation import continuation
    from index.db import IndexError_

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
    packet = continuation(conn, sid, cwd=ctx.str_field("cwd"), transcript_path=ctx.str_field("transcript_path"))
    ctx.rec["trigger"] = ctx.str_field("trigger")
    ctx.rec["packet_sources"] = packet.sources
    ctx.rec["saved"] = write_json(continuation_file(ctx.state, sid), packet.to_json())
    text = packet.render(PACKET_BUDGET)
    ctx.rec["packet_chars"] = len(text)
    # PreCompact's plain stdout joins the compaction instructions (JSON would not).
    return f"{PRECOMPACT_LEAD}\n{text}" if text else ""


def reindex(ctx: Ctx) -> str:
    """Stop and PostCompact: a detached incremental index (a full one if there is no index yet)."""
    from hooks.spawn import spawn_index

    first = not ctx.db.exists()
    ctx.rec["spawn"] = spawn_index(ctx.db, roots(ctx), full=first, jobs=2 if first else 1, trigger=ctx.event)
    return ""


def user_prompt_submit(ctx: Ctx) -> str:
    prompt = ctx.data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        ctx.rec["skipped"] = "no prompt"
        return ""
    if not ctx.db.exists():
        ctx.rec["skipped"] = "no index"
        return ""
    from hooks.prompt import prompt_context

    return answer("UserPromptSubmit", prompt_context(ctx, lambda: open_db(ctx), prompt))


HANDLERS = {
    "session-start": (session_start, "SessionStart"),
    "user-prompt-submit": (user_prompt_submit, "UserPromptSubmit"),
    "stop": (reindex, "Stop"),
    "post-compact": (reindex, "PostCompact"),
    "pre-compact": (pre_compact, "PreCompact"),
}
