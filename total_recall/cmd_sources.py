"""Which roots an `index` run reads, per coding agent (S7): Claude Code's projects roots and every
enabled agent's session roots (`lib.sources`)."""

from __future__ import annotations

from pathlib import Path

from lib.paths import projects_roots, state_dir
from lib.sources import SOURCES, agent_roots, disabled, enabled_roots
from total_recall.output import checked_roots, fail


def index_roots(
    db: Path, given: tuple[str, ...], agent: str | None
) -> tuple[list[Path], dict[str, list[Path]]]:
    """(Claude Code roots, other agents' roots) for `index`. `--agent A` reads A alone (even when
    disabled); `--projects-root` limits the run to those Claude Code roots; otherwise Claude Code and
    every enabled agent whose home exists."""
    if agent == "claude":
        return checked_roots(given), {}
    if agent is not None:
        roots = enabled_roots(state_dir(db), only=agent)[agent]
        if not roots:
            where = ", ".join(str(r) for r in agent_roots()[agent])
            fail(
                f"no {SOURCES[agent].label} sessions found (looked in {where})",
                f"set TOTAL_RECALL_{agent.upper()}_ROOTS to the folder that holds them",
            )
        return [], {agent: roots}
    if given:
        return checked_roots(given), {}
    others = {a: r for a, r in enabled_roots(state_dir(db)).items() if r}
    if "claude" in disabled(state_dir(db)):
        return [], others
    if others:  # a machine with another agent and no Claude Code yet indexes that agent
        return [r for r in projects_roots() if r.is_dir()], others
    return checked_roots(given), others
