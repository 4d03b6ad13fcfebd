"""The hooks' team fetch under faults (issue 16): a server that is down, slow (2 s), failing (500) or
refusing the credential (401) costs at most the 300 ms bound; the hook exits 0, prints the bundle
with the cached team items, and logs why in events.jsonl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fixtures.make import Session, slug, uid

from hooks.team import TIMEOUT_S, fetch_bounded
from index.store import run_index
from lib.events import read_events
from lib.project_id import resolve_project_id
from lib.settings import Settings
from total_recall.team.config import TeamConfig, write_json
from total_recall.team.sync import cache_path
from total_recall.ui.server import free_port

CACHED = "cached decision: pin the zorblax schema version"


class Stub(BaseHTTPRequestHandler):
    mode = "ok"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.mode == "slow":
            time.sleep(2.0)
        status = {"ok": 200, "slow": 200, "500": 500, "401": 401}[self.mode]
        body = (
            b"[]"
            if status == 200
            else json.dumps({"error": {"status": status, "code": "x", "message": "no"}}).encode()
        )
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client gave up first

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stub() -> Iterator[tuple[str, type[Stub]]]:
    handler = type("S", (Stub,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()


def home(tmp_path: Path, url: str) -> tuple[Path, Path, str]:
    cwd = tmp_path / "repo"
    cwd.mkdir()
    subprocess.run(["git", "init", "-q", str(cwd)], check=True)
    subprocess.run(
        ["git", "-C", str(cwd), "remote", "add", "origin", "https://example.com/t/repo"], check=True
    )
    projects, db = tmp_path / "projects", tmp_path / "home" / "index.db"
    s = Session(uid("faults", str(cwd)), cwd=str(cwd))
    s.prompt("let's look at the schema")
    s.response(text="Sure.")
    s.write(projects / slug(str(cwd)) / f"{s.session_id}.jsonl")
    run_index(db, [projects])
    pid = resolve_project_id(str(cwd), {})
    assert pid is not None
    TeamConfig(db.parent, url, "trt_token", [pid.id]).save()
    write_json(cache_path(db.parent, pid.id), {"items": [{"id": 1, "title": CACHED, "created_by": "alice"}]})
    return cwd, db, pid.id


def session_start(cwd: Path, db: Path) -> tuple[str, dict[str, object]]:
    env = {**os.environ, "TOTAL_RECALL_DB": str(db), "TOTAL_RECALL_PROJECTS": str(db.parent / "none")}
    env.pop("CLAUDE_PROJECT_ID", None)
    p = subprocess.run(
        [sys.executable, "-m", "total_recall", "hook", "session-start"],
        input=json.dumps(
            {"hook_event_name": "SessionStart", "source": "resume", "cwd": str(cwd), "session_id": "x"}
        ),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert p.returncode == 0 and p.stderr == ""
    ev = [e for e in read_events(db.parent) if e.get("hook") == "session-start"][-1]
    return p.stdout, ev


@pytest.mark.parametrize("mode", ["down", "slow", "500", "401"])
def test_a_faulty_server_costs_at_most_the_bound_and_the_cache_is_used(
    tmp_path: Path, stub: tuple[str, type[Stub]], mode: str
) -> None:
    url, handler = stub
    if mode == "down":
        url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    handler.mode = mode
    cwd, db, pid = home(tmp_path, url)
    cfg = TeamConfig(db.parent, url, "trt_token", [pid])
    t0 = time.perf_counter()
    items, source = fetch_bounded(cfg, pid)
    took = time.perf_counter() - t0
    assert took < TIMEOUT_S + 0.15, f"{mode}: {took:.3f}s"
    assert source.startswith("cache") and [i["title"] for i in items] == [CACHED]
    out, ev = session_start(cwd, db)
    assert CACHED in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    team = ev["team"]
    assert isinstance(team, dict) and str(team["source"]).startswith("cache")
    assert ev["ok"] is True and float(ev["latency_ms"]) < 2000  # never waited for the slow answer
    if mode in ("500", "401"):
        assert mode in str(team["source"])


def test_a_healthy_server_refreshes_the_cache(tmp_path: Path, stub: tuple[str, type[Stub]]) -> None:
    url, handler = stub
    cwd, db, pid = home(tmp_path, url)
    items, source = fetch_bounded(TeamConfig(db.parent, url, "trt_token", [pid]), pid)
    assert (items, source) == ([], "server")
    out, ev = session_start(cwd, db)
    assert CACHED not in out and ev["team"] == {"project_id": pid, "source": "server", "items": 0}


def test_without_team_config_the_hook_runs_no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Team memory is off by default and then costs nothing: no `git config` call per session."""
    from hooks.context import Ctx
    from hooks.team import team_items

    calls: list[object] = []
    monkeypatch.setattr("lib.project_id._git_config", lambda cwd, env: calls.append(cwd) or {})
    ctx = Ctx("session-start", {}, tmp_path / "index.db", tmp_path, time.monotonic() + 3, Settings.from_env())
    assert team_items(ctx, str(tmp_path)) == [] and calls == [] and "team" not in ctx.rec
    TeamConfig(tmp_path, "http://127.0.0.1:9", "trt_x", ["some-other-project"]).save()
    assert team_items(ctx, str(tmp_path)) == [] and len(calls) == 1  # configured: the id is resolved


def test_user_prompt_submit_adds_matching_cached_team_items(tmp_path: Path) -> None:
    cwd, db, _ = home(tmp_path, f"http://127.0.0.1:{free_port()}")  # the server is never asked
    env = {**os.environ, "TOTAL_RECALL_DB": str(db), "TOTAL_RECALL_PROJECTS": str(db.parent / "none")}
    env.pop("CLAUDE_PROJECT_ID", None)

    def ask(prompt: str, sid: str) -> tuple[str, float]:
        t0 = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-m", "total_recall", "hook", "user-prompt-submit"],
            input=json.dumps(
                {"hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": str(cwd), "session_id": sid}
            ),
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert p.returncode == 0 and p.stderr == ""
        return p.stdout, time.perf_counter() - t0

    out, _ = ask("what did we decide last time about the zorblax schema version?", "s1")
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert CACHED in text and "team memory" in text and "alice" in text
    out, _ = ask("what did we decide last time about the deployment pipeline?", "s2")
    assert CACHED not in out
    ev = [e for e in read_events(db.parent) if e.get("hook") == "user-prompt-submit"]
    assert ev[0]["team"] == {"project_id": ev[0]["team"]["project_id"], "source": "cache", "items": 1}


def test_a_team_failure_never_costs_the_local_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hooks.context import Ctx
    from hooks.team import prompt_items, team_items

    def boom(*a: object) -> None:
        raise RuntimeError("damaged team file")

    monkeypatch.setattr("total_recall.team.config.load", boom)
    ctx = Ctx("session-start", {}, tmp_path / "index.db", tmp_path, time.monotonic() + 3, Settings.from_env())
    assert team_items(ctx, str(tmp_path)) == [] and "damaged team file" in ctx.rec["team_error"]
    assert prompt_items(ctx, str(tmp_path), "what about the schema") == []


def test_stop_starts_at_most_one_sync_a_minute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hooks.context import Ctx
    from hooks.team import spawn_sync

    started: list[list[str]] = []
    real = subprocess.Popen

    def popen(cmd: list[str], **kw: object) -> object:
        if "sync" not in cmd:
            return real(cmd, **kw)  # type: ignore[call-overload]  # e.g. `git config`
        started.append(cmd)
        return None

    monkeypatch.setattr("subprocess.Popen", popen)
    cwd = tmp_path / "repo"
    cwd.mkdir()
    pid = resolve_project_id(str(cwd), {})
    assert pid is not None
    ctx = Ctx("stop", {}, tmp_path / "index.db", tmp_path, time.monotonic() + 3, Settings.from_env())
    assert spawn_sync(ctx, str(cwd)) == "off" and started == []  # not opted in
    TeamConfig(tmp_path, "http://127.0.0.1:9", "trt_x", [pid.id]).save()
    assert [spawn_sync(ctx, str(cwd)) for _ in range(3)] == ["spawned", "recent", "recent"]
    assert len(started) == 1 and started[0][-4:] == ["team", "sync", "--cwd", str(cwd)]
