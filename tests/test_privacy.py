"""Issue 10, items 8, 9 and 20: the user's decisions survive a rebuild, `forget` leaves no trace in the
database file, and every command that writes the index takes the writer lock.

Transcripts are written by the test: session A holds a marker word everywhere (prompts, answers, tool
calls and results, titles, a subagent, a `summary` record about it in session B's file); session B is
kept and must stay whole.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fixtures.make import Session, uid

from index.store.textstore import unpack
from lib import sqlite

ROOT = Path(__file__).resolve().parent.parent
MARK = "zanzibarquokka"  # porter leaves it alone, so FTS terms hold it verbatim
A, B = uid("privacy", "A"), uid("privacy", "B")
CWD = "/home/dev/projects/orchard"


def write_corpus(root: Path) -> dict[str, str]:
    d = root / "-home-dev-projects-orchard"
    a = Session(A, cwd=CWD)
    a.other({"type": "custom-title", "sessionId": A, "customTitle": f"the {MARK} migration"})
    a.prompt(f"Never use the {MARK} library in this repo; we decided to drop {MARK} for good.")
    call = a.response(text=f"Dropping {MARK}.", tools=[("Bash", {"command": f"grep -rn {MARK} src/"})])[-1]
    a.tool_result(call, f"src/app.py:3: import {MARK}\nsrc/util.py:9: {MARK}.init()")
    task = a.response(
        tools=[
            (
                "Task",
                {
                    "description": f"remove {MARK}",
                    "prompt": f"Remove every {MARK} import.",
                    "subagent_type": "general-purpose",
                },
            )
        ]
    )[-1]
    a.tool_result(
        task,
        [{"type": "text", "text": f"removed {MARK}"}],
        tool_use_result={
            "status": "completed",
            "agentId": "a1b2c3",
            "description": f"remove {MARK}",
            "content": [{"type": "text", "text": "done"}],
        },
    )
    a.prompt(f"Our goal: finish the {MARK} removal this week.")
    leaf = a.response(text=f"The {MARK} removal is complete; all tests pass.")[-1]
    path_a = a.write(d / f"{A}.jsonl")
    ag = Session(A, cwd=CWD, agent_id="a1b2c3", sidechain=True)
    ag.prompt(f"Remove every {MARK} import.", parent=None)
    ag.response(text=f"Removed {MARK} from 2 files.")
    ag.write(d / A / "subagents" / "agent-a1b2c3.jsonl")
    b = Session(B, cwd=CWD)
    b.summary(leaf["uuid"], f"Removing the {MARK} dependency")
    b.prompt("Always run the linter before committing in this repo.")
    b.response(text="Understood: the linter runs before every commit.")
    b.prompt("Now update the changelog for the orchard release.")
    b.response(text="Updated CHANGELOG.md for the orchard release.")
    path_b = b.write(d / f"{B}.jsonl")
    return {"a": str(path_a), "b": str(path_b), "leaf": leaf["uuid"]}


def cli(db: Path, *args: str, code: int = 0) -> str:
    from total_recall.cli import cli as group

    res = CliRunner().invoke(group, ["--db", str(db), *args], catch_exceptions=False)
    assert res.exit_code == code, (args, res.output)
    return res.output


@pytest.fixture
def corpus(tmp_path: Path) -> dict[str, Any]:
    root = tmp_path / "projects"
    files = write_corpus(root)
    db = tmp_path / "data" / "index.db"
    cli(db, "index", "--projects-root", str(root), "--json")
    return {"root": root, "db": db, **files}


def db_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists())


def session_rows(db: Path, sid: str) -> dict[str, int]:
    """Rows per table that carry this session id (every table with a session_id column but the
    `forgotten` tombstones)."""
    conn = sqlite.connect(db)
    out = {}
    for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'"):
        cols = [c[1] for c in conn.execute(f'PRAGMA table_info("{t}")')]
        if "session_id" in cols and t != "forgotten":
            out[t] = conn.execute(f'SELECT count(*) FROM "{t}" WHERE session_id=?', (sid,)).fetchone()[0]
    conn.close()
    return out


def all_text(db: Path) -> str:
    conn = sqlite.connect(db)
    parts = []
    for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE '%fts%'"):
        for row in conn.execute(f'SELECT * FROM "{t}"'):
            parts += [unpack(v) if isinstance(v, bytes) and t == "messages" else str(v) for v in row]
    conn.close()
    return "\n".join(parts)


# --- item 9: forget leaves no trace -------------------------------------------------------------


def test_forget_removes_every_row_and_every_byte(corpus: dict[str, Any]) -> None:
    db = corpus["db"]
    before = db_bytes(db).count(MARK.encode())
    assert before > 10 and MARK in all_text(db)
    assert any(session_rows(db, A).values())
    conn = sqlite.connect(db)
    assert (
        conn.execute("SELECT count(*) FROM summaries WHERE summary LIKE ?", (f"%{MARK}%",)).fetchone()[0] == 1
    )
    conn.close()
    out = json.loads(cli(db, "forget", A[:8], "--yes", "--json"))
    assert out["session_ids"] == [A] and out["messages"] > 5
    assert set(session_rows(db, A).values()) == {0}, session_rows(db, A)
    assert MARK not in all_text(db)
    assert db_bytes(db).count(MARK.encode()) == 0, "the forgotten text is still in the database file"
    # session B is whole
    assert session_rows(db, B)["messages"] == 4
    assert "linter" in cli(db, "search", "linter", "--json")


def test_forgotten_text_never_comes_back(corpus: dict[str, Any]) -> None:
    db, root = corpus["db"], corpus["root"]
    cli(db, "forget", A, "--yes")
    cli(db, "index", "--projects-root", str(root))  # the files that held A are re-read
    cli(db, "index", "--projects-root", str(root), "--full")
    assert set(session_rows(db, A).values()) == {0}
    assert MARK not in all_text(db)
    assert db_bytes(db).count(MARK.encode()) == 0
    assert session_rows(db, B)["messages"] == 4


def test_forget_removes_hook_state_of_the_session(corpus: dict[str, Any]) -> None:
    from hooks.state import continuation_file, session_file, write_json

    db = corpus["db"]
    state = db.parent
    write_json(continuation_file(state, A), {"packet": f"working on {MARK}"})
    write_json(session_file(state, A), {"pending": [f"{MARK} prompt"]})
    write_json(continuation_file(state, B), {"packet": "changelog"})
    cli(db, "forget", A, "--yes")
    assert not continuation_file(state, A).exists() and not session_file(state, A).exists()
    assert continuation_file(state, B).exists()


# --- item 8: user-owned state survives rebuild ---------------------------------------------------


def test_rebuild_keeps_forget_promote_and_demote(corpus: dict[str, Any]) -> None:
    db, root = corpus["db"], corpus["root"]
    cli(db, "forget", A, "--yes")
    promoted = json.loads(
        cli(db, "promote", "--as", "ban", "never deploy on fridays", "--cwd", CWD, "--json")
    )
    mined = json.loads(cli(db, "memories", "list", "--mined", "--json"))
    linter = next(m for m in mined["mined"] if "linter" in m["content"])
    cli(db, "unpromote", str(linter["id"]))
    user_file = db.with_name("index.user.json")
    assert user_file.exists()
    cli(db, "rebuild", "--yes", "--projects-root", str(root))
    assert set(session_rows(db, A).values()) == {0} and MARK not in all_text(db)
    assert db_bytes(db).count(MARK.encode()) == 0
    mem = json.loads(cli(db, "memories", "list", "--mined", "--json"))
    assert [p["content"] for p in mem["promoted"]] == [promoted["content"]]
    assert not any("linter" in m["content"] for m in mem["mined"]), "a demoted memory came back"
    assert [d["content"] for d in mem["demoted"]] == [linter["content"]]
    ctx = json.loads(cli(db, "context", "--cwd", CWD, "--json"))
    bans = [i["content"] for i in ctx["sections"]["bans"]]
    assert "never deploy on fridays" in bans
    # a fresh index into a new file (the database deleted by hand) honours the same decisions
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    cli(db, "index", "--projects-root", str(root))
    assert set(session_rows(db, A).values()) == {0} and MARK not in all_text(db)
    assert db_bytes(db).count(MARK.encode()) == 0
    mem = json.loads(cli(db, "memories", "list", "--mined", "--json"))
    assert [p["content"] for p in mem["promoted"]] == [promoted["content"]]
    assert not any("linter" in m["content"] for m in mem["mined"])


def test_unpromote_removes_a_promotion_for_good(corpus: dict[str, Any]) -> None:
    db, root = corpus["db"], corpus["root"]
    res = json.loads(
        cli(db, "promote", "--as", "standing_decision", "use pnpm, not npm", "--cwd", CWD, "--json")
    )
    mem = json.loads(cli(db, "memories", "list", "--json"))
    assert [p["content"] for p in mem["promoted"]] == [res["content"]]
    text = cli(db, "memories", "list")
    assert "use pnpm, not npm" in text
    cli(db, "unpromote", str(mem["promoted"][0]["id"]))
    assert json.loads(cli(db, "memories", "list", "--json"))["promoted"] == []
    ctx = json.loads(cli(db, "context", "--cwd", CWD, "--json"))
    assert not any("pnpm" in i["content"] for i in ctx["sections"]["decisions"])
    cli(db, "rebuild", "--yes", "--projects-root", str(root))
    assert json.loads(cli(db, "memories", "list", "--json"))["promoted"] == []
    err = cli(db, "unpromote", "999999", code=2)
    assert "error:" in err and "memories list" in err


def test_promoted_text_is_scrubbed_in_the_index_and_the_user_file(corpus: dict[str, Any]) -> None:
    db = corpus["db"]
    token = "ghp_" + "Ab1" * 12
    cli(db, "promote", "--as", "ban", f"never paste {token} into chat", "--cwd", CWD)
    assert token not in all_text(db) and token.encode() not in db_bytes(db)
    assert token not in db.with_name("index.user.json").read_text()


def test_a_broken_user_file_is_a_one_line_error(corpus: dict[str, Any]) -> None:
    db = corpus["db"]
    cli(db, "promote", "--as", "ban", "never deploy on fridays", "--cwd", CWD)
    user_file = db.with_name("index.user.json")
    user_file.write_text("{not json")
    err = cli(db, "memories", "list", code=2)
    assert err.startswith("error:") and str(user_file) in err and "Traceback" not in err


# --- item 20: every writer takes the lock --------------------------------------------------------


def _hold_lock(db: Path) -> subprocess.Popen[bytes]:
    code = textwrap.dedent(f"""
        import time, pathlib
        from index.store.lock import writer_lock
        with writer_lock(pathlib.Path({str(db)!r})):
            print("held", flush=True)
            time.sleep(60)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE)
    assert p.stdout is not None and p.stdout.readline().strip() == b"held"
    return p


@pytest.mark.parametrize(
    "args",
    [
        ("forget", A, "--yes"),
        ("consolidate",),
        ("promote", "--as", "ban", "never deploy on fridays", "--cwd", CWD),
        ("unpromote", "1"),
        ("refine", "--model", "m", "--url", "http://127.0.0.1:9"),
        ("rebuild", "--yes"),
        ("vec", "backfill"),
        ("vec", "rebuild"),
    ],
    ids=lambda args: " ".join(args[:2]) if args[0] == "vec" else args[0],
)
def test_writers_wait_for_the_lock(corpus: dict[str, Any], args: tuple[str, ...]) -> None:
    from vec.driver import unavailable_reason

    if args[0] == "vec" and unavailable_reason():
        pytest.skip(unavailable_reason() or "")
    db, root = corpus["db"], corpus["root"]
    extra = ("--projects-root", str(root)) if args[0] == "rebuild" else ()
    before = all_text(db)
    holder = _hold_lock(db)
    try:
        err = cli(db, *args, *extra, "--wait", "0.3", code=2)
    finally:
        holder.kill()
        holder.wait()
    assert err.startswith("error:") and "another" in err, err
    assert db.exists() and all_text(db) == before, "the index was written while another run held the lock"


def test_an_unwritable_user_file_changes_nothing(
    corpus: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from index.store import userstate

    def full(*_: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    db = corpus["db"]
    monkeypatch.setattr(userstate.os, "replace", full)
    err = cli(db, "forget", A, "--yes", code=2)
    assert err.startswith("error: cannot write") and "nothing was changed" in err, err
    assert session_rows(db, A)["messages"] > 0
    assert not list(db.parent.glob(".index.user.json.*"))
