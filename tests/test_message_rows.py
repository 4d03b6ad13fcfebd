"""The message rows a worker hands to the writer (index/store/message_rows.py) and the FTS rows the
writer pairs with them by position (`writer._fts_rows`): the same rows as looking each inserted
message up by uuid, whichever rows the insert kept (a repeated uuid, a prefix stored already)."""

from __future__ import annotations

import pickle
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from index.store.idents import identifier_parts
from index.store.message_rows import fts_columns, message_rows, sharer
from index.store.record_rows import turn_rows
from index.store.schema import session_token
from index.store.textstore import pack, unpack
from index.store.writer import _fts_rows
from lib.model import FileChunk, Message, Turn

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
    table = message_rows(messages, bodies, {}.setdefault)
    last = {u: t for u, _, t in rows}
    assert [unpack(r[6]) for r in table] == [last[u] for u, _, _ in rows]
    # what INSERT OR IGNORE keeps: each uuid's first row, unless stored already; ids in that order
    kept = [u for u in dict.fromkeys(u for u, _, _ in rows) if u not in stored]
    new = [(100 + n, u) for n, u in enumerate(kept)]
    assert _fts_rows(table, texts, idents, new) == _by_uuid(rows, new)


# Equal values as distinct objects, as the parser makes them.
_IDS = st.sampled_from(["a", "bb", "s1", "model-x", "Bash", "toolu_1"]).map(lambda s: "".join(list(s)))
_OPT = st.none() | _IDS
_SHARED = (0, 1, 2, 7, 9, 10, 13, 14)  # uuid, session, parent, agent, tool, tool use, message id, model


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_IDS, _IDS, _OPT, _OPT, _OPT, _OPT, _OPT, _OPT), max_size=10))
def test_rows_share_equal_strings_and_stay_equal(fields: list[tuple[Any, ...]]) -> None:
    """Equal ids and names become one object across the message and turn rows (`same`), and the rows
    are equal to the plain ones, pickled or not: only the objects' identity changes."""
    messages = [
        Message(
            uuid=u,
            session_id=s,
            parent_uuid=p,
            role="assistant",
            kind="text",
            ts=None,
            text="x",
            agent_id=a,
            tool_name=n,
            tool_use_id=t,
            message_id=i,
            model=mo,
        )
        for u, s, p, a, n, t, i, mo in fields
    ]
    turns = [Turn(u, "r", s, u, None, p, 1, 2, 3, 4, 5, 6, False, a) for u, s, p, a, *_ in fields]
    same: dict[Any, Any] = {}
    table = message_rows(messages, tuple(b"" for _ in messages), same.setdefault)
    rows = turn_rows(turns, same.setdefault)
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
    assert table == plain
    assert pickle.loads(pickle.dumps((table, rows))) == (plain, turn_rows(turns, {}.setdefault))
    for r in table:
        assert all(r[i] is same[r[i]] for i in _SHARED)
    for r in rows:
        assert all(r[i] is same[r[i]] for i in (0, 2, 3, 5, 14))


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


def test_sharer_keeps_values_when_a_field_is_not_a_string() -> None:
    """Only a chunk whose id and name fields hold str or None shares objects: an unhashable value from a
    damaged record (a model given as a JSON object) travels as it is instead of stopping the file."""
    ok = Message(
        uuid="u1", session_id="s", parent_uuid=None, role="assistant", kind="text", ts=None, text="x"
    )
    odd = Message(
        uuid="u2", session_id="s", parent_uuid="u1", role="assistant", kind="text", ts=None, text="y"
    )
    odd.model = {"name": "m"}  # type: ignore[assignment]
    chunk = FileChunk(path="p", start=0, end=1, messages=[ok])
    put = sharer(chunk)
    assert put("a" * 3, "a" * 3) is put("".join(["a"] * 3), "x")
    chunk.messages.append(odd)
    put = sharer(chunk)
    rows = message_rows(chunk.messages, (b"", b""), put)
    assert rows[1][14] == {"name": "m"}
    assert put("".join(["a"] * 3), "x") == "aaa"
