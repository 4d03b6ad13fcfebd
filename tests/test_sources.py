"""Other coding agents behind one source interface (S7): each format's quirks, incremental cursors,
whole-file re-reads, the `agent` column, the `--agent` filter, cost per agent, `sources`, and a
decision told to Gemini CLI reaching Claude Code's SessionStart bundle."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fixtures.agents import (
    CODEX_PHRASE,
    GEMINI_DECISION,
    MODEL_CODEX,
    THOUGHT,
    codex_records,
    copilot_records,
    gemini_doc,
    opencode_doc,
    write_codex,
    write_copilot,
    write_gemini,
    write_opencode,
)
from test_e2e_claude import write_past_session
from test_hooks import context_of, hook

from index.briefing.bundle import operator_context
from index.store.db import open_reader
from index.store.ingest import run_index
from index.store.textstore import unpack
from lib import sqlite
from lib.sources import agent_roots
from total_recall.cli import cli

CWD = "/home/dev/projects/quokka"


def _index(tmp_path: Path, agent: str, root: Path, db: Path | None = None) -> sqlite.Connection:
    db = db or tmp_path / f"{agent}.db"
    report = run_index(db, [], agents={agent: [root]})
    assert report.errors == []
    return open_reader(db)


def _texts(conn: sqlite.Connection) -> list[tuple[str, str, str]]:
    return [
        (k, a, unpack(b)) for k, a, b in conn.execute("SELECT kind, agent, body FROM messages ORDER BY id")
    ]


def _no_thought(conn: sqlite.Connection) -> None:
    assert not any(THOUGHT in t for _, _, t in _texts(conn))
    assert THOUGHT not in str(conn.execute("SELECT carry FROM ingest_state").fetchall())


def test_codex_rollout(tmp_path: Path) -> None:
    root = tmp_path / "codex"
    write_codex(root, CWD)
    conn = _index(tmp_path, "codex", root)
    kinds = [k for k, _, _ in _texts(conn)]
    texts = {t for _, _, t in _texts(conn)}
    # the typed request only: not the injected context, not the IDE's file list, not the agent_message copy
    assert kinds.count("prompt") == 2 and f"build the {CODEX_PHRASE} exporter" in texts
    assert not any("environment_context" in t or "a.png" in t for t in texts)
    assert kinds.count("text") == 1 and "interrupt" in kinds and "compact_boundary" in kinds
    _no_thought(conn)
    calls = conn.execute(
        "SELECT tool_name, tool_target FROM messages WHERE kind='tool_use' ORDER BY id"
    ).fetchall()
    assert calls == [("Bash", "pytest -q"), ("Edit", "src/export.py")]
    errors = dict(
        conn.execute("SELECT tool_use_id, is_error FROM messages WHERE kind='tool_result'").fetchall()
    )
    assert errors == {"call_1": 1, "call_2": 0}
    # the repeated token_count is one API call; OpenAI's input includes the cached part
    assert conn.execute(
        "SELECT input_tokens, cache_read_tokens, output_tokens, model FROM turns"
    ).fetchall() == [(600, 400, 50, MODEL_CODEX)]
    s = conn.execute("SELECT agent, cwd, git_branch, version, models, n_prompts FROM sessions").fetchone()
    assert s == ("codex", CWD, "main", "0.50.0", MODEL_CODEX, 2)
    assert conn.execute("SELECT agent, bad_lines FROM ingest_state").fetchone() == ("codex", 1)
    assert {a for _, a, _ in _texts(conn)} == {"codex"}


@pytest.mark.parametrize("agent", ["codex", "copilot"])
def test_jsonl_agents_incremental_equals_full(tmp_path: Path, agent: str) -> None:
    """An append-only file read in increments (cut inside a line, too) gives the rows of one pass."""
    root = tmp_path / agent
    path = write_codex(root, CWD) if agent == "codex" else write_copilot(root, CWD)
    full = _index(tmp_path, agent, root, tmp_path / "full.db")
    data = path.read_bytes()
    db = tmp_path / "inc.db"
    for cut in (len(data) // 3, len(data) // 3 + 7, 2 * len(data) // 3, len(data)):
        path.write_bytes(data[:cut])
        inc = _index(tmp_path, agent, root, db)
    rows = "SELECT uuid, parent_uuid, kind, body, tool_name, is_error, agent FROM messages ORDER BY uuid"
    assert inc.execute(rows).fetchall() == full.execute(rows).fetchall()
    turns = "SELECT message_id, input_tokens, output_tokens, cache_read_tokens FROM turns ORDER BY 1"
    assert inc.execute(turns).fetchall() == full.execute(turns).fetchall()
    sess = "SELECT session_id, cwd, models, n_prompts, agent FROM sessions"
    assert inc.execute(sess).fetchall() == full.execute(sess).fetchall()


def test_copilot_events(tmp_path: Path) -> None:
    root = tmp_path / "copilot"
    write_copilot(root, CWD)
    conn = _index(tmp_path, "copilot", root)
    rows = conn.execute("SELECT kind, is_sidechain, agent_id FROM messages ORDER BY id").fetchall()
    kinds = [k for k, _, _ in rows]
    assert kinds.count("prompt") == 1 and "meta" in kinds and "interrupt" in kinds
    assert ("agent_prompt", 1, "tc9") in rows  # a subagent's task is not the user's voice
    _no_thought(conn)
    assert conn.execute("SELECT tool_name, tool_target FROM messages WHERE kind='tool_use'").fetchall() == [
        ("Bash", "git mv widget.py widgets.py")
    ]
    assert conn.execute("SELECT is_error FROM messages WHERE kind='tool_result'").fetchone() == (1,)
    assert conn.execute("SELECT sum(output_tokens), count(*) FROM turns").fetchone() == (49, 2)
    s = conn.execute("SELECT session_id, agent, cwd, git_branch, models FROM sessions").fetchone()
    assert s == ("c0b11070-0000-4000-8000-000000000001", "copilot", CWD, "dev", "claude-sonnet-4.5")
    assert conn.execute("SELECT bad_lines FROM ingest_state").fetchone() == (1,)


def test_gemini_document_rewritten_whole(tmp_path: Path) -> None:
    root = tmp_path / "tmp"
    path = write_gemini(root, CWD)
    db = tmp_path / "g.db"
    conn = _index(tmp_path, "gemini", root, db)
    prompts = [t for k, _, t in _texts(conn) if k == "prompt"]
    assert prompts == ["tidy @README.md", GEMINI_DECISION]  # what was typed, not the attached file
    _no_thought(conn)
    # no cwd in the document: found from the shell's working directory, checked against projectHash
    assert conn.execute("SELECT cwd, models, agent FROM sessions").fetchone() == (
        CWD,
        "gemini-2.5-pro",
        "gemini",
    )
    assert conn.execute(
        "SELECT sum(input_tokens), sum(cache_read_tokens), sum(output_tokens) FROM turns"
    ).fetchone() == (
        3600,
        500,
        150,
    )
    # the chat grows: the file is rewritten whole (bigger than the cursor and changed) -> read again, no duplicates
    write_gemini(root, CWD, extra=True)
    conn = _index(tmp_path, "gemini", root, db)
    assert [t for k, _, t in _texts(conn) if k == "prompt"][-1] == "and add a pre-commit hook"
    assert conn.execute("SELECT count(*), count(DISTINCT uuid) FROM messages").fetchone()[0] == len(
        _texts(conn)
    )
    assert conn.execute("SELECT n_prompts FROM sessions").fetchone() == (3,)
    # cut mid-write: counted and skipped, the run goes on
    path.write_text(path.read_text()[:200])
    report = run_index(db, [], agents={"gemini": [root]})
    assert report.errors == [] and report.bad_lines["invalid_json"] == 1


def test_opencode_export(tmp_path: Path) -> None:
    root = tmp_path / "export"
    write_opencode(root, CWD)
    conn = _index(tmp_path, "opencode", root)
    got = [(k, t) for k, _, t in _texts(conn)]
    assert ("prompt", "fix the flaky login test") in got and (
        "meta",
        "Called the Read tool with the following input",
    ) in got
    _no_thought(conn)
    tool = conn.execute("SELECT tool_name, tool_target FROM messages WHERE kind='tool_use'").fetchone()
    assert tool == ("Edit", f"{CWD}/tests/login.spec.ts")
    assert conn.execute("SELECT is_error FROM messages WHERE kind='tool_result'").fetchone() == (1,)
    s = conn.execute("SELECT session_id, cwd, title, models, first_ts FROM sessions").fetchone()
    assert s == (
        "ses_0pen0000000000000000000001",
        CWD,
        "Fix the flaky login test",
        "gpt-5",
        "2026-09-21T14:13:21.000Z",
    )
    assert conn.execute("SELECT input_tokens, output_tokens, cache_read_tokens FROM turns").fetchone() == (
        300,
        50,
        1200,
    )


def test_agent_homes_per_platform() -> None:
    linux = agent_roots({"HOME": "/home/u"})
    assert linux["codex"][0] == Path("/home/u/.codex/sessions") and linux["gemini"] == [
        Path("/home/u/.gemini/tmp")
    ]
    assert linux["opencode"] == [
        Path("/home/u/.local/share/opencode/storage"),
        Path("/home/u/.local/share/opencode/export"),
    ]
    win = agent_roots({"USERPROFILE": "C:/Users/u", "CODEX_HOME": "D:/codex"})
    assert win["codex"][0] == Path("D:/codex/sessions") and win["copilot"][0] == Path(
        "C:/Users/u/.copilot/session-state"
    )
    given = agent_roots({"HOME": "/h", "TOTAL_RECALL_GEMINI_ROOTS": "/a:/b", "GEMINI_CLI_HOME": "/g"})
    assert given["gemini"] == [Path("/a"), Path("/b")]


def _all_agents(tmp_path: Path) -> tuple[Path, dict[str, list[Path]]]:
    roots = {
        "codex": tmp_path / "codex",
        "copilot": tmp_path / "copilot",
        "gemini": tmp_path / "gemini",
        "opencode": tmp_path / "oc",
    }
    write_codex(roots["codex"], CWD)
    write_copilot(roots["copilot"], CWD)
    write_gemini(roots["gemini"], CWD)
    write_opencode(roots["opencode"], CWD)
    claude = tmp_path / "projects"
    write_past_session(claude, CWD)
    db = tmp_path / "all.db"
    assert run_index(db, [claude], agents={a: [r] for a, r in roots.items()}).errors == []
    return db, {a: [r] for a, r in roots.items()}


def test_search_filter_cost_and_bundle_across_agents(tmp_path: Path) -> None:
    db, _ = _all_agents(tmp_path)
    run = CliRunner()
    hits = json.loads(run.invoke(cli, ["--db", str(db), "search", CODEX_PHRASE, "--json"]).stdout)
    assert hits and "quokka" in json.dumps(hits[0]) and hits[0]["agent"] == "codex"
    only = run.invoke(cli, ["--db", str(db), "search", CODEX_PHRASE, "--agent", "gemini", "--json"])
    assert only.exit_code == 1 and json.loads(only.stdout) == []  # nothing found: exit 1, like rg
    cost = json.loads(
        run.invoke(cli, ["--db", str(db), "metrics", "cost", "--group", "agent", "--json"]).stdout
    )
    rows = {(r["agent"], r["model"]): r for r in cost["rows"]}
    assert rows[("codex", MODEL_CODEX)]["cost_usd"] > 0 and rows[("gemini", "gemini-2.5-pro")]["cost_usd"] > 0
    # Copilot's dotted Claude versions are priced; it records output tokens only
    assert rows[("copilot", "claude-sonnet-4.5")]["cost_usd"] > 0
    assert {a for a, _ in rows} == {"claude", "codex", "copilot", "gemini", "opencode"}
    status = json.loads(run.invoke(cli, ["--db", str(db), "status", "--json"]).stdout)
    assert status["sessions_by_agent"] == {"claude": 1, "codex": 1, "copilot": 1, "gemini": 1, "opencode": 1}
    # the decision told to Gemini CLI is in Claude Code's SessionStart bundle for the same project
    conn = open_reader(db)
    oc = operator_context(conn, CWD, now=datetime.now(timezone.utc))
    assert GEMINI_DECISION in oc.text and "tomllib" in oc.text
    # and through the real SessionStart hook of a new Claude Code session there
    start = {"session_id": "live-1", "cwd": CWD, "hook_event_name": "SessionStart", "source": "startup"}
    text = context_of(hook("session-start", start, db, tmp_path / "projects"), "SessionStart")
    assert GEMINI_DECISION in text
    held = conn.execute(
        "SELECT status FROM standing_decisions WHERE content = ?", (GEMINI_DECISION,)
    ).fetchone()
    assert held == ("active",)


def test_sources_lists_enables_and_index_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("TOTAL_RECALL_CODEX_ROOTS", str(tmp_path / "codex"))
    write_codex(tmp_path / "codex", CWD)
    db = str(tmp_path / "data" / "index.db")
    run = CliRunner()
    res = run.invoke(cli, ["--db", db, "index", "--agent", "codex", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["messages_added"] > 0
    src = json.loads(run.invoke(cli, ["--db", db, "sources", "--json"]).stdout)["sources"]
    codex = next(s for s in src if s["agent"] == "codex" and s["exists"])
    assert codex["files"] == 1 and codex["indexed_files"] == 1 and codex["enabled"] is True
    off = json.loads(run.invoke(cli, ["--db", db, "sources", "--disable", "codex", "--json"]).stdout)[
        "sources"
    ]
    assert all(not s["enabled"] for s in off if s["agent"] == "codex")
    missing = run.invoke(cli, ["--db", db, "index", "--agent", "gemini"])
    assert missing.exit_code != 0 and "TOTAL_RECALL_GEMINI_ROOTS" in missing.output


def test_codex_records_fixture_has_the_quirks() -> None:
    """The fixture keeps what the tests above rely on: a damaged line and a repeated token count."""
    recs = codex_records(CWD)
    assert sum(isinstance(r, bytes) for r in recs) == 1
    counts = [r for r in recs if isinstance(r, dict) and r["payload"].get("type") == "token_count"]
    assert len(counts) == 2 and counts[0] == counts[1]


def test_codex_legacy_rollout(tmp_path: Path) -> None:
    """Rollouts from before the `{timestamp, type, payload}` envelope: bare items after a header line;
    their user messages are the prompts, the injected context is meta."""
    root = tmp_path / "codex"
    recs: list[dict[str, object]] = [
        {"id": "legacy-0001", "timestamp": "2025-06-01T10:00:00Z", "instructions": "be brief"},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "<environment_context>x</environment_context>"}],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "list the migrations"}],
        },
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": THOUGHT}]},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["ls", "migrations"]}),
            "call_id": "c1",
        },
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": json.dumps({"output": "no such dir", "metadata": {"exit_code": 2}}),
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "There is no migrations folder."}],
        },
    ]
    path = root / "rollout-2025-06-01-legacy.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    conn = _index(tmp_path, "codex", root)
    assert [k for k, _, _ in _texts(conn)] == ["meta", "prompt", "tool_use", "tool_result", "text"]
    assert conn.execute("SELECT tool_target FROM messages WHERE kind='tool_use'").fetchone() == (
        "ls migrations",
    )
    assert conn.execute("SELECT is_error FROM messages WHERE kind='tool_result'").fetchone() == (1,)
    assert conn.execute("SELECT session_id FROM sessions").fetchone() == ("legacy-0001",)
    _no_thought(conn)


def test_other_agents_store_no_secret(tmp_path: Path) -> None:
    """Every string of every agent's rows goes through the one scrubber in the worker, the carried
    reader state (cwd, session facts) included."""
    from test_secrets_everywhere import SECRETS, _all_text, _leaks

    roots = {a: tmp_path / a for a in ("codex", "copilot", "gemini", "opencode")}
    for i, p in enumerate(SECRETS):
        cwd = f"{CWD}/{p.text}"
        said = p.text
        sid = f"5ec{i:05d}-0000-4000-8000-00000000000"  # + one digit per agent: ids never collide
        codex = [r for r in codex_records(cwd, sid + "1") if isinstance(r, dict)]
        codex.append(
            {
                "timestamp": "2026-10-01T10:01:00.000Z",
                "type": "event_msg",
                "payload": {"type": "user_message", "message": said},
            }
        )
        (roots["codex"] / f"{i}.jsonl").parent.mkdir(parents=True, exist_ok=True)
        (roots["codex"] / f"{i}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in codex))
        cop = [r for r in copilot_records(cwd, sid + "2") if isinstance(r, dict)]
        cop.append(
            {
                "type": "tool.execution_complete",
                "id": f"{sid}-out",
                "data": {"toolCallId": "tc1", "success": True, "result": {"content": said}},
            }
        )
        (roots["copilot"] / f"{i}.jsonl").parent.mkdir(parents=True, exist_ok=True)
        (roots["copilot"] / f"{i}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in cop))
        g = gemini_doc(cwd)
        g["sessionId"] = sid + "3"
        for m in g["messages"]:
            m["id"] = f"{sid}3-{m['id']}"
        g["messages"].append({"id": f"{sid}3-said", "type": "user", "content": [{"text": said}]})
        (roots["gemini"] / f"{i}.json").parent.mkdir(parents=True, exist_ok=True)
        (roots["gemini"] / f"{i}.json").write_text(json.dumps(g))
        o = opencode_doc(cwd)
        o["info"]["id"] = "ses_" + sid + "4"
        o["info"]["title"] = said
        for m in o["messages"]:
            m["info"]["id"] = f"{sid}4-{m['info']['id']}"
            for part in m["parts"]:
                part["id"] = f"{sid}4-{part['id']}"
        (roots["opencode"] / f"{i}.json").parent.mkdir(parents=True, exist_ok=True)
        (roots["opencode"] / f"{i}.json").write_text(json.dumps(o))
    db = tmp_path / "s.db"
    assert run_index(db, [], agents={a: [r] for a, r in roots.items()}).errors == []
    conn = sqlite.connect(db)
    assert dict(conn.execute("SELECT agent, count(*) FROM sessions GROUP BY agent").fetchall()) == {
        a: len(SECRETS) for a in roots
    }
    assert _leaks(_all_text(conn)) == []


def test_index_reads_every_enabled_agent(tmp_path: Path) -> None:
    """`index` without --projects-root reads Claude Code and each enabled agent's home; a disabled
    agent is left alone."""
    import os

    write_codex(Path(os.environ["CODEX_HOME"]) / "sessions", CWD)
    write_past_session(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects", CWD)
    db = str(tmp_path / "i.db")
    run = CliRunner()
    assert run.invoke(cli, ["--db", db, "sources", "--disable", "codex", "--json"]).exit_code == 0
    assert run.invoke(cli, ["--db", db, "index", "--json"]).exit_code == 0

    def agents() -> set[str]:
        return {a for (a,) in open_reader(Path(db)).execute("SELECT DISTINCT agent FROM sessions")}

    assert agents() == {"claude"}
    assert run.invoke(cli, ["--db", db, "sources", "--enable", "codex", "--json"]).exit_code == 0
    res = run.invoke(cli, ["--db", db, "index", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["files_unchanged"] == 1
    assert agents() == {"claude", "codex"}


def test_other_agents_tools_named_as_claude_codes() -> None:
    """Shells, edits and file arguments of other agents read like Claude Code's (digest, packet, profiles)."""
    from lib.content import tool_summary
    from lib.sources.emit import tool_input

    assert tool_input("shell", {"command": ["bash", "-lc", "ls"]}) == (
        "Bash",
        {"command": "bash -lc ls", "description": ""},
    )
    assert tool_input("create", {"path": "x.py", "file_text": "print()"}) == (
        "Write",
        {"file_path": "x.py", "content": "print()"},
    )
    name, inp = tool_input("apply_patch", {"input": "*** Begin Patch\n*** Add File: n.py\n+x\n*** End Patch"})
    assert (name, inp["file_path"]) == ("Edit", "n.py")
    assert tool_summary(*tool_input("read", {"filePath": "/a/b.ts"}))[0] == "/a/b.ts"


def test_gemini_project_root_file(tmp_path: Path) -> None:
    """Newer Gemini CLI keeps the project root in `.project_root` beside `chats/`: it wins."""
    root = tmp_path / "tmp"
    path = write_gemini(root, CWD)
    doc = json.loads(path.read_text())
    for m in doc["messages"]:
        m.pop("toolCalls", None)  # no path anywhere in the session
    path.write_text(json.dumps(doc))
    (path.parent.parent / ".project_root").write_text("/srv/elsewhere\n")
    conn = _index(tmp_path, "gemini", root)
    assert conn.execute("SELECT cwd FROM sessions").fetchone() == ("/srv/elsewhere",)


def test_prior_sessions_name_their_agent(tmp_path: Path) -> None:
    from index.retrieval import recent_sessions

    db, _ = _all_agents(tmp_path)
    conn = open_reader(db)
    got = recent_sessions(conn, scope="this_cwd", cwd=CWD, since=None, limit=10)
    assert {s["agent"] for s in got.items} == {"claude", "codex", "copilot", "gemini", "opencode"}
    one = recent_sessions(
        conn, scope="this_cwd", cwd=CWD, since="2026-01-01T00:00:00Z", limit=10, agent="gemini"
    )
    assert [s["agent"] for s in one.items] == ["gemini"]


def _storage(root: Path, doc: dict[str, Any]) -> Path:
    """An OpenCode session laid out as OpenCode stores it: session, message and part files."""
    sid = doc["info"]["id"]
    (root / "session" / "proj1").mkdir(parents=True, exist_ok=True)
    (root / "session" / "proj1" / f"{sid}.json").write_text(json.dumps(doc["info"]))
    for m in doc["messages"]:
        mid = m["info"]["id"]
        (root / "message" / sid).mkdir(parents=True, exist_ok=True)
        (root / "message" / sid / f"{mid}.json").write_text(json.dumps(m["info"]))
        (root / "part" / mid).mkdir(parents=True, exist_ok=True)
        for p in m["parts"]:
            (root / "part" / mid / f"{p['id']}.json").write_text(json.dumps(p))
    return root


def test_opencode_own_storage_reads_like_its_export(tmp_path: Path) -> None:
    """OpenCode's storage (one file per session, message and part) gives the rows of its export; a
    new part re-reads the session whole; a damaged part is counted and skipped."""
    write_opencode(tmp_path / "export", CWD)
    export = _index(tmp_path, "opencode", tmp_path / "export", tmp_path / "e.db")
    store = _storage(tmp_path / "storage", opencode_doc(CWD))
    db = tmp_path / "s.db"
    conn = _index(tmp_path, "opencode", store, db)
    rows = "SELECT uuid, parent_uuid, kind, body, tool_name, is_error FROM messages ORDER BY uuid"
    assert conn.execute(rows).fetchall() == export.execute(rows).fetchall()
    same = "SELECT session_id, cwd, title, models, n_prompts FROM sessions"
    assert conn.execute(same).fetchall() == export.execute(same).fetchall()
    assert conn.execute("SELECT count(*) FROM ingest_state").fetchone() == (1,)  # one session, one source
    sid = "ses_0pen0000000000000000000001"
    (store / "message" / sid / "msg_u2.json").write_text(
        json.dumps({"id": "msg_u2", "role": "user", "time": {"created": 1790000009000}})
    )
    (store / "part" / "msg_u2").mkdir()
    (store / "part" / "msg_u2" / "prt_9.json").write_text(
        json.dumps({"id": "prt_9", "type": "text", "text": "now the signup test"})
    )
    (store / "part" / "msg_u2" / "prt_a.json").write_text("{cut mid-write")
    report = run_index(db, [], agents={"opencode": [store]})
    assert report.errors == [] and report.bad_lines["invalid_json"] == 1
    conn = open_reader(db)
    assert conn.execute("SELECT n_prompts FROM sessions").fetchone() == (2,)
    assert conn.execute("SELECT count(*) - count(DISTINCT uuid) FROM messages").fetchone() == (0,)


def test_tail_follows_every_enabled_agent(tmp_path: Path) -> None:
    import os

    write_codex(Path(os.environ["CODEX_HOME"]) / "sessions", CWD)
    res = CliRunner().invoke(cli, ["--db", str(tmp_path / "t.db"), "tail", "--once", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["messages_added"] > 0  # no Claude Code transcripts here: Codex alone
