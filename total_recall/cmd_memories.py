"""`promote`, `unpromote` and `memories list`: the memories a user curates by hand. The decisions are kept
in a file beside the index (`index.user.json`), so `rebuild` re-applies them."""

from __future__ import annotations

import os
from typing import Any

import click

from index.store import PROMOTABLE
from total_recall.cmd_manage import wait_option
from total_recall.options import json_option
from total_recall.output import emit_json, fail, short
from total_recall.render import plural, say


@click.command()
@click.argument("text", nargs=-1)
@click.option("--as", "kind", required=True, type=click.Choice(PROMOTABLE))
@click.option(
    "--id", "extraction_id", type=int, help="Promote an existing extraction (see `memories list --mined`)."
)
@click.option("--cwd", help="Project directory for typed text (default: the current one).")
@wait_option
@json_option
@click.pass_obj
def promote(
    obj: Any,
    text: tuple[str, ...],
    kind: str,
    extraction_id: int | None,
    cwd: str | None,
    wait: float,
    as_json: bool,
) -> None:
    """Make a memory durable: a ban, standing decision, goal or preference for this project."""
    from index.store import maintenance
    from index.store import promote as do_promote

    with maintenance(obj.db, wait) as conn:
        try:
            res = do_promote(
                conn,
                obj.db,
                kind,
                text=" ".join(text) or None,
                extraction_id=extraction_id,
                cwd=cwd or os.getcwd(),
            )
        except (ValueError, LookupError) as exc:
            fail(str(exc), "pass TEXT or --id N (ids are in `total-recall memories list --mined`)")
            return
    if as_json:
        emit_json(res)
    else:
        say(f"promoted to {res['kind']}: {res['content']}")


@click.command()
@click.argument("memory_id", type=int)
@wait_option
@json_option
@click.pass_obj
def unpromote(obj: Any, memory_id: int, wait: float, as_json: bool) -> None:
    """Undo a promotion; for a memory mined from your sessions, remove it for good (a demotion)."""
    from index.store import maintenance
    from index.store import unpromote as do_unpromote

    with maintenance(obj.db, wait) as conn:
        try:
            res = do_unpromote(conn, obj.db, memory_id)
        except LookupError as exc:
            fail(str(exc), "see the ids with `total-recall memories list --mined`")
            return
    if as_json:
        emit_json(res)
    elif res["action"] == "unpromoted":
        say(f"unpromoted {res['kind']}: {res['content']}")
    else:
        say(
            f"demoted {res['kind']} ({plural(res['removed'], 'mention')}); it will not come back: {res['content']}"
        )


@click.group(name="memories")
def memories_group() -> None:
    """Memories you promoted or demoted, and the sessions you made it forget."""


@memories_group.command(name="list")
@click.option("--mined", is_flag=True, help="Also list durable memories mined from your sessions (with ids).")
@json_option
@click.pass_obj
def list_memories(obj: Any, mined: bool, as_json: bool) -> None:
    """Promoted memories (ids for `unpromote`), demoted ones and forgotten sessions."""
    from index.store import listing, open_reader

    data = listing(open_reader(obj.db), obj.db, mined=mined)
    if as_json:
        emit_json(data)
        return
    sections = [("promoted", data["promoted"]), ("demoted", data["demoted"])]
    if mined:
        sections.append(("mined", data["mined"]))
    for title, items in sections:
        say(f"{title} ({len(items)})")
        for m in items:
            ident = f"{m['id']:>6}  " if "id" in m else "        "
            say(f"{ident}{m['kind']:<19} {short(m['content'], 90)}")
    say(f"forgotten sessions: {len(data['forgotten_sessions'])}")


def register(cli: click.Group) -> None:
    for cmd in (promote, unpromote, memories_group):
        cli.add_command(cmd)
