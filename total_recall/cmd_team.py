"""`total-recall team …`: share a project's durable memories with teammates through the team server
(issue 16). Off by default: `team enable` opts the current project in. `team push --review` shows
exactly what would leave the machine (after scrubbing) and lets the user keep items private."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from lib.paths import state_dir
from lib.project_id import ProjectId, resolve_project_id
from total_recall.options import json_option
from total_recall.output import emit_json, fail, short
from total_recall.team.config import TeamConfig, load
from total_recall.team.http import TeamError, call

cwd_option = click.option("--cwd", help="Project directory (default: the current one).")
PROBE = "/api/projects/total-recall-login-probe"


def _project(obj: Any, cwd: str | None) -> ProjectId:
    pid = resolve_project_id(os.path.abspath(cwd or os.getcwd()), obj.settings.env)
    if pid is None:
        fail("no project here", "run it inside a project or set CLAUDE_PROJECT_ID")
    return pid


def _ready(obj: Any, pid: ProjectId) -> TeamConfig:
    cfg = load(state_dir(obj.db), obj.settings.env)
    if not cfg.logged_in:
        fail("not logged in to a team server", "run `total-recall team login URL` first")
    if not cfg.is_enabled(pid.id):
        fail(
            f"team memory is off for project {pid.id}",
            "run `total-recall team enable` in the project to opt in",
        )
    return cfg


@click.group("team")
def team_group() -> None:
    """Team memory: share this project's decisions, bans and lessons with teammates (opt-in)."""


@team_group.command()
@click.argument("url")
@click.option(
    "--user", "user_name", help="Log in with a username and password (read from stdin) for a 24 h token."
)
@click.pass_obj
def login(obj: Any, url: str, user_name: str | None) -> None:
    """Save the server URL and a credential: an API token from stdin, or --user NAME and a password."""
    if not url.startswith(("http://", "https://")):
        fail(f"not an http(s) URL: {url}", "e.g. `total-recall team login https://memory.example.com`")
    if sys.stdin is not None and sys.stdin.isatty():
        secret = click.prompt("Password" if user_name else "API token", hide_input=True).strip()
    else:
        secret = sys.stdin.readline().strip() if sys.stdin is not None else ""
    if not secret:
        fail(
            "the token (or password) is read from stdin",
            "pipe it in: `printf '%s' \"$TOKEN\" | total-recall team login URL`",
        )
    try:
        if user_name:
            res = call(url, None, "POST", "/api/auth/login", body={"username": user_name, "password": secret})
            secret = str(res["access_token"])
        call(url, secret, "GET", PROBE)
    except TeamError as exc:
        if exc.status != 404:  # the probe project does not exist: 404 means the credential was accepted
            fail(str(exc), "check the URL and the token (`total-recall server token create` makes one)")
    cfg = load(state_dir(obj.db), obj.settings.env)
    cfg.url, cfg.token = url.rstrip("/"), secret
    cfg.save()
    click.echo(f"logged in to {cfg.url}")


@team_group.command()
@cwd_option
@click.pass_obj
def enable(obj: Any, cwd: str | None) -> None:
    """Opt this project in: its memories may be pushed, teammates' appear in its sessions."""
    pid = _project(obj, cwd)
    cfg = load(state_dir(obj.db), obj.settings.env)
    if pid.id not in cfg.enabled:
        cfg.enabled.append(pid.id)
        cfg.save()
    click.echo(f"team memory on for project {pid.id} ({pid.source})")


@team_group.command()
@cwd_option
@click.pass_obj
def disable(obj: Any, cwd: str | None) -> None:
    """Opt this project out again (nothing is pushed or pulled for it)."""
    pid = _project(obj, cwd)
    cfg = load(state_dir(obj.db), obj.settings.env)
    cfg.enabled = [p for p in cfg.enabled if p != pid.id]
    cfg.save()
    click.echo(f"team memory off for project {pid.id}")


def _outgoing(obj: Any, pid: ProjectId) -> tuple[list[Any], Any]:
    from index.briefing import shareable
    from index.store import open_reader, stored_cwd, wrong_items
    from lib.project import project_key
    from total_recall.team.sync import Ledger, prepare

    ledger = Ledger(state_dir(obj.db), pid.id)
    key = project_key(stored_cwd(pid.root)) if pid.root else None
    rows = shareable(open_reader(obj.db), key, wrong=wrong_items(obj.db)) if key else []
    return prepare(pid.id, rows, ledger.private), ledger


@team_group.command()
@cwd_option
@click.option(
    "--review", is_flag=True, help="List what would leave the machine and choose items to keep private."
)
@click.option("--dry-run", is_flag=True, help="List what would be sent; send nothing.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing (the Stop hook's background push).")
@json_option
@click.pass_obj
def push(obj: Any, cwd: str | None, review: bool, dry_run: bool, quiet: bool, as_json: bool) -> None:
    """Send this project's new memories (scrubbed) to the team server; re-pushing sends nothing new."""
    from total_recall.team.sync import as_dicts, pending
    from total_recall.team.sync import push as send

    pid = _project(obj, cwd)
    cfg = _ready(obj, pid)
    items, ledger = _outgoing(obj, pid)
    todo = pending(items, ledger)
    if review and todo:
        _review(todo, ledger)
        todo = [i for i in todo if i.source_key not in ledger.private]
    if dry_run:
        if as_json:
            emit_json(as_dicts(todo))
        else:
            _list(todo)
        return
    try:
        n = send(cfg, pid.id, todo, ledger)
    except TeamError as exc:
        if exc.status == 404:
            fail(str(exc), f"ask an owner to run `total-recall server project add {pid.id}` and add you")
        fail(str(exc), "check `total-recall team status`")
    private = sum(1 for i in items if i.visibility == "private")
    res = {"project_id": pid.id, "sent": n, "private": private, "already_sent": len(items) - private - n}
    if as_json:
        emit_json(res)
    elif not quiet:
        click.echo(f"sent {n} item(s) to {cfg.url} ({res['already_sent']} sent before, {private} private)")


def _list(items: list[Any]) -> None:
    for n, i in enumerate(items, 1):
        click.echo(f"{n:3d}. [{i.context_type}, relevance {i.relevance_score}] {short(i.dense_summary, 160)}")
    if not items:
        click.echo("nothing new to send")


def _review(items: list[Any], ledger: Any) -> None:
    """Show each item as it would be sent; the numbers the user gives stay private for good."""
    click.echo("These items would leave this machine (already scrubbed):")
    _list(items)
    answer = click.prompt(
        "Numbers to keep private (e.g. 1,3; empty: send all)", default="", show_default=False
    )
    for part in answer.replace(",", " ").split():
        if not part.isdigit() or not 1 <= int(part) <= len(items):
            fail(f"not an item number: {part}", f"give numbers from 1 to {len(items)}")
        ledger.private.add(items[int(part) - 1].source_key)
    ledger.save()


@team_group.command()
@cwd_option
@click.option("--query", "-q", "query", default="", help="Full-text query (websearch syntax).")
@json_option
@click.pass_obj
def pull(obj: Any, cwd: str | None, query: str, as_json: bool) -> None:
    """Fetch teammates' memories for this project (and refresh the hooks' cache)."""
    from total_recall.team.sync import Ledger
    from total_recall.team.sync import pull as fetch

    pid = _project(obj, cwd)
    cfg = _ready(obj, pid)
    try:
        items = fetch(cfg, pid.id, Ledger(cfg.state, pid.id), query)
    except TeamError as exc:
        fail(str(exc), "check `total-recall team status`")
    if as_json:
        emit_json(items)
        return
    for i in items:
        click.echo(
            f"{(i.get('created_at') or '')[:10]} {i.get('created_by') or '?'}: {short(i.get('title') or '', 150)}"
        )
    if not items:
        click.echo("no team memories for this project yet")


@team_group.command()
@cwd_option
@json_option
@click.pass_obj
def status(obj: Any, cwd: str | None, as_json: bool) -> None:
    """The server, this project's id and whether team memory is on, and what a push would send."""
    from total_recall.team.sync import pending

    pid = _project(obj, cwd)
    cfg = load(state_dir(obj.db), obj.settings.env)
    res: dict[str, Any] = {
        "server": cfg.url or None,
        "logged_in": cfg.logged_in,
        "project_id": pid.id,
        "project_id_source": pid.source,
        "enabled": cfg.is_enabled(pid.id),
    }
    if obj.db.exists():
        items, ledger = _outgoing(obj, pid)
        res.update(pending=len(pending(items, ledger)), sent=len(ledger.sent), private=len(ledger.private))
    if cfg.logged_in:
        try:
            info = call(cfg.url, cfg.token, "GET", f"/api/projects/{pid.id}", timeout=3.0)
            res["role"], res["server_contexts"] = info.get("role"), info.get("contexts")
        except TeamError as exc:
            res["server_error"] = str(exc)
    if as_json:
        emit_json(res)
        return
    for k, v in res.items():
        click.echo(f"{k}: {v}")


@team_group.command()
@cwd_option
@click.pass_obj
def sync(obj: Any, cwd: str | None) -> None:
    """Push, then refresh the hooks' cache; silent, the outcome goes to events.jsonl (the Stop hook's
    background run). Does nothing for a project that is not opted in."""
    import time

    from hooks.events import log_event
    from total_recall.team.sync import Ledger, pending
    from total_recall.team.sync import pull as fetch
    from total_recall.team.sync import push as send

    t0 = time.perf_counter()
    state = state_dir(obj.db)
    rec: dict[str, Any] = {"event": "team", "action": "sync"}
    try:
        pid = resolve_project_id(os.path.abspath(cwd or os.getcwd()), obj.settings.env)
        cfg = load(state, obj.settings.env)
        if pid is None or not cfg.logged_in or not cfg.is_enabled(pid.id):
            return
        rec["project_id"] = pid.id
        items, ledger = _outgoing(obj, pid)
        rec["sent"] = send(cfg, pid.id, pending(items, ledger), ledger)
        rec["pulled"] = len(fetch(cfg, pid.id, Ledger(state, pid.id)))
        rec["ok"] = True
    except Exception as exc:  # noqa: BLE001 - a background run: record the failure, never raise
        rec.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
    finally:
        if "project_id" in rec:
            rec["latency_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            log_event(state, rec)


def register(cli: click.Group) -> None:
    cli.add_command(team_group)
