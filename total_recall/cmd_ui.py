"""`total-recall ui` (the local web viewer) and `report` (a period's usage and sessions, as text or one
self-contained HTML file made from the viewer's templates)."""

from __future__ import annotations

import ipaddress
import sys
import webbrowser
from pathlib import Path
from typing import Any

import click

from total_recall.options import json_option
from total_recall.output import emit_json, fail


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.command()
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option("--open", "open_browser", is_flag=True, help="Open the viewer in the default browser.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to listen on; anything but loopback needs --token (or TOTAL_RECALL_UI_TOKEN).",
)
@click.option("--token", help="Access token every request must carry (?token=… once, then a cookie).")
@click.pass_obj
def ui(obj: Any, port: int, open_browser: bool, host: str, token: str | None) -> None:
    """Browse sessions, search, memory and usage in a local web page (read-only, except the memory
    actions you click)."""
    from index.store import open_reader
    from total_recall.ui.app import Config
    from total_recall.ui.server import run

    secret = token or obj.settings.ui_token  # the option, else TOTAL_RECALL_UI_TOKEN
    if not is_loopback(host) and not secret:
        fail(
            f"refusing to serve the index on {host}: anyone who can reach it could read your transcripts",
            "serve on 127.0.0.1 (the default), or pass --token SECRET (or set TOTAL_RECALL_UI_TOKEN)",
        )
    open_reader(obj.db).close()  # a missing or damaged index is one line here, not a page of errors
    cfg = Config(db=obj.db, host=host, port=port, token=secret)
    url = f"http://{'127.0.0.1' if is_loopback(host) else host}:{port}/" + (
        f"?token={secret}" if secret else ""
    )
    click.echo(f"total-recall ui on {url}  (Ctrl-C to stop)", err=True)
    if open_browser:
        webbrowser.open(url)
    run(cfg)


@click.command()
@click.option("--since", default="30d", show_default=True, help="7d, 12h, 2w or an ISO date.")
@click.option("--by", type=click.Choice(["day", "week", "month"]), default="day", show_default=True)
@click.option("--html", "as_html", is_flag=True, help="Write one self-contained HTML page (charts included).")
@click.option(
    "--out", type=click.Path(dir_okay=False, writable=True), help="File to write (default: stdout)."
)
@json_option
@click.pass_obj
def report(obj: Any, since: str, by: str, as_html: bool, out: str | None, as_json: bool) -> None:
    """Usage, cost and sessions of a period: text, JSON, or an HTML file to keep or share."""
    from index.retrieval import SessionFilter, list_sessions
    from index.stats import load_catalog, usage_series
    from index.store import open_reader, parse_since

    start = parse_since(since)
    conn = open_reader(obj.db)
    if as_html:
        from total_recall.ui.export import report_html

        data = report_html(conn, obj.db, start, by)
        if out:
            Path(out).write_text(data, encoding="utf-8")
            click.echo(f"wrote the report to {out}", err=True)
        else:
            sys.stdout.write(data)
        return
    usage = usage_series(conn, load_catalog(), by, start)
    sessions = list_sessions(conn, SessionFilter(since=start), 1, 20)
    if as_json:
        emit_json({"since": start, "usage": usage, "sessions": sessions})
        return
    t = usage["total"]
    rate = usage["cache_hit_rate"]
    click.echo(
        f"since {start[:10] if start else 'the start'}: {sessions['total']} sessions, {t['total_tokens']:,} tokens, "
        f"${t['cost_known_usd']:,.2f}{'' if t['cost_complete'] else ' (some models unpriced)'}, "
        f"cache hit rate {'n/a' if rate is None else f'{rate:.1%}'}"
    )
    for r in sessions["rows"]:
        click.echo(f"  {(r['last_ts'] or '')[:10]}  {r['session_id'][:8]}  {(r['title'] or '')[:80]}")


def register(cli: click.Group) -> None:
    for cmd in (ui, report):
        cli.add_command(cmd)
