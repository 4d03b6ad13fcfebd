"""Another agent's events -> the records the Claude Code walker reads (`lib.records.RecordState`).

Every source speaks through an `Emitter`: it writes the same record shapes Claude Code writes (a
user prompt, assistant text, a tool call, its result, a compaction boundary) and hands them to the
reference record handler, so classification, length caps, `<private>` spans, total-recall's own
injected blocks, session metadata and the parent chain are handled in one place for every agent.
Reasoning / thinking is never passed in: the readers drop it where they find it.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from lib.model import FileChunk, FileInfo, Turn
from lib.records import RecordState

# Tool names of other agents that do what a Claude Code tool does: the digest, the continuation
# packet and the profiles count edits and shell commands by the Claude Code name.
SHELL_TOOLS = frozenset(
    {"shell", "exec_command", "local_shell", "run_shell_command", "bash", "shell_command"}
)
EDIT_NAMES = {
    "replace": "Edit",
    "edit": "Edit",
    "str_replace": "Edit",
    "write_file": "Write",
    "write": "Write",
    "create": "Write",
}
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)
INTERRUPT = "[Request interrupted by user]"


def iso(ms: Any) -> str | None:
    """An epoch in milliseconds (OpenCode) as the ISO-8601 text every other source writes."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    except (OverflowError, OSError, ValueError):
        return None


def tool_input(name: str, args: Any) -> tuple[str, Any]:
    """(Claude Code tool name, input) for another agent's tool call: shells become `Bash` with a
    `command`, edits `Edit`/`Write` with a `file_path`, an apply_patch an `Edit` of its first file."""
    low = name.lower()
    if isinstance(args, dict) and low == "apply_patch" and isinstance(args.get("input"), str):
        args = args["input"]  # older Codex: a function call whose JSON arguments hold the patch
    if isinstance(args, dict):
        if low in SHELL_TOOLS:
            cmd = args.get("command", args.get("cmd"))
            if isinstance(cmd, list):
                cmd = " ".join(str(c) for c in cmd)
            return "Bash", {"command": str(cmd or ""), "description": str(args.get("description") or "")}
        if low in EDIT_NAMES:
            path = args.get("file_path") or args.get("filePath") or args.get("path")
            body = next(
                (
                    args[k]
                    for k in ("new_string", "newString", "new_str", "content", "file_text")
                    if args.get(k)
                ),
                None,
            )
            out = {
                "file_path": str(path or ""),
                "new_string" if EDIT_NAMES[low] == "Edit" else "content": body,
            }
            return EDIT_NAMES[low], out
        if isinstance(args.get("filePath"), str) and "file_path" not in args:  # OpenCode's spelling
            return name, {"file_path": args["filePath"], **args}
        return name, args
    if isinstance(args, str) and low == "apply_patch":
        files = _PATCH_FILE.findall(args)
        return "Edit", {"file_path": files[0].strip() if files else "", "new_string": args}
    return name, {"input": args} if args is not None else {}


class Emitter:
    """Builds one chunk of another agent's file through the reference record handler.

    `ctx` (kept in `carry.source`, so a file read in increments gives the rows of one pass) holds
    what a format says once: session id, cwd, branch, version, model."""

    def __init__(self, chunk: FileChunk, info: FileInfo) -> None:
        self.chunk = chunk
        self.info = info
        self.state = RecordState(chunk, info)
        self.ctx: dict[str, Any] = chunk.carry.source

    @property
    def sid(self) -> str:
        return str(self.ctx.get("sid") or self.info.stem)

    def set(self, **values: Any) -> None:
        """Session facts (sid, cwd, branch, version, model); empty values do not erase known ones."""
        for k, v in values.items():
            if isinstance(v, str) and v:
                self.ctx[k] = v

    def _rec(self, kind: str, uuid: str, ts: Any, side: str | None) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "type": kind,
            "uuid": uuid,
            "parentUuid": self.state.prev_uuid,
            "sessionId": self.sid,
            "timestamp": ts if isinstance(ts, str) else None,
            "cwd": self.ctx.get("cwd"),
            "gitBranch": self.ctx.get("branch"),
            "version": self.ctx.get("version"),
        }
        if side:
            rec["isSidechain"], rec["agentId"] = True, side
        return rec

    def user(
        self, uuid: str, ts: Any, text: str, offset: int, *, meta: bool = False, side: str | None = None
    ) -> None:
        """A user turn: the human's prompt, or (`meta`) text the tool put there (context, reminders)."""
        if not text.strip():
            return
        rec = self._rec("user", uuid, ts, side)
        rec["message"] = {"role": "user", "content": text}
        if meta:
            rec["isMeta"] = True
        self.state.record(rec, offset)

    def text(
        self, uuid: str, ts: Any, text: str, offset: int, *, model: str | None = None, side: str | None = None
    ) -> None:
        if not text.strip():
            return
        self._assistant(uuid, ts, [{"type": "text", "text": text}], offset, model, side)

    def tool_call(
        self,
        uuid: str,
        ts: Any,
        name: str,
        args: Any,
        call_id: str,
        offset: int,
        *,
        model: str | None = None,
        side: str | None = None,
    ) -> None:
        cc_name, inp = tool_input(name or "?", args)
        block = {"type": "tool_use", "id": call_id, "name": cc_name, "input": inp}
        self._assistant(uuid, ts, [block], offset, model, side)

    def tool_result(
        self,
        uuid: str,
        ts: Any,
        call_id: str,
        output: str,
        offset: int,
        *,
        error: bool = False,
        side: str | None = None,
    ) -> None:
        rec = self._rec("user", uuid, ts, side)
        block = {"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": error}
        rec["message"] = {"role": "user", "content": [block]}
        self.state.record(rec, offset)

    def interrupt(self, uuid: str, ts: Any, offset: int) -> None:
        self.user(uuid, ts, INTERRUPT, offset)

    def compaction(self, uuid: str, ts: Any, summary: str, offset: int) -> None:
        """The agent compacted its context: a boundary, then its summary (when it wrote one)."""
        rec = self._rec("system", uuid, ts, None)
        rec.update(
            subtype="compact_boundary", content="Conversation compacted", compactMetadata={"trigger": "auto"}
        )
        self.state.record(rec, offset)
        if summary.strip():
            rec = self._rec("user", uuid + ":summary", ts, None)
            rec.update(isCompactSummary=True, message={"role": "user", "content": summary})
            self.state.record(rec, offset)

    def title(self, title: str) -> None:
        if title.strip():
            self.state.record({"type": "ai-title", "sessionId": self.sid, "aiTitle": title}, 0)

    def usage(
        self,
        key: str,
        ts: Any,
        *,
        model: str | None,
        input_tokens: int,
        output_tokens: int,
        cache_read: int = 0,
        cache_write: int = 0,
        side: str | None = None,
    ) -> None:
        """One API call's tokens, in Claude Code's terms: `input_tokens` excludes cache reads."""
        if not (input_tokens or output_tokens or cache_read or cache_write):
            return
        model = model or self.ctx.get("model")
        self.chunk.turns.append(
            Turn(
                message_id=key,
                request_id="",
                session_id=self.sid,
                uuid=key,
                ts=ts if isinstance(ts, str) else None,
                model=model,
                input_tokens=max(0, input_tokens),
                output_tokens=max(0, output_tokens),
                cache_creation_tokens=max(0, cache_write),
                cache_5m_tokens=max(0, cache_write),
                cache_1h_tokens=0,
                cache_read_tokens=max(0, cache_read),
                is_sidechain=side is not None,
                agent_id=side,
            )
        )
        if model:
            self.state.session(self.sid).models.add(model)

    def _assistant(
        self,
        uuid: str,
        ts: Any,
        blocks: list[dict[str, Any]],
        offset: int,
        model: str | None,
        side: str | None,
    ) -> None:
        rec = self._rec("assistant", uuid, ts, side)
        rec["message"] = {
            "id": uuid,
            "role": "assistant",
            "model": model or self.ctx.get("model"),
            "content": blocks,
        }
        self.state.record(rec, offset)

    def finish(self) -> FileChunk:
        self.state.finish()
        return self.chunk


def num(v: Any) -> int:
    """A token count as found (int, float or missing)."""
    if isinstance(v, bool):
        return 0
    if isinstance(v, (int, float)):
        return int(v)
    return 0


def as_dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def as_text(v: Any) -> str:
    """Text of a string, a list of `{text}` parts, or anything else (JSON-ish via str)."""
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "\n".join(
            as_text(x.get("text", x.get("output", ""))) if isinstance(x, dict) else as_text(x) for x in v
        )
    if isinstance(v, dict):
        return as_text(v.get("text", v.get("output", v.get("content", ""))))
    return "" if v is None else str(v)
