"""messages_fts knows each message's session (schema v10, issue 18): a search inside the best sessions
lets FTS5 skip to their rows; the writer, the re-read of a file and `forget` keep the session tokens
exact; an index from before v10 is rebuilt by the migration and is searchable before it.

Every transcript is a small file written here (tests/fixtures/make.py); nothing comes from a corpus.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fixtures import make

from index.retrieval.candidates import _candidates, has_session_column
from index.retrieval.search import search_messages, search_sessions
from index.store import finalize, schema
from index.store.db import open_reader, open_writer
from index.store.filters import Filters
from index.store.fts_query import in_message_text, in_sessions, parse
from index.store.idents import identifier_parts
from index.store.ingest import run_index
from index.store.manage import forget
from index.store.schema import session_token
from index.store.session_docs import top_sessions
from index.store.textstore import unpack
from lib import sqlite

CWD = "/home/dev/projects/shop"


def _session(root: Path, name: str, words: str) -> str:
    s = make.Session(make.uid("sfts", name), cwd=CWD)
    s.prompt(f"please look at the {words} problem")
    s.response(text=f"The {words} problem came from a stale cache; fixed it.")
    s.write(root / make.slug(CWD) / f"{s.session_id}.jsonl")
    return s.session_id


def _index(tmp_path: Path, n: int = 3) -> tuple[Path, Path, list[str]]:
    root = tmp_path / "projects"
    ids = [_session(root, f"s{i}", "invoice rounding") for i in range(n)]
    db = tmp_path / "index.db"
    run_index(db, [root])
    return db, root, ids


def _tokens(conn: sqlite.Connection, sid: str) -> int:
    """Rows of messages_fts whose session column holds this session's token."""
    row = conn.execute(
        "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (f"session: {session_token(sid)}",)
    ).fetchone()
    return int(row[0])


def _messages(conn: sqlite.Connection, sid: str) -> int:
    return int(conn.execute("SELECT count(*) FROM messages WHERE session_id=?", (sid,)).fetchone()[0])


def test_every_message_carries_its_session_token(tmp_path: Path) -> None:
    db, _, ids = _index(tmp_path)
    conn = open_reader(db)
    assert has_session_column(conn)
    for sid in ids:
        assert _messages(conn, sid) > 0 and _tokens(conn, sid) == _messages(conn, sid)


def test_search_inside_sessions_returns_only_their_rows(tmp_path: Path) -> None:
    db, _, ids = _index(tmp_path)
    conn = open_reader(db)
    rows = _candidates(conn, '"rounding"', Filters(), 400, [ids[1]])
    assert rows and {r.session_id for r in rows} == {ids[1]}
    assert {r.session_id for r in _candidates(conn, '"rounding"', Filters(), 400)} == set(ids)


def test_rows_of_a_session_sharing_a_token_are_dropped(tmp_path: Path) -> None:
    """Tokens are a hash: a session whose token another one shares still yields only the sessions asked for."""
    db, _, ids = _index(tmp_path, 2)
    with open_writer(db) as w:  # make the second session's rows carry the first one's token
        rows = w.execute("SELECT id, body FROM messages WHERE session_id=?", (ids[1],)).fetchall()
        for rid, body in rows:
            text = unpack(body)
            w.execute(
                "INSERT INTO messages_fts(messages_fts, rowid, text, idents, session) VALUES('delete',?,?,?,?)",
                (rid, text, identifier_parts(text), session_token(ids[1])),
            )
            w.execute(
                "INSERT INTO messages_fts(rowid, text, idents, session) VALUES(?,?,?,?)",
                (rid, text, identifier_parts(text), session_token(ids[0])),
            )
    conn = open_reader(db)
    assert _tokens(conn, ids[0]) == _messages(conn, ids[0]) + _messages(conn, ids[1])
    rows = _candidates(conn, '"rounding"', Filters(), 400, [ids[0]])
    assert rows and {r.session_id for r in rows} == {ids[0]}


def test_a_digit_prefix_does_not_match_session_tokens(tmp_path: Path) -> None:
    db, _, ids = _index(tmp_path)
    conn = open_reader(db)
    prefix = session_token(ids[0])[:3]
    assert search_messages(conn, f"{prefix}*", hybrid=False) == []
    assert search_messages(conn, session_token(ids[0]), hybrid=False) == []
    assert in_message_text('"rounding"') == '"rounding"'  # no column filter where none is needed
    assert in_sessions('"a"', ["x", "x"]).count(session_token("x")) == 1


def test_rereading_a_file_and_forgetting_keep_tokens_exact(tmp_path: Path) -> None:
    """The contentless FTS forgets a row only when given the same values: a wrong session token in a
    delete would leave the old row's token behind, under an id no message of that session holds."""
    db, root, ids = _index(tmp_path)
    conn = open_reader(db)
    first = conn.execute("SELECT session_id FROM messages ORDER BY id LIMIT 1").fetchone()[0]
    conn.close()
    path = root / make.slug(CWD) / f"{first}.jsonl"  # re-read: its rows get new ids after the others
    path.write_bytes(path.read_bytes().replace(b"stale cache", b"stale queue"))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    run_index(db, [root])
    conn = open_reader(db)
    assert conn.execute("SELECT min(id) FROM messages WHERE session_id=?", (first,)).fetchone()[0] > 1
    for sid in ids:
        assert _tokens(conn, sid) == _messages(conn, sid) > 0
    conn.close()
    with open_writer(db) as w:
        forget(w, db, [ids[0]])
        assert _messages(w, ids[0]) == 0 and _tokens(w, ids[0]) == 0
        assert _tokens(w, ids[1]) == _messages(w, ids[1]) > 0


def _as_v9(db: Path) -> None:
    """Turn a current index into one from before v10: messages_fts without the session column."""
    conn = sqlite.connect(db, isolation_level=None)
    rows = conn.execute("SELECT id, body FROM messages").fetchall()
    conn.execute("DROP TABLE messages_fts")
    conn.execute(
        "CREATE VIRTUAL TABLE messages_fts USING fts5(text, idents, content='', tokenize='porter unicode61')"
    )
    conn.executemany(
        "INSERT INTO messages_fts(rowid, text, idents) VALUES(?,?,?)",
        [(rid, t, identifier_parts(t)) for rid, t in ((r[0], unpack(r[1])) for r in rows)],
    )
    conn.execute("UPDATE schema_meta SET value='9' WHERE key='schema_version'")
    conn.close()


def test_an_index_from_before_v10_is_searched_then_migrated(tmp_path: Path) -> None:
    db, _, ids = _index(tmp_path)
    now = open_reader(db)
    want = [(h.session_id, h.uuid) for h in search_messages(now, "invoice rounding cache", hybrid=False)]
    want_sessions = [s.session_id for s in search_sessions(now, "invoice rounding cache", hybrid=False)]
    now.close()
    _as_v9(db)
    old = open_reader(db)
    assert not has_session_column(old)
    assert [
        (h.session_id, h.uuid) for h in search_messages(old, "invoice rounding cache", hybrid=False)
    ] == want
    assert [
        s.session_id for s in search_sessions(old, "invoice rounding cache", hybrid=False)
    ] == want_sessions
    old.close()
    with open_writer(db) as w:  # the writer migrates: the table is rebuilt with its session column
        assert schema.current_version(w) == schema.SCHEMA_VERSION
        for sid in ids:
            assert _tokens(w, sid) == _messages(w, sid) > 0
    migrated = open_reader(db)
    assert [
        (h.session_id, h.uuid) for h in search_messages(migrated, "invoice rounding cache", hybrid=False)
    ] == want


def test_top_sessions_reads_documents_only_down_to_the_page(tmp_path: Path) -> None:
    """Documents are read only down to the `limit`-th distinct score (a copy shares its session's
    score), and what is returned is what reading them all gives."""
    root = tmp_path / "projects"
    for i in range(6):
        _session(root, f"d{i}", "invoice rounding " + "rounding " * i)
    db = tmp_path / "index.db"
    run_index(db, [root])
    conn = open_reader(db)
    q = parse("invoice rounding", idents=False)
    every, _ = top_sessions(conn, q, 6)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    scores, copies = top_sessions(conn, q, 2)
    conn.set_trace_callback(None)
    assert list(scores) == list(every)[:2] and not copies
    (read,) = [s for s in seen if "FROM session_docs d" in s]
    assert read.count(",") - read.split("IN (")[0].count(",") == 1  # two documents read, not six


def _segments(conn: sqlite.Connection) -> int:
    return int(conn.execute("SELECT count(DISTINCT segid) FROM messages_fts_idx").fetchone()[0])


def test_message_index_is_merged_when_it_grew_by_a_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search opens every segment of each term it reads: after an index run that grew messages_fts
    by MERGE_GROWTH, it is one segment again; a run that added less leaves it as it is."""
    monkeypatch.setattr(finalize, "MERGE_MIN_MESSAGES", 10**9)  # no merge while the segments pile up
    db, root, _ = _index(tmp_path)
    _session(root, "late", "invoice rounding")
    run_index(db, [root])
    with open_writer(db) as w:
        assert _segments(w) > 1
        monkeypatch.setattr(finalize, "MERGE_MIN_MESSAGES", 1)
        assert finalize.merge_message_index(w) and _segments(w) == 1
        newest = w.execute("SELECT max(id) FROM messages").fetchone()[0]
        assert w.execute("SELECT value FROM schema_meta WHERE key='fts_merged_at'").fetchone() == (
            str(newest),
        )
        assert not finalize.merge_message_index(w)  # nothing new since
    monkeypatch.setattr(finalize, "MERGE_GROWTH", 100.0)
    _session(root, "later", "invoice rounding")
    run_index(db, [root])
    with open_writer(db) as w:
        assert _segments(w) == 2  # grew too little to be merged
    monkeypatch.setattr(finalize, "MERGE_GROWTH", 0.25)
    _session(root, "latest", "invoice rounding")
    run_index(db, [root])  # 4 messages since the merge at 8: more than a quarter
    with open_writer(db) as w:
        assert _segments(w) == 1
    assert search_messages(open_reader(db), "rounding", hybrid=False)
