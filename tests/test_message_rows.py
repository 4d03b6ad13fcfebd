"""The message rows a worker hands to the writer (index/store/message_rows.py) and the FTS rows the
writer pairs with them by position (`writer._fts_rows`): the same rows as looking each inserted
message up by uuid, whichever rows the insert kept (a repeated uuid, a prefix stored already)."""

from __future__ import annotations

import pickle
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from index.store.idents import identifier_parts
from index.store.message_rows import fts_columns, message_rows
from index.store.record_rows import turn_rows
from index.store.schema import session_token
from index.store.textstore import pack, unpack
from index.store.writer import _fts_rows
from lib.model import Message, Turn

_MESSAGES = st.lists(
    st.tuples(st.sampled_from("abcdefgh"), st.sampled_from(["s1", "s2"]), st.text(max_size=30)),
    max_size=12,
)


def _by_uuid(rows: list[tuple[str, str, str]], new: list[tuple[int, str]]) -> list[tuple[int, str, str, str]]:
    """The writer before: every field looked up by uuid (a uuid seen twice: its last text, session)."""
    fields = {u: (t, identifier_parts(t)) for u, _, t in rows}
    sessions = {u: session_token(s) for u, s, _ in rows}
    return [(rid, *fields[u], sessions[u]) for rid, u in new]


@settings(max_examples=300, deadline=None)
@given(_MESSAGES, st.sets(st.sampled_from("abcdefgh")))
def test_fts_rows_by_position_as_by_uuid(rows: list[tuple[str, str, str]], stored: set[str]) -> None:
    messages = [
        Message(uuid=u, session_id=s, parent_uuid=None, role="user", kind="prompt", ts=None, text=t)
        for u, s, t in rows
    ]
    bodies, texts, idents = fts_columns(messages)
    table = message_rows(messages, bodies)
    last = {u: t for u, _, t in rows}
    assert [unpack(r[6]) for r in table] == [last[u] for u, _, _ in rows]
    # what INSERT OR IGNORE keeps: each uuid's first row, unless stored already; ids in that order
    kept = [u for u in dict.fromkeys(u for u, _, _ in rows) if u not in stored]
    new = [(100 + n, u) for n, u in enumerate(kept)]
    assert _fts_rows(table, texts, idents, new) == _by_uuid(rows, new)


_TEXTS = st.text(max_size=600) | st.text(
    alphabet="aBcD1 _.\ud800\u00e9", max_size=600
)  # a lone surrogate too


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), _TEXTS), max_size=8))
def test_fts_columns_equal_each_text_packed_and_split(rows: list[tuple[str, str]]) -> None:
    """`fts_columns` (each text encoded once for both) equals `pack` and `identifier_parts` of each
    message's text (a uuid seen twice: its last text), surrogates and texts past the raw limit included."""
    messages = [
        Message(uuid=u, session_id="s", parent_uuid=None, role="user", kind="prompt", ts=None, text=t)
        for u, t in rows
    ]
    last = {u: t for u, t in rows}
    texts = [last[u] for u, _ in rows]
    assert fts_columns(messages) == (
        tuple(map(pack, texts)),
        tuple(texts),
        tuple(identifier_parts(t) for t in texts),
    )


# Equal values as distinct objects, as the parser makes them.
_IDS = st.sampled_from(["a", "bb", "s1", "model-x"]).map(lambda s: "".join(list(s)))
_OPT = st.none() | _IDS


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_IDS, _IDS, _OPT, _OPT), max_size=10))
def test_rows_repeat_the_previous_rows_objects_and_stay_equal(fields: list[tuple[Any, ...]]) -> None:
    """A session id, model or parent equal to the previous row's (its session and model; its uuid for the
    parent) is put in as that object; the message and turn rows equal the plain ones, pickled or not."""
    messages = [
        Message(
            uuid=u, session_id=s, parent_uuid=p, role="assistant", kind="text", ts=None, text="x", model=mo
        )
        for u, s, p, mo in fields
    ]
    turns = [Turn(u, "r", s, u, None, mo, 1, 2, 3, 4, 5, 6, False, p) for u, s, p, mo in fields]
    table, rows = message_rows(messages, tuple(b"" for _ in messages)), turn_rows(turns)
    plain = [
        (m.uuid, m.session_id, m.parent_uuid, m.role, m.kind, m.ts, b"", m.agent_id, m.is_sidechain)
        + (
            m.tool_name,
            m.tool_use_id,
            m.tool_target,
            m.is_error,
            m.message_id,
            m.model,
            m.byte_offset,
            m.agent,
        )
        for m in messages
    ]
    plain_turns = [
        (
            t.message_id,
            t.request_id,
            t.session_id,
            t.uuid,
            t.ts,
            t.model,
            1,
            2,
            3,
            4,
            5,
            6,
            0,
            False,
            t.agent_id,
        )
        for t in turns
    ]
    assert table == plain and rows == plain_turns
    assert pickle.loads(pickle.dumps((table, rows))) == (plain, plain_turns)
    for (a, b), (ta, tb) in zip(zip(table, table[1:]), zip(rows, rows[1:])):
        for i in (1, 14):
            assert (b[i] is a[i]) == (b[i] == a[i] and b[i] is not None) or b[i] is None
        for i in (2, 5):
            assert (tb[i] is ta[i]) or tb[i] != ta[i] or tb[i] is None
        if b[2] is not None and b[2] == a[0]:
            assert b[2] is a[0]
