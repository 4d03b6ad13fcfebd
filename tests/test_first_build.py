"""The first index of a database is built beside it and moved into place (index/store/first_build.py):
nobody sees a half-built index, the result is the index the WAL path builds, a stopped first build goes
on where it stopped, and a damaged one starts again."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures import rows
from test_faults import assert_equal_to_clean, corpus

import index.store.ingest as ingest
from index.store.db import IndexMissing, open_reader, open_writer
from index.store.first_build import building_path
from index.store.ingest import run_index
from lib import sqlite


def _journal(db: Path) -> str:
    conn = sqlite.connect(db)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()


@pytest.mark.parametrize("jobs", [1, 2])
def test_first_index_is_built_beside_and_equals_an_index_written_in_place(tmp_path: Path, jobs: int) -> None:
    root = corpus(tmp_path / "projects")
    db = tmp_path / "index.db"
    seen: list[tuple[bool, bool, str]] = []

    def watch(done: int, total: int, path: str) -> None:
        try:
            open_reader(db).close()
            said = "opened"
        except IndexMissing as exc:
            said = f"{exc} / {exc.fix}"
        seen.append((db.exists(), building_path(db).exists(), said))

    assert run_index(db, [root], jobs=jobs, progress=watch).errors == []
    assert seen and all(s[:2] == (False, True) for s in seen)
    assert all("being built" in s[2] and "total-recall index" in s[2] for s in seen)
    assert not building_path(db).exists()
    assert _journal(db) == "wal"

    in_place = tmp_path / "in_place.db"
    open_writer(in_place).close()  # an index that exists (empty): written in place, through WAL
    assert run_index(in_place, [root], jobs=jobs).errors == []
    assert not building_path(in_place).exists()
    got, want = rows.snapshot(db, root=root), rows.snapshot(in_place, root=root)
    if jobs == 1:  # with two parsers, rows are numbered in the order files arrive
        assert got == want
    else:
        assert {t: len(v) for t, v in got.items()} == {t: len(v) for t, v in want.items()}


def test_a_stopped_first_build_goes_on_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = corpus(tmp_path / "projects")
    db = tmp_path / "index.db"
    monkeypatch.setattr(ingest._Batch, "MAX_BYTES", 1)  # a commit after every file
    calls = 0

    def stop(done: int, total: int, path: str) -> None:
        nonlocal calls
        calls += 1
        if calls == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_index(db, [root], jobs=1, progress=stop)
    assert not db.exists() and building_path(db).exists()
    conn = sqlite.connect(building_path(db))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    committed = conn.execute("SELECT count(*) FROM ingest_state").fetchone()[0]
    conn.close()
    assert committed >= 3

    report = run_index(db, [root], jobs=1)
    assert report.errors == [] and report.files_unchanged == committed  # not read again
    assert not building_path(db).exists()
    assert_equal_to_clean(db, root, tmp_path)


def test_a_damaged_first_build_starts_again(tmp_path: Path) -> None:
    """What a machine that went down mid-build may leave: not a database any more."""
    root = corpus(tmp_path / "projects", sessions=4)
    db = tmp_path / "index.db"
    building_path(db).write_bytes(b"SQLite format 3\x00" + b"\xff" * 8192)
    assert run_index(db, [root], jobs=1).errors == []
    assert not building_path(db).exists()
    assert_equal_to_clean(db, root, tmp_path)


def test_an_empty_file_at_the_index_path_is_a_first_index(tmp_path: Path) -> None:
    """A bare connect (a hook storing marks before any index) leaves an empty file: still no index."""
    root = corpus(tmp_path / "projects", sessions=2)
    db = tmp_path / "index.db"
    db.touch()
    Path(str(db) + "-wal").write_bytes(b"a log no index owns")
    assert run_index(db, [root], jobs=1).errors == []
    assert (
        not Path(str(db) + "-wal").exists() or Path(str(db) + "-wal").read_bytes() != b"a log no index owns"
    )
    assert_equal_to_clean(db, root, tmp_path)
