"""CLI contract (design.md §3): one JSON document with --json, one-line errors with a fix, no tracebacks."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fixtures import make

from lib import sqlite

REPO = Path(__file__).resolve().parent.parent


def run(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "total_recall", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def assert_one_line_error(p: subprocess.CompletedProcess[str], *needles: str, fix: str = " — ") -> None:
    """One line `error: what — fix` on stderr; with --json, one JSON document {"error": …} on stdout."""
    assert p.returncode != 0
    if p.stdout.startswith("{"):
        err = json.loads(p.stdout)["error"]
        assert p.stderr == "" and err["message"] and err["code"]
        line = f"error: {err['message']}" + (f" — {err['fix']}" if err["fix"] else "")
        assert fix in line
        for n in needles:
            assert n in line, (n, line)
        return
    assert p.stdout == ""
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: ")
    assert fix in lines[0]  # what is wrong — what to do
    for n in needles:
        assert n in lines[0], (n, lines[0])


def one_json(p: subprocess.CompletedProcess[str]) -> object:
    """The one JSON document of a run that succeeded (or found nothing: `[]` and exit 1, like grep)."""
    doc = json.loads(p.stdout)  # raises on a second document or any other text
    assert p.returncode == (1 if doc == [] else 0), p.stderr
    return doc


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("cli")
    root = base / "projects"
    make.build_corpus(root)
    db = base / "index.db"
    p = run("--db", db, "index", "--projects-root", root, "--json")
    assert p.returncode == 0, p.stderr
    return db, root


# ---------------------------------------------------------------------------------------------------
# error paths
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cmd", [["search", "anything"], ["status"], ["inspect", "abc"], ["sessions"]])
def test_missing_index(tmp_path: Path, cmd: list[str]) -> None:
    p = run("--db", tmp_path / "nowhere" / "index.db", *cmd)
    assert_one_line_error(p, "total-recall index")
    assert not (tmp_path / "nowhere" / "index.db").exists()  # reading never creates an index


@pytest.mark.parametrize(
    "cmd", [["search", "anything", "--json"], ["status", "--json"], ["inspect", "abc", "--json"]]
)
def test_missing_index_with_json_is_one_json_error(tmp_path: Path, cmd: list[str]) -> None:
    """With --json the error is one JSON document on stdout (issue 13), exit 2, nothing on stderr."""
    p = run("--db", tmp_path / "nowhere" / "index.db", *cmd)
    assert p.returncode == 2 and p.stderr == ""
    err = json.loads(p.stdout)["error"]
    assert err["code"] == "index_missing"
    assert "no index" in err["message"] and "total-recall index" in err["fix"]
    assert not (tmp_path / "nowhere" / "index.db").exists()


def test_verbose_comes_from_the_parsed_options_not_the_process_argv(tmp_path: Path) -> None:
    """--verbose shows the traceback (the error is re-raised) because the command line given to the CLI
    says so, whatever the process's own argv holds (it used to be sniffed from sys.argv)."""
    from click.testing import CliRunner

    from index.store.db import IndexMissing
    from total_recall.cli import cli

    db = str(tmp_path / "nowhere" / "index.db")
    quiet = CliRunner().invoke(cli, ["--db", db, "status"])
    assert quiet.exit_code == 2 and "total-recall index" in quiet.output
    loud = CliRunner().invoke(cli, ["--db", db, "--verbose", "status"])
    assert isinstance(loud.exception, IndexMissing)


def test_nonexistent_projects_root(tmp_path: Path) -> None:
    p = run("--db", tmp_path / "index.db", "index", "--projects-root", tmp_path / "missing", "--json")
    assert_one_line_error(p, str(tmp_path / "missing"), "--projects-root")


def test_projects_root_from_environment_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOTAL_RECALL_PROJECTS", str(tmp_path / "not-there"))
    p = run("--db", tmp_path / "index.db", "index")
    assert_one_line_error(p, "not-there")


def test_projects_root_that_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "projects"
    f.write_text("not a directory")
    p = run("--db", tmp_path / "index.db", "index", "--projects-root", f)
    assert_one_line_error(p, str(f))


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any directory")
def test_unreadable_projects_root(tmp_path: Path) -> None:
    d = tmp_path / "projects"
    d.mkdir()
    d.chmod(0)
    try:
        p = run("--db", tmp_path / "index.db", "index", "--projects-root", d)
    finally:
        d.chmod(0o755)
    assert_one_line_error(p, str(d))


@pytest.mark.parametrize(
    "cmd",
    [
        ["search", "parser", "--json"],
        ["status", "--json"],
        ["status"],
        ["index", "--projects-root", "{root}", "--json"],
    ],
)
def test_corrupt_db(tmp_path: Path, cmd: list[str]) -> None:
    root = tmp_path / "projects"
    root.mkdir()
    db = tmp_path / "index.db"
    db.write_bytes(bytes(range(256)) * 64)
    before = db.read_bytes()
    p = run("--db", db, *[c.replace("{root}", str(root)) for c in cmd])
    assert_one_line_error(p, "rebuild")
    assert db.read_bytes() == before  # nothing overwritten behind the user's back


def test_sqlite_file_without_our_schema(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    with sqlite.connect(db) as conn:
        conn.execute("CREATE TABLE notes(x)")
    assert_one_line_error(run("--db", db, "search", "x", "--json"), "total-recall index")


def test_bad_filter_value(indexed: tuple[Path, Path]) -> None:
    db, _ = indexed
    assert_one_line_error(
        run("--db", db, "search", "parser", "--since", "last tuesday", "--json"),
        "--since",
        fix="use a duration like 7d",
    )


def test_rebuild_without_yes_refuses(indexed: tuple[Path, Path]) -> None:
    db, root = indexed
    before = db.stat().st_mtime_ns, db.stat().st_size
    p = run("--db", db, "rebuild", "--projects-root", root)
    assert_one_line_error(p, "--yes")
    assert (db.stat().st_mtime_ns, db.stat().st_size) == before
    assert one_json(run("--db", db, "status", "--json"))["messages"] > 0  # type: ignore[index]


# ---------------------------------------------------------------------------------------------------
# --json prints exactly one document
# ---------------------------------------------------------------------------------------------------


def test_index_json(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    make.build_corpus(root)
    db = tmp_path / "index.db"
    doc = one_json(run("--db", db, "index", "--projects-root", root, "--json"))
    assert isinstance(doc, dict)
    for key in (
        "files",
        "files_unchanged",
        "records",
        "messages_added",
        "extractions_added",
        "bad_lines",
        "bytes_read",
        "elapsed_s",
    ):
        assert key in doc, key
    assert doc["files"] == 27 and doc["files_unchanged"] == 0 and doc["messages_added"] > 0
    assert doc["bad_lines"] == {"invalid_json": 1, "invalid_utf8": 1, "not_object": 2}
    again = one_json(run("--db", db, "index", "--projects-root", root, "--json"))
    assert again["files_unchanged"] == again["files"] == 27 and again["messages_added"] == 0  # type: ignore[index]


def test_index_without_json_prints_a_summary_and_no_progress_bar(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    make.build_corpus(root)
    p = run("--db", tmp_path / "index.db", "index", "--projects-root", root)
    assert p.returncode == 0, p.stderr
    assert "\x1b[" not in p.stdout + p.stderr and "\r" not in p.stdout + p.stderr
    assert "indexed" in p.stdout


def test_search_json(indexed: tuple[Path, Path]) -> None:
    db, _ = indexed
    hits = one_json(run("--db", db, "search", "ERR_TIMEOUT", "--json"))
    assert isinstance(hits, list) and hits
    for key in (
        "session_id",
        "uuid",
        "ts",
        "role",
        "kind",
        "cwd",
        "project",
        "snippet",
        "score",
        "source_file",
    ):
        assert key in hits[0], key
    assert hits[0]["session_id"] == make.uid("identifiers")
    assert one_json(run("--db", db, "search", "zzqxv_no_such_word", "--json")) == []
    sessions = one_json(run("--db", db, "search", "ERR_TIMEOUT", "--sessions", "--json"))
    assert isinstance(sessions, list) and sessions[0]["session_id"] == make.uid("identifiers")
    for key in ("session_id", "title", "project", "first_ts", "last_ts", "score", "hits"):
        assert key in sessions[0], key


@pytest.mark.parametrize(
    "query", ['"unbalanced', "NEAR(a b)", "a AND OR", "*", "col:umn", "-x", "'", "((", "\u2603"]
)
def test_search_json_with_fts_syntax(indexed: tuple[Path, Path], query: str) -> None:
    db, _ = indexed
    assert isinstance(one_json(run("--db", db, "search", "--json", "--", query)), list)


def test_search_filters_json(indexed: tuple[Path, Path]) -> None:
    db, _ = indexed
    hits = one_json(run("--db", db, "search", "test", "--role", "assistant", "--json", "--limit", "50"))
    assert isinstance(hits, list) and hits and {h["role"] for h in hits} == {"assistant"}
    sid = make.uid("split")
    hits = one_json(run("--db", db, "search", "test", "--session", sid[:8], "--json"))
    assert isinstance(hits, list) and hits and {h["session_id"] for h in hits} == {sid}


def test_status_json(indexed: tuple[Path, Path]) -> None:
    db, _ = indexed
    doc = one_json(run("--db", db, "status", "--json"))
    assert isinstance(doc, dict)
    assert doc["sessions"] == 22 and doc["files"] == 27 and doc["messages"] > 90
    assert doc["subagents"] == 5 and doc["compactions"] >= 3 and doc["bad_lines"] == 4


def test_inspect_json(indexed: tuple[Path, Path]) -> None:
    db, _ = indexed
    sid = make.uid("resume-child")
    doc = one_json(run("--db", db, "inspect", sid[:10], "--json"))
    assert isinstance(doc, dict) and doc["session_id"] == sid
    assert doc["resumed_from"] == make.uid("resume-parent")


# ---------------------------------------------------------------------------------------------------
# doctor, rebuild
# ---------------------------------------------------------------------------------------------------


def test_doctor_passes_on_a_good_index(indexed: tuple[Path, Path]) -> None:
    """With this installation's CLI on PATH, no check fails (install checks may warn: no plugin here)."""
    db, _ = indexed
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    p = subprocess.run(
        [sys.executable, "-m", "total_recall", "--db", str(db), "doctor"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines and all(line.startswith(("ok", "warn")) for line in lines), p.stdout
    assert any(line.startswith("ok") and "sqlite integrity" in line for line in lines)
    doc = json.loads(
        subprocess.run(
            [sys.executable, "-m", "total_recall", "--db", str(db), "doctor", "--json"],
            capture_output=True, text=True, env=env,
        ).stdout
    )  # fmt: skip
    assert doc["ok"] is True and all(c["ok"] for c in doc["checks"])


def test_rebuild_with_yes(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    make.build_corpus(root)
    db = tmp_path / "index.db"
    first = one_json(run("--db", db, "index", "--projects-root", root, "--json"))
    rebuilt = one_json(run("--db", db, "rebuild", "--yes", "--projects-root", root, "--json"))
    assert rebuilt["messages_added"] == first["messages_added"]  # type: ignore[index]
    assert rebuilt["files_unchanged"] == 0  # type: ignore[index]
    status = one_json(run("--db", db, "status", "--json"))
    assert status["messages"] == first["messages_added"]  # type: ignore[index]


# ---------------------------------------------------------------------------------------------------
# bounded errors (issue 10 #16, #17)
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["search", "parser", "--since", "x" * 100_000],
        ["search", "parser", "--since", "9" * 100_000 + "d"],
        ["recall", "--since", "99999999999d"],
        ["inspect", "s" * 100_000],
        ["export", "s" * 100_000],
        ["forget", "s" * 100_000],  # a LIKE pattern over SQLite's 50 KB limit is bad input, not damage
        ["search", "parser", "--role", "r" * 100_000],  # click's own usage errors
        ["search", "parser", "--limit", "9" * 100_000],
        ["search", "parser", "--" + "o" * 100_000],
        ["c" * 100_000],
    ],
)
def test_errors_do_not_echo_huge_arguments(indexed: tuple[Path, Path], args: list[str]) -> None:
    from index.retrieval.budget import ERROR_CHARS

    db, _ = indexed
    p = run("--db", db, *args)
    assert p.returncode != 0 and p.stdout == "" and "Traceback" not in p.stderr
    assert len(p.stderr) <= 2 * ERROR_CHARS + 400, len(p.stderr)  # message, fix and click's usage line
    assert "rebuild" not in p.stderr and "cannot open" not in p.stderr, p.stderr[:300]


def test_a_huge_query_answers_quickly(indexed: tuple[Path, Path]) -> None:
    db, _ = indexed
    for query in ("A" * 100_000, "aB-" * 33_000, "parseConfig " * 8_000):
        p = run("--db", db, "search", "--json", "--", query, timeout=30)
        assert isinstance(one_json(p), list)


# ---------------------------------------------------------------------------------------------------
# nothing from a transcript can drive the terminal (issue 10 #19)
# ---------------------------------------------------------------------------------------------------

EVIL_CWD = "/home/dev/\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil"
EVIL_PROMPT = (
    "deploy the \x1b[31mwidget\x1b[0m now\x07\x08\r and keep the \x1b]8;;http://x\x07parser\x1b]8;;\x07"
)
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def evil(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("evil") / "projects"
    sid = make.uid("evil")
    s = make.Session(sid, cwd=EVIL_CWD, git_branch="main\x1b[8m")
    s.prompt(EVIL_PROMPT)
    s.response(text="Deployed the widget.\x1b[?1049h \x9b2J Always use the widget script for deploys.")
    s.write(root / make.slug(EVIL_CWD) / f"{sid}.jsonl")
    db = root.parent / "index.db"
    p = run("--db", db, "index", "--projects-root", root, "--json")
    assert p.returncode == 0, p.stderr
    return db, sid


@pytest.mark.parametrize(
    "cmd",
    [
        ["export", "{sid}"],
        ["export", "{sid}", "--format", "jsonl"],
        ["export", "{sid}", "--tools"],
        ["inspect", "{sid}"],
        ["inspect", "{sid}", "--json"],
        ["search", "widget"],
        ["search", "widget", "--sessions"],
        ["search", "widget", "--json"],
        ["recall", "widget"],
        ["dump", "--source", "messages", "--format", "markdown"],
        ["dump", "--source", "messages"],
        ["context", "--cwd", EVIL_CWD],
        ["status"],
        ["inspect", "{sid}\x1b[2J"],
    ],
)
def test_no_control_character_reaches_the_terminal(evil: tuple[Path, str], cmd: list[str]) -> None:
    db, sid = evil
    p = run("--db", db, *[c.replace("{sid}", sid) for c in cmd])
    assert p.returncode == 0 or "no session" in p.stderr, p.stderr
    assert not CONTROL.search(p.stdout + p.stderr), repr(CONTROL.findall(p.stdout + p.stderr))


def test_json_output_keeps_control_characters_escaped(evil: tuple[Path, str]) -> None:
    db, sid = evil
    p = run("--db", db, "inspect", sid, "--json")
    assert not CONTROL.search(p.stdout)
    doc = one_json(p)
    assert isinstance(doc, dict) and doc["cwd"] == EVIL_CWD  # escaped, not lost
    lines = run("--db", db, "export", sid, "--format", "jsonl").stdout.splitlines()
    assert lines and any("\x9b2J" in json.loads(line)["text"] for line in lines)


# ---------------------------------------------------------------------------------------------------
# permissions are not corruption (issue 10 #18)
# ---------------------------------------------------------------------------------------------------


@pytest.fixture
def as_other_user(tmp_path: Path) -> Iterator[tuple[Path, Callable[..., subprocess.CompletedProcess[str]]]]:
    """A data folder the test may lock, and `run` as a user that permissions bind: the test user, or
    `nobody` when the tests run as root (root reads and writes anything)."""
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    if as_nobody and not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv to drop to another user")
    base = Path(tempfile.mkdtemp(prefix="tr-perm-"))
    base.chmod(0o755)  # `nobody` must reach it; pytest's tmp_path is private to root

    def run_as(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*as_nobody, sys.executable, "-m", "total_recall", *map(str, args)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    try:
        yield base, run_as
    finally:
        for p in [base, *base.rglob("*")]:
            if p.is_dir():
                p.chmod(0o755)
        shutil.rmtree(base)


def test_a_read_only_data_folder_is_not_called_corrupt(
    as_other_user: tuple[Path, Callable[..., subprocess.CompletedProcess[str]]],
) -> None:
    base, run_as = as_other_user
    root, data = base / "projects", base / "data"
    make.build_corpus(root)
    db = data / "index.db"
    assert run("--db", db, "index", "--projects-root", root, "--json").returncode == 0
    for side in ("-wal", "-shm"):  # a cleanly closed WAL index has none; reading it must create them
        Path(f"{db}{side}").unlink(missing_ok=True)
    for p in [base, root, *root.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    db.chmod(0o644)
    data.chmod(0o555)
    for cmd in (["search", "parser"], ["status", "--json"], ["index", "--projects-root", root]):
        p = run_as("--db", db, *cmd)
        assert_one_line_error(p, str(data), "chmod u+")
        # the folder, or (as `nobody`) the writer lock that root left in it
        said = p.stdout + p.stderr  # --json: the error is on stdout
        assert "is read-only" in said or (cmd[0] == "index" and "index.lock" in said), said
        assert "rebuild" not in said, said
    data.chmod(0o755)
    db.chmod(0o600 if os.geteuid() == 0 else 0o000)  # root's private file, or one nobody may read
    p = run_as("--db", db, "search", "parser")
    assert_one_line_error(p, str(db), "permission")
    assert "rebuild" not in p.stderr, p.stderr


def test_a_damaged_labels_or_gold_file_is_one_line_naming_the_line(tmp_path: Path) -> None:
    """Both eval commands read their .jsonl through one reader: a bad line is an error, not a traceback."""
    root, db = tmp_path / "projects", tmp_path / "d" / "index.db"
    make.build_corpus(root)
    assert run("--db", db, "index", "--projects-root", root).returncode == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"uuid": "x", "labels": []}\n{not json\n')
    for cmd in (["eval", "extractors", "--labels", bad], ["eval", "retrieval", "--gold", bad]):
        p = run("--db", db, *cmd)
        assert_one_line_error(p, f"{bad}:2 is not valid JSON")
    p = run("--db", db, "eval", "extractors", "--labels", tmp_path / "none.jsonl")
    assert_one_line_error(p, "labels file", "not found")
