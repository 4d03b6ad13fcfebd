"""Synthetic transcripts for the viewer's tests (written here, nothing copied from real transcripts):
project `alpha` with a session holding Markdown and code, tool calls (one failing), a spawned subagent,
a rewind (abandoned branch), a compaction, a standing decision, a ban and a correction; a second,
older alpha session; project `beta` whose prompt, title, tool output and cwd carry XSS payloads."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from fixtures.make import T0, Session, slug, uid

XSS_SCRIPT = "<script>window.__pwned=1</script>"
XSS_IMG = '<img src=x onerror="window.__pwned=2">'
XSS_LINK = "[click me](javascript:window.__pwned=3)"
XSS_CWD = '/home/dev/"><script>window.__pwned=4</script>'
ANSWER_MD = "Use **pnpm** here.\n\n```python\ndef retry(fn):\n    return fn()\n```\n\nSee [the docs](https://example.org/pnpm)."


@dataclass
class UiCorpus:
    root: Path  # the projects/ root
    main: str  # session id of the rich alpha session
    older: str
    xss: str
    agent_id: str
    agent_prompt: str  # text of the subagent's task prompt
    answer_uuid: str  # the assistant message with Markdown


def build(root: Path) -> UiCorpus:
    projects = root / "projects"
    cwd = "/home/dev/projects/alpha"
    sid = uid("ui-main")
    agent = "5e5e5e5e"
    s = Session(sid, cwd=cwd)
    s.prompt("We moved from npm to pnpm last month, so set up the workspace with pnpm.")
    a = s.response(text=ANSWER_MD)[-1]
    s.prompt("Never commit without signing.")
    s.response(text="Understood: every commit will be signed.")
    fail_call = s.response(tools=[("Bash", {"command": "pnpm test", "description": "run tests"})])[-1]
    s.tool_result(fail_call, "FAIL tests/test_login.py: TimeoutError", is_error=True)
    s.response(text="The login test fails with a TimeoutError.")
    s.prompt("No, that's wrong, the tests still fail.")
    task_prompt = "Find where the login timeout is configured and report the file."
    call = s.response(
        tools=[("Task", {"description": "Find timeout", "prompt": task_prompt, "subagent_type": "Explore"})]
    )[-1]
    s.tool_result(
        call,
        [{"type": "text", "text": "The timeout lives in config/login.toml."}],
        tool_use_result={
            "status": "completed",
            "prompt": task_prompt,
            "agentId": agent,
            "content": [{"type": "text", "text": "The timeout lives in config/login.toml."}],
        },
    )
    fork = s.response(text="The subagent found the timeout in config/login.toml.")[-1]
    s.prompt("raise the timeout to 30 seconds")
    s.response(text="Raised the login timeout to 30 seconds in config/login.toml.")
    s.prompt("actually make it configurable by an env var", parent=fork["uuid"])
    s.response(text="The login timeout now reads LOGIN_TIMEOUT_S, default 30.")
    boundary, _ = s.compact(s.last, summary="The login timeout became configurable.")
    s.prompt("what is left to do on the flaky login test?")
    s.response(text="Nothing: the flaky login test passes with the configurable timeout.")
    s.summary(s.last or "", "Fix the flaky login test")
    s.write(projects / slug(cwd) / f"{sid}.jsonl")
    ag = Session(sid, cwd=cwd, agent_id=agent, sidechain=True, t0=T0 + timedelta(seconds=20))
    ag.prompt(task_prompt, parent=None)
    ag.response(text="The timeout is set in config/login.toml (login_timeout = 5).")
    ag.write(projects / slug(cwd) / sid / "subagents" / f"agent-{agent}.jsonl")

    old = uid("ui-older")
    o = Session(old, cwd=cwd, t0=T0 - timedelta(days=3))
    o.prompt("sketch the release checklist")
    o.response(text="1. bump the version\n2. tag\n3. publish")
    o.user([{"type": "tool_result", "tool_use_id": "toolu_gone", "content": "output of a call not stored"}])
    o.summary(o.last or "", "Release checklist")
    o.write(projects / slug(cwd) / f"{old}.jsonl")

    xss = uid("ui-xss")
    x = Session(xss, cwd=XSS_CWD, t0=T0 + timedelta(days=1))
    x.prompt(f"render this please {XSS_SCRIPT} and {XSS_IMG} and {XSS_LINK}")
    xcall = x.response(tools=[("Bash", {"command": f"echo '{XSS_SCRIPT}'"})])[-1]
    x.tool_result(xcall, f'{XSS_SCRIPT}\n{XSS_IMG}\n<a href="javascript:window.__pwned=5">x</a>')
    x.response(text=f"Here: {XSS_IMG} {XSS_LINK} <a href='javascript:window.__pwned=6'>raw</a>")
    x.summary(x.last or "", f"title {XSS_SCRIPT} {XSS_IMG}")
    x.write(projects / slug("/home/dev/projects/beta") / f"{xss}.jsonl")
    return UiCorpus(projects, sid, old, xss, agent, task_prompt, a["uuid"])
