"""Git-aware staleness (issue 19): a memory that names a file (`utils/retry.py`), a function
(`utils/retry.py::backoff`), a flag (`--no-cache`) or a package (`pip install tenacity`, "the tenacity
package") is linked to it; when its project's repository no longer has it at HEAD — the file was
deleted, the function is not defined in the file any more, the flag appears nowhere, the package left
every manifest — the memory is stale, with the commit that removed it as evidence. Names the
repository never had are not links (nothing to invalidate).

Cheap plumbing only (`git cat-file`, `git grep` at HEAD, `git log -1` for the evidence), every call
bounded by the caller's deadline; a check that runs out of time marks nothing. Results are kept per
HEAD in `stale_marks` (index.store.stale), so a SessionStart re-checks only after a commit. A later
session deciding otherwise is the supersession of standing decisions (index/store/operator.py), which
the bundle already leaves out."""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from index.store.operator import row_kind
from index.store.stale import Mark, read_marks, write_marks
from lib import sqlite
from lib.memid import memory_id

# Memory text is user text: names are found word by word (str.split, a set lookup, one bounded
# identifier check per word), never by a pattern that scans the whole text with nested repeats.
EXTS = frozenset(
    "py pyi js mjs cjs ts tsx jsx go rs rb java kt c h cc cpp hpp cs php sh swift scala lua sql toml yaml "
    "yml json cfg ini".split()
)
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,80}")  # fullmatch on one word
_FLAG = re.compile(r"--[a-z][a-z0-9]{1,40}(?:-[a-z0-9]{1,40}){0,8}")  # fullmatch on one word
INSTALLERS = {
    "pip": "install",
    "pip3": "install",
    "pipx": "install",
    "uv": "add",
    "poetry": "add",
    "npm": "install",
    "yarn": "add",
    "pnpm": "add",
    "cargo": "add",
    "go": "get",
    "gem": "install",
}
NOUNS = frozenset(("package", "library", "dependency", "crate"))
_TRIM = "`'\".,;:()[]{}<>!?«»"
MAX_WORD = 300
MANIFESTS = (
    "pyproject.toml",
    "requirements.txt",
    "requirements-dev.txt",
    "setup.cfg",
    "setup.py",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "Gemfile",
)
_NOT_PACKAGES = frozenset("the a an this that new our your same one which python node npm".split())


class OutOfTime(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Ref:
    kind: str  # file | function | flag | package
    path: str = ""
    name: str = ""

    def __str__(self) -> str:
        if self.kind == "function":
            return f"{self.path}::{self.name}"
        if self.kind == "package":
            return f"package {self.name}"
        return self.path or self.name


def _path(word: str) -> str | None:
    """`word` as a repository path with a known extension (`utils/retry.py`), else None."""
    word = word.lstrip("./")
    stem, dot, ext = word.rpartition(".")
    if not dot or ext not in EXTS or not stem or not set(word) <= _PATH_CHARS or "//" in word:
        return None
    return word


def refs(text: str) -> list[Ref]:
    """The files, functions, flags and packages a memory names, in order, without repeats."""
    out: list[Ref] = []
    words = [w.strip(_TRIM) for w in text.split() if len(w) <= MAX_WORD]
    for i, word in enumerate(words):
        head, sep, func = word.partition("::")
        path = _path(head)
        if path and sep and _IDENT.fullmatch(func):
            out.append(Ref("function", path, func))
        elif path and not sep:
            out.append(Ref("file", path))
        elif _FLAG.fullmatch(word):
            out.append(Ref("flag", name=word))
        low = word.lower()
        name = ""
        if (
            INSTALLERS.get(low)
            and i + 2 < len(words)
            and words[i + 1].lower() in (INSTALLERS[low], "i", "pip")
        ):
            rest = [
                w for w in words[i + 2 :] if not w.startswith("-") and w.lower() not in ("install", "add")
            ]
            name = rest[0] if rest else ""
        elif low in NOUNS and i > 0:
            name = words[i - 1]
        if (
            name
            and name.lower() not in _NOT_PACKAGES
            and _IDENT.fullmatch(name.replace("-", "_").replace(".", "_"))
        ):
            out.append(Ref("package", name=name))
    seen: set[Ref] = set()
    return [r for r in out if not (r in seen or seen.add(r))]  # type: ignore[func-returns-value]


class Git:
    """`git -C repo …` with every call bounded by `deadline` (time.monotonic())."""

    def __init__(self, repo: str, deadline: float) -> None:
        self.repo = repo
        self.deadline = deadline

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        left = self.deadline - time.monotonic()
        if left <= 0.01:
            raise OutOfTime(args[0])
        try:
            return subprocess.run(
                ["git", "--no-optional-locks", "-C", self.repo, *args],  # never takes the index lock
                capture_output=True,
                text=True,
                timeout=left,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise OutOfTime(args[0]) from exc

    def head(self) -> str | None:
        p = self.run("rev-parse", "--verify", "-q", "HEAD")
        return p.stdout.strip() or None if p.returncode == 0 else None

    def has_file(self, path: str) -> bool:
        return self.run("cat-file", "-e", f"HEAD:{path}").returncode == 0

    def grep(self, *args: str) -> bool:
        return self.run("grep", "-q", "-I", *args).returncode == 0

    def last_change(self, *args: str) -> tuple[str, str] | None:
        """(sha, date) of the newest commit `git log` selects with `args`, or None."""
        p = self.run("log", "-1", "--format=%H%x1f%cs", *args)
        parts = p.stdout.strip().split("\x1f")
        return (parts[0], parts[1]) if p.returncode == 0 and len(parts) == 2 else None


def _definition(name: str) -> str:
    return (
        rf"((def|function|fn|func|class|sub|const|let|var)[[:space:]]+{name}([^A-Za-z0-9_]|$))|"
        rf"(^|[^A-Za-z0-9_.]){name}[[:space:]]*[:=][[:space:]]*(function|\(|async)"
    )


def check_ref(git: Git, ref: Ref) -> tuple[str, str, str] | None:
    """(reason, sha, date) when `ref` is gone at HEAD and the history says when; else None."""
    if ref.kind in ("file", "function"):
        if not git.has_file(ref.path):
            gone = git.last_change("--diff-filter=D", "--", ref.path)
            return (f"{ref.path} was deleted", *gone) if gone else None
        if ref.kind == "file" or git.grep("-E", "-e", _definition(ref.name), "HEAD", "--", ref.path):
            return None
        gone = git.last_change(f"-S{ref.name}", "--", ref.path)
        return (f"{ref} is no longer defined at HEAD", *gone) if gone else None
    if ref.kind == "flag":
        if git.grep("-F", "-e", ref.name, "HEAD"):
            return None
        gone = git.last_change(f"-S{ref.name}")
        return (f"{ref.name} appears nowhere in the repository at HEAD", *gone) if gone else None
    manifests = [m for m in MANIFESTS if git.has_file(m)]
    if not manifests or git.grep("-i", "-w", "-F", "-e", ref.name, "HEAD", "--", *manifests):
        return None
    gone = git.last_change(f"-S{ref.name}", "--", *manifests)
    return (f"dependency {ref.name} was removed from {', '.join(manifests)}", *gone) if gone else None


def repo_of(project_key: str | None) -> str | None:
    """The project's checkout when it is a git repository on this machine."""
    if project_key and os.path.exists(os.path.join(project_key, ".git")):
        return project_key
    return None


def linked(kind: str, text: str) -> list[Ref]:
    """What a memory of `kind` is linked to. A ban's flags and packages are what it forbids: their
    absence from the repository is the ban working, not the ban going stale."""
    found = refs(text)
    return [r for r in found if r.kind in ("file", "function")] if kind == "ban" else found


class Checker:
    """Stale marks for memories, from `stale_marks` when made at the current HEAD, else from git within
    the time left (`budget_s` for the whole run: 0 = the stored marks only). `new` collects the marks
    made now, for the caller to store."""

    def __init__(self, conn: sqlite.Connection, budget_s: float) -> None:
        self.conn = conn
        self.deadline = time.monotonic() + budget_s
        self.heads: dict[str, str | None] = {}
        self.new: list[Mark] = []
        self.out_of_time = budget_s <= 0

    def mark(self, item_id: str, kind: str, text: str, project: str | None) -> Mark | None:
        found = linked(kind, text)
        repo = repo_of(project) if found else None
        if repo is None:
            return None
        stored = read_marks(self.conn, [item_id]).get(item_id)
        if self.out_of_time:
            return stored
        git = Git(repo, self.deadline)
        try:
            if repo not in self.heads:
                self.heads[repo] = git.head()
            head = self.heads[repo]
            if head is None or (stored is not None and stored.head == head):
                return stored
            mark = _check(git, item_id, head, found)
        except (OutOfTime, OSError):
            self.out_of_time = True  # the rest keeps its stored marks until the next check
            return stored
        self.new.append(mark)
        return mark


def _check(git: Git, item_id: str, head: str, found: list[Ref]) -> Mark:
    for ref in found:
        gone = check_ref(git, ref)
        if gone:
            reason, sha, date = gone
            return Mark(item_id, head, True, str(ref), f"{reason} (commit {sha[:10]}, {date})", sha, date)
    return Mark(item_id, head, False, str(found[0]))


# Every live memory as (project, content, kind); a standing decisions row takes its kind (decision or
# order) from its extraction.
_ALL = (
    f"""SELECT t.project_key, t.content, {row_kind()} FROM standing_decisions t
       LEFT JOIN extractions e ON e.id = t.extraction_id WHERE t.status = 'active'""",
    "SELECT project_key, content, 'ban' FROM bans WHERE active = 1",
    "SELECT project_key, content, 'goal' FROM goal_stack WHERE status IN ('active','paused','blocked')",
    "SELECT project_key, content, 'failed_attempt' FROM failed_attempts",
)


def check_all(conn: sqlite.Connection, budget_s: float = 60.0) -> dict[str, Any]:
    """`total-recall consolidate`: check every live memory (decisions, bans, open goals, failed attempts)
    that names code, store the marks on `conn` (a writer), and count them."""
    checker = Checker(conn, budget_s)
    stale = linked_n = 0
    for sql in _ALL:
        for project, content, kind in conn.execute(sql).fetchall():
            mark = checker.mark(memory_id(kind, project, content), kind, content, project)
            linked_n += mark is not None
            stale += bool(mark and mark.stale)
    write_marks(conn, checker.new)
    return {
        "linked": linked_n,
        "checked_now": len(checker.new),
        "stale": stale,
        "out_of_time": checker.out_of_time and budget_s > 0,
    }
