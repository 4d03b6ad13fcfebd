"""The message rows a worker hands to the writer (index/store/message_rows.py) and the FTS rows the
writer pairs with them by position (`writer._fts_rows`): the same rows as looking each inserted
message up by uuid, whichever rows the insert kept (a repeated uuid, a prefix stored already)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from index.store.message_rows import fts_fields, message_rows
from index.store.schema import session_token
from index.store.textstore import unpack
from index.store.writer import _fts_rows
from lib.model import Message

_MESSAGES = st.lists(
    st.tuples(st.sampled_from("abcdefgh"), st.sampled_from(["s1", "s2"]), st.text(max_size=30)),
    max_size=12,
)


def _by_uuid(rows: list[tuple[str, str, str]], new: list[tuple[int, str]]) -> list[tuple[int, str, str, str]]:
    """The writer before: every field looked up by uuid (a uuid seen twice: its last text, session)."""
    memo: dict[bytes, tuple[str, ...]] = {}
    fields = {u: fts_fields(t, memo)[1:] for u, _, t in rows}
    sessions = {u: session_token(s) for u, s, _ in rows}
    return [(rid, *fields[u], sessions[u]) for rid, u in new]


@settings(max_examples=300, deadline=None)
@given(_MESSAGES, st.sets(st.sampled_from("abcdefgh")))
def test_fts_rows_by_position_as_by_uuid(rows: list[tuple[str, str, str]], stored: set[str]) -> None:
    messages = [
        Message(uuid=u, session_id=s, parent_uuid=None, role="user", kind="prompt", ts=None, text=t)
        for u, s, t in rows
    ]
    memo: dict[bytes, tuple[str, ...]] = {}
    fields = {m.uuid: fts_fields(m.text, memo) for m in messages}
    per_row = [fields[m.uuid] for m in messages]
    bodies = tuple(f[0] for f in per_row)
    texts, idents = tuple(f[1] for f in per_row), tuple(f[2] for f in per_row)
    table = message_rows(messages, bodies)
    assert [unpack(r[6]) for r in table] == [fields[u][1] for u, _, _ in rows]
    # what INSERT OR IGNORE keeps: each uuid's first row, unless stored already; ids in that order
    kept = [u for u in dict.fromkeys(u for u, _, _ in rows) if u not in stored]
    new = [(100 + n, u) for n, u in enumerate(kept)]
    assert _fts_rows(table, texts, idents, new) == _by_uuid(rows, new)
