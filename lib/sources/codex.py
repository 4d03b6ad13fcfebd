"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): append-only JSONL, read
from a byte cursor like Claude Code's transcripts.

Records are `{timestamp, type, payload}`: `session_meta` (id, cwd, cli_version, git), `turn_context`
(cwd, model), `response_item` (assistant messages, function / custom tool calls and their outputs,
reasoning — never stored), `event_msg` (the user's message as typed, token counts, aborts),
`compacted`. The user's words come from `event_msg/user_message`: the `response_item` user
messages repeat them next to the context Codex injects (environment, AGENTS.md). Rollouts from
before the envelope (mid-2025) are bare response items after a `{id, timestamp, instructions}`
line; their user messages are the prompts.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

import orjson

from lib.model import Carry, FileChunk, FileInfo
from lib.sources.emit import Emitter, as_dict, as_text, num
from lib.walker import read_lines

_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "tool_search_output",
    }
)
_CALLS = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call"}
)
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
# The IDE extension wraps the typed request: mentioned files first, then this heading.
_REQUEST = "## My request for Codex:"
_EXIT = re.compile(r"(?:exited with code|Exit code:)\s*(-?\d+)")
_INJECTED = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
)


def parse(path: str, start: int, carry: Carry, info: FileInfo) -> FileChunk:
    chunk = FileChunk(path=path, start=start, end=start, carry=carry)
    reader = _Reader(Emitter(chunk, info))
    read_lines(path, start, chunk, reader.record)
    return reader.em.finish()


class _Reader:
    def __init__(self, em: Emitter) -> None:
        self.em = em

    def record(self, rec: dict[str, Any], offset: int) -> None:
        t = rec.get("type")
        payload = rec.get("payload")
        ts = rec.get("timestamp")
        if not isinstance(payload, dict):
            if t in _ITEM_TYPES:  # a legacy rollout: the item is the record
                self.em.ctx["legacy"] = True
                self._item(rec, ts, offset)
            elif isinstance(rec.get("id"), str) and "instructions" in rec:
                self._meta(rec)
            else:
                self._skip(str(t))
            return
        if t == "session_meta":
            self._meta(payload)
        elif t == "turn_context":
            self.em.set(cwd=payload.get("cwd"), model=payload.get("model"))
        elif t == "response_item":
            self._item(payload, ts, offset)
        elif t == "event_msg":
            self._event(payload, ts, offset)
        elif t == "compacted":
            self.em.compaction(self._uuid(offset), ts, as_text(payload.get("message")), offset)
        else:
            self._skip(str(t))

    def _meta(self, p: dict[str, Any]) -> None:
        if "sid" not in self.em.ctx:  # a fork repeats its parent's meta later on: the first is the file's
            self.em.set(sid=p.get("id"))
        self.em.set(
            cwd=p.get("cwd"), version=p.get("cli_version"), branch=as_dict(p.get("git")).get("branch")
        )

    def _uuid(self, offset: int, n: int = 0) -> str:
        return f"{self.em.sid}:{offset}" + (f":{n}" if n else "")

    def _skip(self, what: str) -> None:
        self.em.chunk.skipped += 1
        self.em.chunk.record_types["codex:" + what] += 1

    def _item(self, p: dict[str, Any], ts: Any, offset: int) -> None:
        kind = p.get("type")
        uuid = self._uuid(offset)
        if kind == "message":
            text = _content_text(p.get("content"))
            role = p.get("role")
            if role == "assistant":
                self.em.text(uuid, ts, text, offset)
            elif role == "user" and self.em.ctx.get("legacy"):
                self.em.user(uuid, ts, text, offset, meta=text.lstrip().startswith(_INJECTED))
            else:
                self._skip("message:" + str(role))  # developer / injected context; the prompt is the event
        elif kind in _CALLS:
            name = str(p.get("name") or kind.removesuffix("_call"))
            args: Any = p.get("arguments", p.get("input", p.get("action")))
            if isinstance(args, str) and kind == "function_call":
                with contextlib.suppress(orjson.JSONDecodeError):  # else kept as the text it is
                    args = orjson.loads(args)
            call_id = str(p.get("call_id") or p.get("id") or uuid)
            self.em.tool_call(uuid, ts, name, args, call_id, offset)
        elif kind in _OUTPUTS:
            out, error = _output(p)
            self.em.tool_result(uuid, ts, str(p.get("call_id") or ""), out, offset, error=error)
        else:
            self._skip(str(kind))  # reasoning: never stored

    def _event(self, p: dict[str, Any], ts: Any, offset: int) -> None:
        kind = p.get("type")
        if kind == "user_message":
            text = as_text(p.get("message"))
            if _REQUEST in text:
                text = text.split(_REQUEST, 1)[1].strip()
            self.em.user(self._uuid(offset), ts, text, offset)
        elif kind == "token_count":
            self._tokens(p, ts, offset)
        elif kind == "turn_aborted":
            self.em.interrupt(self._uuid(offset), ts, offset)
        else:
            self._skip("event:" + str(kind))  # agent_message repeats the response item; reasoning is dropped

    def _tokens(self, p: dict[str, Any], ts: Any, offset: int) -> None:
        """`last_token_usage` is one API call; Codex repeats the event (rate-limit updates) with the
        same running total, which is counted once. OpenAI's input includes the cached part."""
        info = as_dict(p.get("info"))
        total = as_dict(info.get("total_token_usage"))
        last = as_dict(info.get("last_token_usage"))
        seen = num(total.get("total_tokens"))
        if not last or (seen and seen == self.em.ctx.get("tokens_total")):
            self._skip("token_count:repeat")
            return
        self.em.ctx["tokens_total"] = seen
        cached = num(last.get("cached_input_tokens"))
        self.em.usage(
            self._uuid(offset),
            ts,
            model=None,
            input_tokens=num(last.get("input_tokens")) - cached,
            output_tokens=num(last.get("output_tokens")),
            cache_read=cached,
        )


def _content_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict) and "text" in b)
    return as_text(content)


def _output(p: dict[str, Any]) -> tuple[str, bool]:
    """(text, is_error) of a tool output: a string, a JSON string `{output, metadata: {exit_code}}`
    (older versions) or a list of tools found (tool search)."""
    out = p.get("output", p.get("tools"))
    if isinstance(out, str) and out.startswith("{"):
        try:
            data = orjson.loads(out)
        except orjson.JSONDecodeError:
            data = None
        if isinstance(data, dict) and "output" in data:
            code = as_dict(data.get("metadata")).get("exit_code")
            return as_text(data.get("output")), isinstance(code, int) and code != 0
    if not isinstance(out, str):
        out = orjson.dumps(out, default=str).decode() if out is not None else ""
    m = _EXIT.search(out[:400])
    return out, bool(m and m.group(1) != "0")
