"""Session digests built at index time (issue 14, S1): the stored table, its items and their source
uuids, the commit / test-run / plan detection, incremental refresh of only the sessions touched,
deletion with the session, and the surfaces that serve it (MCP shape, `digest`, `inspect`)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fixtures import make

from index.retrieval import session_digest
from index.store.digest_rules import TEST_COMMAND, command_key, commit_subject, is_test_pass, runs_tests
from index.store.ingest import run_index
from index.store.schema import SCHEMA_VERSION, migrate
from lib import sqlite
from total_recall.cli import cli

CWD = "/home/dev/projects/alpha"


def work_session(
    sid: str,
    *,
    commit_ok: bool = True,
    extra_prompt: str | None = None,
    reply: str = "Let me look at the config first.",
) -> make.Session:
    """A session that reads, edits, searches, commits, runs tests and leaves a plan open."""
    s = make.Session(sid, cwd=CWD)
    s.prompt("Add retry with backoff to the payment webhook client")
    read = s.response(text="Reading the client.", tools=[("Read", {"file_path": f"{CWD}/src/client.py"})])[-1]
    s.tool_result(read, "def send(): ...")
    grep = s.response(tools=[("Grep", {"pattern": "def send"})])[-1]
    s.tool_result(grep, "src/client.py:1")
    for name, inp in (
        ("Edit", {"file_path": f"{CWD}/src/client.py", "old_string": "a", "new_string": "b"}),
        ("Write", {"file_path": f"{CWD}/src/retry.py", "content": "x = 1\n"}),
        (
            "MultiEdit",
            {"file_path": f"{CWD}/src/client.py", "edits": [{"old_string": "b", "new_string": "c"}]},
        ),
        ("NotebookEdit", {"notebook_path": "/elsewhere/nb.ipynb", "new_source": "print(1)"}),
    ):
        call = s.response(tools=[(name, inp)])[-1]
        s.tool_result(call, "ok")
    bad = s.response(tools=[("Bash", {"command": "pytest -q tests/test_client.py"})])[-1]
    s.tool_result(bad, "1 failed, 3 passed in 0.2s", is_error=True)
    good = s.response(tools=[("Bash", {"command": "cd /x && uv run pytest -q tests/test_client.py"})])[-1]
    s.tool_result(good, "....\n4 passed in 0.21s")
    commit = s.response(
        tools=[("Bash", {"command": 'git add -A && git commit -m "Add retry to the webhook client"'})]
    )[-1]
    s.tool_result(
        commit,
        "[main 1a2b3c4d] Add retry to the webhook client\n 2 files changed" if commit_ok else "gpg failed",
        is_error=not commit_ok,
    )
    todo = s.response(
        tools=[
            (
                "TodoWrite",
                {
                    "todos": [
                        {"content": "Add retry", "status": "completed", "activeForm": "x"},
                        {"content": "Add jitter to the backoff", "status": "pending", "activeForm": "x"},
                    ]
                },
            )
        ]
    )[-1]
    s.tool_result(todo, "Todos updated")
    s.response(text="Done: retries with backoff are in. Next step: we should add jitter to the backoff.")
    if extra_prompt:
        s.prompt(extra_prompt)
        s.response(text=reply)
    return s


def index(tmp_path: Path, sessions: list[make.Session]) -> Path:
    root = tmp_path / "projects"
    for s in sessions:
        s.write(root / make.slug(CWD) / f"{s.session_id}.jsonl")
    db = tmp_path / "index.db"
    assert run_index(db, [root]).errors == []
    return db


def items(db: Path, sid: str) -> list[tuple[Any, ...]]:
    conn = sqlite.connect(db)
    try:
        return conn.execute(
            "SELECT section, kind, text, detail, obs_type, n, source_uuid FROM digest_items WHERE session_id=?"
            " ORDER BY section, ordinal",
            (sid,),
        ).fetchall()
    finally:
        conn.close()


def test_digest_is_stored_with_source_uuids(tmp_path: Path) -> None:
    s = work_session(make.uid("dg", 1))
    db = index(tmp_path, [s])
    rows = items(db, s.session_id)
    by = {(r[0], r[1]): r for r in rows}
    uuids = {r["uuid"] for r in s.records if isinstance(r, dict) and "uuid" in r}
    assert rows and all(r[6] in uuids for r in rows), "every item links to a message of the session"
    edited = {(r[2], r[3], r[5]) for r in rows if r[0] == "files_edited"}
    assert edited == {
        ("src/client.py", f"{CWD}/src/client.py", 2),
        ("src/retry.py", f"{CWD}/src/retry.py", 1),
        ("/elsewhere/nb.ipynb", "/elsewhere/nb.ipynb", 1),  # outside the project: kept absolute
    }
    assert [r[2] for r in rows if r[0] == "files_read"] == ["src/client.py"]
    assert by[("completed", "commit")][2] == "Add retry to the webhook client (1a2b3c4)"
    assert by[("completed", "commit")][4] == "feature"
    tests = [r for r in rows if r[1] == "tests"]
    assert len(tests) == 1 and "4 passed" in tests[0][2] and "uv run" in tests[0][3]
    assert [r[2] for r in rows if r[1] == "plan"] == ["Add jitter to the backoff"]
    assert any(r[1] == "suggested" and "jitter" in r[2] for r in rows)
    assert "payment webhook" in by[("request", "prompt")][2]
    commands = {r[2]: r[5] for r in rows if r[1] == "command"}
    assert commands == {"pytest": 2, "git add": 1}
    conn = sqlite.connect(db)
    meta = conn.execute(
        "SELECT turns, duration_s, counts FROM digests WHERE session_id=?", (s.session_id,)
    ).fetchone()
    assert meta[0] == 1 and meta[1] > 0 and '"commands_failed":1' in meta[2]


def test_failed_commit_is_not_completed(tmp_path: Path) -> None:
    s = work_session(make.uid("dg", 2), commit_ok=False)
    rows = items(index(tmp_path, [s]), s.session_id)
    assert not [r for r in rows if r[1] == "commit"]


@pytest.mark.parametrize(
    ("reply", "open_"),
    [
        ("Let me look at the config first.", True),  # it stopped at what it would do
        ("Should the default stay at 30 s?", True),  # it waits on the user
        ("The timeout now comes from the merchant settings, defaulting to 30 s.", False),  # answered
    ],
)
def test_last_unfinished_request_is_a_next_step(tmp_path: Path, reply: str, open_: bool) -> None:
    s = work_session(
        make.uid("dg", 3), extra_prompt="Now make the timeout configurable per merchant", reply=reply
    )
    rows = items(index(tmp_path, [s]), s.session_id)
    got = [r[2] for r in rows if r[0] == "next" and r[1] == "request"]
    assert got == (["Now make the timeout configurable per merchant"] if open_ else [])


def test_only_touched_sessions_are_rebuilt_and_forget_drops_the_digest(tmp_path: Path) -> None:
    a, b = work_session(make.uid("dg", 4)), work_session(make.uid("dg", 5))
    db = index(tmp_path, [a, b])
    conn = sqlite.connect(db)
    before = dict(conn.execute("SELECT session_id, sig FROM digests"))
    conn.close()
    a.prompt("And log every retry")
    a.write(tmp_path / "projects" / make.slug(CWD) / f"{a.session_id}.jsonl")
    assert run_index(db, [tmp_path / "projects"]).errors == []
    conn = sqlite.connect(db)
    after = dict(conn.execute("SELECT session_id, sig FROM digests"))
    assert after[b.session_id] == before[b.session_id] and after[a.session_id] != before[a.session_id]
    assert any(r[2] == "And log every retry" for r in items(db, a.session_id))
    with conn:
        conn.execute("DELETE FROM sessions WHERE session_id=?", (a.session_id,))
    assert (
        conn.execute("SELECT count(*) FROM digest_items WHERE session_id=?", (a.session_id,)).fetchone()[0]
        == 0
    )
    assert conn.execute("SELECT count(*) FROM digests WHERE session_id=?", (a.session_id,)).fetchone()[0] == 0


def test_migration_is_additive(tmp_path: Path) -> None:
    conn = sqlite.connect(tmp_path / "old.db")
    migrate(conn)
    conn.execute("DROP TABLE digest_items")
    conn.execute("DROP TABLE digests")
    conn.execute("UPDATE schema_meta SET value = '7' WHERE key = 'schema_version'")  # before digests (v8)
    conn.commit()
    assert migrate(conn) == SCHEMA_VERSION
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"digests", "digest_items", "digests_gone"} <= names


def test_surfaces_serve_the_stored_digest(tmp_path: Path) -> None:
    s = work_session(make.uid("dg", 6))
    db = index(tmp_path, [s])
    conn = sqlite.connect(db)
    with conn:  # what the surfaces show is what was stored, not a recomputation
        conn.execute("UPDATE digest_items SET text = 'stored request' WHERE section = 'request'")
    d = session_digest(conn, s.session_id[:12])
    assert d is not None and d["request"]["text"] == "stored request"
    assert d["commits"][0]["uuid"] and d["tests_passed"] and d["turns"] == 1 and d["cost_usd"] > 0
    from index.stats.metrics import cost_report
    from index.stats.pricing import load_catalog

    total = cost_report(conn, load_catalog(), by="all")["total"]["cost_usd"]  # the only session
    assert d["cost_usd"] == pytest.approx(total, abs=1e-4)
    out = CliRunner().invoke(cli, ["--db", str(db), "digest", s.session_id])
    assert out.exit_code == 0 and "stored request" in out.output and "## Commits" in out.output
    out = CliRunner().invoke(cli, ["--db", str(db), "inspect", s.session_id])
    assert out.exit_code == 0 and "\ndigest:\n" in out.output and "1 turns" in out.output
    out = CliRunner().invoke(cli, ["--db", str(db), "digest", "no-such-session"])
    assert out.exit_code != 0 and "no session" in out.output
    out = CliRunner().invoke(cli, ["--db", str(db), "digest", "", "--current", s.session_id])  # /summarize
    assert out.exit_code == 0 and "stored request" in out.output
    out = CliRunner().invoke(cli, ["--db", str(db), "digest", "", "--current", ""])
    assert out.exit_code != 0 and "say which session" in out.output


@pytest.mark.parametrize(
    ("command", "is_error", "result", "passed"),
    [
        ("pytest -q", False, "12 passed in 1s", True),
        ("npm test", False, "Tests:       3 passed, 3 total", True),
        ("cargo test", False, "test result: ok. 5 passed; 0 failed", True),
        ("pytest -q | tail -2", False, "2 failed, 10 passed", False),
        ("pytest -q", True, "12 passed", False),
        ("pytest --collect-only -q", False, "5 tests collected", False),
        ("ls tests", False, "12 passed", False),
        ("go test ./...", False, "ok  \tpkg\t0.1s", True),
        ("pytest -v", False, "test_a PASSED\n" * 100 + " …", False),  # cut before its summary
        ("mix test", False, "14 doctests, 373 tests, 0 failures", True),
    ],
)
def test_passing_test_runs(command: str, is_error: bool, result: str, passed: bool) -> None:
    assert is_test_pass(command, is_error, result) is passed


def test_commit_subject_and_command_key() -> None:
    heredoc = "git commit -m \"$(cat <<'EOF'\nFix the parser\n\nBody\nEOF\n)\""
    assert commit_subject(heredoc, "") == "Fix the parser"
    assert commit_subject('git commit -m "Add x"', "") == "Add x"
    assert commit_subject("git commit", "[feat/x 0123abcd] Add y\n 1 file") == "Add y (0123abc)"
    assert command_key("cd /repo && FOO=1 uv run pytest -q") == "pytest"
    assert command_key("python -m pytest tests") == "pytest"
    assert command_key("git -C x status") == "git"
    assert command_key("git status --short") == "git status"


def test_long_test_output_keeps_its_summary(tmp_path: Path) -> None:
    """Stored tool results keep their start and their end (lib.content.cut_ends): a verbose test run
    whose summary comes after 2,000 chars is still a passing run (it was missed when only the start
    was kept)."""
    s = make.Session(make.uid("dg", 7), cwd=CWD)
    s.prompt("run the whole suite")
    call = s.response(tools=[("Bash", {"command": "pytest -v"})])[-1]
    s.tool_result(
        call,
        "".join(f"tests/test_m.py::test_case_{i} PASSED\n" for i in range(200)) + "== 200 passed in 3s ==",
    )
    rows = items(index(tmp_path, [s]), s.session_id)
    assert [r[2] for r in rows if r[1] == "tests"] == ["pytest: 200 passed in 3s"]


def test_cut_ends_never_keeps_a_piece_of_a_word() -> None:
    from lib.content import cut_ends

    secret = "ghp_" + "A1b2C3d4" * 5
    for shift in range(0, 60, 7):
        text = "x " * 800 + "y" * shift + " " + secret + " " + "z " * (240 - shift // 2)
        out = cut_ends(text, 1000, 500)
        assert len(out) <= 1003 and out.startswith("x x") and out.endswith("z ")
        assert secret in out or not any(secret[-n:] in out for n in range(6, len(secret)))
    assert cut_ends("short", 1000, 500) == "short"


def test_a_later_session_never_changes_an_earlier_digest(tmp_path: Path) -> None:
    """A new goal pauses the project's previous one in the goal stack; the earlier session's digest (and
    so its conversation file in the Markdown memory) stays as it was (it used to be rebuilt)."""
    a = make.Session(make.uid("dg", 8), cwd=CWD)
    a.prompt("The goal is to ship the incremental indexer this week")
    a.response(text="Understood.")
    db = index(tmp_path, [a])
    conn = sqlite.connect(db)
    before = conn.execute("SELECT sig FROM digests WHERE session_id=?", (a.session_id,)).fetchone()
    items_before = items(db, a.session_id)
    assert ("goal", "goal") in {(r[0], r[1]) for r in items_before}
    b = make.Session(make.uid("dg", 9), cwd=CWD, t0=make.T0 + timedelta(days=1))
    b.prompt("The goal is to add a cache layer to the search this week")
    b.response(text="Understood.")
    b.write(tmp_path / "projects" / make.slug(CWD) / f"{b.session_id}.jsonl")
    assert run_index(db, [tmp_path / "projects"]).errors == []
    paused = conn.execute("SELECT status FROM goal_stack WHERE session_id=?", (a.session_id,)).fetchone()
    assert paused == ("paused",)  # the project's goal stack did change
    assert conn.execute("SELECT sig FROM digests WHERE session_id=?", (a.session_id,)).fetchone() == before
    assert items(db, a.session_id) == items_before


def test_a_changed_main_branch_rebuilds_the_digest(tmp_path: Path) -> None:
    """The main branch can move without the session's counts changing (a parent resolved in a later
    increment): the digest follows it (the three-increment quirk corpus once kept a stale ending)."""
    from index.store.branches import update_main_branch
    from index.store.finalize import finalize

    s = make.Session(make.uid("dg", 10), cwd=CWD)
    p1 = s.prompt("Paginate the list endpoint")
    a1 = s.response(text="Added limit/offset pagination.")[-1]
    s.prompt("Use cursors instead", parent=p1["uuid"])
    a2 = s.response(text="Switched to opaque cursors.")[-1]
    last = s.prompt("Thanks", parent=a1["uuid"])
    db = index(tmp_path, [s])
    assert [r[2] for r in items(db, s.session_id) if r[0] == "ending"] == ["Added limit/offset pagination."]
    conn = sqlite.connect(db, isolation_level=None)
    conn.execute("UPDATE messages SET parent_uuid = ? WHERE uuid = ?", (a2["uuid"], last["uuid"]))
    update_main_branch(conn, s.session_id)
    finalize(conn)
    assert [r[2] for r in items(db, s.session_id) if r[0] == "ending"] == ["Switched to opaque cursors."]


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "tox -e py311",
        "nox -s lint",
        "make check",
        "go test ./...",
        "npx jest",
        "bun test",
        "./scripts/test.sh",
        "mocha",
        "bundle exec rspec",
        "vendor/bin/phpunit",
        "ls -la",
        "git commit -m x",
        "latest build",
        "attest",
        "pytestx",
    ],
)
def test_the_word_check_never_hides_a_test_command(command: str) -> None:
    assert runs_tests(command) == (TEST_COMMAND.search(command) is not None)
