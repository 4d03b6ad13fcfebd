"""Issue 10: secrets planted in every field of every record type never reach the index or any output.

The test writes its own transcripts: one session per secret format, and in each session the secret sits
in every place a transcript carries text — cwd, gitBranch, version, model, prompts (string and block
content), assistant text, thinking, every kind of tool input (Bash, Read/Write/Edit paths and bodies,
Grep, WebFetch, Task prompts and descriptions, TodoWrite, an MCP tool's nested input), tool results
(string and blocks, toolUseResult fields), slash-command arguments, bash mode input and output, away
and compact summaries, compaction metadata, API errors, custom and AI titles, `summary` records, and a
subagent's own file. After indexing, the raw database bytes (`-wal` and `-shm` included), every text
column of every table (message bodies unpacked), the FTS vocabularies and the output of every command,
hook and MCP tool must hold none of the secrets, while look-alikes (git SHAs, UUIDs, digests) are kept.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fixtures.make import Session, uid
from fixtures.secrets import B64, KEYED, PREFIXED, RNG, jwt, pem, rnd

from index.store.ingest import run_index
from index.store.textstore import unpack
from lib import sqlite

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Planted:
    name: str
    text: str  # what is written into the transcript
    secret: str  # the part that must never come out


def _catalogue() -> list[Planted]:
    out = [Planted(name, make(), "") for name, (make, _) in PREFIXED.items()]
    out = [Planted(p.name, p.text, p.text) for p in out]
    for name, (make, key, _) in KEYED.items():
        v = make()
        out.append(Planted(name, f"{key}={v}", v))
    v = rnd(40, B64)
    out.append(Planted("aws_spaced_then_text", f"aws_secret_access_key = {v} ; then run the deploy", v))
    v = rnd(24)
    out.append(Planted("env_before_comma", f"API_KEY={v}, next", v))
    tok = PREFIXED["ghp"][0]()
    out.append(Planted("base64_of_token", base64.b64encode(f"x-access-token:{tok}".encode()).decode(), tok))
    v = rnd(40)
    out.append(Planted("bearer_in_prose", f"call the API with Bearer {v} and see", v))
    v = rnd(18)
    out.append(Planted("url_password", f"postgres://app_user:{v}@db.internal:5432/prod", v))
    v = rnd(24)
    out.append(Planted("slack_webhook", f"https://hooks.slack.com/services/T{rnd(8)}/B{rnd(8)}/{v}", v))
    v = f"AA{rnd(33)}"
    out.append(Planted("telegram", f"https://api.telegram.org/bot{RNG.randint(10**8, 10**9)}:{v}/getMe", v))
    v = rnd(86, B64) + "=="
    out.append(Planted("azure_conn", f"DefaultEndpointsProtocol=https;AccountName=demo;AccountKey={v};", v))
    block = pem("OPENSSH ")
    out.append(Planted("pem", block, block.splitlines()[2]))
    v = rnd(32)
    out.append(Planted("cli_flag", f"mysql --password {v} -h db", v))
    v = rnd(30)
    out.append(Planted("json_client_secret", json.dumps({"client_secret": v}), v))
    head = base64.urlsafe_b64encode(b'{"alg":"RS256"}').decode().rstrip("=")
    v = f"{head}.{jwt().split('.')[1]}.{rnd(40)}"
    out.append(Planted("ghs_stateless", f"ghs_{RNG.randint(10**5, 10**7)}_{v}", v.split(".")[2]))
    return out


SECRETS = _catalogue()
# Look-alikes that must survive: a full and a short git SHA, a UUID, a sha256 digest.
SHA = "3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b"
LOOKALIKES = [
    SHA,
    SHA[:10],
    "550e8400-e29b-41d4-a716-446655440000",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
]


def needles(secret: str) -> list[str]:
    """The pieces of a secret that must not appear anywhere (lower-cased: FTS terms are)."""
    return [w.lower() for w in re.findall(r"[A-Za-z0-9]{10,}", secret)]


def write_session(root: Path, i: int, p: Planted, prev_leaf: str | None) -> tuple[str, str, str]:
    """One session carrying secret `p` in every field; returns (session id, cwd, last uuid)."""
    s_ = p.text
    sid = uid("secret-session", i)
    cwd = f"/home/dev/w{i}/{s_}/app"
    s = Session(sid, cwd=cwd, git_branch=f"feature/{s_}", version="2.1.39")
    look = " ".join(LOOKALIKES)
    if prev_leaf:
        s.summary(prev_leaf, f"Rotated {SECRETS[i - 1].text} in the deploy script")
    s.other({"type": "custom-title", "sessionId": sid, "customTitle": f"deploy with {s_}"})
    s.other({"type": "ai-title", "sessionId": sid, "aiTitle": f"Deploying with {s_}"})
    s.prompt(f"Never paste the credential {s_} into chat again; always load it from the vault. Refs: {look}")
    s.user(
        [
            {"type": "text", "text": f"Our goal this week: rotate {s_} everywhere."},
            {"type": "text", "text": f"<private>{s_}</private> and commit {SHA}"},
        ]
    )
    bash = s.response(
        thinking=f"the user pasted {s_}",
        text=f"I will not store {s_}.",
        tools=[
            (
                "Bash",
                {"command": f"export DEPLOY_CRED='{s_}' && ./deploy.sh", "description": f"deploy using {s_}"},
            )
        ],
    )[-1]
    s.tool_result(bash, f"deployed with {s_}\nrevision {SHA}")
    for name, inp in (
        ("Read", {"file_path": f"{cwd}/config/{s_}.env"}),
        ("Write", {"file_path": f"{cwd}/.env.{s_}", "content": f"SERVICE_CRED={s_}\n"}),
        ("Edit", {"file_path": f"{cwd}/app.py", "old_string": "x = 1", "new_string": f"cred = '{s_}'"}),
        ("Grep", {"pattern": s_, "path": f"{cwd}/{s_}"}),
        ("WebFetch", {"url": f"https://api.example.com/v1?access_token={s_}", "prompt": f"check {s_}"}),
        ("TodoWrite", {"todos": [{"content": f"rotate {s_}", "status": "in_progress", "activeForm": s_}]}),
        ("mcp__db__query", {"sql": f"SELECT 1 WHERE token = '{s_}'", "nested": {"list": [s_, {"k": s_}]}}),
    ):
        call = s.response(tools=[(name, inp)])[-1]
        s.tool_result(call, [{"type": "text", "text": f"result: {s_}"}], is_error=name == "Grep")
    agent = f"a{i:06x}"
    task_prompt = f"Audit the deploy script for the leaked credential {s_} and report."
    task = s.response(
        tools=[
            ("Task", {"description": f"audit {s_}", "prompt": task_prompt, "subagent_type": f"auditor-{s_}"})
        ]
    )[-1]
    s.tool_result(
        task,
        [{"type": "text", "text": f"found {s_} twice"}],
        tool_use_result={
            "status": "completed",
            "agentId": agent,
            "agentType": f"auditor {s_}",
            "description": f"audit {s_}",
            "prompt": task_prompt,
            "content": [{"type": "text", "text": s_}],
        },
    )
    s.user(f"<command-name>/deploy</command-name><command-args>--cred {s_}</command-args>")
    s.user(f"<bash-input>echo {s_}</bash-input>")
    s.user(f"<bash-stdout>{s_}</bash-stdout><bash-stderr></bash-stderr>")
    s.user(
        f"Caveat: The messages below were generated by the user while running local commands. {s_}",
        isMeta=True,
    )
    s.prompt(f"No, don't put {s_} in the config; use the environment variable instead.")
    s.system("away_summary", content=f"Goal: rotate {s_}. Next: update the vault.")
    s.compact(
        s.last,
        summary=f"Primary Request and Intent:\n rotate {s_}\nCurrent Work:\n vault for {s_}",
        trigger=f"auto {s_}",
    )
    s.assistant(
        [{"type": "text", "text": f"API Error: 401 invalid key {s_}"}],
        msg_id="msg_" + uid("err", i)[:20],
        request_id=None,
        isApiErrorMessage=True,
        model="<synthetic>",
    )
    last = s.response(text=f"Done; {s_} is rotated. Revision {SHA}, id {LOOKALIKES[2]}.")[-1]
    last["message"]["model"] = f"claude-opus-4-5 {s_}"
    last["version"] = f"2.1.39 {s_}"
    path = s.write(root / f"-home-dev-w{i}" / f"{sid}.jsonl")
    ag = Session(sid, cwd=cwd, git_branch=f"feature/{s_}", agent_id=agent, sidechain=True)
    ag.prompt(task_prompt, parent=None)
    ag.response(text=f"The credential {s_} appears in deploy.sh.")
    ag.write(path.parent / sid / "subagents" / f"agent-{agent}.jsonl")
    return sid, cwd, last["uuid"]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("secrets")
    root, db = base / "projects", base / "data" / "index.db"
    sessions, leaf = [], None
    for i, p in enumerate(SECRETS):
        sid, cwd, leaf = write_session(root, i, p, leaf)
        sessions.append((sid, cwd))
    report = run_index(db, [root], jobs=2)
    assert report.errors == [] and report.messages_added >= 30 * len(SECRETS)
    return {"root": root, "db": db, "sessions": sessions}


def _leaks(text: str) -> list[str]:
    low = text.lower()
    return [p.name for p in SECRETS if any(n in low for n in needles(p.secret))]


def test_at_least_40_formats() -> None:
    assert len(SECRETS) >= 40
    assert all(needles(p.secret) for p in SECRETS), [p.name for p in SECRETS if not needles(p.secret)]


def test_raw_database_bytes_hold_no_secret(planted: dict[str, Any]) -> None:
    db: Path = planted["db"]
    files = [Path(str(db) + suffix) for suffix in ("", "-wal", "-shm")]
    raw = b"".join(f.read_bytes() for f in files if f.exists())
    assert len(raw) > 100_000
    assert _leaks(raw.decode("latin-1")) == []


def _all_text(conn: sqlite.Connection) -> str:
    """Every text value of every table, message bodies unpacked, plus both FTS vocabularies."""
    parts: list[str] = []
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for t in tables:
        if t.endswith(("_data", "_idx", "_docsize", "_config", "_content")) and "fts" in t:
            continue
        for row in conn.execute(f'SELECT * FROM "{t}"'):
            for v in row:
                if isinstance(v, bytes) and t == "messages":
                    parts.append(unpack(v))
                elif isinstance(v, str):
                    parts.append(v)
    for fts in ("messages_fts", "extractions_fts"):
        conn.execute(f"CREATE VIRTUAL TABLE temp.v_{fts} USING fts5vocab(main, {fts}, row)")
        parts.extend(r[0] for r in conn.execute(f"SELECT term FROM temp.v_{fts}"))
    return "\n".join(parts)


def test_every_column_and_fts_term_holds_no_secret(planted: dict[str, Any]) -> None:
    conn = sqlite.connect(planted["db"])
    text = _all_text(conn)
    assert _leaks(text) == []
    for look in LOOKALIKES:
        assert look in text, look
    n_sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    assert n_sessions == len(SECRETS)
    cwds = [r[0] for r in conn.execute("SELECT cwd FROM sessions")]
    assert all("[REDACTED:" in c for c in cwds), cwds
    assert conn.execute("SELECT count(*) FROM extractions").fetchone()[0] > len(SECRETS)
    assert conn.execute("SELECT count(*) FROM summaries").fetchone()[0] == len(SECRETS) - 1


def _cli(db: Path, *args: str) -> str:
    from total_recall.cli import cli

    res = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
    banned = args[0] == "check-banned" and '"verdict": "banned"' in res.output
    assert res.exit_code == (3 if banned else 0), (args, res.output)  # check-banned exits 3 on a ban
    return res.output


def test_every_command_output_holds_no_secret(planted: dict[str, Any]) -> None:
    db: Path = planted["db"]
    sid, cwd = planted["sessions"][3]
    outputs = [
        _cli(db, "status", "--json"),
        _cli(db, "status"),
        _cli(db, "dump"),
        _cli(db, "dump", "--source", "messages"),
        _cli(db, "dump", "--format", "markdown"),
        _cli(db, "search", "credential", "vault", "--json", "-n", "50"),
        _cli(db, "search", "deploy", "rotate", "-n", "50"),
        _cli(db, "search", "credential", "--sessions", "--json"),
        _cli(db, "recall", "credential", "vault", "--json", "-n", "50"),
        _cli(db, "recall", "rotate", "--scope", "this_project", "--cwd", cwd),
        _cli(db, "context", "--cwd", cwd, "--json"),
        _cli(db, "context", "--cwd", cwd),
        _cli(db, "check-banned", "paste", "the", "credential", "--cwd", cwd, "--json"),
        _cli(db, "metrics", "summary", "--json"),
        _cli(db, "metrics", "sessions", "--json", "-n", "100"),
        _cli(db, "metrics", "cost", "--group", "project", "--json"),
        _cli(db, "metrics", "topics", "--json"),
        _cli(db, "metrics", "health", "--json", "--no-scan"),
        *[
            _cli(db, "profile", name, "--json")
            for name in ("operator", "voice", "workflow", "satisfaction", "preferences")
        ],
    ]
    for s, _ in planted["sessions"]:
        outputs += [
            _cli(db, "inspect", s, "--json", "--messages", "200"),
            _cli(db, "inspect", s),
            _cli(db, "export", s, "--tools"),
            _cli(db, "export", s, "--format", "jsonl", "--tools"),
        ]
    joined = "\n".join(outputs)
    assert _leaks(joined) == []
    assert SHA in joined and LOOKALIKES[2] in joined
    assert "[REDACTED:" in joined


def test_a_cwd_holding_a_token_still_finds_its_project(planted: dict[str, Any]) -> None:
    """Queries scrub the cwd they are given the way stored rows were, so project scoping still works."""
    db: Path = planted["db"]
    sid, cwd = planted["sessions"][3]
    ctx = json.loads(_cli(db, "context", "--cwd", cwd, "--json"))
    assert "[REDACTED:" in ctx["project_key"] and ctx["cwd"] == ctx["project_key"]
    mine = json.loads(_cli(db, "recall", "rotate", "--scope", "this_cwd", "--cwd", cwd, "--json"))
    assert mine and {m["session_id"] for m in mine} == {sid}


def test_mcp_answers_hold_no_secret(planted: dict[str, Any]) -> None:
    from test_mcp import TOOLS

    from index.retrieval.rule_match import scope_bans
    from index.store.db import open_reader
    from mcp_server.server import build_server

    sid, cwd = planted["sessions"][5]
    bans = scope_bans(open_reader(planted["db"]), None)
    ban_id = bans[0].id if bans else "deadbeef"  # why/feedback of a ban mined from the planted sessions
    calls: list[tuple[str, dict[str, Any]]] = [
        ("recall", {"topic": "credential vault", "scope": "global", "limit": 50}),
        ("recall", {"kind": "ban,standing_decision,goal,correction", "scope": "global", "limit": 50}),
        ("prior_sessions_for_cwd", {"scope": "global", "limit": 50}),
        ("prior_sessions_for_cwd", {"topic": "deploy credential"}),
        ("find_failed_attempts", {"topic": "deploy credential"}),
        ("find_user_preferences", {}),
        ("get_session_digest", {"session_id": sid}),
        ("search_messages", {"query": "credential deploy", "scope": "global", "limit": 50}),
        ("search_messages", {"query": "rotate vault", "mode": "snippets"}),
        ("recall_corrections_about", {"topic": "config environment variable"}),
        ("get_recent_corrections", {"since": "3650d", "limit": 50}),
        ("list_standing_decisions", {"scope": "global", "limit": 50}),
        ("get_decision_for_topic", {"topic": "vault credential"}),
        ("check_banned", {"action": "paste the credential into chat"}),
        ("list_failed_attempts", {"scope": "global"}),
        ("get_active_goal", {}),
        ("list_goals", {"scope": "global", "limit": 50}),
        ("get_past_truth_assertions", {"topic": "deploy"}),
        ("get_project_graph", {}),
        ("get_machine_inventory", {}),
        ("define_term", {"term": "vault"}),
        ("get_operator_profile", {}),
        ("get_voice_profile", {}),
        ("get_workflow_profile", {}),
        ("get_satisfaction_profile", {}),
        ("list_implicit_preferences", {}),
        ("get_operator_context", {"budget": 4000}),
        ("assess_escalation_risk", {"prompt": "no, don't do that again"}),
        ("recall_targeted", {"intent": "what_is_the_rule", "topic": "credential"}),
        ("why", {"item_id": ban_id}),
        ("feedback", {"item_id": ban_id, "verdict": "helpful"}),
    ]
    assert {name for name, _ in calls} == TOOLS
    server, rt = build_server(planted["db"], cwd)

    async def run() -> list[str]:
        texts = []
        for name, args in calls:
            res = await server.call_tool(name, args)
            texts.append(json.dumps([getattr(c, "text", "") for c in res.content]))
        uuids = [h["uuid"] for h in json.loads(json.loads(texts[7])[0])["hits"]][:20]
        for mode, args in (("timeline", {"uuid": uuids[0]}), ("full", {"uuids": uuids})):
            res = await server.call_tool("search_messages", {"mode": mode, **args})
            texts.append(json.dumps([getattr(c, "text", "") for c in res.content]))
        return texts

    try:
        texts = asyncio.run(run())
    finally:
        rt.close()
    joined = "\n".join(texts)
    assert _leaks(joined) == []
    assert "[REDACTED:" in joined


def _hook(event: str, payload: dict[str, Any], db: Path, root: Path) -> str:
    env = {
        **os.environ,
        "TOTAL_RECALL_DB": str(db),
        "TOTAL_RECALL_PROJECTS": str(root),
        "PYTHONPATH": str(ROOT),
    }
    p = subprocess.run(
        [sys.executable, "-m", "total_recall", "hook", event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert p.returncode == 0 and p.stderr == "", p.stderr
    return p.stdout


def test_hook_outputs_and_state_files_hold_no_secret(planted: dict[str, Any]) -> None:
    db, root = planted["db"], planted["root"]
    sid, cwd = planted["sessions"][7]
    transcript = next(root.rglob(f"{sid}.jsonl"))
    base = {"session_id": sid, "cwd": cwd, "transcript_path": str(transcript)}
    outs = [
        _hook("session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"}, db, root),
        _hook(
            "user-prompt-submit",
            {
                **base,
                "hook_event_name": "UserPromptSubmit",
                "prompt": "what did we decide about the deploy credential last time?",
            },
            db,
            root,
        ),
        _hook("pre-compact", {**base, "hook_event_name": "PreCompact", "trigger": "auto"}, db, root),
        _hook("session-start", {**base, "hook_event_name": "SessionStart", "source": "compact"}, db, root),
    ]
    state_files = [
        f.read_text(errors="replace")
        for f in db.parent.rglob("*")
        if f.is_file() and not f.name.startswith("index.db")
    ]
    joined = "\n".join(outs + state_files)
    assert outs[2].strip(), "the PreCompact hook printed no packet"
    assert _leaks(joined) == []


def test_the_worker_scrubs_every_text_field_of_every_row_type() -> None:
    """A text field added to a row type later is scrubbed without anyone remembering to list it."""
    from dataclasses import fields

    from index.store.prepare import _str_fields
    from lib import model

    row_types = (
        model.Message,
        model.Alias,
        model.Turn,
        model.Duration,
        model.Compaction,
        model.TaskSpawn,
        model.AgentInfo,
        model.SessionDelta,
    )
    for cls in row_types:
        texty = {f.name for f in fields(cls) if "str" in str(f.type) and "[" not in str(f.type)}
        assert set(_str_fields(cls)) == texty, cls
    containers = {
        f.name for cls in row_types for f in fields(cls) if "str" in str(f.type) and "[" in str(f.type)
    }
    assert containers == {"models", "titles"}  # handled by name in index.store.prepare.scrub_chunk


def test_the_worker_scrubs_each_value_wherever_it_repeats_and_skips_junk() -> None:
    """Values are scrubbed once per chunk and written back to every field holding them; a damaged
    record's non-text value where text belongs (a dict, a list) is left as it is, not fatal."""
    from index.store.prepare import scrub_chunk
    from lib.model import Alias, FileChunk, Message

    tok = PREFIXED["ghp"][0]()
    junk: Any = {"branch": ["main"]}
    msgs = [
        Message(uid("m", i), uid("s"), None, "assistant", "tool_use", None, f"run {tok}", git_branch=junk)
        for i in range(3)
    ]
    msgs[1].tool_target = f"curl -H 'Authorization: token {tok}'"
    chunk = FileChunk(path="/p/x.jsonl", start=0, end=0, messages=msgs, aliases=[Alias(tok, tok, uid("s"))])
    scrub_chunk(chunk)
    for m in msgs:
        assert tok not in m.text and m.git_branch is junk
    assert tok not in (msgs[1].tool_target or "")
    assert tok not in chunk.aliases[0].uuid and chunk.aliases[0].uuid == chunk.aliases[0].parent_uuid


def test_a_secret_cut_by_a_length_cap_leaves_no_piece(tmp_path: Path) -> None:
    """Tool results, tool inputs and targets are capped; a token straddling a cap must not leave a
    prefix too short for its format to be recognised."""
    from lib.content import TOOL_INPUT_CAP, TOOL_RESULT_CAP

    tok = PREFIXED["ghp"][0]()
    s = Session(uid("cap"), cwd="/home/dev/cap")
    s.prompt("show the environment")
    for cap, name in ((TOOL_RESULT_CAP, "Bash"), (TOOL_INPUT_CAP, "Write")):
        for shift in (5, 12, 25):
            pad = "x" * (cap - shift - 1)
            inp = (
                {"command": "env"}
                if name == "Bash"
                else {"file_path": "/tmp/env", "content": f"{pad} {tok} end"}
            )
            call = s.response(tools=[(name, inp)])[-1]
            s.tool_result(call, f"{pad} {tok} end")
        s.response(tools=[("Bash", {"command": "x" * (300 - shift - 1) + f" {tok}"})])
    s.write(tmp_path / "p" / "-home-dev-cap" / f"{uid('cap')}.jsonl")
    db = tmp_path / "index.db"
    run_index(db, [tmp_path / "p"])
    text = _all_text(sqlite.connect(db))
    body = tok[4:]
    assert not any(body[:n] in text for n in range(8, len(body) + 1)), "a piece of the token was stored"
