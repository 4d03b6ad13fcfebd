"""Rules that read one shell command, tool result or item for a session digest (S1): which commands
are test runs and commits, whether a run passed, a commit's subject, what a command runs (for
grouping), an item's observation type. Pure functions; `index/store/digest_build.py` applies them."""

from __future__ import annotations

import re

OBSERVATION_TYPES = ("decision", "bugfix", "feature", "refactor", "discovery", "change")

# A test runner in a shell command, and a `git commit` (global options like -C dir allowed).
TEST_COMMAND = re.compile(
    r"\b(?:pytest|py\.test|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|unittest)\b"
    r"|\b(?:npm|pnpm|yarn|bun|deno)\s+(?:run\s+)?test\b|\b(?:cargo|go|dotnet|mvn|gradle|mix)\s+test\b"
    r"|\bmake\s+(?:test|check)\b|\btest\.sh\b"
)
# Every match of TEST_COMMAND holds one of these words; most commands hold none, and testing for
# them is cheaper than the regex search it spares.
_TEST_WORDS = ("test", "tox", "nox", "jest", "mocha", "rspec", "phpunit", "check")
NOT_A_RUN = re.compile(r"--(?:collect-only|co|markers|help|version|fixtures)\b")
GIT_COMMIT = re.compile(r"\bgit\s+(?:-[Cc]\s+\S+\s+)*commit\b")
TEST_FAILED = re.compile(
    r"\b[1-9]\d* (?:failed|errors?|failing)\b|\bFAILED\b|\bFAIL\b|test result: FAILED|\bno tests ran\b"
    r"|\b0 passed\b|\bTests?:\s+[1-9]\d* failed"
)
TEST_PASSED = re.compile(
    r"\b[1-9]\d* (?:passed|passing)\b|test result: ok\b|^ok\s|^PASS\b|\bTests?:\s+[1-9]\d* passed|^OK\b"
    r"|\b[1-9]\d* tests?, 0 failures",
    re.M,
)
_COMMIT_LINE = re.compile(r"^\[[^\]\n]{1,120}? ([0-9a-f]{7,40})\] ([^\n]{1,300})", re.M)
_COMMIT_MSG = re.compile(r"""-m\s+(?:"(?!\$\()([^"\n]{1,300})|'([^'\n]{1,300}))""")
_HEREDOC_MSG = re.compile(r"<<[^\S\n]*'?EOF'?\)?[^\S\n]*\n[^\S\n]*([^\n]{1,300})")
_BUGFIX = re.compile(
    r"\b(fix\w*|bug\w*|error\w*|fail\w*|crash\w*|flak\w*|broken|regression|root cause|resolv\w*|"
    r"patch\w*|workaround)\b",
    re.I,
)
_REFACTOR = re.compile(
    r"\b(refactor\w*|renam\w*|extract\w*|mov(?:e|ed|ing)|clean\w*|simplif\w*|split\w*|restructur\w*|"
    r"reorganis\w*|reorganiz\w*|dedup\w*|consolidat\w*)\b",
    re.I,
)
_FEATURE = re.compile(
    r"\b(add\w*|implement\w*|creat\w*|support\w*|introduc\w*|buil[dt]\w*|wir(?:e|ed|ing)|new|feat)\b", re.I
)
# A command's first word(s) that only set up the real one: `cd x &&`, env assignments, runners.
_PREFIX = re.compile(
    r"^(?:cd\s+\S+\s*(?:&&|;)\s*|[A-Z_][A-Z0-9_]*=\S*\s+|(?:uv|poetry|pipenv)\s+run\s+|npx\s+|sudo\s+)+"
)
_SUBCOMMANDS = frozenset(
    ("git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "gh", "make", "uv", "pip", "kubectl")
)


def observation_type(kind: str, text: str) -> str | None:
    """decision / bugfix / feature / refactor / discovery / change for one item (None = not one)."""
    if kind == "decision":
        return "decision"
    if kind in ("fact", "discovery"):
        return "discovery"
    if kind not in ("progress", "failed", "correction", "commit"):
        return None
    if kind == "progress" and len(text.split()) < 3:
        return None  # "Done", "Fixed it"
    if _BUGFIX.search(text) or kind == "correction":
        return "bugfix"
    if kind == "failed":
        return "discovery"
    if _REFACTOR.search(text):
        return "refactor"
    if _FEATURE.search(text):
        return "feature"
    return "change"


def relative(path: str, cwd: str | None) -> str:
    """A path relative to the session's project folder when it lies inside it."""
    if cwd and path.startswith(cwd) and len(path) > len(cwd) + 1 and path[len(cwd)] in "/\\":
        return path[len(cwd) + 1 :]
    return path


def command_key(command: str) -> str:
    """What a shell command runs, for grouping: `git commit`, `pytest`, `ls` (setup prefixes dropped)."""
    first = command.strip().split("\n", 1)[0]
    words = _PREFIX.sub("", first).split()
    if not words:
        return first[:40]
    head = words[0].rsplit("/", 1)[-1]
    if head in ("python", "python3") and len(words) > 2 and words[1] == "-m":
        return words[2]
    if head in _SUBCOMMANDS and len(words) > 1 and not words[1].startswith("-"):
        return f"{head} {words[1]}"
    return head[:40]


def runs_tests(command: str) -> bool:
    """Whether a shell command runs a test runner (TEST_COMMAND)."""
    return any(w in command for w in _TEST_WORDS) and TEST_COMMAND.search(command) is not None


def is_test_pass(command: str, is_error: bool, result: str) -> bool:
    """A test run that reports success: a test runner, exit 0, no failure in the output, and a count
    of passed tests. (Stored tool results keep their first 2,000 chars: a long run whose summary was
    cut is not counted.)"""
    return passing_run(command, is_error, result) is not None


def passing_run(command: str, is_error: bool, result: str) -> re.Match[str] | None:
    """`is_test_pass`, with the passed count it found in the output (None: not a passing run)."""
    if is_error or not runs_tests(command) or NOT_A_RUN.search(command):
        return None
    passed = TEST_PASSED.search(result)  # first: most runs' output has no count to search for failures
    return None if passed is None or TEST_FAILED.search(result) else passed


def commit_subject(command: str, result: str) -> str:
    """The subject of a commit: git's `[branch sha] subject` line, else the -m message."""
    m = _COMMIT_LINE.search(result)
    if m:
        return f"{m.group(2).strip()} ({m.group(1)[:7]})"
    m = _HEREDOC_MSG.search(command) or _COMMIT_MSG.search(command)
    return next((g for g in m.groups() if g), "commit").strip() if m else "commit"
