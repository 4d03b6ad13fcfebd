"""A small synthetic transcript corpus, generated on demand, for the quickstart on a fresh machine.

It follows the real format (split assistant records, tool fan-out, a subagent file, a compaction)
so the demo exercises the same code paths as real transcripts. Nothing here is copied from them.
"""

from __future__ import annotations

import uuid as uuidlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson

CWD = "/home/demo/projects/acme-api"
Turn = tuple[str, str, tuple[str, dict[str, Any]] | None, str]  # prompt, answer, tool call, tool output
SLUG = "-home-demo-projects-acme-api"

# (prompt, assistant answer, tool call or None, tool output)
SESSIONS: list[tuple[str, list[Turn]]] = [
    (
        "Add retry logic to the payment webhook",
        [
            (
                "I want to add retry logic to the payment webhook handler in src/webhooks/payments.py so transient "
                "Stripe errors don't drop events.",
                "I'll add exponential backoff around the handler. Let me look at the current code first.",
                ("Read", {"file_path": "/home/demo/projects/acme-api/src/webhooks/payments.py"}),
                "def handle_payment_event(event):\n    process(event)\n",
            ),
            (
                "No, don't use the tenacity library, we decided to keep dependencies minimal. Write a small helper.",
                "You're right. I'll write a small `retry_with_backoff` helper in src/util/retry.py instead of "
                "adding tenacity.",
                (
                    "Write",
                    {
                        "file_path": "/home/demo/projects/acme-api/src/util/retry.py",
                        "content": "def retry_with_backoff(fn, attempts=5, base=0.2):\n    ...",
                    },
                ),
                "File created successfully",
            ),
            (
                "Run the tests",
                "The test suite failed: test_payment_retry raised ERR_TIMEOUT because the fake clock was not advanced.",
                ("Bash", {"command": "pytest tests/test_payments.py -q"}),
                "FAILED tests/test_payments.py::test_payment_retry - ERR_TIMEOUT",
            ),
            (
                "Never call time.sleep in tests; inject the clock.",
                "Done. I injected a `Clock` protocol into retry_with_backoff; all 42 tests pass now.",
                ("Bash", {"command": "pytest -q"}),
                "42 passed in 1.3s",
            ),
        ],
    ),
    (
        "Switch the job queue from Celery to RQ",
        [
            (
                "Our goal this week: move background jobs from Celery to RQ, Celery is too heavy for us.",
                "Plan: 1) add rq and a worker entry point, 2) port send_invoice_email, 3) remove celery config.",
                None,
                "",
            ),
            (
                "Let's go with option 2 first, port send_invoice_email.",
                "Decision noted: port send_invoice_email first. I moved it to jobs/email.py and enqueue it with RQ.",
                (
                    "Edit",
                    {
                        "file_path": "/home/demo/projects/acme-api/jobs/email.py",
                        "old_string": "@celery.task",
                        "new_string": "def send_invoice_email(invoice_id: int) -> None:",
                    },
                ),
                "The file has been updated.",
            ),
            (
                "We moved from Celery to RQ; always use RQ for new jobs from now on.",
                "Understood: RQ for all new background jobs.",
                None,
                "",
            ),
        ],
    ),
    (
        "Debug flaky login test",
        [
            (
                "The login test is flaky on CI again, can you find out why?",
                "The flake comes from parseConfig reading TOKEN_TTL before the fixture sets it; the order of "
                "fixtures changed in conftest.py.",
                ("Grep", {"pattern": "TOKEN_TTL", "path": "/home/demo/projects/acme-api"}),
                "src/auth/config.py:12",
            ),
            (
                "That still doesn't work, the test failed again on CI.",
                "You're right, I was wrong about the fixture order. The real cause is a shared Redis database "
                "between parallel workers; I now use a per-worker database number.",
                None,
                "",
            ),
        ],
    ),
]


def _ts(base: datetime, i: int) -> str:
    return (base + timedelta(seconds=37 * i)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def session_records(
    session: str, cwd: str, day: datetime, title: str, turns: list[Turn]
) -> list[dict[str, Any]]:
    """One session in the real record shapes: a summary title, prompts, split assistant records of one
    response (text + tool_use sharing message.id and usage), tool results parented to their call."""
    recs: list[dict[str, Any]] = [{"type": "summary", "summary": title, "leafUuid": None}]
    parent: str | None = None
    i = 0

    def env(**extra: Any) -> dict[str, Any]:
        rec = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session,
            "version": "2.1.39",
            "gitBranch": "main",
            "uuid": str(uuidlib.uuid4()),
            "timestamp": _ts(day, i),
        }
        rec.update(extra)
        return rec

    for prompt, answer, tool, output in turns:
        u = env(type="user", message={"role": "user", "content": prompt})
        recs.append(u)
        parent, i = u["uuid"], i + 1
        mid = "msg_demo_" + uuidlib.uuid4().hex[:20]
        usage = {
            "input_tokens": 1200 + 10 * i,
            "output_tokens": 180,
            "cache_creation_input_tokens": 500,
            "cache_read_input_tokens": 9000,
            "cache_creation": {"ephemeral_5m_input_tokens": 500, "ephemeral_1h_input_tokens": 0},
        }
        blocks: list[dict[str, Any]] = [{"type": "text", "text": answer}]
        if tool:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": "toolu_" + uuidlib.uuid4().hex[:20],
                    "name": tool[0],
                    "input": tool[1],
                }
            )
        for b in blocks:
            a = env(
                type="assistant",
                requestId="req_" + mid[9:],
                message={
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929",
                    "content": [b],
                    "stop_reason": "tool_use" if b["type"] == "tool_use" else None,
                    "usage": usage,
                },
            )
            recs.append(a)
            parent, i = a["uuid"], i + 1
            if b["type"] == "tool_use":
                r = env(
                    type="user",
                    sourceToolAssistantUUID=parent,
                    message={
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": b["id"],
                                "content": output,
                                "is_error": "FAILED" in output or output.startswith("Error"),
                            }
                        ],
                    },
                )
                recs.append(r)
                parent, i = r["uuid"], i + 1
    recs[0]["leafUuid"] = parent
    return recs


def write_session(directory: Path, session: str, records: list[dict[str, Any]]) -> Path:
    path = directory / f"{session}.jsonl"
    with open(path, "wb") as f:
        for r in records:
            f.write(orjson.dumps(r) + b"\n")
    return path


def write_demo_corpus(root: Path) -> Path:
    """Write the demo transcripts under `root/projects/<slug>/`; returns the projects dir."""
    projects = root / "projects"
    d = projects / SLUG
    d.mkdir(parents=True, exist_ok=True)
    base = datetime.now(timezone.utc) - timedelta(days=len(SESSIONS) + 1)
    for s_i, (title, turns) in enumerate(SESSIONS):
        session = str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"total-recall-demo-{s_i}"))
        write_session(d, session, session_records(session, CWD, base + timedelta(days=s_i), title, turns))
    return projects
