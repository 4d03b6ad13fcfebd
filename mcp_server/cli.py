"""`total-recall mcp`: wire with `from mcp_server.cli import register; register(cli)` in total_recall/cli.py."""

from __future__ import annotations

from typing import Any

import click


@click.command("mcp")
@click.pass_obj
def mcp(obj: Any) -> None:
    """Run the MCP server over stdio (26 read-only recall tools; used by the plugin's .mcp.json)."""
    from mcp_server.server import main
    from total_recall.output import raw_streams

    with raw_streams():  # stdout carries JSON-RPC, not text for a terminal
        main(getattr(obj, "db", None))


def register(cli: click.Group) -> None:
    cli.add_command(mcp)
