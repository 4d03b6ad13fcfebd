"""CLI contract (design.md §3): one JSON document with --json, one-line errors with a fix, no tracebacks."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import make

REPO = Path(__file__).resolve().parent.parent


def run(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "total_recall", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def assert_one_line_error(p: subprocess.CompletedProcess[str], *needles: str, fix: str = " — ") -> None:
    assert p.returncode != 0
    assert p.stdout == ""
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: ")
    assert fix in lines[0]  # what is wrong — what to do
    for n in needles:
        assert n in lines[0], (n, lines[0])


def one_json(p: subprocess.CompletedProcess[str]) -> object:
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)  # raises on a second document or any other text


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

@pytest.mark.parametrize("cmd", [["search", "anything"], ["search", "anything", "--json"], ["status"],
                                 ["status", "--json"], ["inspect", "abc", "--json"], ["doctor"]])
def test_missing_index(tmp_path: Path, cmd: list[str]) -> None:
    p = run("--db", tmp_path / "nowhere" / "index.db", *cmd)
    assert_one_line_error(p, "total-recall index")
    assert not (tmp_path / "nowhere" / "index.db").exists()  # reading never creates an index


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


@pytest.mark.parametrize("cmd", [["search", "parser", "--json"], ["status", "--json"], ["status"], ["doctor"],
                                 ["index", "--projects-root", "{root}", "--json"]])
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
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE notes(x)")
    assert_one_line_error(run("--db", db, "search", "x", "--json"), "total-recall index")


def test_bad_filter_value(indexed: tuple[Path, Path]) -> None:
    db, _ = indexed
    assert_one_line_error(run("--db", db, "search", "parser", "--since", "last tuesday", "--json"), "--since",
                          fix="use a duration like 7d")


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
    for key in ("files", "files_unchanged", "records", "messages_added", "extractions_added", "bad_lines",
                "bytes_read", "elapsed_s"):
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
    for key in ("session_id", "uuid", "ts", "role", "kind", "cwd", "project", "snippet", "score", "source_file"):
        assert key in hits[0], key
    assert hits[0]["session_id"] == make.uid("identifiers")
    assert one_json(run("--db", db, "search", "zzqxv_no_such_word", "--json")) == []
    sessions = one_json(run("--db", db, "search", "ERR_TIMEOUT", "--sessions", "--json"))
    assert isinstance(sessions, list) and sessions[0]["session_id"] == make.uid("identifiers")
    for key in ("session_id", "title", "project", "first_ts", "last_ts", "score", "hits"):
        assert key in sessions[0], key


@pytest.mark.parametrize("query", ['"unbalanced', "NEAR(a b)", "a AND OR", "*", "col:umn", "-x", "'", "((", "\u2603"])
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
    db, _ = indexed
    p = run("--db", db, "doctor")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines and all(line.startswith("ok") for line in lines), p.stdout
    doc = one_json(run("--db", db, "doctor", "--json"))
    assert doc["ok"] is True and all(c["ok"] for c in doc["checks"])  # type: ignore[index]


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
