"""A parser that fails on one file every time (it raises, or its process dies) costs that file, never
the run: the file is tried once more, then left unread with its reason in the run's errors, counted in
the report and in `status`, and later runs leave it alone until it changes (index/store/skips.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixtures import make
from test_faults import REPO, good_session

import index.store.parsers as parsers
import index.store.prepare as prepare_module
from index.stats import health, status
from index.store.db import open_reader, open_writer
from index.store.ingest import run_index
from index.store.skips import Parsing
from index.store.tasks import Task
from index.store.writer import Prepared
from lib.walker import FileInfo
from total_recall.cli import cli

Prepare = Callable[[Task], Prepared]


def _tree(root: Path) -> Path:
    """Five good transcripts; returns the one the parser will fail on."""
    for i in range(5):
        good_session(root / "-p", f"bad{i}")
    return sorted((root / "-p").glob("*.jsonl"))[0]


def _failing(victim: Path, tries: Path, how: str) -> Prepare:
    """`prepare`, but on `victim` it notes the try in `tries` (parser processes share no memory) and
    raises, or kills its process, every time."""
    real = prepare_module.prepare

    def prepare(t: Task) -> Prepared:
        if t.path.endswith(victim.name):
            with tries.open("a") as f:
                f.write("try\n")
            if how == "die":
                os._exit(9)
            raise ValueError("the parser cannot read this file")
        return real(t)

    return prepare


def _tries(tries: Path) -> int:
    return len(tries.read_text().splitlines()) if tries.exists() else 0


@pytest.mark.parametrize(("jobs", "how"), [(1, "raise"), (2, "raise"), (2, "die")])
def test_a_file_the_parser_always_fails_on_is_tried_twice_then_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, how: str
) -> None:
    root, db, tries = tmp_path / "projects", tmp_path / "i.db", tmp_path / "tries"
    victim = _tree(root)
    monkeypatch.setattr(prepare_module, "prepare", _failing(victim, tries, how))

    first = run_index(db, [root], jobs=jobs)
    assert _tries(tries) == 2  # the first try and one retry
    assert first.files_skipped == 1 and len(first.errors) == 1
    assert victim.name in first.errors[0] and "failed twice" in first.errors[0]
    assert ("ValueError" if how == "raise" else "process died") in first.errors[0]
    conn = open_reader(db)
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 4  # the others are read
    assert [f["path"] for f in status(conn, db)["skipped_files"]] == [str(victim)]
    assert health(conn, db)["errors"]["files_skipped"] == 1
    assert health(conn, db)["freshness"]["up_to_date"]  # nothing waits for the next run

    again = run_index(db, [root], jobs=jobs)  # unchanged: not tried again
    assert _tries(tries) == 2 and again.errors == [] and again.files_skipped == 1
    assert again.files == 5 and again.files_unchanged == 4

    with victim.open("ab") as f:  # it changed: tried again (twice), and skipped again
        f.write(make.dumps(make.Session(make.uid("more")).prompt("one more line")) + b"\n")
    good_session(root / "-p", "bad-new")  # (with another file: one task alone is parsed in-process)
    third = run_index(db, [root], jobs=jobs)
    assert _tries(tries) == 4 and third.files_skipped == 1 and len(third.errors) == 1

    monkeypatch.undo()  # a parser that reads it (a new version): `--full` reads it at once
    full = run_index(db, [root], jobs=jobs, full=True)
    assert full.errors == [] and full.files_skipped == 0
    conn = open_reader(db)
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 7
    assert status(conn, db)["skipped_files"] == []


def test_a_parser_that_fails_once_reads_the_file_on_its_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, db, tries = tmp_path / "projects", tmp_path / "i.db", tmp_path / "tries"
    victim = _tree(root)
    failing, real = _failing(victim, tries, "raise"), prepare_module.prepare

    def once(t: Task) -> Prepared:
        return failing(t) if t.path.endswith(victim.name) and not _tries(tries) else real(t)

    monkeypatch.setattr(prepare_module, "prepare", once)
    report = run_index(db, [root], jobs=1)
    assert _tries(tries) == 1 and report.errors == [] and report.files_skipped == 0
    assert open_reader(db).execute("SELECT count(*) FROM sessions").fetchone()[0] == 5


def test_status_and_index_say_which_file_was_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, db = tmp_path / "projects", tmp_path / "i.db"
    victim = _tree(root)
    monkeypatch.setattr(prepare_module, "prepare", _failing(victim, tmp_path / "tries", "raise"))
    runner = CliRunner()
    out = runner.invoke(cli, ["--db", str(db), "index", "--projects-root", str(root), "--jobs", "1"])
    assert out.exit_code == 0, out.output
    assert "1 file left unread (parser failed)" in out.output and "failed twice" in out.output
    text = runner.invoke(cli, ["--db", str(db), "status"]).output
    assert "files skipped" in text and "ValueError" in text
    doc = json.loads(runner.invoke(cli, ["--db", str(db), "status", "--json"]).output)
    assert [f["path"] for f in doc["skipped_files"]] == [str(victim)]


CRASHING_RUN = """
import os, sys
from pathlib import Path
import index.store.prepare as m
real = m.prepare
def prepare(t):
    if t.path.endswith(sys.argv[3]):
        os._exit(9)  # a crash in C: the process is gone, no exception to catch
    return real(t)
m.prepare = prepare
from index.store.ingest import run_index
r = run_index(Path(sys.argv[1]), [Path(sys.argv[2])], jobs=1)
print(r.files_skipped, len(r.errors), flush=True)
"""


def test_a_crash_that_kills_a_one_process_run_costs_that_file_after_two_runs(tmp_path: Path) -> None:
    """With --jobs 1 (the hooks' background index) the parser runs in the index process: a crash kills
    the run. The file it was parsing is noted beside the index, so the run after the second such
    crash leaves it unread and reads the rest, instead of dying on it at every run."""
    root, db = tmp_path / "projects", tmp_path / "i.db"
    victim = _tree(root)

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", CRASHING_RUN, str(db), str(root), victim.name],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert run().returncode == 9 and (tmp_path / "i.db.parsing").exists()
    assert run().returncode == 9  # the next run tries it again: one crash may have been something else
    third = run()
    assert third.returncode == 0, third.stderr
    assert third.stdout.split() == ["1", "1"]
    conn = open_reader(db)
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 4
    [skipped] = status(conn, db)["skipped_files"]
    assert skipped["path"] == str(victim) and "died while parsing it" in skipped["reason"]
    assert run().stdout.split() == ["1", "0"]  # and it stays unread, quietly, while unchanged


def test_the_parsing_note_is_rewritten_in_place_and_an_empty_one_notes_nothing(tmp_path: Path) -> None:
    """The note (`skips.Parsing`) keeps one file open for the run: each file parsed here is written into
    it and blanked after. What a killed run leaves is exactly the last file's note (with blanks after a
    shorter one), or only blanks (killed between files), which the next run takes as nothing; the run's
    end removes it."""
    db = tmp_path / "i.db"
    tasks = [
        Task(f"/p/{name}.jsonl", "/p", "-p", FileInfo("main", name), 0, None, False, size, 7, 1)
        for name, size in (("a-long-session-name", 123456), ("b", 9))
    ]
    conn = open_writer(db)
    note = Parsing(db)
    for t in tasks:
        note(t)
        assert json.loads(note.path.read_bytes()) == [t.path, t.size, t.mtime_ns]  # the shorter one too
        note(None)
        assert note.path.read_bytes().strip() == b""
    with conn:  # the next run (a note of its own) finds the blank file of a run killed between files
        assert Parsing(db).take(conn) is None
    assert not note.path.exists() and conn.execute("SELECT count(*) FROM skipped_files").fetchone()[0] == 0
    note.close()
    for killed_while_parsing in (tasks[1], tasks[0]):
        note = Parsing(db)
        note(killed_while_parsing)
    with conn:  # only the last run's file counts; a first crash is not yet a skip
        assert Parsing(db).take(conn) is None
    assert conn.execute("SELECT path, tries FROM skipped_files").fetchall() == [(tasks[0].path, 1)]
    note = Parsing(db)
    note(tasks[0])
    note.close()  # a run's end (or a stop without a crash): no file left
    assert not note.path.exists()
    note.close()  # twice is harmless
    conn.close()


@pytest.mark.parametrize("where", ["main", "worker"])
def test_jobs_two_parses_in_both_processes_and_a_failure_in_either_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """With `--jobs 2` the writer's process parses files itself while the parser process is busy;
    a file whose parse fails there (or in the parser process) is retried, and the index is the same
    as `--jobs 1` makes."""
    root, tries = tmp_path / "projects", tmp_path / "tries"
    for i in range(8):
        good_session(root / "-p", f"both{i}")
    monkeypatch.setattr(parsers, "IN_FLIGHT_BYTES", 0)  # 2 files in flight: the rest wait in the queue
    main, real = os.getpid(), prepare_module.prepare

    def flaky(t: Task) -> Prepared:
        here = "main" if os.getpid() == main else "worker"
        with tries.open("a") as f:
            f.write(f"{here}\n")
        if here == where and tries.read_text().splitlines().count(here) == 1:
            raise ValueError("the first file parsed here fails")
        return real(t)

    monkeypatch.setattr(prepare_module, "prepare", flaky)
    two = run_index(tmp_path / "two.db", [root], jobs=2)
    places = set(tries.read_text().splitlines())
    assert places == {"main", "worker"}
    assert two.errors == [] and two.files_skipped == 0
    monkeypatch.undo()
    one = run_index(tmp_path / "one.db", [root], jobs=1)
    assert (one.records, one.messages_added, one.extractions_added) == (
        two.records,
        two.messages_added,
        two.extractions_added,
    )
    q = "SELECT session_id, uuid, body FROM messages ORDER BY session_id, uuid"
    assert open_reader(tmp_path / "one.db").execute(q).fetchall() == (
        open_reader(tmp_path / "two.db").execute(q).fetchall()
    )


def test_the_parsers_backlog_shrinks_with_the_queue() -> None:
    """Mid-run the parsers may hold IN_FLIGHT_BYTES; near the end no more than the queue still holds,
    so the writer, parsing from the queue when it would wait, shares the last files."""
    mb = 1 << 20
    assert parsers._room(1, 1, 500 * mb, 10 * mb, 10 * mb)  # fewer than 2 per parser: always
    assert parsers._room(2, 1, 50 * mb, 10 * mb, 900 * mb)  # mid-run: 60 MB in flight is fine
    assert not parsers._room(2, 1, 60 * mb, 10 * mb, 900 * mb)  # not 70
    assert not parsers._room(2, 1, 20 * mb, 10 * mb, 25 * mb)  # near the end: not past what is queued
    assert parsers._room(2, 1, 10 * mb, 10 * mb, 25 * mb)
