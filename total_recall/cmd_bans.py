"""`bans list|enforce|relax` (issue 19): the bans the PreToolUse hook checks before Bash, edit and MCP
tool calls, and which of them block (deny the call) rather than warn (a note to the agent). The choice
is the user's, kept in index.user.json, so `rebuild` keeps it; TOTAL_RECALL_ENFORCE=block makes every
ban block."""

from __future__ import annotations

import os
from typing import Any

import click

from total_recall.cmd_manage import wait_option
from total_recall.options import json_option
from total_recall.output import emit_json, fail


@click.group()
def bans() -> None:
    """Bans checked before tool calls: list them, make one block, or back to warn."""


@bans.command("list")
@click.option("--cwd", help="Project directory (default: the current one).")
@click.option("--all", "everything", is_flag=True, help="Every active ban, whatever its project.")
@json_option
@click.pass_obj
def list_bans(obj: Any, cwd: str | None, everything: bool, as_json: bool) -> None:
    """The bans PreToolUse checks here, with their id and mode (warn or block)."""
    from hooks.pre_tool_use import enforce_mode
    from index.retrieval import scope_bans
    from index.store import enforced, open_reader

    found = scope_bans(open_reader(obj.db), None if everything else (cwd or os.getcwd()))
    blocking = enforced(obj.db)
    default = enforce_mode(obj.settings.env)
    rows = [
        {
            "id": b.id,
            "mode": "block" if b.id in blocking else default,
            "content": b.content,
            "date": b.date,
            "session_id": b.session_id,
            "project_key": b.project_key,
        }
        for b in found
    ]
    if as_json:
        emit_json({"default_mode": default, "bans": rows})
        return
    if not rows:
        click.echo("no active bans here (bans are mined from your sessions: `never …`, `don't …`)")
        return
    for r in rows:
        click.echo(f"{r['id']}  {r['mode']:<5}  {r['date'] or '?'}  {r['content']}")


def _set(obj: Any, ban_id: str, mode: str, wait: float, as_json: bool) -> None:
    from index.retrieval import scope_bans
    from index.store import open_reader, set_enforcement, writer_lock
    from lib.memid import parse_id

    key = parse_id(ban_id)
    if key is None:
        fail(f"{ban_id!r} is not a ban id", "ids are the 8 hex characters `total-recall bans list` prints")
    found = scope_bans(open_reader(obj.db), None, key)
    if not found:
        fail(f"no active ban with id {key}", "see `total-recall bans list --all`")
    ban = found[0]
    with writer_lock(obj.db, wait=wait):
        res = set_enforcement(
            obj.db, {"id": ban.id, "content": ban.content, "project_key": ban.project_key}, mode
        )
    if as_json:
        emit_json(res)
    else:
        verb = "blocks" if mode == "block" else "warns on"
        click.echo(f"{ban.id} now {verb} matching tool calls: {ban.content}")


@bans.command()
@click.argument("ban_id")
@wait_option
@json_option
@click.pass_obj
def enforce(obj: Any, ban_id: str, wait: float, as_json: bool) -> None:
    """Make ban BAN_ID deny matching tool calls (PreToolUse permissionDecision "deny")."""
    _set(obj, ban_id, "block", wait, as_json)


@bans.command()
@click.argument("ban_id")
@wait_option
@json_option
@click.pass_obj
def relax(obj: Any, ban_id: str, wait: float, as_json: bool) -> None:
    """Back to warning: matching tool calls go on, with a note to the agent."""
    _set(obj, ban_id, "warn", wait, as_json)


def register(cli: click.Group) -> None:
    cli.add_command(bans)
