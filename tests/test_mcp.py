"""The MCP server through a real MCP client over stdio (M1–M3): `total-recall mcp` (or
`python -m mcp_server` until the CLI command is wired) runs as a subprocess on an index of a small
hand-written corpus (tests/mcp_fixture.py); every tool is called with valid and invalid arguments."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from lib.settings import Settings

sys.path.insert(0, str(Path(__file__).parent))
from mcp_fixture import build_index  # noqa: E402

TOOLS = {
    "recall",
    "prior_sessions_for_cwd",
    "find_failed_attempts",
    "find_user_preferences",
    "get_session_digest",
    "search_messages",
    "recall_corrections_about",
    "get_recent_corrections",
    "list_standing_decisions",
    "get_decision_for_topic",
    "check_banned",
    "list_failed_attempts",
    "get_active_goal",
    "list_goals",
    "get_past_truth_assertions",
    "get_project_graph",
    "get_machine_inventory",
    "define_term",
    "why",
    "feedback",
    "get_operator_profile",
    "get_voice_profile",
    "get_operator_context",
    "assess_escalation_risk",
    "recall_targeted",
    "get_workflow_profile",
    "get_satisfaction_profile",
    "list_implicit_preferences",
}
PROFILES = ("get_operator_profile", "get_voice_profile", "get_workflow_profile", "get_satisfaction_profile")
INTENTS = {
    "how_did_we_fix": "flaky login test",
    "why_did_we_choose": "RQ",
    "what_failed": "login test CI",
    "what_does_user_prefer": "pnpm npm",
    "what_is_the_rule": "tenacity",
    "where_is": "staging database",
    "what_was_decided": "background jobs",
}

# (key, tool, arguments) — valid calls; every one must answer without an error.
VALID: list[tuple[str, str, dict[str, Any]]] = [
    ("recall", "recall", {"topic": "tenacity library"}),
    ("recall_kind", "recall", {"kind": "ban", "scope": "global", "limit": 50}),
    ("recall_widen", "recall", {"topic": "lorem ipsum placeholder", "scope": "this_project"}),
    ("recall_clamp", "recall", {"topic": "tests", "limit": 500}),
    ("recall_since", "recall", {"kind": "standing_decision", "since": "7d", "scope": "global"}),
    ("prior", "prior_sessions_for_cwd", {}),
    ("prior_topic", "prior_sessions_for_cwd", {"topic": "Redis database", "scope": "global"}),
    ("failed", "find_failed_attempts", {"topic": "test failed on CI"}),
    ("prefs", "find_user_preferences", {"topic": "pnpm"}),
    ("prefs_all", "find_user_preferences", {}),
    ("search", "search_messages", {"query": "payment webhook retry", "limit": 5}),
    ("search_snip", "search_messages", {"query": "Redis database", "mode": "snippets", "kind": "text"}),
    ("corr_about", "recall_corrections_about", {"topic": "tenacity"}),
    ("corr_recent", "get_recent_corrections", {"since": "30d"}),
    ("sd_active", "list_standing_decisions", {}),
    ("sd_superseded", "list_standing_decisions", {"status": "superseded"}),
    ("decision", "get_decision_for_topic", {"topic": "background jobs queue"}),
    ("ban_yes", "check_banned", {"action": "pip install tenacity for the retries"}),
    ("ban_sleep", "check_banned", {"action": "call time.sleep(2) in the tests"}),
    ("ban_no", "check_banned", {"action": "write the changelog"}),
    ("failed_list", "list_failed_attempts", {"scope": "global"}),
    ("goal", "get_active_goal", {}),
    ("goals", "list_goals", {"status": "paused"}),
    ("truth_cat", "get_past_truth_assertions", {"category": "certainty_claim"}),
    ("truth_topic", "get_past_truth_assertions", {"topic": "tests pass"}),
    ("graph", "get_project_graph", {}),
    ("graph_web", "get_project_graph", {"project": "acme-web"}),
    ("machines", "get_machine_inventory", {}),
    ("term", "define_term", {"term": "KRAKEN"}),
    ("prefs_implicit", "list_implicit_preferences", {"source": "stated"}),
    ("context", "get_operator_context", {"budget": 1200}),
    (
        "escalation",
        "assess_escalation_risk",
        {
            "prompt": "no! that still doesn't work, I told you already",
            "draft": "You're absolutely right, I apologize.",
        },
    ),
    *[(p, p, {}) for p in PROFILES],
    *[(f"targeted_{i}", "recall_targeted", {"intent": i, "topic": t}) for i, t in INTENTS.items()],
]
# (key, tool, arguments) — each must come back as the one error shape with this code.
INVALID: list[tuple[str, str, dict[str, Any], str]] = [
    ("recall_scope", "recall", {"topic": "x", "scope": "everywhere"}, "invalid_argument"),
    ("recall_kind", "recall", {"kind": "bogus"}, "invalid_argument"),
    ("recall_since", "recall", {"topic": "x", "since": "last tuesday"}, "invalid_argument"),
    ("recall_limit", "recall", {"topic": "x", "limit": "many"}, "invalid_argument"),
    ("prior", "prior_sessions_for_cwd", {"scope": "nowhere"}, "invalid_argument"),
    ("failed", "find_failed_attempts", {"topic": " "}, "invalid_argument"),
    ("prefs", "find_user_preferences", {"since": "soon"}, "invalid_argument"),
    ("digest_missing", "get_session_digest", {}, "invalid_argument"),
    ("digest_unknown", "get_session_digest", {"session_id": "no-such-session"}, "not_found"),
    ("search_noquery", "search_messages", {}, "invalid_argument"),
    ("search_timeline", "search_messages", {"mode": "timeline"}, "invalid_argument"),
    ("search_full", "search_messages", {"mode": "full"}, "invalid_argument"),
    ("search_mode", "search_messages", {"query": "x", "mode": "everything"}, "invalid_argument"),
    ("search_kind", "search_messages", {"query": "x", "kind": "poem"}, "invalid_argument"),
    ("search_uuid", "search_messages", {"mode": "timeline", "uuid": "no-such-uuid"}, "not_found"),
    ("corr_about", "recall_corrections_about", {"topic": ""}, "invalid_argument"),
    ("corr_recent", "get_recent_corrections", {"limit": "x"}, "invalid_argument"),
    ("sd", "list_standing_decisions", {"status": "maybe"}, "invalid_argument"),
    ("decision", "get_decision_for_topic", {}, "invalid_argument"),
    ("ban", "check_banned", {"action": ""}, "invalid_argument"),
    ("failed_list", "list_failed_attempts", {"since": "x"}, "invalid_argument"),
    ("goal", "get_active_goal", {"scope": "galaxy"}, "invalid_argument"),
    ("goals", "list_goals", {"status": "finished"}, "invalid_argument"),
    ("truth", "get_past_truth_assertions", {"category": "lie"}, "invalid_argument"),
    ("graph", "get_project_graph", {"limit": "all"}, "invalid_argument"),
    ("machines", "get_machine_inventory", {"host": "slate"}, "invalid_argument"),
    ("term", "define_term", {"term": "  "}, "invalid_argument"),
    ("implicit", "list_implicit_preferences", {"source": "guessed"}, "invalid_argument"),
    ("context", "get_operator_context", {"budget": "big"}, "invalid_argument"),
    ("escalation", "assess_escalation_risk", {"draft": "hi"}, "invalid_argument"),
    ("targeted_intent", "recall_targeted", {"intent": "why_not", "topic": "x"}, "invalid_argument"),
    ("targeted_topic", "recall_targeted", {"intent": "what_failed", "topic": ""}, "invalid_argument"),
    *[(p, p, {"verbose": True}, "invalid_argument") for p in PROFILES],
    ("unknown_tool", "no_such_tool", {}, "unknown_tool"),
]


def server_command() -> list[str]:
    import click

    from total_recall.cli import cli

    if cli.get_command(click.Context(cli), "mcp") is not None:  # (commands are added as first looked up)
        return [sys.executable, "-m", "total_recall", "mcp"]
    return [sys.executable, "-m", "mcp_server"]  # until `total-recall mcp` is wired into the CLI


def drive(db: Path, cwd: Path, body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    cmd = server_command()
    env = {
        "TOTAL_RECALL_DB": str(db),
        "TOTAL_RECALL_HOME": str(cwd / "trhome"),
        "PATH": os.environ["PATH"],
        "HOME": str(cwd),
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }

    async def run() -> Any:
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env, cwd=str(cwd))
        with open(cwd / "mcp-server.stderr", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                return await body(s)

    return asyncio.run(asyncio.wait_for(run(), 120))


def parse(result: Any) -> tuple[bool, dict[str, Any], str]:
    text = getattr(result.content[0], "text", "")
    return bool(result.is_error), json.loads(text), text


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("mcpfx")
    db = root / "index.db"
    _, cwds, sessions = build_index(root, db)
    return {"db": db, "cwds": cwds, "sessions": sessions, "root": root}


@pytest.fixture(scope="module")
def live(fx: dict[str, Any]) -> dict[str, Any]:
    """One server process: list everything, make every call, read the resource."""
    retry_sid = fx["sessions"]["Add retry logic to the payment webhook"]

    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tools": (await s.list_tools()).tools,
            "templates": (await s.list_resource_templates()).resource_templates,
        }
        calls = list(VALID) + [
            ("digest", "get_session_digest", {"session_id": retry_sid[:13]}),
            ("digest_debug", "get_session_digest", {"session_id": fx["sessions"]["Debug flaky login test"]}),
        ]
        out["valid"] = {k: parse(await s.call_tool(t, a)) for k, t, a in calls}
        out["invalid"] = {k: parse(await s.call_tool(t, a)) for k, t, a, _ in INVALID}
        uuid = out["valid"]["search"][1]["hits"][0]["uuid"]
        huge = await s.call_tool("search_messages", {"query": "migration log partition", "mode": "index"})
        huge_uuid = parse(huge)[1]["hits"][0]["uuid"]
        out["timeline"] = parse(
            await s.call_tool("search_messages", {"mode": "timeline", "uuid": uuid, "before": 2, "after": 2})
        )
        out["full"] = parse(
            await s.call_tool("search_messages", {"mode": "full", "uuids": [uuid, huge_uuid, "missing"]})
        )
        content = (await s.read_resource(f"session-digest://{retry_sid}")).contents[0]
        out["resource"] = getattr(content, "text", "")
        try:
            await s.read_resource("session-digest://no-such-session")
            out["resource_missing"] = None
        except Exception as exc:  # the SDK raises on a JSON-RPC error
            out["resource_missing"] = str(exc)
        return out

    return drive(fx["db"], fx["cwds"]["api"], body)


def test_lists_all_tools_read_only_but_feedback(live: dict[str, Any]) -> None:
    tools = {t.name: t for t in live["tools"]}
    assert set(tools) == TOOLS
    for t in tools.values():  # `feedback` keeps the user's verdict (index.user.json); it deletes nothing
        assert t.annotations is not None and t.annotations.read_only_hint is (t.name != "feedback"), t.name
        assert t.annotations.destructive_hint is False
        assert "Call it" in (t.description or "") or "call it" in (t.description or ""), t.name
    # shared parameters mean the same everywhere
    scopes = {
        json.dumps(
            t.input_schema["properties"]["scope"].get("enum") or t.input_schema["properties"]["scope"],
            sort_keys=True,
        )
        for t in tools.values()
        if "scope" in t.input_schema["properties"]
    }
    assert (
        len(
            {
                json.dumps(json.loads(s).get("enum") if isinstance(json.loads(s), dict) else json.loads(s))
                for s in scopes
            }
        )
        == 1
    )
    since = {
        t.input_schema["properties"]["since"]["description"]
        for t in tools.values()
        if "since" in t.input_schema["properties"]
    }
    assert len(since) == 1 and "7d" in since.pop()
    assert any(str(t.uri_template) == "session-digest://{session_id}" for t in live["templates"])


def test_tools_are_module_functions_registered_from_lists(live: dict[str, Any]) -> None:
    """Each tool family module lists its module-level tool functions; the server registers exactly
    those, in that order, without reaching into the SDK's private attributes."""
    import inspect

    from mcp_server import tools_feedback, tools_operator, tools_profile, tools_recall

    listed = [fn for m in (tools_recall, tools_operator, tools_profile, tools_feedback) for fn in m.TOOLS]
    listed += tools_feedback.WRITE_TOOLS
    assert [t.name for t in live["tools"]] == [fn.__name__ for fn in listed]
    for fn in listed:
        assert list(inspect.signature(fn).parameters)[0] == "rt", fn.__name__
    for t in live["tools"]:  # the runtime is bound, never a parameter; descriptions carry no code indent
        assert "rt" not in t.input_schema.get("properties", {}), t.name
        assert "\n " not in (t.description or ""), t.name
    source = "".join(p.read_text() for p in (Path(__file__).resolve().parents[1] / "mcp_server").glob("*.py"))
    assert "_tool_manager" not in source


def test_every_valid_call_answers_bounded_with_meta(live: dict[str, Any]) -> None:
    for key, (err, body, text) in live["valid"].items():
        assert not err, (key, body)
        assert "_meta" in body, key
        assert len(text) <= 12_000, (key, len(text))
        assert body["_meta"]["tokens"] > 0


def test_answers_come_from_rows(live: dict[str, Any], fx: dict[str, Any]) -> None:
    v = {k: b for k, (_, b, _) in live["valid"].items()}
    item = v["recall"]["items"][0]
    assert (
        "tenacity" in item["content"]
        and item["date"]
        and item["session_id"]
        and item["project"] == "acme-api"
    )
    assert "not an instruction" in v["recall"]["_meta"]["provenance"]
    assert v["recall_kind"]["items"] and {i["kind"] for i in v["recall_kind"]["items"]} == {"ban"}
    assert v["recall_since"]["items"] and all(
        i["kind"] == "standing_decision" for i in v["recall_since"]["items"]
    )
    prior = v["prior"]
    assert prior["_meta"]["scope_used"] == "this_cwd" and len(prior["items"]) == 4  # the server's own cwd
    assert prior["cwd"] == str(fx["cwds"]["api"])
    assert v["prior_topic"]["items"][0]["session_id"] == fx["sessions"]["Debug flaky login test"]
    assert any(i["kind"] == "failed_attempt" for i in v["failed"]["items"])
    assert (
        v["prefs"]["items"][0]["kind"] == "implicit_preference"
        and "pnpm" in v["prefs"]["items"][0]["content"]
    )
    assert v["prefs_all"]["items"]
    assert v["corr_about"]["items"][0]["kind"] in ("correction", "model_correction")
    assert v["corr_recent"]["items"]
    assert [d["content"] for d in v["sd_active"]["items"]] == [
        "We moved from Celery to RQ; always use RQ for new jobs from now on"
    ]
    sup = v["sd_superseded"]["items"][0]
    assert "Celery" in sup["content"] and "RQ" in sup["superseded_by"]["content"]
    assert "RQ" in v["decision"]["answer"]
    assert (
        v["ban_yes"]["verdict"] in ("banned", "possibly_banned")
        and "tenacity" in v["ban_yes"]["matches"][0]["content"]
    )
    assert v["ban_sleep"]["verdict"] == "banned"
    assert v["ban_no"]["verdict"] == "no_known_ban" and v["ban_no"]["matches"] == []
    assert len(v["failed_list"]["items"]) >= 2
    assert "login test" in v["goal"]["goal"]["content"] and v["goal"]["goal"]["status"] == "active"
    # (The confidence model also reads "We moved from Celery to RQ ..." as a goal of its session.)
    assert len(v["goal"]["open"]) >= 2 and len(v["goals"]["items"]) >= 2
    assert v["truth_cat"]["items"][0]["category"] == "certainty_claim"
    assert v["truth_topic"]["items"][0]["category"] == "verification_claim"
    names = {n["project"] for n in v["graph"]["nodes"]}
    assert {"acme-api", "acme-web"} <= names and v["graph"]["focus"] == "acme-api"
    refs = [e for e in v["graph_web"]["edges"] if e["kind"] == "references_files"]
    assert refs == [
        {
            "from": "acme-web",
            "to": "acme-api",
            "kind": "references_files",
            "count": 1,
            "from_last_sessions": 12,
        }
    ]
    assert v["machines"]["machines"]
    term = v["term"]
    assert term["entry"]["uses"] == 2 and "payment worker" in term["entry"]["definition"] and term["uses"]
    assert any("pnpm" in p["preference"] for p in v["prefs_implicit"]["items"])
    assert v["context"]["text"] and len(v["context"]["text"]) <= 1200
    assert {"score", "state"} <= set(v["escalation"])
    assert v["get_operator_profile"]["profile"]["sessions"] == 5
    assert v["get_voice_profile"]["profile"]["prompts"] > 10
    assert v["get_workflow_profile"]["profile"]["tool_calls"] > 5
    assert v["get_satisfaction_profile"]["profile"]["corrections"] >= 2


def test_scope_widening_and_limits(live: dict[str, Any]) -> None:
    v = {k: b for k, (_, b, _) in live["valid"].items()}
    w = v["recall_widen"]
    assert w["items"] and w["items"][0]["project"] == "acme-web"
    assert w["_meta"]["scope_used"] == "global" and "widened" in w["_meta"]["note"]
    assert v["recall_clamp"]["_meta"]["limit_clamped"] == {"asked": 500, "used": 50}


def test_session_digest_is_filled(live: dict[str, Any]) -> None:
    d = live["valid"]["digest"][1]
    assert "retry logic" in d["request"]["text"]
    assert d["corrections"] and "tenacity" in d["corrections"][0]["text"]
    assert {f["path"] for f in d["files_edited"]} == {"src/util/retry.py"}
    assert {f["path"] for f in d["files_read"]} == {"src/webhooks/payments.py"}
    assert d["completed"] and "time.sleep" in d["last_prompt"]["text"]
    assert any("jitter" in n["text"] for n in d["next_steps"])
    assert d["rules"] and d["observations"]
    assert {o["type"] for o in d["observations"]} <= {
        "decision",
        "bugfix",
        "feature",
        "refactor",
        "discovery",
    }
    debug = live["valid"]["digest_debug"][1]  # its first prompt carries a pasted CI log: clipped, and said so
    assert debug["_meta"]["truncated"]["fields_clipped"]["request.text"] == 1
    assert len(debug["request"]["text"]) <= 400
    assert any(o["type"] == "discovery" for o in debug["observations"])


def test_progressive_disclosure(live: dict[str, Any]) -> None:
    hits = live["valid"]["search"][1]["hits"]
    assert hits and all(h["tokens"] > 0 and h["uuid"] and h["date"] for h in hits)
    assert live["valid"]["search"][1]["_meta"]["tokens_if_all_read"] >= sum(h["tokens"] for h in hits)
    assert "[Redis]" in live["valid"]["search_snip"][1]["hits"][0]["snippet"]
    err, tl, _ = live["timeline"]
    assert (
        not err and sum(1 for m in tl["messages"] if m.get("anchor")) == 1 and 3 <= len(tl["messages"]) <= 5
    )
    before = next(i for i, m in enumerate(tl["messages"]) if m.get("anchor"))
    assert len(tl["messages"]) - before - 1 == 2 and tl["more_before"] == (before == 2)
    err, full, text = live["full"]
    assert not err and full["not_found"] == ["missing"] and len(full["records"]) == 2
    huge = full["records"][1]
    assert huge["text_truncated"] and len(huge["text"]) <= 6000 and huge["tokens"] > 10_000
    assert len(text) <= 24_000


def test_recall_targeted_all_intents(live: dict[str, Any]) -> None:
    for intent in INTENTS:
        r = live["valid"][f"targeted_{intent}"][1]
        assert r["intent"] == intent and r["finding"], intent
        assert 0 < r["confidence"] <= 1 and r["confidence_label"] in ("high", "medium", "low")
        assert r["quotes"] and all(q["session_id"] and q["date"] for q in r["quotes"])
        assert {"use", "avoid", "verify"} <= set(r)
    assert "Redis" in live["valid"]["targeted_how_did_we_fix"][1]["finding"]
    assert live["valid"]["targeted_what_is_the_rule"][1]["avoid"]
    assert "superseded" in " ".join(live["valid"]["targeted_what_was_decided"][1]["avoid"])


def test_invalid_arguments_use_one_error_shape(live: dict[str, Any]) -> None:
    expected = {k: code for k, _, _, code in INVALID}
    for key, (err, body, _) in live["invalid"].items():
        assert err, key
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "fix"}, (key, body)
        assert body["error"]["code"] == expected[key], (key, body)
        assert body["error"]["message"] and body["error"]["fix"]


def test_resource_session_digest(live: dict[str, Any]) -> None:
    md = live["resource"]
    assert md.startswith("# Add retry logic") and "historical data" in md
    assert "## Corrections" in md and "src/util/retry.py" in md
    assert live["resource_missing"] and "no-such-session" in live["resource_missing"]


def test_index_missing_is_one_error(tmp_path: Path) -> None:
    async def body(s: ClientSession) -> Any:
        names = {t.name for t in (await s.list_tools()).tools}
        return (
            names,
            parse(await s.call_tool("recall", {"topic": "x"})),
            parse(await s.call_tool("get_voice_profile", {})),
        )

    names, recall, voice = drive(tmp_path / "absent" / "index.db", tmp_path, body)
    assert names == TOOLS
    for err, b, _ in (recall, voice):
        assert err and b["error"]["code"] == "index_missing" and "total-recall index" in b["error"]["fix"]


def test_answer_caps_fields_and_total() -> None:
    from mcp_server.envelope import Runtime

    rt = Runtime("/nonexistent/index.db", "/tmp", Settings.from_env({}))
    res = rt.answer(
        {"items": [{"content": "x" * 2000, "date": "2026-01-01"} for _ in range(100)]},
        {"scope_used": "global"},
    )
    _, body, text = parse(res)
    assert len(text) <= 12_000
    cut = body["_meta"]["truncated"]
    assert cut["fields_clipped"]["items.content"] == 100 and cut["items_dropped"]["items"] > 50
    assert all(len(i["content"]) <= 600 for i in body["items"])


def test_identifier_topics_recall(fx: dict[str, Any]) -> None:
    from mcp_server.server import build_server

    server, rt = build_server(fx["db"], str(fx["cwds"]["api"]))
    try:
        res = asyncio.run(server.call_tool("recall", {"topic": "retry_with_backoff parseConfig"}))
    finally:
        rt.close()
    err, body, _ = parse(res)
    assert not err, body
    assert body["items"]


# --- huge arguments (issue 10 #16, #17): fast answers, bounded errors ----------------------------------------
HUGE = 200_000
FAST_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("recall", {"topic": "A" * HUGE}),
    ("recall", {"topic": "parseConfig " * (HUGE // 12)}),
    ("search_messages", {"query": "aB" * (HUGE // 2)}),
    ("search_messages", {"query": "a-" * (HUGE // 2), "mode": "snippets"}),
    ("recall_targeted", {"intent": "what_failed", "topic": "X" * HUGE}),
    ("find_failed_attempts", {"topic": "word " * (HUGE // 5)}),
    ("prior_sessions_for_cwd", {"topic": "Redis " * (HUGE // 6), "scope": "global"}),
    ("check_banned", {"action": "A" * HUGE}),
    ("define_term", {"term": "T" * HUGE}),
    ("get_decision_for_topic", {"topic": "\n" * HUGE}),
    ("assess_escalation_risk", {"prompt": "no " * (HUGE // 3), "draft": "a " * (HUGE // 2)}),
]
ERROR_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("recall", {"topic": "x", "since": "y" * HUGE}, "invalid_argument"),
    ("recall", {"topic": "x", "since": "9" * HUGE + "d"}, "invalid_argument"),
    ("recall", {"topic": "x", "since": "99999999999d"}, "invalid_argument"),
    ("recall", {"kind": "k" * HUGE}, "invalid_argument"),
    ("recall", {"topic": "x", "scope": "s" * HUGE}, "invalid_argument"),
    ("recall", {"topic": "x", "p" * HUGE: 1}, "invalid_argument"),
    ("search_messages", {"query": "x", "kind": "k" * HUGE}, "invalid_argument"),
    ("search_messages", {"mode": "timeline", "uuid": "u" * HUGE}, "not_found"),
    ("get_session_digest", {"session_id": "s" * HUGE}, "not_found"),
    ("n" * HUGE, {}, "unknown_tool"),
]


def test_huge_arguments_answer_fast_and_errors_stay_bounded(fx: dict[str, Any]) -> None:
    import time

    from index.retrieval.budget import ERROR_CHARS
    from mcp_server.server import build_server

    server, rt = build_server(fx["db"], str(fx["cwds"]["api"]))
    slow, unbounded = [], []
    try:
        for name, args in FAST_CALLS:
            start = time.perf_counter()
            err, body, text = parse(asyncio.run(server.call_tool(name, args)))
            took = time.perf_counter() - start
            if took > 2.0 or len(text) > 12_000:
                slow.append((name, round(took, 2), len(text)))
            assert not err or body["error"]["code"] == "invalid_argument", (name, body)
        for name, args, code in ERROR_CALLS:
            err, body, text = parse(asyncio.run(server.call_tool(name, args)))
            assert err and set(body["error"]) == {"code", "message", "fix"}, name
            assert body["error"]["code"] == code, (
                name[:20],
                body["error"]["code"],
                body["error"]["message"][:200],
            )
            if len(body["error"]["message"]) > ERROR_CHARS or len(body["error"]["fix"]) > ERROR_CHARS:
                unbounded.append((name, len(text)))
        try:
            asyncio.run(server.read_resource("session-digest://" + "s" * HUGE))
            missing = ""
        except Exception as exc:  # the SDK raises on an unknown resource
            missing = str(exc)
    finally:
        rt.close()
    assert slow == [] and unbounded == [], (slow, unbounded)
    assert missing and len(missing) <= 2 * ERROR_CHARS + 100  # the message and the uri, both clipped


def test_permission_problems_are_not_called_corruption(tmp_path: Path) -> None:
    from index.store.db import IndexUnavailable
    from lib import sqlite
    from mcp_server.envelope import Runtime, guarded

    rt = Runtime(tmp_path / "index.db", str(tmp_path), Settings.from_env({}))
    failures: list[Exception] = [
        IndexUnavailable(f"folder {tmp_path} is read-only", "make it writable"),
        sqlite.OperationalError("attempt to write a readonly database"),
        sqlite.OperationalError("database is locked"),
        sqlite.OperationalError("LIKE or GLOB pattern too complex"),
        sqlite.DatabaseError("database disk image is malformed"),
    ]
    answers = []
    for exc in failures:

        def body(rt: Runtime, exc: Exception = exc) -> Any:
            raise exc

        answers.append(parse(guarded(body)(rt))[1]["error"])
    assert [a["code"] for a in answers] == [
        "index_unavailable",
        "index_error",
        "index_error",
        "index_error",
        "index_corrupt",
    ]
    assert all("rebuild" not in a["fix"] for a in answers[:4]) and "rebuild" in answers[4]["fix"]
    assert answers[3]["fix"] == "pass a shorter value"
