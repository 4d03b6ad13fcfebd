"""`total-recall` command line (design.md §3). Each command is thin: it calls the index API."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from index.retrieval import ERROR_CHARS
from index.store import (
    BadFilter,
    IndexError_,
    IndexUnavailable,
    access_problem,
    open_failure,
)
from lib import sqlite
from lib.settings import Settings
from lib.sources import AGENTS
from lib.text import clip
from total_recall.cmd_shell import add_examples
from total_recall.cmd_sources import index_roots
from total_recall.options import json_option
from total_recall.output import (
    console,
    emit_json,
    fail,
    json_errors,
    json_wanted,
    label,
    terminal_safe,
)
from total_recall.render import duration, plural, say, size
from vec import register as register_vectors
from vec.errors import VecError


class Ctx:
    """What every command is handed: the settings (the environment, read once here), the DB path."""

    def __init__(self, db: str | None, verbose: bool, settings: Settings) -> None:
        self.settings = settings
        self.db = settings.db_path(db)
        self.verbose = verbose


class _Group(click.Group):
    """Turns known errors into one line with a fix (one JSON document when JSON was asked for);
    tracebacks only with --verbose. Every command runs with its output filtered for control characters,
    and click's own usage errors are clipped."""

    def main(self, args: Any = None, *rest: Any, **kwargs: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        with terminal_safe(), json_errors(argv):
            return super().main(argv, *rest, **kwargs)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:  # not one of this module's own (`index`, `version`)
            _register()
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        _register()
        return super().list_commands(ctx)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _clipped_usage():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _clipped_usage():
                return super().invoke(ctx)
        except (IndexError_, BadFilter, VecError, PermissionError, sqlite.Error) as exc:
            if getattr(ctx.obj, "verbose", False):  # the parsed --verbose of this command line
                raise
            fail(
                *_explain(exc, getattr(ctx.obj, "db", None) or Settings.from_env().db_path()), kind=_kind(exc)
            )


def _explain(exc: Exception, db: Path) -> tuple[str, str]:
    """What went wrong and the fix for it. A permission problem or an SQLite error is told apart from
    damage (only damage may be fixed by a rebuild, which deletes the index)."""
    if isinstance(exc, PermissionError):  # e.g. the writer lock beside an index in a read-only folder
        err: IndexError_ = (
            access_problem(Path(exc.filename), write=True) if exc.filename else None
        ) or IndexUnavailable(f"permission denied: {exc}")
    elif isinstance(exc, sqlite.Error):
        err = open_failure(db, exc)
    else:
        return str(exc), getattr(exc, "fix", "")
    return str(err), err.fix


def _kind(exc: Exception) -> str:
    """The JSON error code of an exception: its class in snake case (`IndexMissing` -> index_missing)."""
    if isinstance(exc, PermissionError):
        return "permission_denied"
    name = type(exc).__name__.rstrip("_")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


@contextlib.contextmanager
def _clipped_usage() -> Iterator[None]:
    """Click's usage errors quote the bad value whole: clip it like every other error. They exit 2; with
    --json they are one JSON document (`fail`)."""
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:
        raise  # no command: the help, whole
    except click.UsageError as exc:
        if json_wanted():
            fail(exc.format_message(), f"see `{_usage_of(exc)} --help`", kind="usage")
        raise click.UsageError(clip(exc.format_message(), ERROR_CHARS), exc.ctx) from None
    except click.ClickException as exc:
        if json_wanted():
            fail(exc.format_message(), code=exc.exit_code)
        raise click.ClickException(clip(exc.format_message(), ERROR_CHARS)) from None


def _usage_of(exc: click.UsageError) -> str:
    return exc.ctx.command_path if exc.ctx else "total-recall"


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="total-recall", prog_name="total-recall", message="%(prog)s %(version)s")
@click.option("--db", envvar=None, help="Index DB path (default: TOTAL_RECALL_DB or the data dir).")
@click.option("--verbose", "-v", is_flag=True, help="Show tracebacks.")
@click.pass_context
def cli(ctx: click.Context, db: str | None, verbose: bool) -> None:
    """total-recall: local memory for coding agents, mined from Claude Code transcripts.

    Output fits the terminal, and is tab-separated lines in a pipe (--format, --json). Exit codes: 0 ok,
    1 nothing found (or a check failed), 2 usage or other error, 3 `check-banned` found a ban."""
    settings = Settings.from_env()
    register_vectors(settings)  # index/ ranks, reports and indexes with vectors when a store exists
    ctx.obj = Ctx(db, verbose, settings)


@cli.command()
@click.option("--projects-root", "roots", multiple=True, help="Transcript root (repeatable).")
@click.option("--full", is_flag=True, help="Re-read every file from the start.")
@click.option(
    "--jobs",
    "-j",
    default=None,
    type=click.IntRange(1, 64),
    help="Processes that parse: the writer and N − 1 parser processes (default: the CPU count, at most 4;"
    " runs with one changed file stay in-process).",
)
@click.option(
    "--wait",
    default=120.0,
    show_default=True,
    type=click.FloatRange(0, 3600),
    help="Seconds to wait for another index run (e.g. one a hook started) to finish.",
)
@click.option("--agent", type=click.Choice(AGENTS), help="Index only this coding agent's sessions.")
@json_option
@click.pass_obj
def index(
    obj: Ctx,
    roots: tuple[str, ...],
    full: bool,
    jobs: int | None,
    wait: float,
    agent: str | None,
    as_json: bool,
) -> None:
    """Index new transcript bytes (incremental; O(appended bytes)): Claude Code's, and every enabled
    agent's (`total-recall sources`) unless --projects-root names the roots to read."""
    from hooks.spawn import lower_priority
    from index.store import run_index

    lower_priority()  # batch work: hooks that start meanwhile get the CPU first
    jobs = jobs or min(4, os.cpu_count() or 1)
    paths, agents = index_roots(obj.db, roots, agent, obj.settings)
    if as_json or not sys.stderr.isatty():
        report = run_index(obj.db, paths, full=full, jobs=jobs, wait=wait, agents=agents)
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

            report = run_index(obj.db, paths, full=full, jobs=jobs, progress=tick, wait=wait, agents=agents)
    if as_json:
        emit_json(report.to_json())
        return
    bad = sum(report.bad_lines.values())
    say(
        f"indexed {plural(report.files - report.files_unchanged - report.files_skipped, 'changed file')} "
        f"({report.files_unchanged:,} unchanged), {plural(report.records, 'record')}, "
        f"+{plural(report.messages_added, 'message')}, +{plural(report.extractions_added, 'extraction')}, "
        f"{plural(bad, 'bad line')} skipped, {size(report.bytes_read)} in {duration(report.elapsed_s)}"
        + (
            f"; {plural(report.files_skipped, 'file')} left unread (parser failed)"
            if report.files_skipped
            else ""
        )
    )
    for err in report.errors[:5]:
        click.echo(f"warning: {err}", err=True)


@cli.command()
def version() -> None:
    """Print the version."""
    from importlib.metadata import version as v

    click.echo(v("total-recall"))


@functools.cache
def _register() -> None:
    """Every other command, added the first time one is looked up or listed: a run of `index` (defined
    here) does not import the other commands' modules (≈ 0.02 CPU-s, before a full index's parsers fork).
    Command modules import their heavy dependencies inside the commands, so this stays cheap."""
    from mcp_server.cli import register as register_mcp
    from total_recall import (
        cmd_bans,
        cmd_context,
        cmd_digest,
        cmd_doctor,
        cmd_feedback,
        cmd_install,
        cmd_manage,
        cmd_memories,
        cmd_metrics,
        cmd_refine,
        cmd_search,
        cmd_server,
        cmd_shell,
        cmd_sources,
        cmd_team,
        cmd_ui,
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
    cmd_sources.register(cli)
    cmd_vec.register(cli)
    cmd_install.register(cli)
    cmd_context.register(cli)
    cmd_bans.register(cli)
    cmd_feedback.register(cli)
    cmd_refine.register(cli)
    cmd_ui.register(cli)
    cmd_server.register(cli)
    cmd_team.register(cli)
    cmd_digest.register(cli)
    register_mcp(cli)
    for cmd in (
        cmd_search.search,
        cmd_search.sessions,
        cmd_search.inspect,
        cmd_doctor.status,
        cmd_doctor.doctor,
    ):
        cli.add_command(cmd)
    cmd_shell.register(cli)


add_examples(cli)  # this module's own commands' examples (the others get theirs as `_register` adds them)
