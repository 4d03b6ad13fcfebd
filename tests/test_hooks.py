"""Hooks, bundle, policy, escalation and continuation (H2–H7, D1–D2), with every hook's failure modes
run as real processes: exit 0, nothing or valid JSON on stdout, nothing on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from test_e2e_claude import wait_for_session, wait_idle, write_past_session
from test_injection import fenced_body

from detector import escalation as esc
from detector import policy as pol
from hooks.events import log_event
from index.briefing.bundle import HEADER, operator_context
from index.briefing.continuation import Row, build, parse_todos
from index.briefing.escalation import assess
from index.retrieval.budget import Section, fit_sections
from index.store.db import open_reader
from index.store.ingest import run_index
from index.store.operator import decayed_status
from lib.events import read_events

HOOKS = ("session-start", "user-prompt-submit", "stop", "pre-compact", "post-compact")
NOW = datetime.now(timezone.utc)


@dataclass
class Past:
    root: Path  # projects root
    db: Path
    cwd: str
    sid: str
    transcript: Path


def make_past(tmp_path: Path) -> Past:
    """A past session, indexed."""
    cwd = str(tmp_path / "work" / "zorblax")
    root = tmp_path / "projects"
    sid, path = write_past_session(root, cwd)
    db = tmp_path / "data" / "index.db"
    run_index(db, [root])
    return Past(root, db, cwd, sid, path)


@pytest.fixture
def past(tmp_path: Path) -> Past:
    return make_past(tmp_path)


def hook(
    event: str, payload: object, db: Path, projects: Path, raw: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOTAL_RECALL_DB": str(db), "TOTAL_RECALL_PROJECTS": str(projects)}
    data = raw if raw is not None else json.dumps(payload).encode()
    p = subprocess.run(
        [sys.executable, "-m", "total_recall", "hook", event],
        input=data.decode("utf-8", "replace"),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert p.returncode == 0
    assert p.stderr == "", p.stderr
    assert "Traceback" not in p.stdout
    return p


def context_of(p: subprocess.CompletedProcess[str], event: str) -> str:
    out = json.loads(p.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == event
    text: str = out["hookSpecificOutput"]["additionalContext"]
    return text


# ---- the bundle -------------------------------------------------------------------------------------


def test_bundle_sections_framing_and_budget(past: Past, monkeypatch: pytest.MonkeyPatch) -> None:
    # Sections and framing, whatever the confidence cut (tests/test_extract_families.py covers the cut).
    monkeypatch.setattr("index.briefing.gate.bundle_threshold", lambda kind: 0.0)
    conn = open_reader(past.db)
    oc = operator_context(conn, past.cwd, now=NOW)
    assert fenced_body(oc.text)[0] == HEADER
    assert len(oc.text) <= 1800 and not oc.text.lstrip().startswith("{")
    assert "tomllib" in oc.text and "zorblax integration tests" in oc.text
    assert "ship the zorblax config loader" in oc.text  # the active goal of this project
    doc = oc.to_json()
    goal = doc["sections"]["goal"][0]
    assert goal["session_id"] == past.sid and goal["date"] and goal["project"] == "zorblax"
    assert {"identity", "decisions", "bans", "corrections", "voice", "sessions"} <= set(doc["sections"])


def test_bundle_eviction_keeps_rules_over_profile(past: Past) -> None:
    conn = open_reader(past.db)
    small = operator_context(conn, past.cwd, budget=420, now=NOW)
    assert len(small.text) <= 420
    assert "zorblax integration tests" in small.text or "tomllib" in small.text
    assert "Operator's voice" not in small.text and "Machines" not in small.text
    assert small.dropped


def test_goal_decay() -> None:
    assert decayed_status("active", (NOW - timedelta(days=3)).isoformat(), NOW) == "active"
    assert decayed_status("active", (NOW - timedelta(days=20)).isoformat(), NOW) == "paused"
    assert decayed_status("paused", (NOW - timedelta(days=90)).isoformat(), NOW) == "abandoned"
    assert decayed_status("done", (NOW - timedelta(days=900)).isoformat(), NOW) == "done"


def test_old_goal_is_not_presented_as_active(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "index.briefing.gate.bundle_threshold", lambda kind: 0.0
    )  # decay, not the confidence cut
    root, cwd = tmp_path / "p", str(tmp_path / "old")
    write_past_session(root, cwd, t0=NOW - timedelta(days=30))
    run_index(tmp_path / "i.db", [root])
    oc = operator_context(open_reader(tmp_path / "i.db"), cwd, now=NOW)
    assert "(paused) goal: ship the zorblax" in oc.text


def test_fit_sections_evicts_highest_priority_number_first() -> None:
    secs = [Section("A", ["a1", "a2"], 1), Section("B", ["b1", "b2", "b3"], 5)]
    f = fit_sections(secs, 30, header="H")
    assert "a1" in f.text and "a2" in f.text and f.dropped.get("B")


# ---- the policy ---------------------------------------------------------------------------------------


def test_policy_triggers() -> None:
    st = pol.PolicyState(
        prompts=5,
        last_injection_prompt=0,
        recent_terms=[["parser", "config", "tomllib"]],
        last_prompt_at=1000.0,
    )
    assert (
        pol.decide("what did we decide last time about the parser?", st, now=1010).reason
        == "hard:past_reference"
    )
    assert (
        pol.decide("no, that's wrong, use the other parser config", st, now=1010).reason == "hard:correction"
    )
    d = pol.decide("why does parse_config crash", st, now=1010, ident_hits=1)
    assert d.fire and "identifier" in d.triggers and d.identifiers == ["parse_config"]
    assert not pol.decide("why does parse_config crash", st, now=1010, ident_hits=0).fire
    shift = pol.decide("set up grafana dashboards for kubernetes ingress metrics", st, now=1010)
    assert shift.fire and shift.reason == "soft:topic_shift"
    gap = pol.decide("tomllib parser config loader", st, now=1000 + 3 * 3600)
    assert gap.fire and "long_gap" in gap.triggers
    first = pol.decide("set up the loader for zorblax", pol.PolicyState(), now=0)
    assert first.fire and first.reason == "soft:first_prompt"


def test_policy_suppressors_and_cap() -> None:
    st = pol.PolicyState(prompts=3)
    for p in ("ok", "yes!", "continue", "  ", "thanks"):
        assert pol.decide(p, st, now=0).suppressors == ["trivial"]
    assert pol.decide("/recall parser", st, now=0).reason == "slash_command"
    capped = pol.PolicyState(prompts=30, injections=pol.MAX_INJECTIONS)
    assert pol.decide("what did we decide last time?", capped, now=0).reason == "cap"
    cool = pol.PolicyState(prompts=3, last_injection_prompt=2, recent_terms=[["alpha", "beta"]])
    assert pol.decide("set up grafana dashboards for kubernetes ingress", cool, now=0).reason == "cooldown"
    st.injected = ["x1"]
    kept, why = pol.filter_items(
        [
            ("x1", "old item about tomllib"),
            ("x2", "use tomllib for config parsing always"),
            ("x3", "something new entirely"),
        ],
        "we use tomllib for config parsing always",
        st,
    )
    assert [k for k, _ in kept] == ["x3"] and why == ["already_injected", "prompt_contains_answer"]


def test_policy_outcome_rule() -> None:
    fired = {
        "fired": True,
        "reason": "hard:past_reference",
        "prompt": "how did we configure the zorblax loader",
    }
    assert pol.judge(fired, "great, now add tests for it")["useful"] is True
    assert pol.judge(fired, "no, that's wrong, the loader uses tomllib")["useful"] is False
    assert pol.judge(fired, "how did we configure the zorblax loader again")["useful"] is False
    skipped = {"fired": False, "reason": "no_trigger", "prompt": "fix it"}
    assert pol.judge(skipped, "you didn't fix it, still broken")["missed"] is True
    assert pol.judge(None, "x") is None
    st = pol.PolicyState()
    pol.advance(st, "how did we configure it", pol.Decision(True, "hard:past_reference"), ["x1"], 5.0)
    assert st.injections == 1 and st.pending and st.pending["fired"] and st.injected == ["x1"]
    assert pol.PolicyState.from_json(json.loads(json.dumps(st.to_json())), "s").injected == ["x1"]
    assert pol.PolicyState.from_json("garbage", "s").prompts == 0


# ---- escalation -------------------------------------------------------------------------------------


def test_escalation_states_and_actions() -> None:
    calm = esc.assess("thanks, that works", esc.Signals())
    assert calm["state"] == "calm" and calm["action"] == "proceed"
    watch = esc.assess("no, use the other file", esc.Signals())
    assert watch["state"] == "watchful" and watch["action"] == "acknowledge_and_verify"
    hist = [esc.PastPrompt("that's wrong", True), esc.PastPrompt("still doesn't work", True)]
    strained = esc.assess("no, you broke the loader", esc.Signals(history=hist))
    assert strained["state"] in ("strained", "escalating") and strained["action"] == "slow_down_and_confirm"
    hot = esc.assess(
        "WTF, I TOLD YOU AGAIN!!! STOP CHANGING THE LOADER", esc.Signals(history=hist * 2, interrupts=2)
    )
    assert hot["state"] == "critical" and hot["action"] == "stop_and_ask" and hot["score"] <= 1


def test_escalation_draft_bans_and_typos() -> None:
    s = esc.Signals(
        bans=["commit without running the zorblax integration tests first", "regex", "mind"],
        typos=[("dont", "don't"), ("seperate", "separate")],
    )
    r = esc.assess(
        "dont forget to keep them seperate",
        s,
        draft="I'll commit without running the zorblax integration tests first, the change is small.",
    )
    assert r["banned_phrases"] == ["commit without running the zorblax integration tests first"]
    assert r["action"] == "slow_down_and_confirm"
    assert {t["typo"] for t in r["typos"]} == {"dont", "seperate"}
    assert esc.assess("ok", s, draft="never mind, done")["banned_phrases"] == []


def test_escalation_with_db(past: Past) -> None:
    conn = open_reader(past.db)
    r = assess(
        conn,
        prompt="no, that's wrong again",
        draft="I will commit without running the zorblax integration tests first",
        session_id=past.sid,
        cwd=past.cwd,
    )
    assert set(r) == {"score", "state", "action", "reasons", "banned_phrases", "typos"}
    assert r["banned_phrases"] and r["state"] != "calm"


# ---- continuation -----------------------------------------------------------------------------------


def test_continuation_packet_from_rows() -> None:
    rows = [
        Row("1", "user", "prompt", "2026-01-01T10:00:00Z", "fix the loader validation"),
        Row("2", "assistant", "tool_use", None, "Bash: pytest", "Bash", "pytest -q", "t1"),
        Row("3", "user", "tool_result", None, "1 failed", tool_use_id="t1", is_error=True),
        Row("4", "assistant", "tool_use", None, "Edit", "Edit", "/w/z/loader.py", "t2"),
        Row("5", "user", "tool_result", None, "ok", tool_use_id="t2"),
        Row(
            "6",
            "assistant",
            "tool_use",
            None,
            "TodoWrite: [completed] A; [in_progress] B step; [pending] C",
            "TodoWrite",
            None,
            "t3",
        ),
        Row("7", "user", "prompt", None, "ok"),
    ]
    p = build(rows, session_id="s", cwd="/w/z", goal="ship it")
    assert p.last_directive == "fix the loader validation" and p.files_in_flight == ["loader.py"]
    assert [a["result"] for a in p.last_actions] == ["failed", "ok"]
    assert p.open_plan == [
        {"status": "in_progress", "content": "B step"},
        {"status": "pending", "content": "C"},
    ]
    assert p.next_step == "B step"
    text = p.render(600)
    assert len(text) <= 600 and "«ship it»" in text and "«Bash» «pytest -q» → failed" in text
    assert fenced_body(text)[0].startswith("Where this session stood before compaction")
    assert parse_todos("TodoWrite: [pending] x; y; [completed] z") == [
        {"status": "pending", "content": "x; y"},
        {"status": "completed", "content": "z"},
    ]


# ---- events ---------------------------------------------------------------------------------------


def test_events_rotate_and_read(tmp_path: Path) -> None:
    for i in range(50):
        assert log_event(tmp_path, {"event": "hook", "hook": "stop", "i": i, "ok": True}, rotate_bytes=2000)
    assert (tmp_path / "events.jsonl.1").exists()
    got = [e["i"] for e in read_events(tmp_path)]
    assert got == sorted(got) and got[-1] == 49
    assert not log_event(tmp_path / "events.jsonl" / "x", {"event": "hook"})  # unwritable: False, no raise


def test_one_reader_for_the_event_log_counts_what_it_skips(tmp_path: Path) -> None:
    """`adaptive` and `metrics health` read events through the same function: rotated file first, a
    `since` cut on the timestamp, damaged lines (and JSON that is not an object) skipped and counted."""
    from index.stats.metrics_health import hook_stats

    (tmp_path / "events.jsonl.1").write_text('{"ts": "2026-01-01T00:00:00Z", "i": 0}\n{not json\n')
    (tmp_path / "events.jsonl").write_text('\n[1, 2]\n{"ts": "2026-03-01T00:00:00Z", "i": 1}\n')
    evs = read_events(tmp_path)
    assert [e["i"] for e in evs] == [0, 1] and evs.bad == 2
    assert [e["i"] for e in read_events(tmp_path, since="2026-02-01")] == [1]
    assert hook_stats(tmp_path)["bad_lines"] == 2  # metrics health counts through the same reader


# ---- hooks as processes -----------------------------------------------------------------------------


def test_session_start_and_prompt_hooks(past: Past) -> None:
    base = {"session_id": "live-1", "cwd": past.cwd, "transcript_path": str(past.transcript)}
    p = hook(
        "session-start", {**base, "hook_event_name": "SessionStart", "source": "fork"}, past.db, past.root
    )
    text = context_of(p, "SessionStart")
    assert fenced_body(text)[0] == HEADER and len(text) <= 1800 and "tomllib" in text
    ask = {
        **base,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "what did we decide last time about config parsing?",
    }
    p = hook("user-prompt-submit", ask, past.db, past.root)
    text = context_of(p, "UserPromptSubmit")
    assert fenced_body(text)[0] == HEADER and len(text) <= 1600 and "tomllib" in text
    assert hook("user-prompt-submit", {**ask, "prompt": "ok"}, past.db, past.root).stdout == ""
    first_lines = {ln for ln in text.splitlines() if ln.startswith("- ")}
    again = hook("user-prompt-submit", ask, past.db, past.root)  # the same items are not injected twice
    assert again.stdout == "" or not first_lines & set(context_of(again, "UserPromptSubmit").splitlines())
    events = [e for e in read_events(past.db.parent) if e.get("hook") == "user-prompt-submit"]
    assert events[0]["policy"]["fire"] and events[0]["policy"]["reason"] == "hard:past_reference"
    assert events[1]["outcome"]["fired"] and events[1]["outcome"]["useful"] is True
    assert all(e["ok"] and e["latency_ms"] > 0 for e in events)
    wait_idle(past.db.parent)


def test_adaptive_reports_precision(past: Past) -> None:
    from click.testing import CliRunner

    from total_recall import cmd_install
    from total_recall.cli import cli

    cmd_install.register(cli)
    base = {"session_id": "live-2", "cwd": past.cwd, "hook_event_name": "UserPromptSubmit"}
    for prompt in (
        "what did we decide last time about config parsing?",
        "great, add the tests",
        "remember the zorblax integration tests rule?",
        "no, that's wrong",
    ):
        hook("user-prompt-submit", {**base, "prompt": prompt}, past.db, past.root)
    r = CliRunner().invoke(cli, ["--db", str(past.db), "adaptive", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["prompts"] == 4 and rep["judged_injections"] >= 2
    assert 0 <= rep["precision"] < 1 and rep["hooks"]["user-prompt-submit"]["runs"] == 4


def test_precompact_persists_and_compact_start_restores(past: Past) -> None:
    base = {"session_id": past.sid, "cwd": past.cwd, "transcript_path": str(past.transcript)}
    p = hook(
        "pre-compact", {**base, "hook_event_name": "PreCompact", "trigger": "manual"}, past.db, past.root
    )
    assert not p.stdout.startswith("{") and "Add schema errors with line numbers" in p.stdout
    saved = json.loads((past.db.parent / "continuations" / f"{past.sid}.json").read_text())
    assert (
        saved["open_plan"][0]["status"] == "in_progress" and "zorblax/loader.py" in saved["files_in_flight"]
    )
    assert any(a["result"] == "failed" for a in saved["last_actions"])
    p = hook(
        "session-start", {**base, "hook_event_name": "SessionStart", "source": "compact"}, past.db, past.root
    )
    text = context_of(p, "SessionStart")
    assert "before compaction" in text and "Add schema errors" in text and HEADER in text


def test_precompact_without_index_reads_the_transcript(past: Past, tmp_path: Path) -> None:
    db = tmp_path / "none" / "index.db"
    p = hook(
        "pre-compact",
        {"session_id": past.sid, "transcript_path": str(past.transcript), "cwd": past.cwd},
        db,
        tmp_path / "empty",
    )
    assert "Add schema errors" in p.stdout


def test_first_run_banner_once_and_background_index(past: Past, tmp_path: Path) -> None:
    db = tmp_path / "fresh" / "index.db"
    payload = {"session_id": "n1", "cwd": past.cwd, "hook_event_name": "SessionStart", "source": "startup"}
    first = hook("session-start", payload, db, past.root)
    assert "total-recall" in json.loads(first.stdout)["systemMessage"]
    assert hook("session-start", payload, db, past.root).stdout == ""  # once only
    assert wait_for_session(db, past.sid)
    wait_idle(db.parent)


BAD_INPUTS = [
    b"",
    b"garbage{",
    b"[1, 2]",
    b"null",
    b'{"hook_event_name": "Nope"}',
    b"\xff\xfe\x00",
    b'{"session_id": 5, "prompt": ["x"], "cwd": {}, "transcript_path": 7, "source": null}',
]


@pytest.mark.parametrize("event", HOOKS)
def test_failure_modes_exit_0_and_print_nothing_bad(event: str, past: Past, tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt" / "index.db"
    corrupt.parent.mkdir()
    corrupt.write_bytes(b"this is not sqlite" * 100)
    missing = tmp_path / "missing" / "index.db"
    full = {
        "session_id": "f1",
        "cwd": past.cwd,
        "prompt": "what did we decide last time about config parsing?",
        "transcript_path": str(past.transcript),
        "source": "startup",
    }
    for db in (past.db, corrupt, missing):
        for raw in BAD_INPUTS:
            p = hook(event, None, db, tmp_path / "noroot", raw=raw)
            assert p.stdout == "" or json.loads(p.stdout)
        p = hook(event, {}, db, tmp_path / "noroot")  # every field missing
        assert p.stdout == "" or json.loads(p.stdout)
    p = hook(event, full, corrupt, tmp_path / "noroot")
    assert p.stdout == "" or not p.stdout.startswith("{") or "hookSpecificOutput" not in p.stdout
    errors = [e for e in read_events(corrupt.parent) if e.get("hook") == event]
    assert errors and all("latency_ms" in e for e in errors)
    assert hook("bogus-event", full, past.db, past.root).stdout == ""
    for d in (past.db.parent, corrupt.parent, missing.parent):
        wait_idle(d, timeout=10)


def test_overlapping_index_ticks_collapse(past: Past) -> None:
    import fcntl

    from hooks.spawn import spawn_index

    state = past.db.parent
    with open(state / "index.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert spawn_index(past.db, [past.root]) == "collapsed"
        assert (state / "index.pending").exists()
    # The worker that owns the lock sees the pending mark and runs one more pass, then clears it.
    subprocess.run(
        [sys.executable, "-m", "hooks.spawn", "--db", str(past.db), "--root", str(past.root)],
        timeout=60,
        check=True,
    )
    assert not (state / "index.pending").exists()
    runs = [e for e in read_events(state) if e.get("event") == "index"]
    assert runs and all(e["ok"] for e in runs)
    assert all(e["nice"] >= 10 for e in runs)  # background work yields the CPU to the hooks


def test_deadline_prints_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import io

    from hooks import handlers, runner
    from hooks.context import Ctx

    def slow(ctx: Ctx) -> str:
        time.sleep(5)
        return "never printed"

    monkeypatch.setitem(handlers.HANDLERS, "stop", (slow, "Stop"))
    monkeypatch.setitem(runner.DEADLINE, "stop", 0.1)
    monkeypatch.setenv("TOTAL_RECALL_DB", str(tmp_path / "index.db"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"session_id": "d"}')))
    t0 = time.perf_counter()
    assert runner.run_hook("stop") == 0
    assert time.perf_counter() - t0 < 3
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    ev = list(read_events(tmp_path))[-1]
    assert ev["ok"] is False and "deadline" in ev["error"]


def test_hot_path_imports_stay_lean(past: Past) -> None:
    """No click, rich, numpy or embedding model in a hook process, even when recall fires."""
    env = {**os.environ, "TOTAL_RECALL_DB": str(past.db), "TOTAL_RECALL_PROJECTS": str(past.root)}
    for event, payload in (
        ("session-start", {"session_id": "i1", "cwd": past.cwd, "source": "startup"}),
        (
            "user-prompt-submit",
            {
                "session_id": "i2",
                "cwd": past.cwd,
                "prompt": "what did we decide last time about config parsing?",
            },
        ),
    ):
        p = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "total_recall", "hook", event],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert p.stdout.startswith("{")
        loaded = {
            line.rsplit("|", 1)[-1].strip().split(".")[0] for line in p.stderr.splitlines() if "|" in line
        }
        assert not loaded & {"click", "rich", "numpy", "fastembed", "onnxruntime", "sqlite_vec", "mcp"}, (
            loaded
        )
    wait_idle(past.db.parent)


def _hooks_imports() -> dict[str, set[str]]:
    """hooks module -> the hooks modules it imports (at any depth in the file)."""
    import ast

    graph: dict[str, set[str]] = {}
    for path in (Path(__file__).resolve().parents[1] / "hooks").glob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] if node.module != "hooks" else [f"hooks.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            found |= {n.split(".")[1] for n in names if n.startswith("hooks.")}
        graph[path.stem] = found
    return graph


def test_hook_modules_form_no_import_cycle() -> None:
    """The shared context lives in its own module; event modules never import the dispatcher or each
    other, so no hooks module reaches itself through its imports."""
    graph = _hooks_imports()

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph.get(start, ()))
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo += graph.get(m, ())
        return seen

    assert not [m for m in graph if m in reach(m)]
    events = {"session_start", "user_prompt_submit", "pre_compact", "pre_tool_use", "reindex"}
    assert graph["handlers"] == events | {"context"}  # the dispatcher only routes to one module per event
    assert all("handlers" not in graph[m] for m in events)
