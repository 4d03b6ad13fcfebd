"""`forget`, `consolidate` and `export`: maintenance commands over the index."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from total_recall.output import emit_json, fail, json_text


@click.command()
@click.argument("session", required=False)
@click.option("--project", help="Forget every session of this project (key or its last path part).")
@click.option("--yes", is_flag=True, help="Confirm.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def forget(obj: Any, session: str | None, project: str | None, yes: bool, as_json: bool) -> None:
    """Remove a session (or a whole project) from the index, and never store it again."""
    from index.db import open_existing_writer
    from index.manage import forget as do_forget
    from index.manage import sessions_for

    if not session and not project:
        fail("say what to forget", "pass a SESSION id (or prefix) or --project P")
    conn = open_existing_writer(obj.db)
    ids = sessions_for(conn, session, project)
    if not ids:
        fail(f"no session matches {session or project!r}", "find one with `total-recall search --sessions TOPIC`")
    if not yes:
        fail(f"this forgets {len(ids)} session(s) for good", "re-run with --yes to confirm")
    counts = do_forget(conn, ids)
    if as_json:
        emit_json({**counts, "session_ids": ids})
    else:
        click.echo(f"forgot {counts['sessions']} session(s): {counts['messages']} messages, "
                   f"{counts['extractions']} extractions; they will not be indexed again")


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def consolidate(obj: Any, as_json: bool) -> None:
    """Decay stale goals (paused after 14 days, abandoned after 60), close duplicates, optimise FTS."""
    from index.db import open_existing_writer
    from index.manage import consolidate as do_consolidate

    res = do_consolidate(open_existing_writer(obj.db))
    if as_json:
        emit_json(res)
    else:
        click.echo(f"goals paused {res['goals_paused']}, abandoned {res['goals_abandoned']}, duplicates closed "
                   f"{res['duplicate_goals_closed']}; now {res['goals_by_status']}; FTS optimised")


@click.command()
@click.argument("session_id")
@click.option("--format", "fmt", type=click.Choice(["markdown", "jsonl"]), default="markdown", show_default=True)
@click.option("--tools", is_flag=True, help="Include tool calls and results.")
@click.option("--out", type=click.Path(dir_okay=False, writable=True))
@click.pass_obj
def export(obj: Any, session_id: str, fmt: str, tools: bool, out: str | None) -> None:
    """Export one session's conversation (scrubbed, as stored) as Markdown or JSONL."""
    from index.db import open_reader
    from index.manage import session_transcript
    from index.queries import find_session, inspect_session

    conn = open_reader(obj.db)
    sid = find_session(conn, session_id) or session_id
    info = inspect_session(conn, sid, 0)
    if info is None:
        fail(f"no session {session_id!r} in the index", "find one with `total-recall search --sessions TOPIC`")
    assert info is not None
    rows = session_transcript(conn, sid, include_tools=tools)
    if fmt == "jsonl":
        data = "".join(json_text(r) + "\n" for r in rows).encode()
    else:
        head = [f"# {info.get('title') or sid}", "",
                f"- session: `{sid}`", f"- project: `{info.get('project_key')}`",
                f"- from {info.get('first_ts')} to {info.get('last_ts')}", ""]
        body = []
        for r in rows:
            who = "**you**" if r["role"] == "user" else ("assistant" if r["role"] == "assistant" else r["role"])
            mark = "" if r["on_main"] else " _(abandoned branch)_"
            body.append(f"### {who} · {(r['ts'] or '')[:19]}{mark}\n\n{r['text']}\n")
        data = ("\n".join(head + body)).encode()
    if out:
        Path(out).write_bytes(data)
        click.echo(f"wrote {len(rows)} messages to {out}", err=True)
    else:
        sys.stdout.buffer.write(data)


def register(cli: click.Group) -> None:
    for cmd in (forget, consolidate, export):
        cli.add_command(cmd)
