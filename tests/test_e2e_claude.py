"""End to end through the real Claude Code CLI (H1–H5, H8): `claude -p --plugin-dir <repo>` against a fake
Messages API on 127.0.0.1 (stdlib http.server, SSE). Asserts that the SessionStart and UserPromptSubmit
context reach the request the model receives, that the Stop hook leaves the session indexed, that
/compact saves and restores the continuation packet, and that `total-recall install` works.

Isolated: HOME and CLAUDE_CONFIG_DIR in a temp dir, no traffic but loopback, bounded in time.
Skipped with a reason when the CLI is absent (install it with scripts/node-tools.sh)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fixtures.make import Session, slug, uid

from hooks.pre_compact import PRECOMPACT_LEAD
from hooks.spawn import lock_held
from index.briefing.bundle import HEADER
from index.store.db import open_reader
from index.store.ingest import run_index

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = Path(os.environ.get("TOTAL_RECALL_CLAUDE_BIN", ROOT / ".tools" / "node_modules" / ".bin" / "claude"))
RUN_TIMEOUT = 120
REPLY = "FAKE-REPLY"
NOW = datetime.now(timezone.utc)


def write_past_session(root: Path, cwd: str, t0: datetime | None = None) -> tuple[str, Path]:
    """A past session with a correction, a standing decision, two bans, a goal and a failed test run."""
    sid = uid("past-zorblax", cwd)
    s = Session(sid, cwd=cwd, version="2.1.39", t0=t0 or NOW - timedelta(days=2))
    s.prompt("let's make the config loader parse the settings file for the zorblax service")
    s.response(text="I'll parse the config with a regex over each line.")
    s.prompt("no, that's wrong. don't use regex for parsing config, use the tomllib parser instead")
    s.response(text="You're right, switching to tomllib.")
    s.prompt("from now on we always use tomllib for config parsing in this repo; never regex")
    s.response(text="Understood, tomllib for all config parsing.")
    s.prompt("never commit without running the zorblax integration tests first")
    s.response(text="Noted: integration tests before every commit.")
    s.prompt("goal: ship the zorblax config loader with full validation by friday")
    t = s.response(
        text="Let me run the tests.", tools=[("Bash", {"command": "pytest tests/test_loader.py"})]
    )[-1]
    s.tool_result(t, "1 failed", is_error=True)
    e = s.response(
        text="Fixing the loader.",
        tools=[("Edit", {"file_path": f"{cwd}/zorblax/loader.py", "old_string": "a", "new_string": "b"})],
    )[-1]
    s.tool_result(e, "ok")
    todo = s.response(
        tools=[
            (
                "TodoWrite",
                {
                    "todos": [
                        {"content": "Validate required keys", "status": "completed"},
                        {"content": "Add schema errors with line numbers", "status": "in_progress"},
                        {"content": "Document the loader", "status": "pending"},
                    ]
                },
            )
        ]
    )[-1]
    s.tool_result(todo, "Todos have been modified successfully")
    path = s.write(root / slug(cwd) / f"{sid}.jsonl")
    return sid, path


def wait_idle(state: Path, timeout: float = 30) -> None:
    """Let detached index runs finish (idle for 0.5 s: no lock held, nothing pending)."""
    end = time.time() + timeout
    idle_since = None
    while time.time() < end:
        busy = lock_held(state) or (state / "index.pending").exists() if state.is_dir() else False
        if busy:
            idle_since = None
        elif idle_since is None:
            idle_since = time.time()
        elif time.time() - idle_since > 0.5:
            return
        time.sleep(0.05)


def wait_for_session(db: Path, sid: str, timeout: float = 30) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        try:
            conn = open_reader(db)
            if conn.execute("SELECT 1 FROM sessions WHERE session_id=?", (sid,)).fetchone():
                return True
        except Exception:
            pass
        time.sleep(0.1)
    return False


class FakeAPI:
    """A loopback Messages API: records every request body, answers with one text block (as SSE when
    asked to stream); compaction requests get a <summary> block."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    req = json.loads(body)
                except ValueError:
                    req = {}
                api.requests.append({"path": self.path, "body": req})
                if "count_tokens" in self.path:
                    return self._json({"input_tokens": 100})
                text = (
                    "<summary>fake summary of the session</summary>"
                    if "<summary>" in body.decode("utf-8", "replace")
                    else REPLY
                )
                msg = {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": req.get("model", "m"),
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                }
                if not req.get("stream"):
                    return self._json(
                        {**msg, "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
                    )
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for name, data in (
                    ("message_start", {"type": "message_start", "message": {**msg, "content": []}}),
                    (
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": 0,
                            "content_block": {"type": "text", "text": ""},
                        },
                    ),
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": 0,
                            "delta": {"type": "text_delta", "text": text},
                        },
                    ),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                            "usage": {"output_tokens": 5},
                        },
                    ),
                    ("message_stop", {"type": "message_stop"}),
                ):
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            def do_GET(self) -> None:
                self._json({"type": "error", "error": {"type": "not_found_error", "message": "fake"}}, 404)

            def _json(self, data: dict[str, Any], code: int = 200) -> None:
                raw = json.dumps(data).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def texts(self) -> list[str]:
        """Every text the model was sent (system prompt and messages), one string per request."""
        out = []
        for r in self.requests:
            out.append(json.dumps(r["body"].get("messages", [])) + json.dumps(r["body"].get("system", "")))
        return out


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    fake = FakeAPI()
    fake.thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    if not (CLAUDE.exists() and os.access(CLAUDE, os.X_OK)):
        pytest.skip(f"Claude Code CLI not found at {CLAUDE} (run scripts/node-tools.sh)")
    home = tmp_path / "home"
    config = home / ".claude"
    proj = (tmp_path / "zorblax").resolve()
    proj.mkdir(parents=True)
    projects = config / "projects"
    sid, transcript = write_past_session(projects, str(proj))
    trhome = tmp_path / "tr"
    db = trhome / "index.db"
    run_index(db, [projects])
    bindir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "TOTAL_RECALL_"))}
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(config),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        ANTHROPIC_API_KEY="sk-ant-dummy",
        TOTAL_RECALL_HOME=str(trhome),
        PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}",
    )
    return {
        "env": env,
        "env_config": config,
        "proj": proj,
        "db": db,
        "state": trhome,
        "past_sid": sid,
        "projects": projects,
    }


def claude(world: dict[str, Any], api: FakeAPI, *args: str, plugin_dir: bool | Path = True) -> dict[str, Any]:
    env = {**world["env"], "ANTHROPIC_BASE_URL": api.url}
    where = ROOT if plugin_dir is True else plugin_dir
    cmd = [str(CLAUDE), "-p", *args, "--output-format", "json"] + (
        ["--plugin-dir", str(where)] if where else []
    )
    p = subprocess.run(
        cmd,
        cwd=world["proj"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    out: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    assert out.get("result") == REPLY or out.get("subtype") == "success", out
    return out


def hook_events(world: dict[str, Any], hook: str) -> list[dict[str, Any]]:
    path = world["state"] / "events.jsonl"
    if not path.exists():
        return []
    return [e for e in map(json.loads, path.read_text().splitlines()) if e.get("hook") == hook]


@pytest.mark.e2e
def test_context_reaches_the_model_and_stop_indexes(world: dict[str, Any], api: FakeAPI) -> None:
    out = claude(world, api, "what did we decide last time about config parsing?")
    sent = "\n".join(api.texts())
    assert "SessionStart hook additional context" in sent and HEADER in sent
    assert sent.count('<total-recall-memory id=\\"') >= 2  # the bundle and the per-prompt recall, fenced
    assert "UserPromptSubmit hook additional context" in sent
    assert "tomllib" in sent and "zorblax integration tests" in sent  # decision and ban from the past session
    prompt_ev = hook_events(world, "user-prompt-submit")
    assert prompt_ev and prompt_ev[-1]["policy"]["fire"] and prompt_ev[-1]["ok"]
    assert hook_events(world, "stop"), "Stop hook did not run"
    assert wait_for_session(world["db"], out["session_id"]), "the Stop hook's background index did not run"
    wait_idle(world["state"])


@pytest.mark.e2e
def test_compaction_saves_and_restores_the_packet(world: dict[str, Any], api: FakeAPI) -> None:
    out = claude(world, api, "let's keep working on the zorblax config loader validation")
    sid = out["session_id"]
    wait_idle(world["state"])
    api.requests.clear()
    claude(world, api, "/compact keep the decisions", "--resume", sid)
    assert hook_events(world, "pre-compact") and hook_events(world, "pre-compact")[-1]["ok"]
    saved = world["state"] / "continuations" / f"{sid}.json"
    assert saved.exists() and "zorblax config loader" in saved.read_text()
    starts = [e for e in hook_events(world, "session-start") if e.get("source") == "compact"]
    assert starts and starts[-1]["packet_chars"] > 0
    # PreCompact's text reached the summariser; the restored packet is in the session as hook context.
    assert any(PRECOMPACT_LEAD in t and '<total-recall-memory id=\\"' in t for t in api.texts())
    transcript = next(world["env_config"].glob(f"projects/*/{sid}.jsonl"))
    assert "before compaction" in transcript.read_text()
    wait_idle(world["state"])


@pytest.mark.e2e
def test_install_registers_the_plugin_and_hooks_run(world: dict[str, Any], api: FakeAPI) -> None:
    env = {**world["env"], "ANTHROPIC_BASE_URL": api.url}
    tr = [
        sys.executable,
        "-c",
        "import sys; from total_recall import cmd_install; from total_recall.cli import cli; "
        "cmd_install.register(cli); cli.main(args=sys.argv[1:], prog_name='total-recall')",
    ]
    p = subprocess.run(
        [*tr, "--db", str(world["db"]), "install", "--claude", str(CLAUDE), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["method"] == "claude-cli" and res["path_check"]["ok"]
    listed = subprocess.run(
        [str(CLAUDE), "plugin", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert any(x["id"] == "total-recall@total-recall" and x["enabled"] for x in json.loads(listed.stdout))
    settings = json.loads((Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json").read_text())
    assert settings["env"]["TOTAL_RECALL_DB"] == str(world["db"].resolve())
    # The installed plugin's hooks run and use the shared index (no --plugin-dir, no TOTAL_RECALL_HOME).
    run_env = {k: v for k, v in world["env"].items() if k != "TOTAL_RECALL_HOME"}
    before = len(hook_events(world, "session-start"))
    claude(
        {**world, "env": run_env}, api, "what did we decide last time about config parsing?", plugin_dir=False
    )
    assert len(hook_events(world, "session-start")) > before
    assert "tomllib" in "\n".join(api.texts())
    p = subprocess.run(
        [*tr, "--db", str(world["db"]), "uninstall", "--claude", str(CLAUDE), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert p.returncode == 0, p.stderr
    listed = subprocess.run(
        [str(CLAUDE), "plugin", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    # newer Claude Code lists its own built-in plugins (`…@builtin`) too: ours must be gone
    assert not [p for p in json.loads(listed.stdout) if "total-recall" in str(p.get("id"))]
    wait_idle(world["state"])


@pytest.mark.e2e
def test_without_the_cli_on_path_hooks_exit_0_and_say_how_to_install_once(
    world: dict[str, Any], api: FakeAPI, tmp_path: Path
) -> None:
    """A marketplace install (a plugin copy without .venv) on a machine where the CLI is not installed."""
    from total_recall.cmd_install import stage

    plugin = stage(ROOT, tmp_path / "staged")
    bare = {**world, "env": {**world["env"], "PATH": "/usr/bin:/bin"}}
    for _ in range(2):
        claude(bare, api, "what did we decide last time about config parsing?", plugin_dir=plugin)
    lines = [
        json.loads(x)
        for f in world["env_config"].glob("projects/*/*.jsonl")
        for x in f.read_text().splitlines()
    ]
    attachments = [x["attachment"] for x in lines if x.get("type") == "attachment"]
    kinds = {a.get("type") for a in attachments}
    assert "hook_non_blocking_error" not in kinds, [a for a in attachments if "error" in a.get("type", "")]
    told = [
        a for a in attachments if a.get("type") == "hook_system_message" and "pipx install" in json.dumps(a)
    ]
    assert len(told) == 1 and str(plugin) in json.dumps(
        told[0]
    )  # shown to the user once, across two sessions
    assert not any(HEADER in t for t in api.texts())  # nothing injected, nothing broken
    assert not hook_events(world, "session-start")


@pytest.mark.e2e
def test_plugin_validates_strict(world: dict[str, Any]) -> None:
    p = subprocess.run(
        [str(CLAUDE), "plugin", "validate", "--strict", str(ROOT)],
        env=world["env"],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-1000:]
    assert shutil.which("total-recall", path=world["env"]["PATH"])


def test_install_without_claude_cli_edits_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from click.testing import CliRunner

    from total_recall import cmd_install
    from total_recall.cli import cli

    cmd_install.register(cli)
    which = shutil.which
    monkeypatch.setattr(
        cmd_install.shutil, "which", lambda n, *a, **k: None if n == "claude" else which(n, *a, **k)
    )
    db = tmp_path / "idx" / "index.db"
    settings = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"theme": "dark", "env": {"KEEP": "1"}}))
    r = CliRunner().invoke(cli, ["--db", str(db), "install", "--json"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.output)
    staged = Path(res["staged"])
    assert (staged / ".claude-plugin" / "plugin.json").is_file() and (
        staged / "hooks" / "hooks.json"
    ).is_file()
    assert not (staged / ".venv").exists() and not (staged / "index").exists()
    s = json.loads(settings.read_text())
    assert s["theme"] == "dark" and s["env"] == {"KEEP": "1", "TOTAL_RECALL_DB": str(db.resolve())}
    assert s["enabledPlugins"]["total-recall@total-recall"] is True
    assert s["extraKnownMarketplaces"]["total-recall"]["source"] == {
        "source": "directory",
        "path": str(staged),
    }
    r = CliRunner().invoke(cli, ["--db", str(db), "uninstall", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(settings.read_text()) == {"theme": "dark", "env": {"KEEP": "1"}}
    assert not staged.exists()
