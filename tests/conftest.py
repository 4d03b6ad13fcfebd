"""Shared fixtures: the real corpus (skipped when absent) and a once-per-session index of it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pg_fixture import postgres  # noqa: F401 - the session's PostgreSQL (team server tests)

ROOT = Path(__file__).resolve().parent.parent


def corpus_dir() -> Path:
    return Path(os.environ.get("TOTAL_RECALL_TEST_CORPUS", str(ROOT.parent / "shared" / "corpus"))).resolve()


@pytest.fixture(scope="session")
def corpus_projects() -> Path:
    p = corpus_dir() / "projects"
    if not p.is_dir():
        pytest.skip(f"real corpus not found at {p} (set TOTAL_RECALL_TEST_CORPUS to the shared corpus)")
    return p


@pytest.fixture(scope="session")
def corpus_db(corpus_projects: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from index.store.ingest import run_index

    db = tmp_path_factory.mktemp("corpus") / "index.db"
    report = run_index(db, [corpus_projects], jobs=2)
    assert report.errors == []
    return db


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the developer's real ~/.claude or data dir from a test."""
    monkeypatch.setenv("TOTAL_RECALL_HOME", str(tmp_path / "trhome"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.delenv("TOTAL_RECALL_DB", raising=False)
    monkeypatch.delenv("TOTAL_RECALL_PROJECTS", raising=False)
    for var in ("CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME", "XDG_DATA_HOME"):  # other agents' homes
        monkeypatch.setenv(var, str(tmp_path / "agents" / var.lower()))
    for agent in ("CODEX", "GEMINI", "COPILOT", "OPENCODE"):
        monkeypatch.delenv(f"TOTAL_RECALL_{agent}_ROOTS", raising=False)
