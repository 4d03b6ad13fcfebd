"""The writer's fast paths store and return what the slower statements they replaced did (issue 18)."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from index.store.branch_rows import KnownRows
from index.store.branches import update_main_branch
from index.store.idents import identifier_parts
from index.store.schema import migrate, session_token
from index.store.textstore import pack
from index.store.writer import Deferred, _delete_messages, _insert_messages, file_id_for
from lib import sqlite
from lib.discovery import path_key

UUIDS = [f"u{i}" for i in range(8)]
# chunks of uuids (a few repeat within a chunk or across chunks, as resume copies do), and after
# each chunk the uuids deleted again (a reset, a copy taken over: the largest id may go too)
chunks_st = st.lists(
    st.tuples(st.lists(st.sampled_from(UUIDS), max_size=6), st.lists(st.sampled_from(UUIDS), max_size=3)),
    max_size=6,
)


READ_BACK = """SELECT id, uuid, parent_uuid, kind, on_main, message_id FROM messages
               WHERE session_id=? AND is_sidechain=0 ORDER BY id"""


def _row(
    uuid: str,
    session: str = "s",
    parent: str | None = None,
    kind: str = "prompt",
    side: bool = False,
    message_id: str | None = None,
) -> tuple[object, ...]:
    """A `message_rows` row (without the file id) for `uuid`."""
    return (
        uuid,
        session,
        parent,
        "user",
        kind,
        None,
        b"x",
        None,
        side,
        None,
        None,
        None,
        False,
        message_id,
        None,
        0,
        "claude",
    )


@settings(max_examples=150, deadline=None)
@given(chunks_st)
def test_inserted_ids_equal_the_rows_read_back(chunks: list[tuple[list[str], list[str]]]) -> None:
    """`_insert_messages` names the ids of a chunk whose rows all went in without reading them back:
    they equal the (id, uuid) rows above the largest id before it, in id order."""
    conn = sqlite.connect(":memory:", isolation_level=None)
    migrate(conn)
    for uuids, gone in chunks:
        last, new = _insert_messages(conn, [_row(u) for u in uuids], 1)
        assert (
            new == conn.execute("SELECT id, uuid FROM messages WHERE id > ? ORDER BY id", (last,)).fetchall()
        )
        conn.executemany("DELETE FROM messages WHERE uuid=?", [(u,) for u in gone])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["/a/x.jsonl", "/a/y.jsonl", "/b/x.jsonl"]), max_size=8))
def test_file_id_for_a_new_file_is_the_row_just_inserted(paths: list[str]) -> None:
    """`file_id_for` takes a new file's id from the insert (no read back) and reads a known one."""
    conn = sqlite.connect(":memory:", isolation_level=None)
    migrate(conn)
    for p in paths:
        fid = file_id_for(conn, p)
        assert fid == conn.execute("SELECT id FROM ingest_state WHERE path=?", (path_key(p),)).fetchone()[0]


def test_the_pending_mark_is_written_once_per_transaction() -> None:
    """With a batch's `Deferred`, the `pending` mark is one statement per transaction, and written again
    in the next one (after the flush that precedes each commit, or a rollback)."""
    conn = sqlite.connect(":memory:", isolation_level=None)
    migrate(conn)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    d = Deferred()
    for _ in range(3):
        d.mark_pending(conn)
    d.flush(conn)
    d.mark_pending(conn)
    d.drop()
    d.mark_pending(conn)
    assert sum("INTO pending" in s for s in seen) == 3
    assert conn.execute("SELECT what FROM pending").fetchall() == [("finalize",)]


# A batch's chunks: rows of two sessions (main line or side chain, parents among the uuids, a few kinds
# and API responses), uuids repeating across chunks (a resume copy's prefix); after some chunks the
# batch ends (flush), and after some of those a few uuids are deleted (a reset, a copy taken over:
# the writer flushes before any delete).
row_st = st.tuples(
    st.sampled_from(UUIDS),
    st.sampled_from(["s1", "s2"]),
    st.none() | st.sampled_from(UUIDS + ["gone"]),
    st.sampled_from(["prompt", "text", "tool_use", "tool_result"]),
    st.booleans(),
    st.none() | st.sampled_from(["r1", "r2"]),
)
batch_st = st.lists(
    st.tuples(st.lists(row_st, max_size=6), st.booleans(), st.lists(st.sampled_from(UUIDS), max_size=2)),
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(batch_st)
def test_known_main_line_rows_equal_the_rows_read_back(
    chunks: list[tuple[list[Any], bool, list[str]]],
) -> None:
    """`KnownRows` hands the main branch a session's rows only when they equal what its query reads
    back at the batch's end, and the main branch computed from them stores the same `on_main`,
    `main_leaf` and digest marks as the one computed from the rows read back."""
    conns = [sqlite.connect(":memory:", isolation_level=None) for _ in range(2)]
    for conn in conns:
        migrate(conn)
        conn.executemany("INSERT INTO sessions(session_id) VALUES(?)", [("s1",), ("s2",)])
    known = KnownRows()
    touched: set[str] = set()
    for chunk, ends, gone in chunks:
        rows = [_row(u, sid, parent, kind, side, mid) for u, sid, parent, kind, side, mid in chunk]
        for i, conn in enumerate(conns):
            _, new = _insert_messages(conn, rows, 1)
            if i == 0:
                known.add(conn, rows, new)
        touched.update(r[1] for r in rows)
        if not ends:
            continue
        for sid in sorted(touched):
            have = known.rows(sid)
            if have is not None:
                assert have == conns[0].execute(READ_BACK, (sid,)).fetchall()
            assert update_main_branch(conns[0], sid, have) == update_main_branch(conns[1], sid)
        known.clear()
        touched.clear()
        for conn in conns:
            conn.executemany("DELETE FROM messages WHERE uuid=?", [(u,) for u in gone])
    for table in ("messages", "sessions", "pending"):
        assert [c.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() for c in conns][0] == conns[
            1
        ].execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()


@settings(max_examples=30, deadline=None)
@given(st.permutations(range(40)), st.integers(0, 40))
def test_messages_deleted_by_rowid_leave_the_fts_as_if_never_written(order: list[int], keep: int) -> None:
    """`_delete_messages` forgets the FTS terms of the rows it deletes, whatever order their uuids come
    in (it hands them to FTS5 by rowid), leaving the terms of the others exactly."""
    texts = [f"word{i % 7} other{i} shared" for i in range(40)]
    conns = [sqlite.connect(":memory:", isolation_level=None) for _ in range(2)]
    for n, conn in enumerate(conns):
        migrate(conn)
        rows = [_row(f"u{i}") for i in range(40) if n == 0 or i in order[:keep]]
        _, new = _insert_messages(conn, [r[:6] + (pack(texts[int(r[0][1:])]),) + r[7:] for r in rows], 1)
        conn.executemany(
            "INSERT INTO messages_fts(rowid, text, idents, session) VALUES(?,?,?,?)",
            [
                (rid, texts[int(u[1:])], identifier_parts(texts[int(u[1:])]), session_token("s"))
                for rid, u in new
            ],
        )
    gone = orjson.dumps([f"u{i}" for i in order[keep:]]).decode()
    _delete_messages(conns[0], "uuid IN (SELECT value FROM json_each(?))", (gone,))
    vocab = []
    for conn in conns:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, messages_fts, instance)")
        by_uuid = dict(conn.execute("SELECT id, uuid FROM messages"))
        vocab.append(sorted((t, by_uuid[d], c, o) for t, d, c, o in conn.execute("SELECT * FROM temp.v")))
    assert vocab[0] == vocab[1]
