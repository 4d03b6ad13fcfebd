"""Memory that acts (issue 19): bans enforced at PreToolUse, memories retired when the code they name
changes (git-aware staleness), and every injected item explained (`why`) and rated (`feedback`).
Hooks and the CLI run as real processes against small transcripts the tests write."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fixtures.make import Session, slug, uid
from test_hooks import context_of, hook

from extractors.model import STANDING_KINDS
from hooks.adaptive import report
from index.briefing.staleness import check_all, refs
from index.retrieval.rule_match import bans_for_action, command_shape, tool_action
from index.store.db import open_existing_writer, open_reader
from index.store.ingest import run_index
from index.store.memories import promote
from lib.events import LEDGER, read_events
from lib.memid import memory_id
from lib.settings import Settings
from mcp_server import tools_feedback, tools_operator, tools_profile
from mcp_server.envelope import Runtime

ID = re.compile(r"#([0-9a-f]{8})\b")


def cli(db: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "total_recall", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


# ---- the matcher: command shapes and identifiers, not substrings ------------------------------------


def test_command_shape_keeps_programs_and_flags_not_prose() -> None:
    assert command_shape("git push --force origin main") == "git push --force origin main"
    assert command_shape('echo "never git push --force"') == "echo"
    assert command_shape('git commit -m "force push later" && ls') == "git commit ls"
    assert command_shape("cat <<EOF\ngit push --force\nEOF") == "cat"


def test_tool_action_of_edits_and_mcp_calls() -> None:
    edit = tool_action(
        "Edit", {"file_path": "/r/tests/test_x.py", "new_string": "import tenacity\ntime.sleep(2)\n"}
    )
    assert "/r/tests/test_x.py" in edit and "tenacity" in edit and "time.sleep" in edit
    assert "a sentence about tenacity" not in edit
    assert tool_action("mcp__db__query", {"sql": "DROP TABLE x"}) == "mcp db query DROP TABLE x"
    assert tool_action("Read", {"file_path": "/x"}) == ""  # not a tool we check
    assert tool_action("Bash", "not a dict") == ""


# ---- PreToolUse ---------------------------------------------------------------------------------------


@pytest.fixture
def banned(tmp_path: Path) -> dict[str, Any]:
    """An indexed session with a ban on force pushes, in project zorblax."""
    cwd = str(tmp_path / "work" / "zorblax")
    root = tmp_path / "projects"
    s = Session(uid("ban-session", cwd), cwd=cwd)
    s.prompt("never use git push --force on this repo, it rewrote main last time")
    s.response(text="Understood, no force pushes.")
    s.prompt("never use tenacity, write the retry loop by hand")
    s.response(text="OK.")
    s.write(root / slug(cwd) / f"{uid('ban-session', cwd)}.jsonl")
    db = tmp_path / "data" / "index.db"
    run_index(db, [root])
    ban = bans_for_action(open_reader(db), "git push --force", cwd)[0]
    return {"db": db, "root": root, "cwd": cwd, "ban": ban, "sid": uid("ban-session", cwd)}


def pre_tool(w: dict[str, Any], command: str, env: dict[str, str] | None = None) -> dict[str, Any] | None:
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "live",
        "cwd": w["cwd"],
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "t1",
    }
    old = dict(os.environ)
    os.environ.update(env or {})
    try:
        p = hook("pre-tool-use", payload, w["db"], w["root"])
    finally:
        os.environ.clear()
        os.environ.update(old)
    return json.loads(p.stdout) if p.stdout.strip() else None


def test_pre_tool_use_warns_by_default_quoting_the_ban(banned: dict[str, Any]) -> None:
    out = pre_tool(banned, "git push --force origin main")
    assert out is not None
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse" and "permissionDecision" not in spec
    note = spec["additionalContext"]
    assert "git push --force on this repo" in note and banned["ban"].date in note
    assert banned["sid"][:8] in note and f"#{banned['ban'].id}" in note
    ev = [e for e in read_events(banned["db"].parent) if e.get("hook") == "pre-tool-use"]
    assert ev[-1]["decision"] == "warn" and ev[-1]["ban_id"] == banned["ban"].id
    assert isinstance(ev[-1]["latency_ms"], float)
    why = json.loads(cli(banned["db"], "why", banned["ban"].id, "--json").stdout)  # the id in the note
    assert why["kind"] == "ban" and why["session_id"] == banned["sid"]
    assert why["source_message"]["text"].startswith("never use git push --force")


def test_pre_tool_use_leaves_other_calls_alone(banned: dict[str, Any]) -> None:
    for command in ("git push origin main", 'echo "git push --force"', "ls -la"):
        assert pre_tool(banned, command) is None, command
    decisions = [e["decision"] for e in read_events(banned["db"].parent) if e.get("hook") == "pre-tool-use"]
    assert decisions == ["allow", "allow", "allow"]
    assert report(read_events(banned["db"].parent))["tool_calls"] == {"allow": 3}


def test_pre_tool_use_loads_little_until_a_ban_matches(banned: dict[str, Any]) -> None:
    """The hook runs before every tool call: an allowed call must not pay for dataclasses (~8 ms once),
    orjson, the user state or the bundle (regression: the first version imported all of them)."""
    payload = {"hook_event_name": "PreToolUse", "cwd": banned["cwd"], "tool_name": "Bash"}
    code = (
        "import json, sys\n"
        "from hooks.runner import run_hook\n"
        "run_hook('pre-tool-use')\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps({**payload, "tool_input": {"command": "ls -la"}}),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TOTAL_RECALL_DB": str(banned["db"])},
    )
    loaded = set(json.loads(p.stdout))
    assert "index.retrieval.rule_match" in loaded  # it did check the call
    heavy = {"dataclasses", "orjson", "index.store.userstate", "index.briefing.bundle", "click", "lib.model"}
    assert not loaded & heavy, loaded & heavy


def test_edits_and_mcp_calls_are_checked_by_their_identifiers(banned: dict[str, Any]) -> None:
    def call(tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
        payload = {
            "hook_event_name": "PreToolUse",
            "cwd": banned["cwd"],
            "tool_name": tool,
            "tool_input": args,
        }
        p = hook("pre-tool-use", payload, banned["db"], banned["root"])
        return json.loads(p.stdout) if p.stdout.strip() else None

    path = f"{banned['cwd']}/net/client.py"
    out = call("Edit", {"file_path": path, "old_string": "x", "new_string": "import tenacity\n"})
    assert out is not None and "use tenacity" in out["hookSpecificOutput"]["additionalContext"]
    prose = "# we chose not to use tenacity here\nretries = 3\n"  # a comment is not an identifier
    assert call("Write", {"file_path": path, "content": prose}) is None
    assert call("mcp__plugin_x_git__push", {"remote": "origin", "force": "--force"}) is not None
    assert call("Read", {"file_path": path}) is None  # not a tool the hook checks
    decisions = [e["decision"] for e in read_events(banned["db"].parent) if e.get("hook") == "pre-tool-use"]
    assert decisions == ["warn", "allow", "warn", "skip"]


def test_block_mode_from_the_environment_denies(banned: dict[str, Any]) -> None:
    out = pre_tool(banned, "git push --force", {"TOTAL_RECALL_ENFORCE": "block"})
    assert out is not None
    spec = out["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny" and "git push --force" in spec["permissionDecisionReason"]


def test_bans_enforce_and_relax_one_ban(banned: dict[str, Any]) -> None:
    db, ban_id = banned["db"], banned["ban"].id
    listed = json.loads(cli(db, "bans", "list", "--cwd", banned["cwd"], "--json").stdout)
    modes = {b["id"]: b["mode"] for b in listed["bans"]}
    assert len(modes) == 2 and modes[ban_id] == "warn"
    assert cli(db, "bans", "enforce", ban_id).returncode == 0
    out = pre_tool(banned, "git push --force origin main")
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    # User state: a rebuilt index (deleted and indexed again) still blocks.
    for f in db.parent.glob("index.db*"):
        f.unlink()
    run_index(db, [banned["root"]])
    out = pre_tool(banned, "git push --force origin main")
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert cli(db, "bans", "relax", f"#{ban_id}").returncode == 0
    out = pre_tool(banned, "git push --force origin main")
    assert out is not None and "additionalContext" in out["hookSpecificOutput"]
    bad = cli(db, "bans", "enforce", "nothex")
    assert bad.returncode != 0 and "not a ban id" in bad.stderr and "Traceback" not in bad.stderr


def test_pre_tool_use_fails_open(banned: dict[str, Any]) -> None:
    banned["db"].write_bytes(b"not a database")
    assert pre_tool(banned, "git push --force") is None
    ev = [e for e in read_events(banned["db"].parent) if e.get("hook") == "pre-tool-use"]
    assert ev[-1]["ok"] is False and ev[-1]["error"]


# ---- staleness -------------------------------------------------------------------------------------------


def test_refs_link_files_functions_flags_and_packages() -> None:
    found = refs("use utils/retry.py::backoff, not src/old.py; run with --no-cache; pip install httpx")
    assert [str(r) for r in found] == ["utils/retry.py::backoff", "src/old.py", "--no-cache", "package httpx"]
    assert refs("be careful with retries") == []


@pytest.fixture
def repo_world(tmp_path: Path) -> dict[str, Any]:
    """A git repository whose utils/retry.py defines backoff, and a past session there whose standing
    decision (promoted, so it is injected) names utils/retry.py::backoff."""
    repo = (tmp_path / "repo").resolve()
    (repo / "utils").mkdir(parents=True)
    (repo / "utils" / "retry.py").write_text(
        "import random\n\n\ndef backoff(attempt):\n    return min(30, 2**attempt) * random.random()\n\n\n"
        "def jitter():\n    return random.random()\n"
    )
    git(repo, "init", "-q")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "add", "-A")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "retry helpers")
    root = tmp_path / "projects"
    sid = uid("retry-session", str(repo))
    s = Session(sid, cwd=str(repo))
    s.prompt("from now on we always retry network calls with utils/retry.py::backoff")
    s.response(text="Understood.")
    s.write(root / slug(str(repo)) / f"{sid}.jsonl")
    db = tmp_path / "data" / "index.db"
    run_index(db, [root])
    conn = open_existing_writer(db)
    (eid,) = conn.execute(  # mined as an order ("always retry ..."); promoted as a standing decision
        "SELECT id FROM extractions WHERE kind IN (?,?)", STANDING_KINDS
    ).fetchone()
    promote(conn, db, "standing_decision", extraction_id=eid)
    conn.close()
    content = "from now on we always retry network calls with utils/retry.py::backoff"
    return {
        "repo": repo,
        "root": root,
        "db": db,
        "sid": sid,
        "id": memory_id("standing_decision", str(repo), content),
    }


def session_start(w: dict[str, Any], sid: str) -> str:
    payload = {
        "hook_event_name": "SessionStart",
        "session_id": sid,
        "cwd": str(w["repo"]),
        "source": "resume",
    }
    return context_of(hook("session-start", payload, w["db"], w["root"]), "SessionStart")


def test_deleting_the_function_retires_the_decision(repo_world: dict[str, Any]) -> None:
    w = repo_world
    first = session_start(w, "live-1")
    assert "utils/retry.py::backoff" in first and f"#{w['id']}" in first
    (w["repo"] / "utils" / "retry.py").write_text(
        "import random\n\n\ndef jitter():\n    return random.random()\n"
    )
    git(w["repo"], "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "drop backoff")
    sha = git(w["repo"], "rev-parse", "HEAD")
    second = session_start(w, "live-2")
    # Gone from the decisions (the session's title, in "Last sessions here", is not a memory).
    assert f"#{w['id']}" not in second and "Standing decisions" not in second
    assert "left out: 1 stale" in second
    ev = [e for e in read_events(w["db"].parent) if e.get("hook") == "session-start"][-1]
    assert ev["left_out"] == [
        {"id": w["id"], "why": "stale", "ref": "utils/retry.py::backoff", "commit": sha}
    ]
    assert ev["marks_saved"] is True
    # MCP: the decision is listed as stale, with the commit; the bundle tool says it was left out.
    rt = Runtime(w["db"], str(w["repo"]), Settings.from_env())
    listed = json.loads(tools_operator.list_standing_decisions(rt).content[0].text)  # type: ignore[union-attr]
    (item,) = [i for i in listed["items"] if i["id"] == w["id"]]
    assert item["stale"]["commit"] == sha and "no longer defined" in item["stale"]["reason"]
    ctx = json.loads(tools_profile.get_operator_context(rt).content[0].text)  # type: ignore[union-attr]
    assert [x["commit"] for x in ctx["left_out"]] == [sha]
    # The file itself deleted: still stale, the evidence now the deleting commit.
    git(w["repo"], "rm", "-q", "utils/retry.py")
    git(w["repo"], "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "drop retry module")
    session_start(w, "live-3")
    why = json.loads(cli(w["db"], "why", w["id"], "--json").stdout)
    assert (
        why["stale"]["commit"] == git(w["repo"], "rev-parse", "HEAD") and "deleted" in why["stale"]["reason"]
    )


def test_consolidate_checks_every_memory(repo_world: dict[str, Any]) -> None:
    w = repo_world
    conn = open_existing_writer(w["db"])
    assert check_all(conn) == {"linked": 1, "checked_now": 1, "stale": 0, "out_of_time": False}
    (w["repo"] / "utils" / "retry.py").write_text("def jitter():\n    return 1\n")
    git(w["repo"], "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "drop backoff")
    res = json.loads(cli(w["db"], "consolidate", "--json").stdout)
    assert res["staleness"]["stale"] == 1
    assert check_all(conn)["checked_now"] == 0  # marks are kept per HEAD: nothing to redo
    conn.close()


# ---- why and feedback ----------------------------------------------------------------------------------


def test_why_and_wrong_feedback_keep_an_item_out(repo_world: dict[str, Any]) -> None:
    w = repo_world
    text = session_start(w, "live-1")
    assert f"#{w['id']}" in text and re.search(r"\(~\d+ tokens", text)
    why = json.loads(cli(w["db"], "why", f"#{w['id']}", "--json").stdout)
    assert why["kind"] == "standing_decision" and why["session_id"] == w["sid"] and why["date"]
    assert why["source_message"]["text"].startswith("from now on we always retry")
    assert why["confidence"] == 1.0 and "standing decision of this project" in why["reason"]
    assert why["injected"][-1]["into_session"] == "live-1"
    shown = cli(w["db"], "why", w["id"])
    assert "chosen because" in shown.stdout and w["sid"] in shown.stdout
    assert cli(w["db"], "feedback", w["id"], "wrong").returncode == 0
    again = session_start(w, "live-2")
    assert f"#{w['id']}" not in again and "Standing decisions" not in again and "1 wrong" in again
    prompt = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "live-2",
        "cwd": str(w["repo"]),
        "prompt": "what did we decide about how to retry network calls with backoff in utils/retry.py?",
    }
    p = hook("user-prompt-submit", prompt, w["db"], w["root"])
    assert f"#{w['id']}" not in p.stdout
    ev = [e for e in read_events(w["db"].parent) if e.get("hook") == "user-prompt-submit"][-1]
    assert ev["policy"]["decided"], ev  # the policy did look: the item was kept out, not missed
    # Its source message (past-message recall) is kept out too: it would say the same thing.
    assert {x["why"] for x in ev["left_out"]} == {"wrong"} and "retry network calls" not in p.stdout
    rep = report(read_events(w["db"].parent))
    assert rep["feedback"]["wrong"] == 1 and rep["feedback"]["by_section"] == {"decisions": {"wrong": 1}}
    # User state: the verdict survives a rebuilt index.
    for f in w["db"].parent.glob("index.db*"):
        f.unlink()
    run_index(w["db"], [w["root"]])
    assert "Standing decisions" not in session_start(w, "live-3")


def test_prompt_recall_items_carry_ids_in_the_ledger(repo_world: dict[str, Any]) -> None:
    w = repo_world
    prompt = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "live-9",
        "cwd": str(w["repo"]),
        "prompt": "what did we decide about how to retry network calls with backoff in utils/retry.py?",
    }
    text = context_of(hook("user-prompt-submit", prompt, w["db"], w["root"]), "UserPromptSubmit")
    ids = ID.findall(text)
    ledger = [e for e in read_events(w["db"].parent, name=LEDGER) if e.get("hook") == "user-prompt-submit"]
    assert ids and {e["id"] for e in ledger} == set(ids)
    for item_id in ids:
        why = json.loads(cli(w["db"], "why", item_id, "--json").stdout)
        assert why["reason"] and why["injected"][-1]["into_session"] == "live-9"


def test_mcp_why_and_feedback(repo_world: dict[str, Any]) -> None:
    w = repo_world
    session_start(w, "live-1")
    rt = Runtime(w["db"], str(w["repo"]), Settings.from_env())
    why = json.loads(tools_feedback.why(rt, w["id"]).content[0].text)  # type: ignore[union-attr]
    assert why["source_message"]["uuid"] and why["feedback"] is None
    done = json.loads(tools_feedback.feedback(rt, f"#{w['id']}", "helpful").content[0].text)  # type: ignore[union-attr]
    assert done["verdict"] == "helpful"
    assert json.loads(cli(w["db"], "why", w["id"], "--json").stdout)["feedback"]["verdict"] == "helpful"
    unknown = cli(w["db"], "feedback", "deadbeef", "wrong")
    assert unknown.returncode != 0 and "no injected item" in unknown.stderr


def test_bundle_states_what_it_dropped_for_budget(repo_world: dict[str, Any]) -> None:
    from index.briefing.bundle import operator_context

    ctx = operator_context(open_reader(repo_world["db"]), str(repo_world["repo"]), budget=330)
    assert len(ctx.text) <= 330 and ctx.dropped
    assert "dropped for budget" in ctx.text and f"~{ctx.tokens} tokens" in ctx.text


def test_forget_drops_the_ledger_lines_of_the_session(repo_world: dict[str, Any]) -> None:
    w = repo_world
    session_start(w, "live-1")
    ledger = read_events(w["db"].parent, name=LEDGER)
    assert any(e.get("session_id") == w["sid"] for e in ledger)
    assert cli(w["db"], "forget", w["sid"], "--yes").returncode == 0
    assert w["sid"] not in (w["db"].parent / LEDGER).read_text()


def test_why_calls_a_reversed_decision_stale(tmp_path: Path) -> None:
    """A later session deciding otherwise (Celery → RQ, folded as a supersession) makes an injected
    decision stale in `why`, with the decision that replaced it."""
    from mcp_fixture import build_index

    from index.briefing.explain import explain

    db = tmp_path / "index.db"
    _, cwds, _ = build_index(tmp_path, db)
    conn = open_reader(db)
    (project, content) = conn.execute(
        "SELECT project_key, content FROM standing_decisions WHERE status = 'superseded'"
    ).fetchone()
    item_id = memory_id("standing_decision", project, content)
    entry = {
        "event": "injected",
        "id": item_id,
        "kind": "standing_decision",
        "content": content,
        "project_key": project,
    }
    out = explain(conn, item_id, [entry], None)
    assert out is not None and "Celery" in content
    assert "decided otherwise" in out["stale"]["reason"] and "RQ" in out["stale"]["superseded_by"]["content"]
    fresh = conn.execute(
        "SELECT project_key, content FROM standing_decisions WHERE status = 'active'"
    ).fetchone()
    other = {**entry, "id": "0" * 8, "content": fresh[1], "project_key": fresh[0]}
    assert explain(conn, "0" * 8, [other], None)["stale"] is None  # type: ignore[index]
