"""Integration tests over the real corpus (../shared/corpus; skipped with a reason when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from index.retrieval.search import search_messages, search_sessions
from index.store.ingest import run_index
from lib import sqlite

pytestmark = pytest.mark.corpus


def _expected(path: Path) -> tuple[int, int, int]:
    """(lines, records, bad lines) computed independently with the stdlib json module."""
    data = path.read_bytes()
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    dec = json.JSONDecoder()
    records = bad = 0
    for raw in parts:
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            bad += 1
            continue
        objs, i = 0, 0
        while i < len(text):
            try:
                obj, i = dec.raw_decode(text, i)
            except json.JSONDecodeError:
                break
            objs += isinstance(obj, dict)
        if objs:
            records += objs
        else:
            bad += 1
    return len(parts), records, bad


def test_every_line_is_accounted_for(corpus_projects: Path, corpus_db: Path) -> None:
    conn = sqlite.connect(corpus_db)
    state = {
        p: (lines, records, bad)
        for p, lines, records, bad in conn.execute("SELECT path, lines, records, bad_lines FROM ingest_state")
    }
    files = sorted(corpus_projects.rglob("*.jsonl"))
    assert len(state) == len(files)
    for f in files:
        lines, records, bad = state[str(f)]
        exp_lines, exp_records, exp_bad = _expected(f)
        assert (lines, records, bad) == (exp_lines, exp_records, exp_bad), f
        assert records + bad >= lines


def test_second_run_adds_nothing(corpus_projects: Path, corpus_db: Path) -> None:
    report = run_index(corpus_db, [corpus_projects], jobs=1)
    assert report.files_unchanged == report.files
    assert (report.records, report.messages_added, report.extractions_added) == (0, 0, 0)


def test_search_finds_known_phrases(corpus_db: Path) -> None:
    conn = sqlite.connect(corpus_db)
    top = search_sessions(conn, "Usage4Claude Windows alternative", limit=3)
    assert top and top[0].session_id.startswith("43391f62")
    hits = search_messages(conn, "Hatchling", limit=5)
    assert any(h.session_id.startswith("cb2e607c") for h in hits)
    assert all("[" in h.snippet for h in hits)


def test_subagents_are_linked_to_their_parent_and_spawning_call(corpus_db: Path) -> None:
    conn = sqlite.connect(corpus_db)
    rows = conn.execute("""SELECT a.agent_id, a.layout, a.spawn_tool_use_id, s.session_id
                           FROM agents a LEFT JOIN sessions s ON s.session_id = a.session_id""").fetchall()
    by_layout: dict[str, list[tuple]] = {}
    for r in rows:
        by_layout.setdefault(r[1], []).append(r)
    assert {"flat", "nested", "compaction"} <= set(by_layout)
    assert all(r[3] is not None for r in rows), "every subagent belongs to an indexed session"
    nested = by_layout["nested"]
    linked = [r for r in nested if r[2]]
    assert len(linked) >= 0.8 * len(nested)
    # the spawning call is a Task/Agent tool_use in the same session
    for agent_id, _, tool_use_id, session_id in linked:
        row = conn.execute(
            "SELECT session_id, tool_name FROM messages WHERE tool_use_id=? AND kind='tool_use'",
            (tool_use_id,),
        ).fetchone()
        assert row == (session_id, row[1]) and row[1] in ("Task", "Agent"), agent_id


def test_thinking_is_never_stored(corpus_projects: Path, corpus_db: Path) -> None:
    thinking = None
    for f in sorted(corpus_projects.rglob("*.jsonl")):
        for line in f.read_bytes().splitlines():
            if b'"thinking":"' not in line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            for b in rec.get("message", {}).get("content", []) or []:
                if isinstance(b, dict) and b.get("type") == "thinking" and len(b.get("thinking", "")) > 200:
                    thinking = b["thinking"]
                    break
            if thinking:
                break
        if thinking:
            break
    assert thinking, "corpus has thinking blocks"
    phrase = " ".join(thinking.split()[5:14])
    conn = sqlite.connect(corpus_db)
    hits = search_messages(conn, f'"{phrase}"', limit=5)
    assert hits == []


def test_resumed_session_copies_are_stored_once(corpus_db: Path) -> None:
    conn = sqlite.connect(corpus_db)
    dup = conn.execute("SELECT count(*) - count(DISTINCT uuid) FROM messages").fetchone()[0]
    assert dup == 0
    resumed = conn.execute("SELECT count(*) FROM sessions WHERE resumed_from IS NOT NULL").fetchone()[0]
    assert resumed >= 1
