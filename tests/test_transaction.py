"""One write transaction helper for every writer in index/ (issue 12): BEGIN IMMEDIATE … COMMIT, and on
any failure a ROLLBACK (when SQLite has not rolled back already) before the error goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from index.store.db import open_writer
from index.store.ingest import _mark_missing
from index.store.tx import transaction
from lib import sqlite


def _conn(tmp_path: Path) -> sqlite.Connection:
    conn = sqlite.connect(tmp_path / "t.db", isolation_level=None)
    conn.execute("CREATE TABLE t(x INTEGER)")
    return conn


def test_commits_on_success(tmp_path: Path) -> None:
    conn = _conn(tmp_path)
    with transaction(conn):
        assert conn.in_transaction
        conn.execute("INSERT INTO t VALUES(1)")
    assert not conn.in_transaction
    assert sqlite.connect(tmp_path / "t.db").execute("SELECT count(*) FROM t").fetchone()[0] == 1


def test_rolls_back_and_raises_on_failure(tmp_path: Path) -> None:
    conn = _conn(tmp_path)
    with pytest.raises(ZeroDivisionError), transaction(conn):
        conn.execute("INSERT INTO t VALUES(1)")
        _ = 1 / 0
    assert not conn.in_transaction
    assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0


def test_a_rollback_sqlite_did_itself_is_not_repeated(tmp_path: Path) -> None:
    conn = _conn(tmp_path)
    with pytest.raises(RuntimeError, match="mine"), transaction(conn):
        conn.execute("INSERT INTO t VALUES(1)")
        conn.execute("ROLLBACK")  # as SQLite does on a full disk
        raise RuntimeError("mine")  # not 'cannot rollback - no transaction is active'
    assert not conn.in_transaction


def test_mark_missing_leaves_no_open_transaction_when_it_fails(tmp_path: Path) -> None:
    """`_mark_missing` had no rollback: a failed update left the writer inside a transaction (and the
    `missing` flags half-set), so the next BEGIN failed."""
    conn = open_writer(tmp_path / "index.db")
    root = tmp_path / "projects"
    conn.execute(
        "INSERT INTO ingest_state(path, root) VALUES(?, ?)", (str(root / "p" / "gone.jsonl"), str(root))
    )
    conn.execute("CREATE TEMP TRIGGER boom BEFORE UPDATE ON sessions BEGIN SELECT RAISE(ABORT, 'boom'); END")
    conn.execute("INSERT INTO sessions(session_id, file_id) VALUES('s', 1)")
    with pytest.raises(sqlite.Error, match="boom"):
        _mark_missing(conn, [root], seen=set())
    assert not conn.in_transaction
    assert conn.execute("SELECT missing FROM ingest_state").fetchone()[0] == 0
    conn.close()
