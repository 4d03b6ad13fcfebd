"""The CLI as people use it (issue 13): the same commands under a pseudo-terminal and in a pipe, the
exit-code table of the README row by row, JSON errors, `--since`/`--timezone`, finding a past session,
doctor, project labels and the offline model check."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from fixtures import make

from lib.settings import Settings

REPO = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
REPR = ("{'", "None", "[[", "['")
OWN = re.compile(r"\[\[SQLit")  # the test transcript's own wiki-link text, not a repr


def assert_no_repr(text: str) -> None:
    for bad in REPR:
        assert bad not in OWN.sub("", text), (bad, text[:800])


UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
    return {**env, "TOTAL_RECALL_HOME": str(home), "PAGER": "cat", "TERM": "xterm-256color", **extra}


def piped(db: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "total_recall", "--db", str(db), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=_env(db.parent / "home", **env),
    )


def on_tty(db: Path, *args: str, cols: int = 72, answer: bytes = b"", **env: str) -> tuple[int, str]:
    """Run under a pseudo-terminal `cols` wide (stdin, stdout and stderr are the terminal); type
    `answer` once the command has started. Returns the exit code and what the terminal showed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    p = subprocess.Popen(
        [sys.executable, "-m", "total_recall", "--db", str(db), *args],
        cwd=REPO,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=_env(db.parent / "home", **env),
        close_fds=True,
    )
    os.close(slave)
    out = b""
    sent = not answer
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        if not sent and b"?" in out:
            os.write(master, answer)
            sent = True
        if not ready and p.poll() is not None:
            break
    os.close(master)
    return p.wait(timeout=30), out.decode("utf-8", "replace").replace("\r\n", "\n")


def add_session(root: Path, name: str, cwd: str, prompt: str, answers: list[str]) -> str:
    sid = make.uid(name)
    s = make.Session(sid, cwd=cwd, t0=datetime(2026, 1, 12, 23, 30, tzinfo=timezone.utc))
    s.prompt(prompt)
    for text in answers:
        s.response(text=text)
    s.write(root / make.slug(cwd) / f"{sid}.jsonl")
    return sid


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("ux")
    root = base / "projects"
    make.build_corpus(root)
    # two projects with the same last path part, and a session with empty assistant texts
    add_session(root, "ux-api-work", "/home/dev/work/api", "tune the [[SQLite]] busy timeout", ["Raised it."])
    add_session(
        root, "ux-api-home", "/home/dev/home/api", "sketch the api for the garden", ["  ", "Done.", "\n"]
    )
    db = base / "index.db"
    p = piped(db, "index", "--projects-root", str(root), "--json")
    assert p.returncode == 0, p.stderr
    ban = piped(
        db, "promote", "--as", "ban", "--cwd", "/home/dev/projects/alpha", "never", "use", "moment.js"
    )
    assert ban.returncode == 0, ban.stderr
    return db


# ---------------------------------------------------------------------------------------------------
# the same commands on a terminal and in a pipe
# ---------------------------------------------------------------------------------------------------

COMMANDS = [
    ["sessions"],
    ["search", "config"],
    ["search", "--sessions", "config"],
    ["status"],
    ["recall"],
    ["inspect", make.uid("ux-api-home")],
    ["metrics", "summary"],
    ["metrics", "cost"],
    ["metrics", "sessions"],
    ["metrics", "topics"],
    ["sources"],
    ["memories", "list", "--mined"],
    ["check-banned", "--scope", "global", "left-pad"],
    ["consolidate"],
    ["doctor"],
    ["profile", "workflow"],
    ["context", "--cwd", "/home/dev/projects/alpha"],
    ["metrics", "health"],
    ["metrics", "rates"],
    ["adaptive"],
    ["vec", "status"],
]


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_piped_output_is_plain_text_without_repr(db: Path, cmd: list[str]) -> None:
    p = piped(db, *cmd)
    assert p.returncode in (0, 1), p.stderr
    assert p.stdout.strip(), p.stderr
    assert not ANSI.search(p.stdout), p.stdout[:300]  # no colour in a pipe
    assert_no_repr(p.stdout)
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_terminal_output_fits_the_width_and_has_no_repr(db: Path, cmd: list[str]) -> None:
    code, shown = on_tty(db, *cmd, cols=64)
    assert code in (0, 1), shown
    text = ANSI.sub("", shown)
    for line in text.splitlines():  # a shell line to copy (the resume line) is left whole
        assert len(line) <= 64 or "claude --resume" in line, (len(line), line)
    assert_no_repr(text)


@pytest.mark.parametrize("cmd", [["sessions"], ["search", "config"], ["recall"], ["metrics", "summary"]])
def test_colour_on_a_terminal_only_and_never_with_no_color(db: Path, cmd: list[str]) -> None:
    _, coloured = on_tty(db, *cmd)
    assert ANSI.search(coloured), coloured[:300]
    _, plain = on_tty(db, *cmd, NO_COLOR="1")
    assert not ANSI.search(plain), plain[:300]
    assert ANSI.sub("", coloured).split() == plain.split()  # the same text, without the colour


def test_search_highlights_like_ripgrep_without_brackets(db: Path) -> None:
    _, shown = on_tty(db, "search", "sqlite")
    assert "\x1b[1;31mSQLite\x1b[0m" in shown  # the match in bold red
    assert "[[SQLite]]" in ANSI.sub("", shown)  # the text's own brackets stay, no marks are added
    p = piped(db, "search", "sqlite")
    assert "[[SQLite]]" in p.stdout and "[[[" not in p.stdout


def test_csv_names_the_columns_of_key_value_tables(db: Path) -> None:
    for cmd in (["metrics", "summary"], ["metrics", "health"]):
        p = piped(db, *cmd, "--format", "csv")
        assert p.stdout.splitlines()[0] == "section,item,value", (cmd, p.stdout[:200])


def test_commands_printing_several_tables_name_each_row_s_table_in_a_pipe(db: Path) -> None:
    """Several tables piped as TSV would run together; each row starts with its table's name."""
    p = piped(db, "metrics", "summary")
    rows = [line.split("\t") for line in p.stdout.splitlines()]
    sections = {r[0] for r in rows}
    assert {"usage", "models"} <= sections, p.stdout[:400]
    assert all(len(r) == 3 for r in rows if r[0] == "usage"), rows
    assert all(len(r) == 5 for r in rows if r[0] == "models"), rows
    assert "sessions" in {r[1] for r in rows if r[0] == "usage"}
    single = piped(db, "sessions", "-n", "5")  # a one-table command keeps its plain rows
    assert all(not line.startswith(("usage\t", "models\t")) for line in single.stdout.splitlines())


def test_sessions_piped_is_tsv_for_fzf(db: Path) -> None:
    p = piped(db, "sessions", "-n", "100")
    rows = [line.split("\t") for line in p.stdout.splitlines()]
    assert len(rows) > 5 and all(len(r) == 5 for r in rows)  # date, project, title, size, id
    assert all(UUID.match(r[4]) for r in rows)
    assert all(re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d$", r[0]) for r in rows)
    assert [r[0] for r in rows] == sorted((r[0] for r in rows), reverse=True)  # newest first
    assert {"work/api", "home/api"} <= {r[1] for r in rows}  # unique labels for two `api` projects


def test_sessions_filters_and_formats(db: Path) -> None:
    garden = piped(db, "sessions", "garden")
    assert [line.split("\t")[4] for line in garden.stdout.splitlines()] == [make.uid("ux-api-home")]
    by_project = piped(db, "sessions", "--project", "work/api", "--format", "json")
    doc = json.loads(by_project.stdout)
    assert [d["session_id"] for d in doc] == [make.uid("ux-api-work")]
    assert doc[0]["resume"] == f"cd /home/dev/work/api && claude --resume {make.uid('ux-api-work')}"
    table = piped(db, "sessions", "--format", "csv", "-n", "3")
    rows = list(csv.reader(io.StringIO(table.stdout)))
    assert rows[0] == ["date", "project", "title", "size", "id"] and len(rows) == 4


def test_search_sessions_prints_the_resume_line(db: Path) -> None:
    _, shown = on_tty(db, "search", "--sessions", "garden", NO_COLOR="1")
    assert f"cd /home/dev/home/api && claude --resume {make.uid('ux-api-home')}" in shown
    p = piped(db, "search", "--sessions", "garden")
    assert (
        p.stdout.split("\t")[-1].strip()
        == f"cd /home/dev/home/api && claude --resume {make.uid('ux-api-home')}"
    )


def test_inspect_shows_everything_and_says_what_it_cut(db: Path) -> None:
    sid = make.uid("ux-api-home")
    p = piped(db, "inspect", sid[:8])
    assert p.returncode == 0, p.stderr
    assert f"resume:      cd /home/dev/home/api && claude --resume {sid}" in p.stdout
    assert "sketch the api for the garden" in p.stdout and "Done." in p.stdout
    assert "2 empty messages left out" in p.stdout  # not two blank `assistant` lines
    assert "home/api (/home/dev/home/api)" in p.stdout
    cut = piped(db, "inspect", sid, "--messages", "1")
    talk = cut.stdout.split("conversation (")[1]
    assert "the first 1 shown" in talk and "sketch the api" in talk and "Done." not in talk
    doc = json.loads(piped(db, "inspect", sid, "--json").stdout)
    assert {"tools", "files_edited", "extractions", "resume", "conversation_messages"} <= set(doc)


def test_export_skips_empty_blocks(db: Path) -> None:
    p = piped(db, "export", make.uid("ux-api-home"))
    blocks = p.stdout.split("### ")[1:]
    assert len(blocks) == 2  # the prompt and "Done."; the two blank answers are left out
    assert all(b.split("\n\n", 1)[1].strip() for b in blocks)


# ---------------------------------------------------------------------------------------------------
# the exit-code table (README "Exit codes"), one test per row
# ---------------------------------------------------------------------------------------------------


def test_exit_0_success(db: Path) -> None:
    assert piped(db, "status").returncode == 0
    assert piped(db, "search", "config").returncode == 0


def test_exit_1_search_finds_nothing(db: Path) -> None:
    p = piped(db, "search", "zzqxv")
    assert p.returncode == 1 and p.stdout == "" and "no matches" in p.stderr
    assert piped(db, "search", "zzqxv", "--json").stdout.strip() == "[]"
    assert piped(db, "search", "--sessions", "zzqxv").returncode == 1


def test_exit_1_recall_and_sessions_find_nothing(db: Path) -> None:
    assert piped(db, "recall", "zzqxv").returncode == 1
    assert piped(db, "sessions", "zzqxv").returncode == 1


def test_exit_1_doctor_finds_a_problem(tmp_path: Path) -> None:
    bad = tmp_path / "index.db"
    bad.write_bytes(bytes(range(256)) * 64)
    p = piped(bad, "doctor", "--json")
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and not doc["ok"]
    index = [c for c in doc["checks"] if c["check"] == "index"]
    assert index and index[0]["status"] == "fail" and "rebuild" in index[0]["fix"]


def test_exit_2_usage_errors(db: Path) -> None:
    for args in (
        ["recall", "--kind", "nope"],
        ["search", "--kind", "nope", "x"],
        ["search", "--format", "yaml", "x"],
        ["sessions", "--limit", "0"],
        ["completion", "tcsh"],
        ["no-such-command"],
    ):
        p = piped(db, *args)
        assert p.returncode == 2, (args, p.stderr)
        assert "Traceback" not in p.stderr and p.stdout == ""
    assert "decision" in piped(db, "recall", "--kind", "nope").stderr  # names the accepted kinds


def test_exit_2_errors(tmp_path: Path, db: Path) -> None:
    p = piped(tmp_path / "none.db", "search", "x")
    assert p.returncode == 2 and p.stderr.startswith("error: no index") and "total-recall index" in p.stderr
    assert piped(db, "search", "x", "--since", "last tuesday").returncode == 2


def test_exit_3_check_banned_finds_a_ban(db: Path) -> None:
    p = piped(db, "check-banned", "--cwd", "/home/dev/projects/alpha", "moment.js")
    assert p.returncode == 3 and "banned" in p.stdout, p.stdout + p.stderr
    doc = json.loads(
        piped(db, "check-banned", "--cwd", "/home/dev/projects/alpha", "--json", "moment.js").stdout
    )
    assert doc["verdict"] == "banned"
    assert piped(db, "check-banned", "--cwd", "/home/dev/projects/alpha", "left-pad").returncode == 0


def test_json_errors_are_one_document_on_stdout(db: Path, tmp_path: Path) -> None:
    usage = piped(db, "search", "--json", "--limit", "0", "x")
    assert usage.returncode == 2 and usage.stderr == ""
    assert json.loads(usage.stdout)["error"]["code"] == "usage"
    missing = piped(db, "inspect", "nope", "--json")
    err = json.loads(missing.stdout)["error"]
    assert missing.returncode == 2 and err["code"] == "not_found" and "total-recall sessions" in err["fix"]
    assert set(err) == {"code", "message", "fix"}
    # a query word that happens to be `--json` after `--` is text, not the option
    assert not piped(db, "search", "zzqxv", "--", "--json").stdout.startswith("{")


# ---------------------------------------------------------------------------------------------------
# version, help, completion
# ---------------------------------------------------------------------------------------------------


def test_version_option(db: Path) -> None:
    p = piped(db, "--version")
    assert p.returncode == 0 and re.match(r"^total-recall \d+\.\d+", p.stdout)


def _commands() -> list[tuple[str, object]]:
    import click

    from total_recall.cli import cli

    out: list[tuple[str, object]] = [("", cli)]
    ctx = click.Context(cli)

    def walk(group: click.Group, path: str) -> None:
        # Through click's lookup, not `group.commands`: the CLI adds its other commands when one is
        # first looked up or listed, so a walk of the dict alone would see only `index` and `version`.
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            assert cmd is not None, name
            out.append((f"{path} {name}".strip(), cmd))
            if isinstance(cmd, click.Group):
                walk(cmd, f"{path} {name}")

    walk(cli, "")
    assert {"index", "search", "mcp", "vec status"} <= {
        path for path, _ in out
    }  # every command, not the eager few
    return out


def test_every_command_has_examples_and_its_options_help() -> None:
    import click

    for path, cmd in _commands():
        assert isinstance(cmd, click.Command)
        assert cmd.epilog and "Examples:" in cmd.epilog and "$ total-recall" in cmd.epilog, path
        for param in cmd.params:
            if isinstance(param, click.Option) and param.name in ("as_json", "project", "cwd", "since"):
                assert param.help, (path, param.name)


def test_help_shows_examples_unwrapped(db: Path) -> None:
    p = piped(db, "search", "--help")
    assert "Examples:" in p.stdout and "  $ total-recall search --sessions --since 2w migration" in p.stdout


def test_completion_scripts(db: Path) -> None:
    for shell in ("bash", "zsh", "fish"):
        p = piped(db, "completion", shell)
        assert p.returncode == 0 and "_TOTAL_RECALL_COMPLETE" in p.stdout, shell


# ---------------------------------------------------------------------------------------------------
# --since, --timezone
# ---------------------------------------------------------------------------------------------------


def test_since_words_and_calendar_units() -> None:
    from index.store import BadFilter, parse_since, zone

    now = datetime(2026, 3, 31, 10, 0, tzinfo=timezone.utc)
    assert parse_since("3mo", now) == "2025-12-31T10:00:00.000Z"
    assert parse_since("1y", now) == "2025-03-31T10:00:00.000Z"
    assert parse_since("2 weeks", now) == "2026-03-17T10:00:00.000Z"
    assert parse_since("30m", now) == "2026-03-31T09:30:00.000Z"  # m stays minutes
    assert parse_since("today", now) == "2026-03-31T00:00:00.000Z"
    assert parse_since("yesterday", now) == "2026-03-30T00:00:00.000Z"
    ny = zone("America/New_York")
    assert parse_since("today", now, tz=ny) == "2026-03-31T04:00:00.000Z"  # midnight in New York (EDT)
    assert parse_since("2026-10-01", now, tz=ny) == "2026-10-01T04:00:00.000Z"
    for bad in ("last tuesday", "3 parsecs", "mo"):
        with pytest.raises(BadFilter):
            parse_since(bad, now)
    with pytest.raises(BadFilter):
        zone("Mars/Olympus")


def test_cost_days_follow_the_timezone(db: Path) -> None:
    from index.stats import cost_report, load_catalog
    from index.store import open_reader, zone

    conn = open_reader(db)
    cat = load_catalog(())
    utc = {r["period"] for r in cost_report(conn, cat, by="day", tz=zone("UTC"))["rows"]}
    west = {r["period"] for r in cost_report(conn, cat, by="day", tz=zone("Pacific/Pago_Pago"))["rows"]}
    east = {r["period"] for r in cost_report(conn, cat, by="day", tz=zone("Pacific/Kiritimati"))["rows"]}
    assert "2026-01-12" in utc  # the 23:30 UTC session
    assert (
        "2026-01-13" in east and "2026-01-12" in west and "2026-01-09" in west
    )  # 09:00 UTC is the 9th at -11
    p = piped(db, "metrics", "cost", "--timezone", "Nowhere/Land")
    assert p.returncode == 2 and "--timezone" in p.stderr


# ---------------------------------------------------------------------------------------------------
# doctor, labels, confirmation, the offline model
# ---------------------------------------------------------------------------------------------------


def test_doctor_runs_without_an_index(tmp_path: Path) -> None:
    p = piped(tmp_path / "nowhere" / "index.db", "doctor", "--json")
    doc = json.loads(p.stdout)
    names = {c["check"] for c in doc["checks"]}
    assert {
        "CLI on PATH",
        "plugin registered",
        "claude binary",
        "hook events",
        "disk space",
        "index",
    } <= names
    assert names & {"vector extras", "embedding model"}
    index = next(c for c in doc["checks"] if c["check"] == "index")
    assert index["status"] == "warn" and "total-recall index" in index["fix"]
    assert not (tmp_path / "nowhere" / "index.db").exists()


def test_project_labels_are_unique_and_short() -> None:
    from lib.project import project_labels

    keys = [
        "/home/a/M-Claude",
        "/work/b/M-Claude",
        "/srv/solo",
        "C:\\",
        "/x/-experiments",
        "/p/q/api",
        "/r/q/api",
    ]
    got = project_labels(keys)
    assert got["/srv/solo"] == "solo"
    assert got["/home/a/M-Claude"] == "a/M-Claude" and got["/work/b/M-Claude"] == "b/M-Claude"
    assert got["/p/q/api"] == "p/q/api" and got["/r/q/api"] == "r/q/api"
    assert got["C:\\"] == "C:\\"
    assert len(set(got.values())) == len(keys)


def test_split_marks_keeps_the_texts_own_brackets() -> None:
    from index.store import split_marks
    from index.store.textstore import snippet

    marked = snippet("we keep [[SQLite]] notes and sqlite3 files", ["sqlite"])
    parts = split_marks(marked, ["sqlite"])
    assert "".join(p for p, _ in parts) == "we keep [[SQLite]] notes and sqlite3 files"
    assert [p for p, hit in parts if hit] == ["SQLite", "sqlite3"]


def test_destructive_commands_confirm_on_a_terminal(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    sid = add_session(root, "ux-forget-me", "/home/dev/forget", "a session to forget", ["ok."])
    db = tmp_path / "index.db"
    assert piped(db, "index", "--projects-root", str(root)).returncode == 0
    scripted = piped(db, "forget", sid)  # no terminal: no question, an error naming --yes
    assert scripted.returncode == 2 and "--yes" in scripted.stderr
    for args in (
        ["rebuild", "--projects-root", str(root)],
        ["uninstall", "--purge", "--claude", "/nonexistent"],
    ):
        p = piped(db, *args, CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))
        assert p.returncode == 2 and "--yes" in p.stderr, (args, p.stderr)
    assert not (tmp_path / "claude").exists()
    code, shown = on_tty(db, "forget", sid, answer=b"n\n")
    assert "Forget 1 session for good?" in shown and code == 1
    assert piped(db, "sessions", "forget").returncode == 0  # still there
    code, shown = on_tty(db, "forget", sid, answer=b"y\n")
    assert code == 0 and "forgot 1 session" in shown
    assert piped(db, "sessions", "forget").returncode == 1


def test_a_missing_model_fails_fast_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import vec.embed as embed

    monkeypatch.setenv("TOTAL_RECALL_HOME", str(tmp_path))
    monkeypatch.delenv("TOTAL_RECALL_EMBED_MODEL_PATH", raising=False)
    monkeypatch.delenv("TOTAL_RECALL_EMBED_MODEL", raising=False)
    monkeypatch.setattr(embed, "reachable", lambda: False)
    cfg = embed.model_config(Settings.from_env())
    assert embed.model_on_disk(cfg) is False
    start = time.monotonic()
    with pytest.raises(embed.EmbedError, match="TOTAL_RECALL_EMBED_MODEL_PATH"):
        embed.Embedder(cfg).embed(["hello"])
    assert time.monotonic() - start < 1.0


def test_cells_are_text_never_repr(capsys: pytest.CaptureFixture[str]) -> None:
    from total_recall.render import Col, emit_rows, text_of

    assert text_of(None) == "" and text_of({"abandoned": 62}) == "abandoned=62"
    assert text_of([["ex", 166], ["ok", 3]]) == "ex 166, ok 3" and text_of(True) == "yes"
    assert text_of(12345) == "12,345" and text_of(12345, human=False) == "12345"
    emit_rows([Col("a"), Col("b")], [["x\ty\nz", None], ["w", 1234]], "tsv")
    assert capsys.readouterr().out == "x y z\t\nw\t1234\n"  # one line a row, tab-separated, no header
    emit_rows([Col("a", key="k")], [{"k": {"n": 1}}], "json")
    assert json.loads(capsys.readouterr().out) == [{"k": {"n": 1}}]


def test_no_command_prints_the_help_not_an_error(db: Path) -> None:
    bare = subprocess.run([sys.executable, "-m", "total_recall"], capture_output=True, text=True, cwd=REPO)
    for said in (bare.stdout + bare.stderr, piped(db, "metrics").stdout + piped(db, "metrics").stderr):
        assert "Commands:" in said and "Error" not in said, said[:300]
