"""Where each coding agent keeps its sessions (Linux, macOS and Windows homes alike), and which
agents the user turned off.

Claude Code's roots stay with `lib.paths.projects_roots`. The others: Codex
`${CODEX_HOME:-~/.codex}/sessions` (and `archived_sessions`), Gemini CLI `~/.gemini/tmp` (its home
moves with `GEMINI_CLI_HOME`), Copilot CLI `${COPILOT_HOME:-~/.copilot}/session-state` (and
`history-session-state` of older versions), OpenCode `${XDG_DATA_HOME:-~/.local/share}/opencode/storage`
(its own files) and `…/opencode/export` (documents `opencode export <id>` wrote there). The home folder
is `HOME`, else `USERPROFILE` (Windows). `TOTAL_RECALL_<AGENT>_ROOTS` (os.pathsep-separated)
replaces an agent's default roots.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import orjson

OTHER_AGENTS = ("codex", "gemini", "copilot", "opencode")
AGENTS = ("claude", *OTHER_AGENTS)
SETTINGS = "sources.json"  # beside the index: {"disabled": [agent, …]}


def agent_roots(env: Mapping[str, str]) -> dict[str, list[Path]]:
    """Each other agent's session roots (they may not exist), from the settings' environment snapshot
    (lib/settings.py). The one place these variables are interpreted."""
    e = env
    home = Path(e.get("HOME") or e.get("USERPROFILE") or Path.home())
    codex = Path(e.get("CODEX_HOME") or home / ".codex")
    gemini = Path(e["GEMINI_CLI_HOME"]) / ".gemini" if e.get("GEMINI_CLI_HOME") else home / ".gemini"
    copilot = Path(e.get("COPILOT_HOME") or home / ".copilot")
    data = Path(e.get("XDG_DATA_HOME") or home / ".local" / "share")
    out = {
        "codex": [codex / "sessions", codex / "archived_sessions"],
        "gemini": [gemini / "tmp"],
        "copilot": [copilot / "session-state", copilot / "history-session-state"],
        "opencode": [data / "opencode" / "storage", data / "opencode" / "export"],
    }
    for agent in OTHER_AGENTS:
        given = e.get(f"TOTAL_RECALL_{agent.upper()}_ROOTS")
        if given:
            out[agent] = [Path(p) for p in given.split(os.pathsep) if p]
    return {a: [p.expanduser() for p in roots] for a, roots in out.items()}


def disabled(state: Path) -> set[str]:
    """Agents the user turned off with `total-recall sources --disable` (a damaged file: none)."""
    try:
        data = orjson.loads((state / SETTINGS).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return set()
    off = data.get("disabled") if isinstance(data, dict) else None
    return {a for a in off if a in AGENTS} if isinstance(off, list) else set()


def set_enabled(state: Path, agent: str, enabled: bool) -> set[str]:
    """Turn an agent on or off for indexing; returns the agents now off."""
    off = disabled(state)
    (off.discard if enabled else off.add)(agent)
    state.mkdir(parents=True, exist_ok=True)
    tmp = state / (SETTINGS + ".tmp")
    tmp.write_bytes(orjson.dumps({"disabled": sorted(off)}))
    os.replace(tmp, state / SETTINGS)
    return off


def enabled_roots(state: Path, env: Mapping[str, str], only: str | None = None) -> dict[str, list[Path]]:
    """The other agents' existing roots to index: all enabled ones, or just `only`."""
    off = disabled(state)
    return {
        a: [r for r in roots if r.is_dir()]
        for a, roots in agent_roots(env).items()
        if (only is None and a not in off) or a == only
    }
