"""Worktrees the desktop app makes (`~/.claude-worktrees/<repo>/<worktree>`) belong to their repo: two
repos' worktrees are two projects, so one repo's rules never reach the other's sessions."""

from __future__ import annotations

from pathlib import Path

from fixtures.make import Session, slug, uid

from index.briefing.bundle import operator_context
from index.store.db import open_reader
from index.store.ingest import run_index
from lib.project import project_key

HOME = "/home/a/.claude-worktrees"


def _write(root: Path, cwd: str, rule: str) -> None:
    s = Session(uid("appwt", cwd), cwd=cwd)
    s.prompt("Please add a loader for the settings files.")
    s.response(text="Done. I added the loader and all tests pass.")
    s.prompt(rule)
    s.response(text="Noted.")
    path = root / slug(cwd) / f"{uid('appwt', cwd)}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    s.write(path)


def test_each_repos_app_worktrees_are_one_project_of_their_own(tmp_path: Path) -> None:
    alpha, alpha2, beta = f"{HOME}/alpha/brave-fox", f"{HOME}/alpha/calm-owl", f"{HOME}/beta/quiet-elk"
    assert project_key(alpha) == project_key(alpha2) == f"{HOME}/alpha"
    assert project_key(beta) == f"{HOME}/beta"
    assert (
        project_key("C:\\Users\\a\\.claude-worktrees\\alpha\\brave-fox")
        == "C:\\Users\\a\\.claude-worktrees\\alpha"
    )
    root = tmp_path / "projects"
    _write(root, alpha, "Never commit the generated protobuf files in this repo.")
    _write(root, beta, "Please add retries to the HTTP client with exponential backoff.")
    db = tmp_path / "data" / "index.db"
    run_index(db, [root])
    conn = open_reader(db)
    try:
        keys = {k for (k,) in conn.execute("SELECT project_key FROM sessions")}
        ctx = operator_context(conn, beta)
    finally:
        conn.close()
    assert keys == {f"{HOME}/alpha", f"{HOME}/beta"}
    assert "protobuf" not in ctx.text
