"""Integration over real sessions of Codex CLI, Copilot CLI, Gemini CLI and OpenCode (S7):
`$TOTAL_RECALL_TEST_AGENTS_CORPUS`, default `../shared/agents-corpus` beside the repository (its
README describes the formats). Skipped when absent. Every count here is made independently of
lib/sources, straight from the files."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from index.retrieval import search_messages
from index.stats import cost_report, load_catalog
from index.store.db import open_reader
from index.store.filters import Filters
from index.store.ingest import run_index
from lib import sqlite

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("TOTAL_RECALL_TEST_AGENTS_CORPUS") or REPO.parent / "shared" / "agents-corpus")
FOLDERS = {"codex": "codex", "copilot": "copilot-cli", "gemini": "gemini-cli", "opencode": "opencode"}
pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not CORPUS.is_dir(), reason=f"agents corpus not found at {CORPUS}"),
]


def _files(agent: str) -> list[Path]:
    return sorted((CORPUS / FOLDERS[agent]).glob("*.jsonl"))


def _lines(path: Path) -> Iterator[dict]:
    for line in path.read_bytes().splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            yield rec


def _typed(text: str) -> bool:
    return bool(text and text.strip())


def expected_prompts(agent: str) -> int:
    """The human's prompts, counted from the raw files (one copy of a record seen in two files)."""
    seen: set[str] = set()
    for f in _files(agent):
        if agent == "codex":
            sid = next(r["payload"]["id"] for r in _lines(f) if r.get("type") == "session_meta")
            for i, line in enumerate(f.read_bytes().splitlines()):
                r = json.loads(line)
                p = r.get("payload") or {}
                if (
                    r.get("type") == "event_msg"
                    and p.get("type") == "user_message"
                    and _typed(p.get("message", "").split("## My request for Codex:")[-1])
                ):
                    seen.add(f"{sid}:{i}:{p['message']}")
        elif agent == "copilot":
            for r in _lines(f):
                d = r.get("data") or {}
                if (
                    r.get("type") == "user.message"
                    and not d.get("source")
                    and not r.get("agentId")
                    and _typed(d.get("content", ""))
                ):
                    seen.add(r["id"])
        elif agent == "gemini":
            for m in json.loads(f.read_text())["messages"]:
                if m["type"] == "user" and _typed("".join(p.get("text", "") for p in m["content"])):
                    seen.add(m["id"])
        else:
            for m in json.loads(f.read_text())["messages"]:
                typed = [
                    p
                    for p in m["parts"]
                    if p["type"] == "text" and not p.get("synthetic") and _typed(p.get("text", ""))
                ]
                if m["info"]["role"] == "user" and typed:
                    seen.add(m["info"]["id"])
    return len(seen)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> sqlite.Connection:
    db = tmp_path_factory.mktemp("agents") / "index.db"
    report = run_index(db, [], agents={a: [CORPUS / f] for a, f in FOLDERS.items()})
    assert report.errors == [] and sum(report.bad_lines.values()) == 0
    return open_reader(db)


def test_every_file_indexes_with_its_agent(indexed: sqlite.Connection) -> None:
    got = dict(indexed.execute("SELECT agent, count(*) FROM ingest_state WHERE offset > 0 GROUP BY agent"))
    assert got == {a: len(_files(a)) for a in FOLDERS}


@pytest.mark.parametrize("agent", list(FOLDERS))
def test_prompt_counts_and_session_fields(indexed: sqlite.Connection, agent: str) -> None:
    n = indexed.execute("SELECT count(*) FROM messages WHERE agent=? AND kind='prompt'", (agent,)).fetchone()[
        0
    ]
    assert n == expected_prompts(agent)
    rows = indexed.execute(
        "SELECT session_id, cwd, models, first_ts FROM sessions WHERE agent=?", (agent,)
    ).fetchall()
    assert rows and all(sid and cwd and models and ts for sid, cwd, models, ts in rows)


@pytest.mark.parametrize("agent", ["codex", "copilot"])
def test_incremental_equals_full(indexed: sqlite.Connection, agent: str, tmp_path: Path) -> None:
    """Each file read in three increments (the cuts fall inside lines) gives the rows of one pass."""
    work = tmp_path / agent
    work.mkdir()
    db = tmp_path / "inc.db"
    data = {f: f.read_bytes() for f in _files(agent)}
    for k in (1, 2, 3):
        for f, b in data.items():
            (work / f.name).write_bytes(b[: len(b) * k // 3 + (7 if k < 3 else 0)])
        assert run_index(db, [], agents={agent: [work]}).errors == []
    inc = open_reader(db)
    q = "SELECT uuid, parent_uuid, kind, body, tool_name, is_error FROM messages WHERE agent=? ORDER BY uuid"
    assert inc.execute(q, (agent,)).fetchall() == indexed.execute(q, (agent,)).fetchall()
    t = "SELECT t.message_id, t.input_tokens, t.output_tokens, t.cache_read_tokens FROM turns t JOIN sessions s USING(session_id) WHERE s.agent=? ORDER BY 1"
    assert inc.execute(t, (agent,)).fetchall() == indexed.execute(t, (agent,)).fetchall()
    shutil.rmtree(work)


@pytest.mark.parametrize("agent", ["gemini", "opencode"])
def test_whole_documents_reread_equal_full(indexed: sqlite.Connection, agent: str, tmp_path: Path) -> None:
    """A document caught mid-write is one bad line; once whole, re-reading it gives the rows of one pass."""
    work = tmp_path / agent
    work.mkdir()
    db = tmp_path / "doc.db"
    for f in _files(agent):
        (work / f.name).write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    first = run_index(db, [], agents={agent: [work]})
    assert first.errors == [] and first.bad_lines["invalid_json"] == len(_files(agent))
    for f in _files(agent):
        shutil.copyfile(f, work / f.name)
    assert run_index(db, [], agents={agent: [work]}).errors == []
    q = "SELECT uuid, parent_uuid, kind, body, tool_name, is_error FROM messages WHERE agent=? ORDER BY uuid"
    assert open_reader(db).execute(q, (agent,)).fetchall() == indexed.execute(q, (agent,)).fetchall()


def test_search_finds_a_codex_phrase(indexed: sqlite.Connection) -> None:
    f = _files("codex")[0]
    prompt = next(
        r["payload"]["message"] for r in _lines(f) if (r.get("payload") or {}).get("type") == "user_message"
    )
    words = [w for w in re.findall(r"[A-Za-z]{6,}", prompt.split("## My request for Codex:")[-1])][:4]
    hits = search_messages(indexed, " ".join(words), Filters(agent="codex"), limit=10)
    sid = next(r["payload"]["id"] for r in _lines(f) if r.get("type") == "session_meta")
    assert any(h.session_id == sid for h in hits)


def test_cost_per_agent(indexed: sqlite.Connection) -> None:
    data = cost_report(indexed, load_catalog(), by="month", group="agent")
    tokens = {}
    for r in data["rows"]:
        tokens[r["agent"]] = (
            tokens.get(r["agent"], 0) + r["input_tokens"] + r["output_tokens"] + r["cache_read_tokens"]
        )
    assert set(tokens) == set(FOLDERS) and all(v > 0 for v in tokens.values())
    priced = {(r["agent"], r["model"]) for r in data["rows"] if r["cost_usd"]}
    assert ("gemini", "gemini-3-flash-preview") in priced
