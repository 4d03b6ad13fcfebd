"""Project identity: the git root of a cwd, with worktrees collapsed into their main checkout (W10)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import lru_cache

# Worktree conventions seen in transcripts: `<repo>/.claude/worktrees/<name>`, `<repo>/.worktrees/<name>`,
# `<repo>/worktrees/<name>` and `<repo>-worktrees/<name>`.
_WORKTREE_RE = re.compile(
    r"^(?P<repo>.+?)(?:[/\\]\.claude[/\\]worktrees|[/\\]\.worktrees|[/\\]worktrees|-worktrees)[/\\][^/\\]+"
)
# The desktop app's `~/.claude-worktrees/<repo name>/<worktree>`: the repo is the folder under it (read
# as `<repo>-worktrees/<name>`, every repo's worktrees would share one project, `~/.claude`).
_APP_WORKTREE_RE = re.compile(r"^(?P<repo>.+?[/\\]\.claude-worktrees[/\\][^/\\]+)[/\\][^/\\]+")


@lru_cache(maxsize=4096)
def project_key(cwd: str | None) -> str | None:
    """Git root of `cwd` when the checkout exists on this machine, else a path heuristic."""
    if not cwd:
        return None
    cwd = cwd.rstrip("/\\") or cwd
    root = _git_root(cwd)
    if root is not None:
        return root
    m = _APP_WORKTREE_RE.match(cwd) or _WORKTREE_RE.match(cwd)
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


def project_labels(keys: Iterable[str | None]) -> dict[str, str]:
    """Unique short labels for project keys: the last path part, with as many parent parts as it takes
    to tell two projects apart (`work/api`, `home/api`); a key with no name of its own (`C:`) whole.
    The one labeller of every CLI table and line that names projects."""
    parts = {k: [p for p in re.split(r"[/\\]", k.rstrip("/\\")) if p] for k in {k for k in keys if k}}
    depth = dict.fromkeys(parts, 1)
    while True:
        seen: dict[str, list[str]] = {}
        for k, ps in parts.items():
            seen.setdefault("/".join(ps[-depth[k] :]), []).append(k)
        clash = [k for ks in seen.values() if len(ks) > 1 for k in ks if depth[k] < len(parts[k])]
        if not clash:
            break
        for k in clash:
            depth[k] += 1
    out = {}
    for k, ps in parts.items():
        leaf = "/".join(ps[-depth[k] :])
        out[k] = leaf if ps and not leaf.endswith(":") and leaf.strip("-") else k
    return out
