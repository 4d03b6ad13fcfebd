"""One index run at a time: a second run waits, then fails with a one-line error; re-entrant in a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from index.store.ingest import run_index
from index.store.lock import IndexBusy, writer_lock
from total_recall.democorpus import write_demo_corpus

ROOT = Path(__file__).resolve().parent.parent


def _hold_lock_in_child(db: Path, seconds: float) -> subprocess.Popen[bytes]:
    code = textwrap.dedent(f"""
        import time, pathlib
        from index.store.lock import writer_lock
        with writer_lock(pathlib.Path({str(db)!r})):
            print("held", flush=True)
            time.sleep({seconds})
    """)
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE)
    assert p.stdout is not None and p.stdout.readline().strip() == b"held"
    return p


def test_second_run_waits_then_reports_busy(tmp_path: Path) -> None:
    projects = write_demo_corpus(tmp_path)
    db = tmp_path / "index.db"
    child = _hold_lock_in_child(db, 5)
    try:
        t0 = time.monotonic()
        with pytest.raises(IndexBusy) as err:
            run_index(db, [projects], wait=0.3)
        assert time.monotonic() - t0 >= 0.3
        assert "another" in err.value.fix
        assert not db.exists()  # nothing was written while busy
    finally:
        child.kill()
        child.wait()
    report = run_index(db, [projects], wait=5)  # free again: the run goes through
    assert report.messages_added > 0


def test_lock_is_reentrant_in_one_process(tmp_path: Path) -> None:
    projects = write_demo_corpus(tmp_path)
    db = tmp_path / "index.db"
    with writer_lock(db, wait=0):
        report = run_index(db, [projects], wait=0)  # the hooks' worker holds the lock and indexes
    assert report.messages_added > 0
    assert os.path.exists(tmp_path / "index.lock")


def test_cli_index_busy_is_a_one_line_error(tmp_path: Path) -> None:
    projects = write_demo_corpus(tmp_path)
    db = tmp_path / "index.db"
    child = _hold_lock_in_child(db, 30)
    try:
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "total_recall",
                "--db",
                str(db),
                "index",
                "--projects-root",
                str(projects),
                "--wait",
                "0.2",
                "--json",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        child.kill()
        child.wait()
    assert p.returncode != 0 and p.stderr == ""  # --json: the error is one JSON document on stdout
    err = json.loads(p.stdout)["error"]
    assert "another" in err["message"] and err["code"] == "index_busy"
