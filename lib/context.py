"""Conversational context for extractors, in file order per thread (session + agent).

Context is defined by file order within a thread so that indexing a file in any number of
increments gives the same context as one full pass: the carry holds each thread's tail.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

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
    """Yield (message, context) for human prompts and assistant text; update `carry` as we go."""
    threads = carry.threads
    for m in messages:
        key = f"{m.session_id}|{m.agent_id or ''}"
        th = threads.get(key)
        if th is None:
            th = threads[key] = {"a": None, "u": None, "t": []}
        kind = m.kind
        if kind == "tool_use":
            th["t"] = (
                th["t"] + [[m.tool_use_id or "", m.tool_name or "", (m.tool_target or "")[:200], False, ""]]
            )[-_TOOLS:]
        elif kind == "tool_result":
            for t in reversed(th["t"]):
                if t[0] == (m.tool_use_id or ""):
                    t[3] = bool(m.is_error)
                    t[4] = m.text[:_HEAD]
                    break
        elif kind in ("prompt", "agent_prompt"):
            ctx = Context(th["a"], th["u"], [(t[1], t[2], t[3], t[4]) for t in th["t"]])
            yield m, ctx
            th["u"] = _head_tail(m.text)
            th["t"] = []
        elif kind == "text":
            ctx = Context(th["a"], th["u"], [(t[1], t[2], t[3], t[4]) for t in th["t"]])
            yield m, ctx
            th["a"] = _head_tail(m.text)
    # Bound the carry: keep only the threads touched most recently.
    if len(threads) > 64:
        for k in list(threads)[:-64]:
            del threads[k]
