"""Markdown project memory (issue 14, S4): `memory write` is deterministic (byte-identical re-runs),
incremental (an appended session changes only its conversation and master.md), synthesises by theme
(a superseded decision shows in the Evolution with both dates), keeps master.md under its budget, and
drops the conversation of a forgotten session; `memory import` adds one line to CLAUDE.md, once."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from click.testing import CliRunner
from fixtures import make

from index.store.ingest import run_index
from lib import sqlite
from total_recall.cli import cli

CWD = "/home/dev/projects/alpha"


def session(n: int, day: int, prompt: str, answer: str) -> make.Session:
    s = make.Session(make.uid("mem", n), cwd=CWD, t0=datetime(2026, 3, day, 9, 0, tzinfo=timezone.utc))
    s.prompt(prompt)
    s.response(text=answer)
    call = s.response(
        tools=[("Edit", {"file_path": f"{CWD}/jobs/q{n}.py", "old_string": "a", "new_string": "b"})]
    )[-1]
    s.tool_result(call, "ok")
    commit = s.response(tools=[("Bash", {"command": f'git commit -am "Add queue worker {n}"'})])[-1]
    s.tool_result(commit, f"[main {n:07x}] Add queue worker {n}")
    s.response(text="Done. Want me to add a retry policy next?")
    return s


SESSIONS = [
    session(
        1, 2, "Always use Celery for background jobs in this repo.", "Understood, Celery for background jobs."
    ),
    session(
        2,
        9,
        "We moved from Celery to RQ; always use RQ for new jobs from now on.",
        "Understood: RQ from now on.",
    ),
]


def setup(tmp_path: Path, sessions: list[make.Session]) -> tuple[Path, Path]:
    root = tmp_path / "projects"
    for s in sessions:
        s.write(root / make.slug(CWD) / f"{s.session_id}.jsonl")
    db = tmp_path / "index.db"
    assert run_index(db, [root]).errors == []
    return db, tmp_path / "_memory"


def write(db: Path, out: Path, *extra: str) -> str:
    res = CliRunner().invoke(
        cli, ["--db", str(db), "memory", "write", "--project", "alpha", "--dir", str(out), *extra]
    )
    assert res.exit_code == 0, res.output
    return res.output


def files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_write_is_byte_identical_and_incremental(tmp_path: Path) -> None:
    db, out = setup(tmp_path, SESSIONS)
    write(db, out)
    first = files(out)
    assert set(first) == {"master.md", *(f"conversations/{s.session_id}.md" for s in SESSIONS)}
    assert "0 written" in write(db, out) and files(out) == first
    third = session(3, 12, "Add a dead-letter queue to the RQ workers", "I'll add it to jobs/dlq.py.")
    third.write(tmp_path / "projects" / make.slug(CWD) / f"{third.session_id}.jsonl")
    assert run_index(db, [tmp_path / "projects"]).errors == []
    write(db, out)
    now = files(out)
    changed = {k for k in now if first.get(k) != now[k]}
    assert changed == {"master.md", f"conversations/{third.session_id}.md"}


def test_conversation_file_is_the_digest(tmp_path: Path) -> None:
    db, out = setup(tmp_path, SESSIONS[:1])
    write(db, out)
    text = (out / "conversations" / f"{SESSIONS[0].session_id}.md").read_text()
    for heading in ("## Context", "## Tracking Points", "## Related Files"):
        assert heading in text
    assert "Always use Celery" in text and "`jobs/q1.py` ×1" in text
    assert "**Status**: Add queue worker 1 (0000001)" in text and "msg " in text
    assert "**Next** (last answer): Want me to add a retry policy next?" in text


def test_master_is_by_theme_with_the_evolution(tmp_path: Path) -> None:
    db, out = setup(tmp_path, SESSIONS)
    write(db, out)
    master = (out / "master.md").read_text()
    heads = [ln for ln in master.splitlines() if ln.startswith("## ")]
    assert heads[:3] == ["## Current Status", "## Key Decisions", "## Evolution & Changes"]
    evolution = master.split("## Evolution & Changes", 1)[1].split("\n## ", 1)[0]
    line = next(ln for ln in evolution.splitlines() if "Celery" in ln)
    assert (
        "(2026-03-02, superseded 2026-03-09)" in line
        and "→" in line
        and "RQ" in line
        and "2026-03-09" in line
    )
    decisions = master.split("## Key Decisions", 1)[1].split("\n## ", 1)[0]
    assert "RQ" in decisions and "Celery for background" not in decisions  # only what is in force
    assert master.rstrip().endswith(
        "Sources: 2 conversations (2026-03-02 – 2026-03-09) in conversations/ · synthesised 2026-03-09"
    )


def test_master_keeps_under_its_budget_by_priority(tmp_path: Path) -> None:
    db, out = setup(tmp_path, SESSIONS)
    write(db, out, "--budget", "1000")
    master = (out / "master.md").read_bytes()
    assert len(master) <= 1000
    text = master.decode()
    assert "## Current Status" in text and "Sources: 2 conversations" in text
    assert "## Active Questions" not in text  # the least important section goes first


def test_forgotten_session_loses_its_file(tmp_path: Path) -> None:
    db, out = setup(tmp_path, SESSIONS)
    write(db, out)
    mine = out / "conversations" / "notes.md"
    mine.write_text("my own notes\n")
    conn = sqlite.connect(db)
    with conn:
        conn.execute("DELETE FROM sessions WHERE session_id = ?", (SESSIONS[0].session_id,))
    conn.close()
    write(db, out)
    assert not (out / "conversations" / f"{SESSIONS[0].session_id}.md").exists()
    assert (out / "conversations" / f"{SESSIONS[1].session_id}.md").exists() and mine.exists()


def test_unknown_project_is_one_line_error(tmp_path: Path) -> None:
    db, out = setup(tmp_path, SESSIONS[:1])
    res = CliRunner().invoke(
        cli, ["--db", str(db), "memory", "write", "--project", "nope", "--dir", str(out)]
    )
    assert res.exit_code != 0 and "no indexed sessions for project 'nope'" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_import_adds_the_line_once(tmp_path: Path) -> None:
    claude = tmp_path / "CLAUDE.md"
    claude.write_text("# Project rules\nNo force pushes.")
    for _ in range(2):
        res = CliRunner().invoke(cli, ["memory", "import", "--file", str(claude)])
        assert res.exit_code == 0, res.output
    assert claude.read_text() == "# Project rules\nNo force pushes.\n@_memory/master.md\n"


def test_show_prints_the_file_or_the_synthesis(tmp_path: Path) -> None:
    db, out = setup(tmp_path, SESSIONS)
    args = ["--db", str(db), "memory", "show", "--project", "alpha", "--dir", str(out)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0 and "## Current Status" in res.output and not out.exists()  # nothing written
    write(db, out)
    (out / "master.md").write_text("# edited by hand\n")
    assert CliRunner().invoke(cli, args).output == "# edited by hand\n"


def test_unresolved_failure_is_an_active_question(tmp_path: Path) -> None:
    s = make.Session(make.uid("mem", 9), cwd=CWD, t0=datetime(2026, 3, 20, 9, 0, tzinfo=timezone.utc))
    s.prompt("Make the indexer resume after a crash")
    s.response(text="Added a pragma comment.")
    s.prompt("the pragma comment didn't work")
    s.response(text="Let me look at the lock first.")
    s.prompt("what does the lock guard?")
    s.response(text="It guards the cursor of the writer.")
    db, out = setup(tmp_path, [*SESSIONS, s])
    write(db, out)
    master = (out / "master.md").read_text()
    learnings = master.split("## Learnings & Discoveries", 1)[1].split("\n## ", 1)[0]
    questions = master.split("## Active Questions", 1)[1].split("\n---", 1)[0]
    assert "Did not work: the pragma comment didn't work" in learnings
    assert "Unresolved: the pragma comment didn't work" in questions
    assert "Unresolved" not in master.split("## Active Questions", 1)[0]
