"""Project identity across machines (S5): the one resolver hooks, the CLI and the team client use.

In order: `CLAUDE_PROJECT_ID` → `git config --local claude.projectid` → a hash of the normalised
`remote.origin.url` (ssh and https forms of one repository give one id) → a hash of the git root →
a hash of the cwd. Worktrees share their main checkout's config and root, so they share its id;
clones of one remote share it on every machine. Paths are hashed so an id does not reveal a home dir.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from lib.project import project_key

_VALID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
_SCP = re.compile(r"^(?:(?P<user>[^@/]+)@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")  # git@host:org/repo
_URL = re.compile(
    r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/]*@)?(?P<host>[^/:]+)(?::\d*)?(?P<path>/.*)?$", re.I
)
GIT_TIMEOUT_S = 2.0


@dataclass(frozen=True, slots=True)
class ProjectId:
    id: str
    source: str  # env | git-config | remote | git-root | cwd
    root: str | None  # the project key (git root, worktrees collapsed) the id was resolved for


def valid_project_id(value: str) -> bool:
    """1-128 characters of letters, digits and `._:-`, starting with a letter or digit."""
    return bool(_VALID.match(value))


def normalise_remote(url: str) -> str | None:
    """`host/path` in lower case, without user, port, scheme or `.git`: one string per repository."""
    url = url.strip()
    if url.startswith("file://") or url.startswith("/"):  # a repository on this host: its path
        path = re.sub(r"/+", "/", url.removeprefix("file://")).rstrip("/")
        path = re.sub(r"\.git$", "", path).rstrip("/")
        return f"file:{path}" if path else None
    m = _URL.match(url)
    if m:
        host, path = m.group("host"), m.group("path") or ""
    else:
        m = _SCP.match(url)
        if not m or "\\" in url:
            return None
        host, path = m.group("host"), m.group("path")
    path = re.sub(r"/+", "/", path.strip("/"))
    path = re.sub(r"\.git$", "", path).rstrip("/")
    if not host or not path:
        return None
    return f"{host.lower()}/{path.lower()}"


def _digest(kind: str, value: str) -> str:
    return f"{kind}-" + hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def _git_config(cwd: str, env: Mapping[str, str]) -> dict[str, str]:
    """claude.projectid and remote.origin.url of the repository at `cwd` (nothing when git fails)."""
    try:
        out = subprocess.run(
            [
                "git",
                "-C",
                cwd,
                "config",
                "--local",
                "--get-regexp",
                r"^(claude\.projectid|remote\.origin\.url)$",
            ],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env={**env, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    found: dict[str, str] = {}
    for line in out.stdout.splitlines():
        key, _, value = line.partition(" ")
        found.setdefault(key.lower(), value.strip())
    return found


def resolve_project_id(cwd: str | None, env: Mapping[str, str]) -> ProjectId | None:
    """The project id for `cwd` (None without a cwd and without CLAUDE_PROJECT_ID); `env` is the
    settings' snapshot (also the environment of the `git` it runs)."""
    e = env
    root = project_key(cwd) if cwd else None
    given = (e.get("CLAUDE_PROJECT_ID") or "").strip()
    if given and valid_project_id(given):
        return ProjectId(given, "env", root)
    if not cwd:
        return None
    conf = _git_config(cwd, e) if os.path.isdir(cwd) else {}
    configured = conf.get("claude.projectid", "")
    if configured and valid_project_id(configured):
        return ProjectId(configured, "git-config", root)
    remote = normalise_remote(conf.get("remote.origin.url", ""))
    if remote:
        return ProjectId(_digest("remote", remote), "remote", root)
    if root and root != cwd.rstrip("/\\"):
        return ProjectId(_digest("root", root), "git-root", root)
    if root and os.path.isdir(os.path.join(root, ".git")):
        return ProjectId(_digest("root", root), "git-root", root)
    return ProjectId(_digest("cwd", cwd.rstrip("/\\") or cwd), "cwd", root)
