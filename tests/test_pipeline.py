"""The indexing pipeline's hand-off between the parsers and the single writer (issue 18)."""

from __future__ import annotations

import fcntl
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fixtures import make

import index.store.parsers as parsers
from index.store.branches import update_main_branch
from index.store.ingest import run_index
from lib import sqlite


def _sessions(root: Path, n: int) -> None:
    for i in range(n):
        s = make.Session(make.uid("pipeline", i), cwd="/home/dev/projects/pipe")
        s.prompt(f"step {i}: rename the cursor field")
        s.response(text="Renamed it and the tests pass.")
        make.write(root / "-pipe" / f"{s.session_id}.jsonl", s.records)


@pytest.mark.parametrize(("window", "handed_out"), [(64 << 20, 6), (0, 2)])
def test_parsers_are_handed_small_files_beyond_two_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int, handed_out: int
) -> None:
    """While the writer writes the first result, the parsers already hold small files beyond two each
    (within the byte window), so they do not idle while it commits, but no more than the queue still
    holds: of 12 equal files, 6, and the writer shares the rest; with no window, two each (`--jobs 2`:
    one parser process beside the writer, which parses the files left queued itself)."""
    _sessions(tmp_path / "projects", 12)
    submitted: list[Any] = []

    class Counting(ProcessPoolExecutor):
        def submit(self, *a: Any, **k: Any) -> Any:
            submitted.append(a)
            return super().submit(*a, **k)

    monkeypatch.setattr(parsers, "ProcessPoolExecutor", Counting)
    monkeypatch.setattr(parsers, "IN_FLIGHT_BYTES", window)
    seen: list[int] = []
    report = run_index(
        tmp_path / "index.db",
        [tmp_path / "projects"],
        jobs=2,
        progress=lambda *_: seen.append(len(submitted)),
    )
    assert report.errors == [] and report.files == 12 and len(seen) == 12
    assert len(submitted) <= 12
    assert seen[0] == handed_out


@pytest.mark.skipif(sys.platform != "linux", reason="pipe sizes are a Linux fcntl")
def test_the_parsers_results_pipe_is_widened_and_a_refused_size_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parser's chunk of megabytes goes through a 1 MB pipe, not 64 KB writes the GIL-holding writer
    drains slowly; a size the system refuses keeps the default pipe, and the run still reads
    everything."""
    pool = parsers._pool(1)
    try:
        fd = pool._result_queue._reader.fileno()  # type: ignore[attr-defined]
        assert fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) == parsers.RESULT_PIPE_BYTES
    finally:
        pool.shutdown()
    real = fcntl.fcntl

    def refusing(fd: int, cmd: int, arg: int = 0) -> int:
        if cmd == fcntl.F_SETPIPE_SZ:
            raise PermissionError(1, "over the user's pipe quota")
        return real(fd, cmd, arg)

    monkeypatch.setattr(fcntl, "fcntl", refusing)
    pool = parsers._pool(1)
    try:
        fd = pool._result_queue._reader.fileno()  # type: ignore[attr-defined]
        assert real(fd, fcntl.F_GETPIPE_SZ) == 1 << 16
    finally:
        pool.shutdown()
    _sessions(tmp_path / "projects", 6)
    report = run_index(tmp_path / "index.db", [tmp_path / "projects"], jobs=2)
    assert report.errors == [] and report.files == 6


def test_sessions_touched_by_several_files_of_one_batch_are_counted_and_branched(tmp_path: Path) -> None:
    """Counts and main branches are brought up to date once per batch, when it commits: a session whose
    files (main, subagents, resume copies, forks) share a batch ends up as if each were written alone."""
    make.build_corpus(tmp_path / "projects")
    db = tmp_path / "index.db"
    run_index(db, [tmp_path / "projects"], jobs=1)  # the whole corpus is one batch
    conn = sqlite.connect(db, isolation_level=None)
    sessions = conn.execute("SELECT session_id, n_messages, n_prompts, n_tool_calls FROM sessions").fetchall()
    assert len(sessions) > 5
    conn.execute("BEGIN")
    for sid, n, prompts, calls in sessions:
        want = conn.execute(
            """SELECT count(*), count(*) FILTER (WHERE kind='prompt'), count(*) FILTER (WHERE kind='tool_use')
               FROM messages WHERE session_id=?""",
            (sid,),
        ).fetchone()
        assert (n, prompts, calls) == want, sid
        assert update_main_branch(conn, sid) == 0, sid  # the stored branch is the one its rows give
    assert (
        conn.execute("SELECT count(*) FROM messages WHERE on_main = 0").fetchone()[0] > 0
    )  # forks abandoned
    conn.execute("ROLLBACK")


def test_an_index_run_collects_less_often_and_puts_the_collector_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While files are parsed and written the cyclic GC runs with the run's thresholds and the objects
    alive at the start frozen (`parsers.few_collections`); after the run, and after a run that fails
    mid-way, the process's collector is as it was."""
    import gc

    _sessions(tmp_path / "projects", 3)
    before = gc.get_threshold()
    seen: list[tuple[tuple[int, int, int], int]] = []
    real = parsers.parse_all

    def watching(*a: Any, **k: Any) -> Any:
        for item in real(*a, **k):
            seen.append((gc.get_threshold(), gc.get_freeze_count()))
            yield item

    monkeypatch.setattr("index.store.ingest.parse_all", watching)
    run_index(tmp_path / "i.db", [tmp_path / "projects"], jobs=1)
    assert seen and all(t == parsers.RUN_THRESHOLDS and frozen > 0 for t, frozen in seen)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0

    def failing(*a: Any, **k: Any) -> Any:
        yield from ()
        raise RuntimeError("a parser bug")

    monkeypatch.setattr("index.store.ingest.parse_all", failing)
    with pytest.raises(RuntimeError):
        run_index(tmp_path / "i.db", [tmp_path / "projects"], full=True, jobs=1)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
