"""`why ID` and `feedback ID wrong|helpful` (issue 19): every item a hook injects carries a short id;
`why` shows where it comes from and why it was chosen, `feedback` keeps the user's verdict (in
index.user.json, so `rebuild` keeps it): a `wrong` item is never injected again. Each verdict is also
an event in events.jsonl, for `total-recall adaptive`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from total_recall.cmd_manage import wait_option
from total_recall.options import json_option
from total_recall.output import emit_json, fail

ID_HELP = "the 8 hex characters printed after an injected item (`#a1b2c3d4`)"


def _id(text: str) -> str:
    from lib.memid import parse_id

    key = parse_id(text)
    if key is None:
        fail(f"{text!r} is not an item id", f"pass {ID_HELP}")
    return key


@click.command()
@click.argument("item_id")
@json_option
@click.pass_obj
def why(obj: Any, item_id: str, as_json: bool) -> None:
    """Why item ITEM_ID was recalled: source message, date, session, confidence, reason."""
    from index.briefing import why as explain
    from index.store import open_reader

    key = _id(item_id)
    res = explain(open_reader(obj.db), obj.db, key)
    if res is None:
        fail(
            f"no injected item or ban with id {key}",
            "ids are printed with each injected item; see also `bans list`",
        )
    if as_json:
        emit_json(res)
        return
    click.echo(f"#{res['id']}  {res.get('kind') or '?'}: {res.get('content')}")
    click.echo(
        f"  from: session {res.get('session_id') or '?'}, {res.get('date') or '?'}, project {res.get('project') or '?'}"
        f"; confidence {res.get('confidence') if res.get('confidence') is not None else '?'}"
    )
    click.echo(f"  chosen because: {res.get('reason') or '?'}")
    src = res.get("source_message")
    if src:
        click.echo(f"  source message ({src['role']}, {src['date']}, {src['uuid']}): {src['text']}")
    for inj in res.get("injected") or []:
        click.echo(f"  injected {inj['at']} by {inj['by']} into session {inj['into_session']}")
    if res.get("stale"):
        st = res["stale"]
        click.echo(f"  STALE: {st['reason']}")
    if res.get("feedback"):
        fb = res["feedback"]
        click.echo(f"  your feedback: {fb.get('verdict')} ({fb.get('at')})")


@click.command()
@click.argument("item_id")
@click.argument("verdict", type=click.Choice(["wrong", "helpful"]))
@wait_option
@json_option
@click.pass_obj
def feedback(obj: Any, item_id: str, verdict: str, wait: float, as_json: bool) -> None:
    """Say an injected item was wrong (never inject it again) or helpful."""
    key = _id(item_id)
    try:
        res = give_feedback(obj.db, key, verdict, wait, "cli")
    except LookupError as exc:
        fail(str(exc), "ids are printed with each injected item; see also `bans list`")
    if as_json:
        emit_json(res)
    else:
        done = "will not be injected again" if verdict == "wrong" else "noted as helpful"
        click.echo(f"#{key} {done}: {res.get('content')}")


def give_feedback(db: Path, key: str, verdict: str, wait: float, by: str) -> dict[str, Any]:
    """Keep a verdict under the index lock and log it for `adaptive`: the CLI's and the viewer's
    (`by` says which). LookupError when no item has id `key`."""
    from hooks.events import log_event
    from index.briefing import feedback as keep
    from index.store import open_reader, writer_lock
    from lib.paths import state_dir

    with writer_lock(db, wait=wait):
        conn = open_reader(db)
        try:
            res = keep(conn, db, key, verdict)
        finally:
            conn.close()
    log_event(
        state_dir(db),
        {
            "event": "feedback",
            "id": key,
            "verdict": verdict,
            "kind": res.get("kind"),
            "section": res.get("section"),
            "by": by,
        },
    )
    return res


def register(cli: click.Group) -> None:
    for cmd in (why, feedback):
        cli.add_command(cmd)
