"""Digests built by a helper process (index/store/digest_share.py) are the digests the writer builds
alone, and a helper that fails or is slow costs nothing but time: the writer builds the rest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fixtures import make
from test_digests import index, items, work_session

import index.store.digest_share as share
from index.store.digest_rows import made
from index.store.finalize import finalize
from lib import sqlite


def sessions(tmp_path: Path, n: int = 6) -> tuple[Path, list[tuple[str, str]]]:
    """An index of `n` sessions, and (session id, a signature) of each as `digests.stale` lists them."""
    work = [work_session(make.uid("ds", i), extra_prompt=f"Also look at case {i}?") for i in range(n)]
    return index(tmp_path, work), [(s.session_id, f"sig of {s.session_id}") for s in work]


def test_helper_builds_what_the_writer_builds(tmp_path: Path) -> None:
    db, stale = sessions(tmp_path)
    conn = sqlite.connect(db, isolation_level=None)
    helper = share.Helper(db, [*stale, ("no-such-session", "x")])
    helper.proc.join()
    helper.thread.join()
    try:
        assert set(helper.got) == {sid for sid, _ in stale} | {
            "no-such-session"
        }  # all before the writer looked
        got = helper.finish(conn)
    finally:
        helper.stop()
    assert got == {sid: made(conn, sid, sig) for sid, sig in stale} | {"no-such-session": None}
    assert all(got[sid] is not None for sid, _ in stale)


def test_writer_builds_what_a_failed_helper_did_not_deliver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, stale = sessions(tmp_path)
    conn = sqlite.connect(db, isolation_level=None)

    def broken(*_: Any, **__: Any) -> sqlite.Connection:
        raise sqlite.OperationalError("unable to open database file")

    monkeypatch.setattr(share, "open_reader", broken)  # the forked helper inherits it
    helper = share.Helper(db, stale)
    helper.proc.join()
    try:
        assert helper.proc.exitcode == 0 and helper.got == {}
        got = helper.finish(conn)
    finally:
        helper.stop()
    assert got == {sid: made(conn, sid, sig) for sid, sig in stale}


def test_finalize_with_a_helper_stores_the_same_digests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, stale = sessions(tmp_path)
    sids = [sid for sid, _ in stale]
    alone = {sid: items(db, sid) for sid in sids}
    started: list[share.Helper | None] = []
    start = share.start

    def counted(conn: sqlite.Connection, todo: share.Stale, jobs: int) -> share.Helper | None:
        started.append(start(conn, todo, jobs))
        return started[-1]

    monkeypatch.setattr(share, "SHARE_MIN", 1)
    monkeypatch.setattr("index.store.finalize.share_digests", counted)
    conn = sqlite.connect(db, isolation_level=None)
    conn.execute("DELETE FROM digests")
    conn.execute("INSERT INTO pending(what, key) VALUES('finalize', '')")
    assert finalize(conn, jobs=2)
    assert len(started) == 1 and started[0] is not None and not started[0].proc.is_alive()
    assert {sid: items(db, sid) for sid in sids} == alone


@pytest.mark.parametrize(("jobs", "n"), [(1, 500), (2, share.SHARE_MIN - 1)])
def test_no_helper_for_one_job_or_few_digests(tmp_path: Path, jobs: int, n: int) -> None:
    db, _ = sessions(tmp_path, 1)
    conn = sqlite.connect(db, isolation_level=None)
    assert share.start(conn, [("x", "")] * n, jobs) is None
