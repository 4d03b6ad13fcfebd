"""The writer's fast paths store and return what the slower statements they replaced did (issue 18)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from index.store.schema import migrate
from index.store.writer import Deferred, _insert_messages, file_id_for
from lib import sqlite
from lib.discovery import path_key

UUIDS = [f"u{i}" for i in range(8)]
# chunks of uuids (a few repeat within a chunk or across chunks, as resume copies do), and after
# each chunk the uuids deleted again (a reset, a copy taken over: the largest id may go too)
chunks_st = st.lists(
    st.tuples(st.lists(st.sampled_from(UUIDS), max_size=6), st.lists(st.sampled_from(UUIDS), max_size=3)),
    max_size=6,
)


def _row(uuid: str) -> tuple[object, ...]:
    """A `message_rows` row (without the file id) for `uuid`."""
    return (
        uuid,
        "s",
        None,
        "user",
        "prompt",
        None,
        b"x",
        None,
        False,
        None,
        None,
        None,
        False,
        None,
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
