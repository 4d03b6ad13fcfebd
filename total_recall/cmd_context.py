"""`context` (the session-start bundle), `profile` and `check-banned`: what the slash commands and skills
call (`promote` is in cmd_memories)."""

from __future__ import annotations

import os
from typing import Any

import click

from total_recall.options import json_option
from total_recall.output import emit_json
from total_recall.render import ago, say, styled, text_of

BANNED = 3  # `check-banned`'s exit code when a past instruction bans the action

PROFILES = {
    "operator": "operator_profile",
    "voice": "voice_profile",
    "workflow": "workflow_profile",
    "satisfaction": "satisfaction_profile",
    "preferences": "implicit_preferences",
}


@click.command()
@click.option("--cwd", help="Project directory (default: the current one).")
@click.option("--budget", default=1800, show_default=True, type=click.IntRange(200, 10000))
@json_option
@click.pass_obj
def context(obj: Any, cwd: str | None, budget: int, as_json: bool) -> None:
    """The operator-context bundle a new session gets: goal, standing decisions, bans, voice, corrections."""
    from index.briefing import operator_context
    from index.store import open_reader

    ctx = operator_context(open_reader(obj.db), cwd or os.getcwd(), budget=budget)
    if as_json:
        emit_json(ctx.to_json())
    else:
        say(ctx.text or "(nothing remembered for this project yet)")


@click.command()
@click.argument("name", type=click.Choice(sorted(PROFILES)))
@json_option
@click.pass_obj
def profile(obj: Any, name: str, as_json: bool) -> None:
    """A profile mined from your sessions: operator, voice, workflow, satisfaction, preferences."""
    from index.retrieval import profile as q_profile
    from index.store import open_reader

    data, updated = q_profile(open_reader(obj.db), PROFILES[name])
    if as_json:
        emit_json({"name": PROFILES[name], "updated_at": updated, "profile": data})
        return
    if not data:
        click.echo("no profile yet: run `total-recall index`", err=True)
        raise click.exceptions.Exit(1)
    say(
        styled(PROFILES[name].replace("_", " "), "bold"),
        styled(f" (updated {ago(updated) or updated})", "dim"),
    )
    for k, v in data.items():
        say("  ", styled(f"{str(k).replace('_', ' ')}:", "cyan"), " ", text_of(v))


@click.command("check-banned")
@click.argument("action", nargs=-1, required=True)
@click.option(
    "--scope",
    type=click.Choice(["this_cwd", "this_project", "global"]),
    default="this_project",
    show_default=True,
)
@click.option("--cwd", help="Project directory whose bans apply (default: the current one).")
@json_option
@click.pass_obj
def check_banned(obj: Any, action: tuple[str, ...], scope: str, cwd: str | None, as_json: bool) -> None:
    """Is an action (a command, a library, an approach) banned by a past instruction? Exits 3 when it
    is (verdict `banned`), so a script can gate on it; 0 for `possibly_banned` and `no_known_ban`."""
    from index.retrieval import check_banned as q_check
    from index.store import open_reader

    res = q_check(open_reader(obj.db), " ".join(action), scope=scope, cwd=cwd or os.getcwd(), limit=5)
    verdict = res.extra.get("verdict")
    if as_json:
        emit_json({"verdict": verdict, "scope": res.scope, "note": res.note, "bans": res.items})
    else:
        tone = {"banned": "bold red", "possibly_banned": "yellow"}.get(str(verdict), "green")
        say(
            "verdict: ",
            styled(str(verdict), tone),
            f" (scope {res.scope}{'; ' + res.note if res.note else ''})",
        )
        for b in res.items:
            say(
                f"  - {b['content']}  ",
                styled(f"({str(b.get('date') or b.get('last_ts') or '')[:10]})", "dim"),
            )
    if verdict == "banned":
        raise click.exceptions.Exit(BANNED)


def register(cli: click.Group) -> None:
    for cmd in (context, profile, check_banned):
        cli.add_command(cmd)
