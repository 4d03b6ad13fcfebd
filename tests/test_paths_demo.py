"""The path resolver's precedence (design.md §3) and the quickstart demo flow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lib.paths import data_dir, db_path, projects_roots

ROOT = Path(__file__).resolve().parent.parent


def test_db_path_precedence(tmp_path: Path) -> None:
    env = {
        "TOTAL_RECALL_DB": "/x/a.db",
        "TOTAL_RECALL_HOME": "/h",
        "CLAUDE_PLUGIN_DATA": "/p",
        "XDG_DATA_HOME": "/xdg",
    }
    assert db_path("/cli.db", env) == Path("/cli.db")
    assert db_path(None, env) == Path("/x/a.db")
    env.pop("TOTAL_RECALL_DB")
    assert db_path(None, env) == Path("/h/index.db")
    env.pop("TOTAL_RECALL_HOME")
    assert db_path(None, env) == Path("/p/index.db")
    env.pop("CLAUDE_PLUGIN_DATA")
    assert db_path(None, env) == Path("/xdg/total-recall/index.db")
    assert data_dir({}) == Path.home() / ".local" / "share" / "total-recall"


def test_projects_roots_precedence() -> None:
    env = {"TOTAL_RECALL_PROJECTS": os.pathsep.join(["/a", "/b"]), "CLAUDE_CONFIG_DIR": "/cfg"}
    assert projects_roots(["/cli"], env) == [Path("/cli")]
    assert projects_roots(None, env) == [Path("/a"), Path("/b")]
    env.pop("TOTAL_RECALL_PROJECTS")
    assert projects_roots(None, env) == [Path("/cfg/projects")]
    assert projects_roots(None, {}) == [Path.home() / ".claude" / "projects"]


def test_demo_without_transcripts_indexes_generated_corpus(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TOTAL_RECALL_HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "none"),
    }
    out = subprocess.run(
        [sys.executable, "-m", "total_recall", "demo"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "generated demo corpus" in out.stdout
    assert "Indexed" in out.stdout
    # the demo's searches find its sessions
    assert "Add retry logic to the payment webhook" in out.stdout
    assert "ERR_TIMEOUT" in out.stdout
    assert (tmp_path / "home" / "demo" / "index.db").exists()


@pytest.mark.parametrize(
    "query, expected",
    [("retry_with_backoff", "retry_with_backoff"), ("Clock", "Clock"), ("tenacity", "tenacity")],
)
def test_demo_corpus_is_searchable(tmp_path: Path, query: str, expected: str) -> None:
    from index.retrieval.search import search_messages
    from index.store.db import open_reader
    from index.store.ingest import run_index
    from total_recall.democorpus import write_demo_corpus

    projects = write_demo_corpus(tmp_path)
    db = tmp_path / "i.db"
    report = run_index(db, [projects])
    assert report.messages_added > 20 and report.errors == []
    hits = search_messages(open_reader(db), query)
    assert hits and any(expected.lower() in h.snippet.lower() for h in hits)
