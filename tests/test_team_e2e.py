"""Team memory end to end (issue 16): two machines simulated by two homes on one host, one team server
on a real PostgreSQL. A decision made in A's session reaches B's SessionStart bundle for the same
repository cloned elsewhere, never a session of another project; pushes are scrubbed, reviewed,
idempotent; secrets planted in memories never reach the server's tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg")
pytest.importorskip("fastapi")

from click.testing import CliRunner  # noqa: E402
from fixtures.make import Session, slug, uid  # noqa: E402
from pg_fixture import Postgres, serve  # noqa: E402
from test_e2e_claude import write_past_session  # noqa: E402

from index.briefing import Shareable  # noqa: E402
from index.store import run_index  # noqa: E402
from lib.events import read_events  # noqa: E402
from lib.project_id import resolve_project_id  # noqa: E402
from total_recall.cli import cli  # noqa: E402
from total_recall.server import store  # noqa: E402
from total_recall.server.app import create_app  # noqa: E402
from total_recall.server.auth import hash_password, new_api_token  # noqa: E402
from total_recall.server.config import ServerConfig  # noqa: E402
from total_recall.server.migrations import migrate  # noqa: E402
from total_recall.team.config import load  # noqa: E402
from total_recall.team.sync import Ledger, pending, prepare, push  # noqa: E402

SECRET = "e2e-secret-0123456789abcdef-0123456789"
NOW = datetime.now(timezone.utc)
GH = "ghp_" + "Zq9x" * 9
AWS = "AKIAQ3EGQ7XZ4LMNOPQR"
PW = "Kx7pQ2mZ9vL4"
PRIVATE = "velvet-walrus-7731"


def git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


@dataclass
class Machine:
    home: Path
    projects: Path
    db: Path

    def run(self, *args: str, input: str | None = None) -> str:
        res = CliRunner().invoke(cli, ["--db", str(self.db), *args], input=input, catch_exceptions=False)
        assert res.exit_code == 0, res.output
        return res.output

    def hook(self, event: str, payload: dict[str, object]) -> tuple[str, float]:
        env = {**os.environ, "TOTAL_RECALL_DB": str(self.db), "TOTAL_RECALL_PROJECTS": str(self.projects)}
        env.pop("CLAUDE_PROJECT_ID", None)
        t0 = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-m", "total_recall", "hook", event],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert p.returncode == 0 and p.stderr == ""
        return p.stdout, time.perf_counter() - t0


def machine(base: Path) -> Machine:
    return Machine(base, base / "claude" / "projects", base / "home" / "index.db")


def clone(path: Path, remote: str) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", str(path))
    git("-C", str(path), "remote", "add", "origin", remote)
    return path


def session_in(root: Path, cwd: Path, name: str, prompts: list[str]) -> None:
    s = Session(uid(name, str(cwd)), cwd=str(cwd), t0=NOW - timedelta(hours=3))
    for p in prompts:
        s.prompt(p)
        s.response(text="Understood.")
    s.write(root / slug(str(cwd)) / f"{s.session_id}.jsonl")


@dataclass
class Team:
    url: str
    dsn: str
    pid: str
    other_pid: str
    a: Machine
    b: Machine
    cwd_a: Path
    cwd_b: Path
    cwd_c: Path
    tokens: dict[str, str]


@pytest.fixture(scope="module")
def team(postgres: Postgres, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    os.environ.pop("CLAUDE_PROJECT_ID", None)
    base = tmp_path_factory.mktemp("team")
    a, b = machine(base / "a"), machine(base / "b")
    cwd_a = clone(base / "a" / "code" / "zorblax", "git@git.example.com:team/zorblax.git")
    cwd_b = clone(base / "b" / "work" / "zb-checkout", "https://git.example.com/team/zorblax")
    cwd_c = clone(base / "b" / "work" / "other", "https://git.example.com/team/other.git")
    write_past_session(a.projects, str(cwd_a), NOW - timedelta(days=1))
    session_in(
        a.projects,
        cwd_a,
        "secrets",
        [
            f"from now on we always deploy with the token {GH} in this repo",
            f"never put the key {AWS} or DB_PASSWORD={PW} in the logs",
            f"goal: rotate the <private>{PRIVATE}</private> credentials before launch",
        ],
    )
    session_in(b.projects, cwd_b, "b-own", ["let's look at the zorblax readme"])
    session_in(b.projects, cwd_c, "c-own", ["let's fix the other service's build"])
    run_index(a.db, [a.projects])
    run_index(b.db, [b.projects])
    pid = resolve_project_id(str(cwd_a), {})
    other = resolve_project_id(str(cwd_c), {})
    assert pid is not None and other is not None and pid.id == resolve_project_id(str(cwd_b), {}).id  # type: ignore[union-attr]
    dsn = postgres.new_database()
    migrate(dsn)
    tokens = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for name in ("alice", "bob"):
            store.add_user(conn, name, hash_password(name + "-password"))
            tok, digest = new_api_token()
            store.add_token(conn, name, digest, name, None)
            tokens[name] = tok
        store.add_project(conn, pid.id, "alice")
        store.set_member(conn, pid.id, "bob", "member")
        store.add_project(conn, other.id, "bob")
        store.add_project(conn, "planted", "alice")
    with serve(create_app(ServerConfig(dsn=dsn, secret=SECRET))) as url:
        yield Team(url, dsn, pid.id, other.id, a, b, cwd_a, cwd_b, cwd_c, tokens)


def server_text(dsn: str) -> str:
    """Every row of every table of the server, as text: what a grep of the database would see."""
    with psycopg.connect(dsn) as conn:
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        return "\n".join(str(row[0]) for t in tables for row in conn.execute(f"SELECT t::text FROM {t} t"))


def bundle(out: str) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out.strip() else ""


def test_push_is_opt_in_reviewed_scrubbed_and_idempotent(team: Team) -> None:
    a = team.a
    res = CliRunner().invoke(cli, ["--db", str(a.db), "team", "push", "--cwd", str(team.cwd_a)])
    assert res.exit_code != 0 and "team login" in res.output  # nothing configured: nothing leaves
    a.run("team", "login", team.url, input=team.tokens["alice"] + "\n")
    res = CliRunner().invoke(cli, ["--db", str(a.db), "team", "push", "--cwd", str(team.cwd_a)])
    assert res.exit_code != 0 and "team enable" in res.output  # off by default
    assert team.pid in a.run("team", "enable", "--cwd", str(team.cwd_a))
    listed = json.loads(a.run("team", "push", "--cwd", str(team.cwd_a), "--dry-run", "--json"))
    texts = [i["dense_summary"] for i in listed]
    assert any("tomllib" in t for t in texts) and any("integration tests" in t for t in texts)
    joined = json.dumps(listed)
    assert GH not in joined and AWS not in joined and PW not in joined and PRIVATE not in joined
    # review: keep the session summaries private; they never leave
    numbered = [n for n, i in enumerate(listed, 1) if i["context_type"] == "session"]
    out = a.run(
        "team", "push", "--cwd", str(team.cwd_a), "--review", input=",".join(map(str, numbered)) + "\n"
    )
    assert "would leave this machine" in out and f"sent {len(listed) - len(numbered)} item(s)" in out
    again = json.loads(a.run("team", "push", "--cwd", str(team.cwd_a), "--json"))
    assert again["sent"] == 0 and again["private"] == len(numbered)
    with psycopg.connect(team.dsn) as conn:
        rows = conn.execute("SELECT context_type, count(*) FROM conversation_contexts GROUP BY 1").fetchall()
    counts = dict(rows)
    assert "session" not in counts and sum(counts.values()) == len(listed) - len(numbered)
    status = json.loads(a.run("team", "status", "--cwd", str(team.cwd_a), "--json"))
    assert status["enabled"] and status["pending"] == 0 and status["role"] == "owner"
    assert status["project_id"] == team.pid and status["project_id_source"] == "remote"


def test_secrets_planted_in_memories_never_reach_the_server(team: Team, tmp_path: Path) -> None:
    """The client scrubs whatever the index hands it (belt and braces: the index scrubbed too)."""
    rows = [
        Shareable(
            "standing_decision",
            "standing_decision:planted",
            "Standing decision",
            f"deploy with {GH} and {AWS}",
            None,
            "s1",
            0.9,
        ),
        Shareable(
            "ban",
            "ban:planted",
            "Ban",
            f"never log DB_PASSWORD={PW} <private>{PRIVATE}</private> here",
            None,
            "s1",
            0.9,
        ),
    ]
    cfg = load(team.a.db.parent, {})
    ledger = Ledger(cfg.state, "planted")
    items = prepare("planted", rows, set())
    assert push(cfg, "planted", pending(items, ledger), ledger) == 2
    dump = server_text(team.dsn)
    assert "[REDACTED:github_token]" in dump and "[private]" in dump
    for planted in (GH, AWS, PW, PRIVATE):
        assert planted not in dump


def test_a_decision_from_a_reaches_bs_session_start_and_no_other_project(team: Team) -> None:
    b = team.b
    b.run("team", "login", team.url, input=team.tokens["bob"] + "\n")
    b.run("team", "enable", "--cwd", str(team.cwd_b))
    b.run("team", "enable", "--cwd", str(team.cwd_c))
    out, _ = b.hook(
        "session-start",
        {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(team.cwd_b), "session_id": "s-b"},
    )
    text = bundle(out)
    assert "Team memory" in text and "tomllib" in text and "alice" in text
    assert len(text) <= 1800 + 40  # the same budget (the fence lines around it aside)
    out, _ = b.hook(
        "session-start",
        {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(team.cwd_c), "session_id": "s-c"},
    )
    assert "tomllib" not in bundle(out) and "Team memory" not in bundle(out)
    ev = [e for e in read_events(b.db.parent) if e.get("hook") == "session-start"]
    assert ev[-2]["team"]["source"] == "server" and ev[-2]["team"]["project_id"] == team.pid


def test_the_stop_hook_pushes_in_the_background(team: Team) -> None:
    b = team.b
    session_in(
        b.projects,
        team.cwd_b,
        "b-decides",
        ["from now on we always use uv for the zorblax virtualenvs in this repo"],
    )
    run_index(b.db, [b.projects])
    before = server_text(team.dsn).count("[REDACTED")  # unrelated; the server's rows as text
    out, took = b.hook("stop", {"hook_event_name": "Stop", "cwd": str(team.cwd_b), "session_id": "s-b"})
    assert out == "" and took < 5
    deadline = time.time() + 30
    while time.time() < deadline:
        with psycopg.connect(team.dsn) as conn:
            n = conn.execute(
                "SELECT count(*) FROM conversation_contexts c JOIN users u ON u.id = c.created_by WHERE u.name = 'bob'"
            ).fetchone()
        if n and n[0] > 0:
            break
        time.sleep(0.3)
    assert n and n[0] > 0, "the background sync pushed nothing"
    assert server_text(team.dsn).count("[REDACTED") == before
    deadline = time.time() + 10
    while time.time() < deadline and not any(e.get("event") == "team" for e in read_events(b.db.parent)):
        time.sleep(0.2)
    sync = [e for e in read_events(b.db.parent) if e.get("event") == "team"]
    assert sync and sync[-1]["ok"] is True and sync[-1]["sent"] >= 1


def test_a_forgotten_session_never_leaves(team: Team) -> None:
    a = team.a
    session_in(
        a.projects,
        team.cwd_a,
        "to-forget",
        ["from now on we always name the queues after the marmot team in this repo"],
    )
    run_index(a.db, [a.projects])
    listed = json.loads(a.run("team", "push", "--cwd", str(team.cwd_a), "--dry-run", "--json"))
    assert any("marmot" in i["dense_summary"] for i in listed)
    a.run("forget", uid("to-forget", str(team.cwd_a)), "--yes")
    listed = json.loads(a.run("team", "push", "--cwd", str(team.cwd_a), "--dry-run", "--json"))
    assert not any("marmot" in json.dumps(i) for i in listed)
    a.run("team", "push", "--cwd", str(team.cwd_a))
    assert "marmot" not in server_text(team.dsn)


def test_pull_lists_teammates_items_and_disable_stops_sharing(team: Team) -> None:
    b = team.b
    b.run("team", "login", team.url, input=team.tokens["bob"] + "\n")
    b.run("team", "enable", "--cwd", str(team.cwd_b))
    items = json.loads(b.run("team", "pull", "--cwd", str(team.cwd_b), "--json"))
    assert items and all(i["created_by"] == "alice" for i in items)  # bob's own pushes are left out
    found = json.loads(b.run("team", "pull", "--cwd", str(team.cwd_b), "-q", "tomllib", "--json"))
    assert found and all("tomllib" in (i["title"] + i["dense_summary"]).lower() for i in found)
    assert "alice:" in b.run("team", "pull", "--cwd", str(team.cwd_b))
    b.run("team", "disable", "--cwd", str(team.cwd_b))
    res = CliRunner().invoke(cli, ["--db", str(b.db), "team", "pull", "--cwd", str(team.cwd_b)])
    assert res.exit_code != 0 and "team enable" in res.output
    out, _ = b.hook(
        "session-start",
        {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(team.cwd_b), "session_id": "s-d"},
    )
    assert "Team memory" not in bundle(out)
    b.run("team", "enable", "--cwd", str(team.cwd_b))


def test_login_with_a_password_stores_a_jwt_and_bad_credentials_are_one_line(
    team: Team, tmp_path: Path
) -> None:
    m = machine(tmp_path / "m")
    m.run("team", "login", team.url, "--user", "alice", input="alice-password\n")
    cfg = load(m.db.parent, {})
    assert cfg.token.count(".") == 2 and not cfg.token.startswith("trt_")  # a JWT, not the password
    assert (m.db.parent / "team.json").stat().st_mode & 0o077 == 0  # private to the user
    for args, stdin in ((["--user", "alice"], "wrong-password\n"), ([], "trt_not-a-token\n")):
        res = CliRunner().invoke(cli, ["--db", str(m.db), "team", "login", team.url, *args], input=stdin)
        assert res.exit_code != 0 and "401" in res.output and len(res.output.strip().splitlines()) == 1
    res = CliRunner().invoke(cli, ["--db", str(m.db), "team", "login", "http://127.0.0.1:9"], input="trt_x\n")
    assert res.exit_code != 0 and "cannot reach" in res.output
