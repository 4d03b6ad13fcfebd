"""Conversational context for extractors, in file order per thread (session + agent).

Context is defined by file order within a thread so that indexing a file in any number of
increments gives the same context as one full pass: the carry holds each thread's tail.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lib.model import Carry, Message

_CAP = 1500
_TOOLS = 6
_HEAD = 300


@dataclass(slots=True)
class Context:
    prev_assistant_text: str | None = None
    prev_user_text: str | None = None
    # (name, target, is_error, result_head), oldest first
    tools: list[tuple[str, str, bool, str]] = field(default_factory=list)


def _head_tail(text: str, cap: int = _CAP) -> str:
    """Long messages keep their start and their end: a closing question ("Want me to apply it?") is
    what a short reply answers."""
    if len(text) <= cap:
        return text
    return text[: cap // 2] + " … " + text[-(cap // 2) :]


def iter_contexts(messages: list[Message], carry: Carry) -> Iterator[tuple[Message, Context]]:
    """Yield (message, context) for human prompts and assistant text; update `carry` as we go.

    Consecutive messages mostly belong to one thread, so its state is looked up again only when the
    session or agent changes (the key string and a dict probe per message were ~4 % of extraction);
    every message still creates its thread when missing, as the carry keeps threads in that order."""
    threads = carry.threads
    th: dict[str, Any] = {}
    sid: str | None = None
    aid: str | None = None
    for m in messages:
        if m.session_id != sid or m.agent_id != aid or sid is None:
            sid, aid = m.session_id, m.agent_id
            key = f"{sid}|{aid or ''}"
            got = threads.get(key)
            if got is None:
                got = threads[key] = {"a": None, "u": None, "t": []}
            th = got
        kind = m.kind
        if kind == "tool_use":
            tools = th["t"]
            entry = [m.tool_use_id or "", m.tool_name or "", (m.tool_target or "")[:200], False, ""]
            # A new list, as before: a context never shares the carry's (nor the JSON it came from).
            th["t"] = [*tools[1 - _TOOLS :], entry] if len(tools) >= _TOOLS else [*tools, entry]
        elif kind == "tool_result":
            tid = m.tool_use_id or ""
            for t in reversed(th["t"]):
                if t[0] == tid:
                    t[3] = bool(m.is_error)
                    t[4] = m.text[:_HEAD]
                    break
        elif kind == "text" or kind == "prompt" or kind == "agent_prompt":
            tools = th["t"]
            yield m, Context(th["a"], th["u"], [(t[1], t[2], t[3], t[4]) for t in tools] if tools else [])
            if kind == "text":
                th["a"] = _head_tail(m.text)
            else:
                th["u"] = _head_tail(m.text)
                th["t"] = []
    # Bound the carry: keep only the threads touched most recently.
    if len(threads) > 64:
        for k in list(threads)[:-64]:
            del threads[k]
