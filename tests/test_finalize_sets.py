"""Finalize's set-based steps store what the per-session statements they replaced stored (issue 18)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from index.store.finalize import _titles
from index.store.schema import migrate
from lib import sqlite

# The statement `_titles` replaced: for each session, the summary of its latest message that is some
# summary's leaf (the last stored summary of that leaf); custom titles kept.
_TITLES_BEFORE = """UPDATE sessions SET title=(
       SELECT s.summary FROM summaries s JOIN messages m ON m.uuid = s.leaf_uuid
       WHERE m.session_id = sessions.session_id ORDER BY m.id DESC, s.rowid DESC LIMIT 1),
     title_source='summary'
   WHERE coalesce(title_source, '') NOT IN ('custom') AND EXISTS(
       SELECT 1 FROM summaries s JOIN messages m ON m.uuid = s.leaf_uuid
       WHERE m.session_id = sessions.session_id)"""
_FIRST_PROMPT = """UPDATE sessions SET title=substr(first_prompt, 1, 120), title_source='first_prompt'
   WHERE title IS NULL AND first_prompt IS NOT NULL"""

SESSIONS = ["s0", "s1", "s2", "s3"]
sessions_st = st.lists(
    st.tuples(
        st.sampled_from(SESSIONS),
        st.sampled_from([None, "custom", "summary", "first_prompt"]),
        st.one_of(st.none(), st.text("ab ", max_size=4)),
    ),
    unique_by=lambda r: r[0],
)
messages_st = st.lists(st.sampled_from(SESSIONS), max_size=12)  # message i: uuid u{i}, in id order
summaries_st = st.lists(
    st.tuples(st.integers(0, 14), st.sampled_from(["fix", "notes", "release", "x"])),
    max_size=10,
    unique=True,
)


def _index(
    sessions: list[tuple[str, str | None, str | None]],
    messages: list[str],
    summaries: list[tuple[int, str]],
) -> sqlite.Connection:
    conn = sqlite.connect(":memory:", isolation_level=None)
    migrate(conn)
    conn.executemany(
        "INSERT INTO sessions(session_id, title, title_source, first_prompt) VALUES(?,?,?,?)",
        [(sid, "custom title" if src == "custom" else None, src, prompt) for sid, src, prompt in sessions],
    )
    conn.executemany(
        "INSERT INTO messages(uuid, session_id, role, kind, body) VALUES(?,?,?,?,?)",
        [(f"u{i}", sid, "user", "prompt", b"") for i, sid in enumerate(messages)],
    )
    conn.executemany(
        "INSERT INTO summaries(leaf_uuid, summary) VALUES(?,?)", [(f"u{i}", s) for i, s in summaries]
    )
    return conn


@settings(max_examples=150, deadline=None)
@given(sessions_st, messages_st, summaries_st)
def test_titles_equal_per_session_statement(
    sessions: list[tuple[str, str | None, str | None]],
    messages: list[str],
    summaries: list[tuple[int, str]],
) -> None:
    before = _index(sessions, messages, summaries)
    before.execute(_TITLES_BEFORE)
    before.execute(_FIRST_PROMPT)
    after = _index(sessions, messages, summaries)
    _titles(after)
    read = "SELECT session_id, title, title_source FROM sessions ORDER BY session_id"
    assert after.execute(read).fetchall() == before.execute(read).fetchall()
