"""`forget`, `consolidate` and `export`: maintenance commands over the index. Writers hold the index
lock (`--wait` seconds at most for a running index)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from total_recall.cmd_sources import index_roots
from total_recall.options import json_option, yes_option
from total_recall.output import confirm, emit_json, fail, json_text
from total_recall.render import duration, plural, say, text_of

wait_option = click.option(
    "--wait",
    default=120.0,
    show_default=True,
    type=click.FloatRange(0, 3600),
    help="Seconds to wait for an index run that holds the index (e.g. one a hook started).",
)


@click.command()
@click.argument("session", required=False)
@click.option("--project", help="Forget every session of this project (key or its last path part).")
@yes_option
@wait_option
@json_option
@click.pass_obj
def forget(obj: Any, session: str | None, project: str | None, yes: bool, wait: float, as_json: bool) -> None:
    """Remove a session (or a whole project) from the index and its files, and never store it again."""
    from index.store import forget as do_forget
    from index.store import maintenance, open_reader, sessions_for

    if not session and not project:
        fail("say what to forget", "pass a SESSION id (or prefix) or --project P")
    if not yes:  # asked before the index is locked: hooks may index while the question waits
        n = len(sessions_for(open_reader(obj.db), session, project))
        if not n:
            _no_match(session or project)
        confirm(f"Forget {plural(n, 'session')} for good?", yes)
    with maintenance(obj.db, wait) as conn:
        ids = sessions_for(conn, session, project)
        if not ids:
            _no_match(session or project)
        counts = do_forget(conn, obj.db, ids)
    drop_hook_state(obj.db, ids)
    if as_json:
        emit_json({**counts, "session_ids": ids})
        return
    say(
        f"forgot {plural(counts['sessions'], 'session')}: {plural(counts['messages'], 'message')}, "
        f"{plural(counts['extractions'], 'extraction')}; they will not be indexed again"
    )
    if not counts["wal_truncated"]:
        click.echo(
            "warning: another process kept the write-ahead log open; old pages stay in "
            f"{obj.db}-wal until it closes — run `total-recall forget` again then",
            err=True,
        )
    if counts["vectors_removed"] < 0:
        click.echo(
            "warning: the vector store could not be opened to drop their vectors; "
            "install total-recall[vec] and run `total-recall vec rebuild`",
            err=True,
        )


def _no_match(what: str | None) -> None:
    fail(f"no session matches {what!r}", "list them with `total-recall sessions`", kind="not_found")


def drop_hook_state(db: Path, session_ids: list[str]) -> None:
    """The hooks' per-session files (policy state, continuation packet) and the injection ledger's lines
    about the session hold text of the session too."""
    from hooks.ledger import forget_sessions
    from hooks.state import continuation_file, session_file
    from lib.paths import state_dir

    forget_sessions(state_dir(db), session_ids)

    for sid in session_ids:
        for path in (session_file(state_dir(db), sid), continuation_file(state_dir(db), sid)):
            path.unlink(missing_ok=True)


@click.command()
@wait_option
@json_option
@click.pass_obj
def consolidate(obj: Any, wait: float, as_json: bool) -> None:
    """Decay stale goals (paused after 14 days, abandoned after 60), close duplicates, optimise FTS, and
    mark memories whose files, functions, flags or packages are gone from their repository as stale."""
    from index.briefing import check_staleness
    from index.store import consolidate as do_consolidate
    from index.store import maintenance

    with maintenance(obj.db, wait) as conn:
        res = do_consolidate(conn)
        res["staleness"] = check_staleness(conn)
    if as_json:
        emit_json(res)
    else:
        st = res["staleness"]
        say(
            f"goals paused {res['goals_paused']:,}, abandoned {res['goals_abandoned']:,}, duplicates closed "
            f"{res['duplicate_goals_closed']:,}; goals now: {text_of(res['goals_by_status']).replace('=', ' ')}; "
            f"FTS optimised; memories naming code {st['linked']:,}, stale {st['stale']:,}"
            + (" (out of time: run again to check the rest)" if st["out_of_time"] else "")
        )


@click.command()
@yes_option
@click.option("--projects-root", "roots", multiple=True)
@click.option("--jobs", "-j", default=2, show_default=True, type=click.IntRange(1, 64))
@wait_option
@json_option
@click.pass_obj
def rebuild(obj: Any, yes: bool, roots: tuple[str, ...], jobs: int, wait: float, as_json: bool) -> None:
    """Delete the index and rebuild it from scratch (vectors too, when the index had them). Your own
    decisions (forgotten sessions, promoted and demoted memories, in index.user.json) are applied again."""
    from index.store import discard_build, load, reapply, run_index, writer_lock
    from vec.backfill import backfill, store_exists
    from vec.embed import model_config

    paths, agents = index_roots(obj.db, roots, None, obj.settings)  # every enabled agent's, as `index` reads
    confirm(f"Delete the index at {obj.db} and rebuild it from the transcripts?", yes)
    load(obj.db)  # a damaged user-state file stops us before anything is deleted
    with writer_lock(obj.db, wait=wait):
        had_vectors = store_exists(obj.db)
        for suffix in ("", "-wal", "-shm"):
            Path(str(obj.db) + suffix).unlink(missing_ok=True)
        discard_build(obj.db)  # a first index a stopped run left: this one starts from nothing
        report = run_index(obj.db, paths, full=True, jobs=jobs, agents=agents)
        applied = reapply(obj.db)
    out = {**report.to_json(), "reapplied": applied}
    if had_vectors:
        out["vectors"] = backfill(obj.db, model_config(obj.settings)).to_json()
    if as_json:
        emit_json(out)
    else:
        say(
            f"rebuilt: {plural(report.records, 'record')}, {plural(report.messages_added, 'message')} "
            f"in {duration(report.elapsed_s)}"
            + (
                f"; re-embedded {plural(out['vectors'].get('vectors_added', 0), 'vector')}"
                if had_vectors
                else ""
            )
            + f"; your decisions kept: {plural(applied['forgotten'], 'forgotten session')}, "
            f"{applied['promoted']:,} promoted, {applied['demoted']:,} demoted"
        )


@click.command()
@click.argument("session_id")
@click.option(
    "--format", "fmt", type=click.Choice(["markdown", "jsonl", "html"]), default="markdown", show_default=True
)
@click.option("--tools", is_flag=True, help="Include tool calls and results.")
@click.option("--out", type=click.Path(dir_okay=False, writable=True))
@click.pass_obj
def export(obj: Any, session_id: str, fmt: str, tools: bool, out: str | None) -> None:
    """Export one session's conversation (scrubbed, as stored) as Markdown, JSONL or a self-contained
    HTML page (the viewer's thread, tool calls included)."""
    from index.stats import find_session, inspect_session
    from index.store import open_reader, session_transcript

    conn = open_reader(obj.db)
    sid = find_session(conn, session_id) or session_id
    info = inspect_session(conn, sid, 0)
    if info is None:
        fail(
            f"no session {session_id!r} in the index", "find one with `total-recall search --sessions TOPIC`"
        )
    from total_recall.ui.export import markdown_export, session_html

    if fmt == "html":
        data = (session_html(conn, sid) or "").encode()
        rows = session_transcript(conn, sid, include_tools=True)
    else:  # empty blocks (a tool-only turn without --tools) are left out
        rows = [r for r in session_transcript(conn, sid, include_tools=tools) if (r["text"] or "").strip()]
        if fmt == "jsonl":
            data = "".join(json_text(r) + "\n" for r in rows).encode()
        else:
            data = markdown_export(sid, info, rows).encode()
    if out:
        Path(out).write_bytes(data)
        click.echo(f"wrote {plural(len(rows), 'message')} to {out}", err=True)
    else:
        sys.stdout.buffer.write(data)


def register(cli: click.Group) -> None:
    for cmd in (forget, consolidate, rebuild, export):
        cli.add_command(cmd)
