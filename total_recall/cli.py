"""`total-recall` command line (design.md §3). Each command is thin: it calls the index API."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from index.retrieval import ERROR_CHARS
from index.store import (
    BadFilter,
    Filters,
    IndexError_,
    IndexUnavailable,
    access_problem,
    open_existing_writer,
    open_failure,
    open_reader,
    parse_since,
)
from lib.paths import db_path
from lib.project import display_name
from lib.text import clip
from total_recall.output import cell, checked_roots, console, emit_json, fail, label, short, terminal_safe
from vec import register as register_vectors
from vec.store import VecError


class Ctx:
    def __init__(self, db: str | None, verbose: bool) -> None:
        self.db = db_path(db)
        self.verbose = verbose


class _Group(click.Group):
    """Turns known errors into one line with a fix; tracebacks only with --verbose. Every command runs
    with its output filtered for control characters, and click's own usage errors are clipped."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        with terminal_safe():
            return super().main(*args, **kwargs)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _clipped_usage():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _clipped_usage():
                return super().invoke(ctx)
        except (IndexError_, BadFilter, VecError, PermissionError, sqlite3.Error) as exc:
            if getattr(ctx.obj, "verbose", False):  # the parsed --verbose of this command line
                raise
            fail(*_explain(exc, getattr(ctx.obj, "db", None) or db_path(None)))


def _explain(exc: Exception, db: Path) -> tuple[str, str]:
    """What went wrong and the fix for it. A permission problem or an SQLite error is told apart from
    damage (only damage may be fixed by a rebuild, which deletes the index)."""
    if isinstance(exc, PermissionError):  # e.g. the writer lock beside an index in a read-only folder
        err: IndexError_ = (
            access_problem(Path(exc.filename), write=True) if exc.filename else None
        ) or IndexUnavailable(f"permission denied: {exc}")
    elif isinstance(exc, sqlite3.Error):
        err = open_failure(db, exc)
    else:
        return str(exc), getattr(exc, "fix", "")
    return str(err), err.fix


@contextlib.contextmanager
def _clipped_usage() -> Iterator[None]:
    """Click's usage errors quote the bad value whole: clip it like every other error."""
    try:
        yield
    except click.UsageError as exc:
        raise click.UsageError(clip(exc.format_message(), ERROR_CHARS), exc.ctx) from None
    except click.ClickException as exc:
        raise click.ClickException(clip(exc.format_message(), ERROR_CHARS)) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", envvar=None, help="Index DB path (default: TOTAL_RECALL_DB or the data dir).")
@click.option("--verbose", "-v", is_flag=True, help="Show tracebacks.")
@click.pass_context
def cli(ctx: click.Context, db: str | None, verbose: bool) -> None:
    """total-recall: local memory for coding agents, mined from Claude Code transcripts."""
    register_vectors()  # index/ ranks, reports and indexes with vectors when a store exists
    ctx.obj = Ctx(db, verbose)


@cli.command()
@click.option("--projects-root", "roots", multiple=True, help="Transcript root (repeatable).")
@click.option("--full", is_flag=True, help="Re-read every file from the start.")
@click.option(
    "--jobs",
    "-j",
    default=None,
    type=click.IntRange(1, 64),
    help="Parser processes (default: the CPU count, at most 4; runs with one changed file stay in-process).",
)
@click.option(
    "--wait",
    default=120.0,
    show_default=True,
    type=click.FloatRange(0, 3600),
    help="Seconds to wait for another index run (e.g. one a hook started) to finish.",
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def index(obj: Ctx, roots: tuple[str, ...], full: bool, jobs: int | None, wait: float, as_json: bool) -> None:
    """Index new transcript bytes (incremental; O(appended bytes))."""
    from hooks.spawn import lower_priority
    from index.store import run_index

    lower_priority()  # batch work: hooks that start meanwhile get the CPU first
    jobs = jobs or min(4, os.cpu_count() or 1)
    paths = checked_roots(roots)
    if as_json or not sys.stderr.isatty():
        report = run_index(obj.db, paths, full=full, jobs=jobs, wait=wait)
    else:
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            transient=True,
            console=console(),
        ) as bar:
            task = bar.add_task("indexing", total=None)

            def tick(done: int, total: int, path: str) -> None:
                bar.update(
                    task,
                    completed=done,
                    total=total,
                    description=f"indexing {label(Path(path).parent.name[:30])}",
                )

            report = run_index(obj.db, paths, full=full, jobs=jobs, progress=tick, wait=wait)
    if as_json:
        emit_json(report.to_json())
        return
    bad = sum(report.bad_lines.values())
    click.echo(
        f"indexed {report.files - report.files_unchanged} changed files ({report.files_unchanged} unchanged), "
        f"{report.records} records, +{report.messages_added} messages, +{report.extractions_added} extractions, "
        f"{bad} bad lines skipped, {report.bytes_read / 1e6:.1f} MB in {report.elapsed_s:.2f}s"
    )
    for err in report.errors[:5]:
        click.echo(f"warning: {err}", err=True)


def _filters(
    project: str | None,
    cwd: str | None,
    since: str | None,
    role: str | None,
    kind: str | None,
    session: str | None,
) -> Filters:
    return Filters(project=project, cwd=cwd, since=parse_since(since), role=role, kind=kind, session=session)


@cli.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 500))
@click.option("--project")
@click.option("--cwd")
@click.option("--since", help="7d, 12h, 2w or an ISO date.")
@click.option("--role", type=click.Choice(["user", "assistant", "system"]))
@click.option("--kind", help="Message kind: prompt, text, tool_use, tool_result, …")
@click.option("--session", help="Session id (or prefix).")
@click.option("--sessions", "by_session", is_flag=True, help="Rank whole sessions.")
@click.option(
    "--mode",
    type=click.Choice(["auto", "fts", "hybrid"]),
    default="auto",
    show_default=True,
    help="auto: add vectors when a vector store exists (loads the model: ~0.5 s per process).",
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def search(
    obj: Ctx,
    query: tuple[str, ...],
    limit: int,
    project: str | None,
    cwd: str | None,
    since: str | None,
    role: str | None,
    kind: str | None,
    session: str | None,
    by_session: bool,
    mode: str,
    as_json: bool,
) -> None:
    """Full-text (and, with vectors, hybrid) search over past messages."""
    from index.retrieval import search_messages, search_sessions

    f = _filters(project, cwd, since, role, kind, session)
    conn = open_reader(obj.db)
    text = " ".join(query)
    hybrid = {"auto": None, "fts": False, "hybrid": True}[mode]
    if by_session:
        sessions = search_sessions(conn, text, f, limit, hybrid=hybrid)
        if as_json:
            emit_json([s.to_json() for s in sessions])
            return
        _print_sessions(sessions)
        return
    hits = search_messages(conn, text, f, limit, hybrid=hybrid)
    if as_json:
        emit_json([h.to_json() for h in hits])
        return
    _print_hits(hits)


def _print_hits(hits: list[Any]) -> None:
    if not hits:
        click.echo("no matches")
        return
    for h in hits:
        when = (h.ts or "")[:16].replace("T", " ")
        click.echo(f"{when}  {display_name(h.project)}  {h.session_id[:8]}  {h.role}/{h.kind}")
        click.echo(f"    {short(h.snippet, 220)}")


def _print_sessions(sessions: list[Any]) -> None:
    if not sessions:
        click.echo("no matching sessions")
        return
    for s in sessions:
        click.echo(
            f"{s.session_id[:8]}  {(s.last_ts or '')[:10]}  {display_name(s.project)}  "
            f"{short(s.title, 70)}  (score {s.score:.2f})"
        )
        for h in s.hits:
            click.echo(f"    {h.role}/{h.kind}: {short(h.snippet, 140)}")


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def status(obj: Ctx, as_json: bool) -> None:
    """What the index holds and when it last ran."""
    from index.stats import status as q_status

    data = q_status(open_reader(obj.db), obj.db)
    if as_json:
        emit_json(data)
        return
    from rich.table import Table

    t = Table(box=None, show_header=False)
    for k, v in data.items():
        if k == "extractions_by_kind":
            v = ", ".join(f"{a}={b}" for a, b in sorted(v.items())) or "none"
        t.add_row(cell(k), cell(v))
    console().print(t)


@cli.command()
@click.argument("session_id")
@click.option("--messages", default=40, show_default=True, type=click.IntRange(0, 10000))
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def inspect(obj: Ctx, session_id: str, messages: int, as_json: bool) -> None:
    """Everything the index knows about one session."""
    from index.stats import find_session, inspect_session

    conn = open_reader(obj.db)
    sid = find_session(conn, session_id) or session_id
    data = inspect_session(conn, sid, messages)
    if data is None:
        fail(
            f"no session {session_id!r} in the index", "find one with `total-recall search --sessions TOPIC`"
        )
    if as_json:
        emit_json(data)
        return
    click.echo(f"session {data['session_id']}  {data.get('title') or ''}")
    for k in (
        "project_key",
        "cwd",
        "git_branch",
        "first_ts",
        "last_ts",
        "n_messages",
        "n_prompts",
        "models",
        "resumed_from",
        "source_file",
        "source_state",
    ):
        click.echo(f"  {k}: {data.get(k)}")
    click.echo(
        f"  agents: {len(data['agents'])}, compactions: {len(data['compactions'])}, "
        f"off-main-branch messages: {data['off_main_branch']}"
    )
    for m in data["messages"]:
        click.echo(f"  {(m['ts'] or '')[:19]} {m['role']}/{m['kind']}: {short(m['text'], 120)}")


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def doctor(obj: Ctx, as_json: bool) -> None:
    """Check the index: schema, integrity, FTS, sources."""
    from index.stats import doctor as q_doctor

    checks = q_doctor(open_existing_writer(obj.db))
    ok = all(c[1] for c in checks)
    if as_json:
        emit_json({"ok": ok, "checks": [{"check": c, "ok": o, "detail": d} for c, o, d in checks]})
    else:
        for c, o, d in checks:
            click.echo(f"{'ok ' if o else 'BAD'}  {c}: {d}")
    if not ok:
        sys.exit(1)


@cli.command()
def version() -> None:
    """Print the version."""
    from importlib.metadata import version as v

    click.echo(v("total-recall"))


def _register() -> None:
    """Command modules import their heavy dependencies inside the commands, so this stays cheap."""
    from mcp_server.cli import register as register_mcp
    from total_recall import (
        cmd_bans,
        cmd_context,
        cmd_feedback,
        cmd_install,
        cmd_manage,
        cmd_memories,
        cmd_metrics,
        cmd_refine,
        cmd_vec,
    )
    from total_recall.cmd_eval import eval_group
    from total_recall.cmd_recall import dump, extractors, recall
    from total_recall.demo import demo

    for cmd in (demo, recall, dump):
        cli.add_command(cmd)
    eval_group.add_command(extractors)
    cli.add_command(eval_group)
    cmd_manage.register(cli)
    cmd_memories.register(cli)
    cmd_metrics.register(cli)
    cmd_vec.register(cli)
    cmd_install.register(cli)
    cmd_context.register(cli)
    cmd_bans.register(cli)
    cmd_feedback.register(cli)
    cmd_refine.register(cli)
    register_mcp(cli)


_register()
