"""Session documents' texts and digests built by a helper process (index/store/digest_share.py) are
the ones the writer builds alone, and a helper that fails or is slow costs nothing but time: the writer
builds the rest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fixtures import make
from hypothesis import given
from hypothesis import strategies as st
from test_digests import index, items, work_session

import index.store.digest_share as share
from index.store.digest_rows import made
from index.store.digests import stale as stale_digests
from index.store.finalize import finalize
from index.store.session_docs import texts
from lib import sqlite


def sessions(tmp_path: Path, n: int = 6) -> tuple[Path, list[str]]:
    """An index of `n` sessions, and their ids."""
    work = [work_session(make.uid("ds", i), extra_prompt=f"Also look at case {i}?") for i in range(n)]
    return index(tmp_path, work), [s.session_id for s in work]


def stale_all(conn: sqlite.Connection) -> share.Stale:
    """Every session's digest stale, as after a full index (`digests.stale` lists them all)."""
    conn.execute("DELETE FROM digests")
    return stale_digests(conn)


def documents(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite.connect(db)
    try:
        return conn.execute(
            "SELECT session_id, sig, title, prompts, answers FROM session_docs ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def test_helper_builds_what_the_writer_builds(tmp_path: Path) -> None:
    db, sids = sessions(tmp_path)
    conn = sqlite.connect(db, isolation_level=None)
    stale = stale_all(conn)
    assert {sid for sid, _ in stale} == set(sids)
    helper = share.Helper(db, [*sids, "no-such-session"])
    helper.start_digests()
    helper.proc.join()
    helper.thread.join()
    try:
        assert set(helper.docs) == {*sids, "no-such-session"}  # all before the writer looked
        assert set(helper.got) == set(sids)
        docs = dict(
            zip([*sids, "no-such-session"], helper.texts(conn, [*sids, "no-such-session"]), strict=True)
        )
        got = dict(
            zip(
                [*(sid for sid, _ in stale), "no-such-session"],
                helper.digests(conn, [*stale, ("no-such-session", "x")]),
                strict=True,
            )
        )
    finally:
        helper.stop()
    assert docs == {sid: texts(conn, sid) for sid in [*sids, "no-such-session"]}
    assert all(docs[sid] != ("", "") for sid in sids)
    assert got == {sid: made(conn, sid, sig) for sid, sig in stale} | {"no-such-session": None}
    assert all(got[sid] is not None for sid, _ in stale)


def test_a_digest_of_another_signature_is_built_again(tmp_path: Path) -> None:
    db, _ = sessions(tmp_path)
    conn = sqlite.connect(db, isolation_level=None)
    stale = stale_all(conn)
    sids = [sid for sid, _ in stale]
    helper = share.Helper(db, [])
    helper.start_digests()
    helper.proc.join()
    helper.thread.join()
    try:
        changed = [(sid, sig + "|changed") for sid, sig in stale]  # as if the session changed since
        got = dict(zip(sids, helper.digests(conn, changed), strict=True))
    finally:
        helper.stop()
    assert got == {sid: made(conn, sid, sig) for sid, sig in changed}


def test_writer_builds_what_a_failed_helper_did_not_deliver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, sids = sessions(tmp_path)
    conn = sqlite.connect(db, isolation_level=None)
    stale = stale_all(conn)

    def broken(*_: Any, **__: Any) -> sqlite.Connection:
        raise sqlite.OperationalError("unable to open database file")

    monkeypatch.setattr(share, "open_reader", broken)  # the forked helper inherits it
    helper = share.Helper(db, sids)
    helper.proc.join()
    helper.start_digests()  # to a helper that is gone: no error
    try:
        assert helper.proc.exitcode == 0 and helper.got == {} and helper.docs == {}
        docs = dict(zip(sids, helper.texts(conn, sids), strict=True))
        got = dict(zip([sid for sid, _ in stale], helper.digests(conn, stale), strict=True))
    finally:
        helper.stop()
    assert docs == {sid: texts(conn, sid) for sid in sids}
    assert got == {sid: made(conn, sid, sig) for sid, sig in stale}


def test_helper_waits_for_the_go_before_the_digests(tmp_path: Path) -> None:
    db, sids = sessions(tmp_path)
    conn = sqlite.connect(db, isolation_level=None)
    stale = stale_all(conn)
    helper = share.Helper(db, sids)
    try:
        helper.proc.join(timeout=2)
        assert helper.proc.is_alive() and helper.got == {}  # documents done, digests not begun
        helper.start_digests()
        helper.proc.join()
        helper.thread.join()
        assert set(helper.got) == {sid for sid, _ in stale}
    finally:
        helper.stop()


@pytest.mark.parametrize("jobs", [1, 2])
def test_finalize_with_a_helper_stores_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    db, sids = sessions(tmp_path)
    alone = {sid: items(db, sid) for sid in sids}
    docs = documents(db)
    started: list[share.Helper | None] = []
    start = share.start

    def counted(conn: sqlite.Connection, todo: list[str], jobs: int) -> share.Helper | None:
        started.append(start(conn, todo, jobs))
        return started[-1]

    monkeypatch.setattr(share, "SHARE_MIN", 1)
    monkeypatch.setattr("index.store.finalize.share", counted)
    conn = sqlite.connect(db, isolation_level=None)
    conn.execute("DELETE FROM digests")
    conn.execute("INSERT INTO session_fts(session_fts) VALUES('delete-all')")
    conn.execute("DELETE FROM session_docs")
    conn.execute("INSERT INTO pending(what, key) VALUES('finalize', '')")
    assert finalize(conn, jobs=jobs)
    if jobs > 1:
        assert len(started) == 1 and started[0] is not None and not started[0].proc.is_alive()
    else:
        assert started == []
    assert {sid: items(db, sid) for sid in sids} == alone
    assert documents(db) == docs


@pytest.mark.parametrize(("jobs", "n"), [(1, 500), (2, share.SHARE_MIN - 1)])
def test_no_helper_for_one_job_or_few_sessions(tmp_path: Path, jobs: int, n: int) -> None:
    db, _ = sessions(tmp_path, 1)
    conn = sqlite.connect(db, isolation_level=None)
    assert share.start(conn, ["x"] * n, jobs) is None


@given(
    n=st.integers(0, 40),
    ahead=st.integers(0, 40),
    pace=st.integers(0, 3),
    skipped=st.sets(st.integers(0, 39), max_size=3),
)
def test_in_order_yields_each_value_in_order(n: int, ahead: int, pace: int, skipped: set[int]) -> None:
    """Whatever the helper has delivered when the writer looks and however fast it goes on (`pace` keys
    per key the writer builds; some never delivered), every key's value comes out once, in order, and
    the writer builds from the back only keys the helper had not delivered when it needed them."""
    keys = [f"k{i}" for i in range(n)]
    got: dict[str, str] = {}
    front = [0]

    def deliver(count: int) -> None:
        for _ in range(count):
            if front[0] < n:
                if front[0] not in skipped:
                    got[keys[front[0]]] = keys[front[0]].upper()
                front[0] += 1

    built: list[str] = []

    def build(key: str) -> str:
        assert key not in got or skipped  # a key skipped ahead of it leaves the writer building
        built.append(key)
        deliver(pace)
        return key.upper()

    deliver(ahead)
    assert list(share._in_order(keys, got, build)) == [k.upper() for k in keys]
    assert built == keys[::-1][: len(built)]  # from the back, each once
