"""`total-recall server …` exactly as outside scripts drive it (issue 16's contract): migrate (twice),
user add with the password on stdin, project add, member add, token create printing one token, run with
the key from TOTAL_RECALL_SERVER_SECRET and the DSN from TOTAL_RECALL_SERVER_DSN; then HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("psycopg")

from pg_fixture import Postgres, server_process  # noqa: E402

SECRET = "cli-secret-0123456789abcdef-0123456789"


def tr(
    *args: str, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "total_recall", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def dsn(postgres: Postgres) -> str:
    return postgres.new_database()


@pytest.fixture(scope="module")
def running(dsn: str) -> Iterator[str]:
    """The DSN from TOTAL_RECALL_SERVER_DSN, the key from TOTAL_RECALL_SERVER_SECRET."""
    with server_process(None, SECRET, "--host", "127.0.0.1", env={"TOTAL_RECALL_SERVER_DSN": dsn}) as (
        url,
        _,
    ):
        yield url


def test_the_admin_contract_then_http(dsn: str, running: str) -> None:
    first = tr("server", "migrate", "--dsn", dsn, "--json")
    assert first.returncode == 0, first.stderr
    again = tr("server", "migrate", "--dsn", dsn)
    assert again.returncode == 0 and "applied: nothing" in again.stdout
    for name in ("alice", "bob"):
        p = tr("server", "user", "add", name, "--dsn", dsn, input=f"{name}-password\n")
        assert p.returncode == 0, p.stderr
    assert tr("server", "project", "add", "team-repo", "--owner", "alice", "--dsn", dsn).returncode == 0
    assert tr("server", "member", "add", "team-repo", "bob", "--role", "reader", "--dsn", dsn).returncode == 0
    made = tr("server", "token", "create", "--user", "alice", env={"TOTAL_RECALL_SERVER_DSN": dsn})
    assert made.returncode == 0, made.stderr
    lines = made.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("trt_")
    token = lines[0]
    H = {"Authorization": f"Bearer {token}"}
    body = {
        "project_id": "team-repo",
        "title": "Releases are cut on Tuesdays",
        "dense_summary": "The team cuts releases on Tuesdays after the staging soak.",
        "context_type": "decision",
        "relevance_score": 8,
        "metadata": {"by": "cli-test"},
    }
    r = httpx.post(running + "/api/conversation-contexts", json=body, headers=H)
    assert r.status_code == 201 and r.json()["id"]
    got = httpx.get(
        running + "/api/conversation-contexts/recall",
        params={"project_id": "team-repo", "q": "release tuesday"},
        headers=H,
    )
    assert got.status_code == 200 and got.json()[0]["title"] == body["title"]
    login = httpx.post(
        running + "/api/auth/login", json={"username": "bob", "password": "bob-password"}
    ).json()
    assert set(login) == {"access_token", "token_type", "expires_in"} and login["token_type"] == "bearer"
    jwt_h = {"Authorization": f"Bearer {login['access_token']}"}
    assert httpx.get(running + "/api/projects/team-repo", headers=jwt_h).json()["role"] == "reader"
    st = httpx.post(
        running + "/api/project-states",
        json={"project_id": "team-repo", "state_type": "ci", "state_data": {"green": True}},
        headers=H,
    )
    assert st.status_code == 200
    assert tr("server", "token", "revoke", token, "--dsn", dsn).returncode == 0
    assert httpx.get(running + "/api/projects/team-repo", headers=H).status_code == 401


def test_admin_errors_are_one_line_with_a_fix(dsn: str) -> None:
    tr("server", "migrate", "--dsn", dsn)
    p = tr("server", "user", "add", "carol", "--dsn", dsn, input="short\n")
    assert p.returncode != 0 and p.stderr.count("\n") == 1 and "8 characters" in p.stderr
    p = tr("server", "project", "add", "p1", "--owner", "nobody", "--dsn", dsn)
    assert p.returncode != 0 and "no user 'nobody'" in p.stderr and "Traceback" not in p.stderr
    p = tr("server", "project", "add", "../bad", "--owner", "alice", "--dsn", dsn)
    assert p.returncode != 0 and "bad project id" in p.stderr
    p = tr("server", "migrate", env={"TOTAL_RECALL_SERVER_DSN": ""})
    assert p.returncode != 0 and "TOTAL_RECALL_SERVER_DSN" in p.stderr
    p = tr("server", "run", "--dsn", dsn, env={"TOTAL_RECALL_SERVER_SECRET": "short"})
    assert p.returncode != 0 and "at least 32" in p.stderr
    p = tr("server", "migrate", "--dsn", "host=/nonexistent-socket-dir port=1 user=x dbname=y")
    assert p.returncode != 0 and "cannot reach PostgreSQL" in p.stderr and p.stderr.count("\n") == 1


def test_without_the_server_extra_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from click.testing import CliRunner

    from total_recall.cli import cli

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "fastapi" else real(name, *a)
    )
    res = CliRunner().invoke(cli, ["server", "migrate", "--dsn", "x"])
    assert (
        res.exit_code != 0 and "pip install 'total-recall[server]'" in res.output and "fastapi" in res.output
    )
