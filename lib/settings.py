"""The one settings object: the environment is read once, at the entry point, and passed down.

Each process entry (the CLI group, a hook run, the detached index worker, the MCP server) calls
`Settings.from_env()` once; everything below takes the `Settings` it is handed, so a test injects
its own (`Settings.from_env({...})`) instead of patching `os.environ` behind a module's back.
Paths keep their one resolver in lib/paths.py; `Settings` answers them from its snapshot.

Variables (README "Configuration"):
  TOTAL_RECALL_HOME, TOTAL_RECALL_DB, TOTAL_RECALL_PROJECTS, CLAUDE_PLUGIN_DATA, XDG_DATA_HOME,
  CLAUDE_CONFIG_DIR                  where the index and the transcripts live (lib/paths.py)
  TOTAL_RECALL_VECTORS               1 = build and use vectors, 0 = never, unset = use a store that exists
  TOTAL_RECALL_EMBED_MODEL(_PATH)    the embedding model, and a local directory holding it (offline)
  TOTAL_RECALL_LLM_URL / _LLM_MODEL  the optional loopback refinement model (off until a model is named)
  TOTAL_RECALL_UI_TOKEN              the token `ui --host` requires on a non-loopback interface
  TOTAL_RECALL_ENFORCE               block|warn for bans at PreToolUse (hooks/pre_tool_use.py)
  CODEX_HOME, GEMINI_CLI_HOME, …     other agents' homes (lib/sources/homes.py)
  NO_COLOR                           no colour on a terminal (total_recall/render.py)
  TOTAL_RECALL_SERVER_DSN / _SECRET  the team server's database and JWT key (total_recall/server/config.py)
  TOTAL_RECALL_TEAM_URL / _TEAM_TOKEN  the team client's server and token (total_recall/team/config.py)
  CLAUDE_PROJECT_ID                  the shared project id (lib/project_id.py)
The variables after TOTAL_RECALL_UI_TOKEN are read from `Settings.env`, the same snapshot, by the
module that owns them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Literal, NamedTuple

from lib import paths

VectorsMode = Literal["auto", "on", "off"]
DEFAULT_LLM_URL = "http://127.0.0.1:11434"

_VECTORS: dict[str, VectorsMode] = {"1": "on", "0": "off"}


class Settings(NamedTuple):
    """What the environment configures, as typed fields (immutable: read once, never changed). A
    NamedTuple, not a dataclass: the hooks import this on every tool call, and `dataclasses` costs ~8 ms
    to import."""

    env: Mapping[str, str]
    vectors: VectorsMode = "auto"
    embed_model: str | None = None
    embed_model_path: str | None = None
    llm_url: str = DEFAULT_LLM_URL
    llm_model: str | None = None
    ui_token: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """A snapshot of `env` (default: this process's environment) taken now."""
        snap: Mapping[str, str] = MappingProxyType(dict(os.environ if env is None else env))

        def val(name: str) -> str | None:
            return (snap.get(name) or "").strip() or None

        return cls(
            env=snap,
            vectors=_VECTORS.get(val("TOTAL_RECALL_VECTORS") or "", "auto"),
            embed_model=val("TOTAL_RECALL_EMBED_MODEL"),
            embed_model_path=val("TOTAL_RECALL_EMBED_MODEL_PATH"),
            llm_url=(val("TOTAL_RECALL_LLM_URL") or DEFAULT_LLM_URL).rstrip("/"),
            llm_model=val("TOTAL_RECALL_LLM_MODEL"),
            ui_token=val("TOTAL_RECALL_UI_TOKEN"),
        )

    def data_dir(self) -> Path:
        return paths.data_dir(self.env)

    def db_path(self, cli_db: str | os.PathLike[str] | None = None) -> Path:
        return paths.db_path(cli_db, self.env)

    def projects_roots(self, cli_roots: Iterable[str | os.PathLike[str]] | None = None) -> list[Path]:
        return paths.projects_roots(cli_roots, self.env)

    def claude_config_dir(self) -> Path | None:
        """CLAUDE_CONFIG_DIR when set: Claude Code's home for this user."""
        value = self.env.get("CLAUDE_CONFIG_DIR")
        return Path(value).expanduser() if value else None
