"""End to end through the real Claude Code CLI (issue 19): the fake model asks for a Bash tool call; the
plugin's PreToolUse hook denies a banned command in block mode, annotates it in warn mode, and leaves an
allowed one untouched; every decision and its latency is in events.jsonl.

Same harness as tests/test_e2e_claude.py (isolated HOME, loopback fake Messages API, bounded in time);
this fake API answers the first request of a turn with a `tool_use` block running the command named in
the prompt (`RUN: <command>`), and the request carrying the tool result with a text reply."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fixtures.make import Session, slug, uid
from test_e2e_claude import REPLY, claude, hook_events, wait_idle, world  # noqa: F401 - `world` is a fixture

from index.store.ingest import run_index

BANNED = "zorblax-deploy --force prod"
ALLOWED = "echo total-recall-allowed"
MARKER = "RUN: "


class ToolAPI:
    """A loopback Messages API whose model runs one Bash command per turn, then replies REPLY."""

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
                api.requests.append(req)
                if "count_tokens" in self.path:
                    return self._send(200, "application/json", json.dumps({"input_tokens": 100}).encode())
                blocks = api.answer(req)
                if not req.get("stream"):
                    msg = api.message(req, blocks)
                    return self._send(200, "application/json", json.dumps(msg).encode())
                out = [("message_start", {"type": "message_start", "message": api.message(req, [])})]
                for i, b in enumerate(blocks):
                    if b["type"] == "tool_use":
                        start = {**b, "input": {}}
                        delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
                    else:
                        start = {"type": "text", "text": ""}
                        delta = {"type": "text_delta", "text": b["text"]}
                    out += [
                        (
                            "content_block_start",
                            {"type": "content_block_start", "index": i, "content_block": start},
                        ),
                        ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
                        ("content_block_stop", {"type": "content_block_stop", "index": i}),
                    ]
                stop = "tool_use" if blocks[-1]["type"] == "tool_use" else "end_turn"
                out += [
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5},
                        },
                    ),
                    ("message_stop", {"type": "message_stop"}),
                ]
                self._send(
                    200,
                    "text/event-stream",
                    b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in out),
                )

            def _send(self, code: int, ctype: str, raw: bytes) -> None:
                self.send_response(code)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @staticmethod
    def message(req: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": req.get("model", "m"),
            "content": content,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }

    @staticmethod
    def answer(req: dict[str, Any]) -> list[dict[str, Any]]:
        """tool_use for the command of the prompt, unless the turn already has a tool result."""
        messages = req.get("messages") or []
        text = json.dumps(messages)
        if '"tool_result"' in text or MARKER not in text:
            return [{"type": "text", "text": REPLY}]
        command = text.split(MARKER, 1)[1].split("\\n", 1)[0].split('"', 1)[0]
        return [{"type": "tool_use", "id": "toolu_fake1", "name": "Bash", "input": {"command": command}}]

    def tool_results(self) -> list[str]:
        """Every request that carried a tool result, as JSON text (what the model saw after the call)."""
        return [json.dumps(r.get("messages")) for r in self.requests if '"tool_result"' in json.dumps(r)]


@pytest.fixture
def api() -> Iterator[ToolAPI]:
    fake = ToolAPI()
    fake.thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


@pytest.fixture
def banned_world(world: dict[str, Any]) -> dict[str, Any]:  # noqa: F811 - the imported fixture
    """The e2e world plus a past session that bans the deploy script's --force."""
    cwd = str(world["proj"])
    sid = uid("past-deploy-ban", cwd)
    s = Session(sid, cwd=cwd)
    s.prompt("never run zorblax-deploy --force on this repo, it wiped staging last time")
    s.response(text="Understood.")
    s.write(world["projects"] / slug(cwd) / f"{sid}.jsonl")
    run_index(world["db"], [world["projects"]])
    return world


def run(w: dict[str, Any], api: ToolAPI, command: str, mode: str) -> dict[str, Any]:
    env = {**w["env"], "TOTAL_RECALL_ENFORCE": mode}
    claude({**w, "env": env}, api, f"{MARKER}{command}", "--allowedTools", "Bash")
    ev = hook_events(w, "pre-tool-use")
    assert ev, "PreToolUse hook did not run"
    return ev[-1]


@pytest.mark.e2e
def test_banned_command_denied_in_block_mode(banned_world: dict[str, Any], api: ToolAPI) -> None:
    ev = run(banned_world, api, BANNED, "block")
    assert ev["decision"] == "deny" and ev["ok"] and ev["tool"] == "Bash"
    seen = "\n".join(api.tool_results())
    assert "Blocked by total-recall" in seen and "zorblax-deploy --force on this repo" in seen
    assert "command not found" not in seen  # it never ran
    print(f"\nPreToolUse latency in process (deny): {ev['latency_ms']} ms")
    wait_idle(banned_world["state"])


@pytest.mark.e2e
def test_banned_command_annotated_in_warn_mode(banned_world: dict[str, Any], api: ToolAPI) -> None:
    ev = run(banned_world, api, BANNED, "warn")
    assert ev["decision"] == "warn" and ev["ok"]
    seen = "\n".join(api.tool_results())
    assert "PreToolUse:Bash hook additional context" in seen and "total-recall note" in seen
    assert "Blocked by total-recall" not in seen
    print(f"\nPreToolUse latency in process (warn): {ev['latency_ms']} ms")
    wait_idle(banned_world["state"])


@pytest.mark.e2e
def test_allowed_command_passes_untouched(banned_world: dict[str, Any], api: ToolAPI) -> None:
    ev = run(banned_world, api, ALLOWED, "block")
    assert ev["decision"] == "allow" and ev["ok"]
    seen = "\n".join(api.tool_results())
    assert "total-recall-allowed" in seen  # the command ran and its output came back
    assert "total-recall note" not in seen and "Blocked by total-recall" not in seen
    print(f"\nPreToolUse latency in process (allow): {ev['latency_ms']} ms")
    wait_idle(banned_world["state"])


def test_the_fake_model_asks_for_the_prompts_command() -> None:
    req = {"messages": [{"role": "user", "content": [{"type": "text", "text": f"{MARKER}{BANNED}"}]}]}
    (block,) = ToolAPI.answer(req)
    assert block["type"] == "tool_use" and block["input"] == {"command": BANNED}
    req["messages"].append({"role": "user", "content": [{"type": "tool_result", "content": "x"}]})
    assert ToolAPI.answer(req) == [{"type": "text", "text": REPLY}]


def test_plugin_registers_pre_tool_use_for_bash_edits_and_mcp() -> None:
    import re

    hooks = json.loads((Path(__file__).resolve().parent.parent / "hooks" / "hooks.json").read_text())["hooks"]
    (group,) = hooks["PreToolUse"]
    rx = re.compile(group["matcher"])
    for tool in ("Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "mcp__plugin_x_y__z"):
        assert rx.search(tool), tool
    for tool in ("Read", "Grep", "BashOutput", "TodoWrite"):
        assert not rx.search(tool), tool
    assert group["hooks"][0]["command"].endswith("hook pre-tool-use")
