"""The one place that resolves where the index and the transcripts live (design.md §3), from the
environment snapshot of lib/settings.py (`Settings.db_path()` etc.; nothing here reads os.environ).

DB: --db > TOTAL_RECALL_DB > $TOTAL_RECALL_HOME/index.db > $CLAUDE_PLUGIN_DATA/index.db
    > ${XDG_DATA_HOME:-~/.local/share}/total-recall/index.db
Transcripts: --projects-root (repeatable) > TOTAL_RECALL_PROJECTS (os.pathsep-separated)
    > ${CLAUDE_CONFIG_DIR:-~/.claude}/projects
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path


def data_dir(env: Mapping[str, str]) -> Path:
    """Directory for the DB, logs, locks and hook state."""
    if env.get("TOTAL_RECALL_HOME"):
        return Path(env["TOTAL_RECALL_HOME"]).expanduser()
    if env.get("CLAUDE_PLUGIN_DATA"):
        return Path(env["CLAUDE_PLUGIN_DATA"]).expanduser()
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "total-recall"


def db_path(cli_db: str | os.PathLike[str] | None, env: Mapping[str, str]) -> Path:
    """Path of the SQLite index."""
    if cli_db:
        return Path(cli_db).expanduser()
    if env.get("TOTAL_RECALL_DB"):
        return Path(env["TOTAL_RECALL_DB"]).expanduser()
    return data_dir(env) / "index.db"


def state_dir(db: Path) -> Path:
    """Logs, locks and hook state sit beside the DB so tests with a temp DB stay isolated."""
    return db.parent


def projects_roots(cli_roots: Iterable[str | os.PathLike[str]] | None, env: Mapping[str, str]) -> list[Path]:
    """Transcript roots, each a `projects/` directory of `<slug>/<session>.jsonl` files."""
    roots = [Path(r).expanduser() for r in (cli_roots or [])]
    if roots:
        return roots
    if env.get("TOTAL_RECALL_PROJECTS"):
        return [Path(p).expanduser() for p in env["TOTAL_RECALL_PROJECTS"].split(os.pathsep) if p]
    config = env.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    return [Path(config).expanduser() / "projects"]
