"""Hook faults (issue 10 #11, #14): where a hook may point the background index, and a hook never
waits past its deadline — not on a locked index, not for a CPU taken by an index run."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_e2e_claude import wait_idle
from test_hooks import Past, hook, make_past

from lib.events import read_events
from lib.settings import Settings


@pytest.fixture
def past(tmp_path: Path) -> Past:
    return make_past(tmp_path)


# ---- derived index roots (issue 10 #11) -------------------------------------------------------------


def _roots_for(transcript: str, tmp_path: Path) -> tuple[list[Path], dict[str, object]]:
    from hooks.context import Ctx, roots

    ctx = Ctx(
        "stop",
        {"transcript_path": transcript},
        tmp_path / "i.db",
        tmp_path,
        time.monotonic() + 3,
        Settings.from_env(),
    )
    return roots(ctx), ctx.rec


def test_stray_transcript_never_makes_the_file_system_a_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured = tmp_path / "claude" / "projects"
    stray = tmp_path / "deep" / "stray.jsonl"
    stray.parent.mkdir(parents=True)
    stray.write_text("{}\n")
    for path in (
        str(stray),
        "/stray.jsonl",
        str(Path.home() / "x" / "stray.jsonl"),
        str(tmp_path / "projects" / "-p" / "s.jsonl"),
        "relative/dir/s.jsonl",
    ):
        got, rec = _roots_for(path, tmp_path)
        assert got == Settings.from_env().projects_roots() == [configured], path
        assert rec["refused_root"], path  # logged in the hook's event
    (tmp_path / "projects" / "-p").mkdir(parents=True)
    got, rec = _roots_for(str(tmp_path / "projects" / "-p" / "s.jsonl"), tmp_path)
    assert got == [configured] and rec["refused_root"] == str(tmp_path / "projects")


def test_projects_folder_of_an_agent_home_is_accepted(tmp_path: Path) -> None:
    other = tmp_path / "other-user" / ".claude" / "projects"
    (other / "-w-p" / "sid" / "subagents").mkdir(parents=True)
    got, rec = _roots_for(str(other / "-w-p" / "sid.jsonl"), tmp_path)
    assert got[-1] == other and "refused_root" not in rec
    got, rec = _roots_for(str(other / "-w-p" / "sid" / "subagents" / "agent-1.jsonl"), tmp_path)
    assert got[-1] == other and "refused_root" not in rec
    configured = tmp_path / "claude" / "projects"
    (configured / "-w-p").mkdir(parents=True)
    got, rec = _roots_for(str(configured / "-w-p" / "sid.jsonl"), tmp_path)
    assert got == [configured] and "refused_root" not in rec  # already configured: not added twice


def test_session_start_with_a_stray_transcript_logs_the_refusal(past: Past, tmp_path: Path) -> None:
    stray = tmp_path / "elsewhere" / "stray.jsonl"
    stray.parent.mkdir()
    stray.write_text("{}\n")
    hook(
        "session-start",
        {
            "session_id": "s1",
            "cwd": past.cwd,
            "transcript_path": str(stray),
            "hook_event_name": "SessionStart",
            "source": "startup",
        },
        past.db,
        past.root,
    )
    ev = [e for e in read_events(past.db.parent) if e.get("hook") == "session-start"][-1]
    assert ev["ok"] and ev["refused_root"] == str(stray.parent.parent)
    wait_idle(past.db.parent)


# ---- lock waits stay inside the hook's deadline (issue 10 #14) ---------------------------------------

HOLD_EXCLUSIVE = """
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA locking_mode=EXCLUSIVE")
c.execute("BEGIN EXCLUSIVE")
c.execute("SELECT count(*) FROM sessions").fetchone()
print("locked", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("event", ["session-start", "user-prompt-submit"])
def test_a_locked_index_never_makes_a_hook_overshoot(
    event: str, past: Past, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    from hooks import runner

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_EXCLUSIVE, str(past.db)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        monkeypatch.setitem(runner.DEADLINE, event, 0.6)
        monkeypatch.setenv("TOTAL_RECALL_DB", str(past.db))
        (past.db.parent / "index.last").write_text("0")  # fresh: no background index in this test
        payload = {
            "session_id": "lk",
            "cwd": past.cwd,
            "source": "startup",
            "prompt": "what did we decide last time about config parsing?",
        }
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode())))
        t0 = time.perf_counter()
        assert runner.run_hook(event) == 0
        took = time.perf_counter() - t0
    finally:
        holder.kill()
        holder.wait()
    assert took < 0.9, took  # the deadline, not SQLite's 5 s busy timeout
    assert capsys.readouterr().out == ""
    ev = [e for e in read_events(past.db.parent) if e.get("hook") == event][-1]
    assert ev["ok"] is False and "locked" in ev["error"]


# ---- the background index yields the CPU (issue 10 #14) --------------------------------------------


def test_detached_index_lowers_its_own_autogroup(past: Past) -> None:
    from hooks.spawn import spawn_index

    assert spawn_index(past.db, [past.root], trigger="t-nice") == "spawned"
    wait_idle(past.db.parent)
    ev = [e for e in read_events(past.db.parent) if e.get("trigger") == "t-nice"][-1]
    assert ev["ok"] and ev["nice"] >= 10
    if Path("/proc/self/autogroup").exists():  # Linux with autogroups: nice alone would not count
        assert ev["autogroup_nice"] == 10
