"""`total-recall sources`, and which roots an `index` run reads, per coding agent (S7): Claude Code's
projects roots and every enabled agent's session roots (`lib.sources`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from lib.paths import state_dir
from lib.settings import Settings
from lib.sources import AGENTS, SOURCES, agent_roots, disabled, enabled_roots, set_enabled
from total_recall.metrics_options import _json, _table
from total_recall.output import checked_roots, emit_json, fail
from total_recall.render import pick_format, size


def index_roots(
    db: Path, given: tuple[str, ...], agent: str | None, settings: Settings
) -> tuple[list[Path], dict[str, list[Path]]]:
    """(Claude Code roots, other agents' roots) for `index`. `--agent A` reads A alone (even when
    disabled); `--projects-root` limits the run to those Claude Code roots; otherwise Claude Code and
    every enabled agent whose home exists."""
    if agent == "claude":
        return checked_roots(given, settings), {}
    if agent is not None:
        roots = enabled_roots(state_dir(db), settings.env, only=agent)[agent]
        if not roots:
            where = ", ".join(str(r) for r in agent_roots(settings.env)[agent])
            fail(
                f"no {SOURCES[agent].label} sessions found (looked in {where})",
                f"set TOTAL_RECALL_{agent.upper()}_ROOTS to the folder that holds them",
            )
        return [], {agent: roots}
    if given:
        return checked_roots(given, settings), {}
    others = {a: r for a, r in enabled_roots(state_dir(db), settings.env).items() if r}
    if "claude" in disabled(state_dir(db)):
        return [], others
    if others:  # a machine with another agent and no Claude Code yet indexes that agent
        return [r for r in settings.projects_roots() if r.is_dir()], others
    return checked_roots(given, settings), others


@click.command()
@click.option("--projects-root", "roots", multiple=True, help="Claude Code transcript root (repeatable).")
@click.option("--enable", "enable", type=click.Choice(AGENTS), multiple=True, help="Index this agent again.")
@click.option(
    "--disable", "disable", type=click.Choice(AGENTS), multiple=True, help="Stop indexing this agent."
)
@_json
@click.pass_obj
def sources(
    obj: Any,
    roots: tuple[str, ...],
    enable: tuple[str, ...],
    disable: tuple[str, ...],
    fmt: str | None,
    as_json: bool,
) -> None:
    """Each coding agent's transcripts: where, how many, how big, how many indexed, and whether
    `index` reads them (`--enable` / `--disable AGENT`; kept beside the index)."""
    state = state_dir(obj.db)
    for a in enable:
        set_enabled(state, a, True)
    for a in disable:
        set_enabled(state, a, False)
    indexed: dict[str, int] = {}
    if obj.db.exists():
        from index.stats import indexed_files_by_root
        from index.store import IndexError_, open_reader

        try:
            indexed = indexed_files_by_root(open_reader(obj.db))
        except IndexError_:
            indexed = {}
    off = disabled(state)
    homes = {"claude": obj.settings.projects_roots(roots), **agent_roots(obj.settings.env)}
    out: list[dict[str, Any]] = []
    for agent, paths in homes.items():
        for r in paths:
            found = list(SOURCES[agent].discover([Path(os.path.realpath(r))])) if r.is_dir() else []
            out.append(
                {
                    "agent": agent,
                    "label": SOURCES[agent].label,
                    "path": str(r),
                    "exists": r.is_dir(),
                    "files": len(found),
                    "bytes": sum(f.size for f in found),
                    "enabled": agent not in off,
                    "indexed_files": indexed.get(os.path.realpath(r), 0),
                }
            )
    fmt = pick_format(fmt, as_json)
    if fmt == "json":
        emit_json({"db": str(obj.db), "sources": out})
        return
    _table(
        fmt,
        "transcript sources",
        ["agent", "path", "exists", "files", "size", "indexed", "enabled"],
        [
            [
                s["agent"],
                s["path"],
                "yes" if s["exists"] else "no",
                s["files"],
                size(s["bytes"]),
                s["indexed_files"],
                "yes" if s["enabled"] else "no",
            ]
            for s in out
        ],
        {3, 4, 5},
        wrap=1,
    )


def register(cli: click.Group) -> None:
    cli.add_command(sources)
