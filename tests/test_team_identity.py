"""Project identity across machines (S5, lib/project_id.py): env, then git config, then the normalised
origin remote (ssh and https forms of one repository agree), then the git root, then the cwd;
worktrees and clones of one repository share one id."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lib.project_id import normalise_remote, resolve_project_id, valid_project_id


def git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def repo(path: Path, remote: str | None = None) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", str(path))
    if remote:
        git("-C", str(path), "remote", "add", "origin", remote)
    return path


@pytest.mark.parametrize(
    ("url", "want"),
    [
        ("git@github.com:Org/Repo.git", "github.com/org/repo"),
        ("ssh://git@github.com:22/org/repo.git", "github.com/org/repo"),
        ("https://github.com/org/repo", "github.com/org/repo"),
        ("https://user:secret@GitHub.com/org/repo.git/", "github.com/org/repo"),
        ("git://github.com/org//repo.git", "github.com/org/repo"),
        ("/srv/git/repo.git", "file:/srv/git/repo"),
        ("file:///srv/git/repo.git/", "file:/srv/git/repo"),
        ("", None),
        ("not a url", None),
    ],
)
def test_remote_forms_normalise_to_one_string(url: str, want: str | None) -> None:
    assert normalise_remote(url) == want


def test_ssh_and_https_clones_in_different_places_share_one_id(tmp_path: Path) -> None:
    a = repo(tmp_path / "alice" / "code" / "repo", "git@example.com:team/repo.git")
    b = repo(tmp_path / "bob" / "elsewhere" / "r", "https://example.com/team/repo")
    other = repo(tmp_path / "other", "https://example.com/team/another.git")
    ida, idb = resolve_project_id(str(a), {}), resolve_project_id(str(b), {})
    assert ida is not None and idb is not None
    assert ida.id == idb.id and ida.source == "remote" and valid_project_id(ida.id)
    assert "example" not in ida.id  # a hash: the id reveals no host or path
    sub = a / "src" / "pkg"
    sub.mkdir(parents=True)
    assert resolve_project_id(str(sub), {}) == resolve_project_id(str(a), {})
    assert resolve_project_id(str(other), {}).id != ida.id  # type: ignore[union-attr]


def test_a_worktree_shares_its_repositorys_id(tmp_path: Path) -> None:
    main = repo(tmp_path / "main")
    git(
        "-C",
        str(main),
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=a",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    git("-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "wt")
    got_main, got_wt = resolve_project_id(str(main), {}), resolve_project_id(str(tmp_path / "wt"), {})
    assert got_main is not None and got_wt is not None
    assert got_main.source == "git-root" and got_wt.id == got_main.id
    git("-C", str(main), "remote", "add", "origin", "https://example.com/x/y.git")
    assert resolve_project_id(str(tmp_path / "wt"), {}).id == resolve_project_id(str(main), {}).id  # type: ignore[union-attr]


def test_env_then_git_config_override_the_remote(tmp_path: Path) -> None:
    a = repo(tmp_path / "a", "https://example.com/team/repo")
    git("-C", str(a), "config", "--local", "claude.projectid", "team-repo")
    got = resolve_project_id(str(a), {})
    assert got is not None and (got.id, got.source) == ("team-repo", "git-config")
    got = resolve_project_id(str(a), {"CLAUDE_PROJECT_ID": "from-env"})
    assert got is not None and (got.id, got.source) == ("from-env", "env")
    got = resolve_project_id(str(a), {"CLAUDE_PROJECT_ID": "../bad id"})  # not a valid id: ignored
    assert got is not None and got.id == "team-repo"


def test_outside_git_the_cwd_is_the_identity(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    got = resolve_project_id(str(plain), {})
    assert got is not None and got.source == "cwd" and got.id.startswith("cwd-")
    assert resolve_project_id(None, {}) is None
    assert resolve_project_id(None, {"CLAUDE_PROJECT_ID": "p1"}).id == "p1"  # type: ignore[union-attr]
