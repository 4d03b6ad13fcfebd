"""Project identity: the git root of a cwd, with worktrees collapsed into their main checkout (W10)."""

from __future__ import annotations

import os
import re
from functools import lru_cache

# Worktree conventions seen in transcripts: `<repo>/.claude/worktrees/<name>`, `<repo>/.worktrees/<name>`,
# `<repo>/worktrees/<name>` and `<repo>-worktrees/<name>`.
_WORKTREE_RE = re.compile(
    r"^(?P<repo>.+?)(?:[/\\]\.claude[/\\]worktrees|[/\\]\.worktrees|[/\\]worktrees|-worktrees)[/\\][^/\\]+"
)


@lru_cache(maxsize=4096)
def project_key(cwd: str | None) -> str | None:
    """Git root of `cwd` when the checkout exists on this machine, else a path heuristic."""
    if not cwd:
        return None
    cwd = cwd.rstrip("/\\") or cwd
    root = _git_root(cwd)
    if root is not None:
        return root
    m = _WORKTREE_RE.match(cwd)
    if m:
        return m.group("repo")
    return cwd


def _git_root(cwd: str) -> str | None:
    p = cwd
    for _ in range(40):
        git = os.path.join(p, ".git")
        if os.path.isdir(git):
            return p
        if os.path.isfile(git):  # a worktree: .git is a file "gitdir: <main>/.git/worktrees/<name>"
            try:
                with open(git, encoding="utf-8", errors="replace") as f:
                    line = f.readline().strip()
            except OSError:
                return p
            if line.startswith("gitdir:"):
                target = line[len("gitdir:") :].strip()
                marker = os.sep + ".git" + os.sep + "worktrees" + os.sep
                if marker in target:
                    return target.split(marker)[0]
            return p
        parent = os.path.dirname(p)
        if parent == p or not parent:
            return None
        p = parent
    return None


def display_name(key: str | None) -> str:
    """Short project name for humans: the last path component."""
    if not key:
        return "?"
    return re.split(r"[/\\]", key.rstrip("/\\"))[-1] or key
