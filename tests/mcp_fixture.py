"""A small hand-written transcript corpus for the MCP tests: two projects in real directories (so the
server's own cwd can be one of them), with a ban, standing decisions (one superseded), corrections, a
goal, failed attempts, preferences, facts, truth rhetoric, file reads and edits, and one huge answer
that must be clipped. Written in the Claude Code JSONL format; nothing copied from real transcripts."""

from __future__ import annotations

import uuid as uuidlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from total_recall.democorpus import session_records, write_session

Tool = tuple[str, dict[str, Any]] | None
Turn = tuple[str, str, Tool, str]

CI_LOG = "\n".join(
    f"[ci] worker-{i % 4} tests/test_login.py::test_login FAILED (TimeoutError after 5.0s)" for i in range(30)
)
HUGE = "The migration log follows. " + " ".join(
    f"step{i} moved queue partition {i} to RQ" for i in range(3000)
)

API_SESSIONS: list[tuple[str, int, list[Turn]]] = [
    (
        "Set up background jobs",
        20,
        [
            (
                "Always use Celery for background jobs in this repo.",
                "Understood, Celery for background jobs.",
                None,
                "",
            ),
            (
                "Add a job that sends the weekly report",
                "I added `send_weekly_report` as a Celery task in jobs/report.py.",
                (
                    "Write",
                    {
                        "file_path": "{cwd}/jobs/report.py",
                        "content": "@celery.task\ndef send_weekly_report(): ...",
                    },
                ),
                "File created successfully",
            ),
        ],
    ),
    (
        "Add retry logic to the payment webhook",
        6,
        [
            (
                "I want to add retry logic to the payment webhook handler in src/webhooks/payments.py so transient "
                "Stripe errors don't drop events.",
                "I'll add exponential backoff around the handler. Let me read the current code first.",
                ("Read", {"file_path": "{cwd}/src/webhooks/payments.py"}),
                "def handle_payment_event(event): ...",
            ),
            (
                "No, don't use the tenacity library, we decided to keep dependencies minimal. Write a small helper.",
                "You're right. I'll write a small `retry_with_backoff` helper in src/util/retry.py instead of tenacity.",
                (
                    "Write",
                    {"file_path": "{cwd}/src/util/retry.py", "content": "def retry_with_backoff(fn): ..."},
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
                "Done. I injected a `Clock` protocol into retry_with_backoff and fixed the ERR_TIMEOUT flake; "
                "all 42 tests pass now. Next we should add a jitter test for the backoff.",
                (
                    "Edit",
                    {
                        "file_path": "{cwd}/src/util/retry.py",
                        "old_string": "sleep",
                        "new_string": "clock.sleep",
                    },
                ),
                "The file has been updated.",
            ),
        ],
    ),
    (
        "Switch the job queue from Celery to RQ",
        3,
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
                        "file_path": "{cwd}/jobs/email.py",
                        "old_string": "@celery.task",
                        "new_string": "def send(): ...",
                    },
                ),
                "The file has been updated.",
            ),
            (
                "We moved from Celery to RQ; always use RQ for new jobs from now on.",
                "Understood: RQ for all new background jobs. " + HUGE,
                None,
                "",
            ),
            (
                "I'd rather use pnpm than npm for this repo, keep it simple.",
                "Noted, pnpm it is.",
                ("Bash", {"command": "pnpm install"}),
                "Done in 2.1s",
            ),
        ],
    ),
    (
        "Debug flaky login test",
        1,
        [
            (
                "The login test is flaky on CI again, can you find out why? Here is the CI log:\n" + CI_LOG,
                "The flake comes from parseConfig reading TOKEN_TTL before the fixture sets it; the fixture order "
                "changed in conftest.py. This will definitely fix it.",
                ("Grep", {"pattern": "TOKEN_TTL", "path": "{cwd}"}),
                "src/auth/config.py:12",
            ),
            (
                "That still doesn't work, the test failed again on CI.",
                "You're right, I was wrong about the fixture order. The real cause is a shared Redis database "
                "between parallel workers; I now use a per-worker database number and it is fixed.",
                (
                    "Edit",
                    {
                        "file_path": "{cwd}/tests/conftest.py",
                        "old_string": "db=0",
                        "new_string": "db=worker_id",
                    },
                ),
                "The file has been updated.",
            ),
            (
                "The staging database lives in /srv/staging/db on the slate server.",
                "Thanks, noted: staging DB at /srv/staging/db on slate.",
                None,
                "",
            ),
            (
                "KRAKEN lives on the slate server, it is our payment worker cluster.",
                "Got it: KRAKEN is the payment worker cluster on slate.",
                None,
                "",
            ),
        ],
    ),
]

WEB_SESSIONS: list[tuple[str, int, list[Turn]]] = [
    (
        "Landing page copy",
        2,
        [
            (
                "Never use lorem ipsum placeholder text in the landing page.",
                "Understood, I'll write real copy.",
                (
                    "Edit",
                    {
                        "file_path": "{cwd}/src/pages/index.tsx",
                        "old_string": "Lorem",
                        "new_string": "Ship faster",
                    },
                ),
                "The file has been updated.",
            ),
            (
                "Restart KRAKEN after the deploy please",
                "KRAKEN restarted.",
                ("Bash", {"command": "ssh slate systemctl restart kraken"}),
                "ok",
            ),
            (
                "Check how the api validates webhooks before we call it from the landing page",
                "The api verifies the Stripe signature first.",
                ("Read", {"file_path": "{api}/src/webhooks/payments.py"}),
                "def handle_payment_event(event): ...",
            ),
            (
                "Deploy it to the preview environment",
                "The deploy failed: vercel returned ERR_BUILD because NEXT_PUBLIC_API_URL is missing.",
                ("Bash", {"command": "vercel deploy --prebuilt"}),
                "Error: ERR_BUILD missing NEXT_PUBLIC_API_URL",
            ),
        ],
    ),
]


def _write_session(
    d: Path, cwd: str, name: str, title: str, day: datetime, order: int, turns: list[Turn], api: str
) -> str:
    # ids sort in time order, so files are indexed oldest first, as they would be on a real machine
    sid = f"{order:08x}" + str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"tr-mcp-test-{name}-{title}"))[8:]
    concrete = [
        (
            p,
            a,
            (
                t[0],
                {
                    k: (v.replace("{cwd}", cwd).replace("{api}", api) if isinstance(v, str) else v)
                    for k, v in t[1].items()
                },
            )
            if t
            else None,
            out,
        )
        for p, a, t, out in turns
    ]
    write_session(d, sid, session_records(sid, cwd, day, title, concrete))
    return sid


def build_index(root: Path, db: Path) -> tuple[Path, dict[str, Path], dict[str, str]]:
    """Write the whole corpus under root, then index it in one run (files are processed biggest first,
    not in time order, so this also checks that folding does not depend on file order); returns
    (projects dir, {name: project cwd}, {title: session id})."""
    from index.store.ingest import run_index

    projects = root / "projects"
    now = datetime.now(timezone.utc).replace(microsecond=0)
    cwds = {"api": root / "work" / "acme-api", "web": root / "work" / "acme-web"}
    plan = sorted(
        [
            (days, name, title, turns)
            for name, sessions in (("api", API_SESSIONS), ("web", WEB_SESSIONS))
            for title, days, turns in sessions
        ],
        key=lambda x: -x[0],
    )
    sessions: dict[str, str] = {}
    for days_ago, name, title, turns in plan:
        cwd = cwds[name]
        cwd.mkdir(parents=True, exist_ok=True)
        d = projects / str(cwd).replace("/", "-")
        d.mkdir(parents=True, exist_ok=True)
        sessions[title] = _write_session(
            d, str(cwd), name, title, now - timedelta(days=days_ago), 1000 - days_ago, turns, str(cwds["api"])
        )
    report = run_index(db, [projects], jobs=1)
    assert not report.errors, report.errors
    return projects, cwds, sessions
