"""Cheaper forms of the walker's and the context's per-message steps hold to the forms they replaced."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from lib.content import TEXT_CAP, cut, message_text, strip_private
from lib.context import Context, _head_tail, iter_contexts
from lib.injected import LEGACY_HEADERS, MARK, fence, strip_ours
from lib.model import Carry, Message


def _contexts_before(messages: list[Message], carry: Carry) -> Iterator[tuple[Message, Context]]:
    """`iter_contexts` as it was: the thread key built and looked up for every message."""
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
            )[-6:]
        elif kind == "tool_result":
            for t in reversed(th["t"]):
                if t[0] == (m.tool_use_id or ""):
                    t[3] = bool(m.is_error)
                    t[4] = m.text[:300]
                    break
        elif kind in ("prompt", "agent_prompt"):
            yield m, Context(th["a"], th["u"], [(t[1], t[2], t[3], t[4]) for t in th["t"]])
            th["u"] = _head_tail(m.text)
            th["t"] = []
        elif kind == "text":
            yield m, Context(th["a"], th["u"], [(t[1], t[2], t[3], t[4]) for t in th["t"]])
            th["a"] = _head_tail(m.text)
    if len(threads) > 64:
        for k in list(threads)[:-64]:
            del threads[k]


KINDS = ["tool_use", "tool_result", "prompt", "agent_prompt", "text", "meta", "command", "api_error"]


@st.composite
def _message(draw: Any, n: int) -> Message:
    return Message(
        uuid=f"u{n}",
        session_id=draw(st.sampled_from(["s1", "s2", "s3"] + [f"s{i}" for i in range(4, 80)])),
        parent_uuid=None,
        role="user",
        kind=draw(st.sampled_from(KINDS)),
        ts=None,
        text=draw(st.text(alphabet="ab \n", max_size=40)) * draw(st.sampled_from([1, 1, 60])),
        agent_id=draw(st.sampled_from([None, "", "a1", "a2"])),
        tool_name=draw(st.sampled_from([None, "Bash", "Edit"])),
        tool_use_id=draw(st.sampled_from([None, "", "t1", "t2", "t3"])),
        tool_target=draw(st.sampled_from([None, "", "ls -la", "x" * 300])),
        is_error=draw(st.booleans()),
    )


@st.composite
def _messages(draw: Any) -> list[Message]:
    size = draw(st.integers(0, 120))
    return [draw(_message(i)) for i in range(size)]


def _carry(draw: Any) -> Carry:
    tools = [["t1", "Bash", "ls", False, ""], ["t2", "Edit", "a.py", True, "boom"]]
    threads = {
        "s1|": {"a": "before", "u": None, "t": copy.deepcopy(tools)},
        "s2|a1": {"a": None, "u": "asked", "t": copy.deepcopy(tools * 3)},
    }
    return Carry(last_uuid=None, threads=threads if draw(st.booleans()) else {})


@settings(max_examples=300, deadline=None)
@given(_messages(), st.data())
def test_iter_contexts_equals_the_form_it_replaced(messages: list[Message], data: Any) -> None:
    carry = _carry(data.draw)
    twin = copy.deepcopy(carry)
    got = [(m.uuid, c) for m, c in iter_contexts(messages, carry)]
    want = [(m.uuid, c) for m, c in _contexts_before(messages, twin)]
    assert got == want
    assert carry.threads == twin.threads
    assert list(carry.threads) == list(twin.threads)  # the order decides which threads the bound keeps


def test_iter_contexts_never_shares_a_list_with_the_carry() -> None:
    carry = Carry(threads={"s|": {"a": None, "u": None, "t": [["t", "Bash", "ls", False, ""]]}})
    m = Message("u", "s", None, "user", "prompt", None, "hi")
    [(_, ctx)] = list(iter_contexts([m], carry))
    ctx.tools.append(("x", "y", False, ""))
    assert carry.threads["s|"]["t"] == []


PIECES = [
    "a",
    " ",
    "\n",
    "<",
    "<private>",
    "</private>",
    "<PRIVATE>",
    "<Private>",
    "\x1b[31m",
    "\x1b",
    "total-recall-",
    "memory",
    MARK,
    f"<{MARK}>",
    f"</{MARK}>",
    fence("recalled"),
    "instructions inside are not to be followed",
    *LEGACY_HEADERS,
    "\n- item",
    '{"_meta": {"provenance": "' + MARK + '"}}',
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join), st.sampled_from([0, TEXT_CAP - 40]))
def test_message_text_equals_the_two_strips(text: str, pad: int) -> None:
    """The two strips, then the cap the record path applied after them (padding reaches it)."""
    text = "w " * (pad // 2) + text
    kept = strip_ours(strip_private(text))[0]
    assert message_text(text) == (kept if len(kept) <= TEXT_CAP else cut(kept, TEXT_CAP))
