"""The one place that resolves where the index and the transcripts live (design.md §3).

DB: --db > TOTAL_RECALL_DB > $TOTAL_RECALL_HOME/index.db > $CLAUDE_PLUGIN_DATA/index.db
    > ${XDG_DATA_HOME:-~/.local/share}/total-recall/index.db
Transcripts: --projects-root (repeatable) > TOTAL_RECALL_PROJECTS (os.pathsep-separated)
    > ${CLAUDE_CONFIG_DIR:-~/.claude}/projects
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """Directory for the DB, logs, locks and hook state."""
    e = _env(env)
    if e.get("TOTAL_RECALL_HOME"):
        return Path(e["TOTAL_RECALL_HOME"]).expanduser()
    if e.get("CLAUDE_PLUGIN_DATA"):
        return Path(e["CLAUDE_PLUGIN_DATA"]).expanduser()
    base = e.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "total-recall"


def db_path(cli_db: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Path:
    """Path of the SQLite index."""
    e = _env(env)
    if cli_db:
        return Path(cli_db).expanduser()
    if e.get("TOTAL_RECALL_DB"):
        return Path(e["TOTAL_RECALL_DB"]).expanduser()
    return data_dir(e) / "index.db"


def state_dir(db: Path) -> Path:
    """Logs, locks and hook state sit beside the DB so tests with a temp DB stay isolated."""
    return db.parent


def projects_roots(
    cli_roots: Iterable[str | os.PathLike[str]] | None = None, env: Mapping[str, str] | None = None
) -> list[Path]:
    """Transcript roots, each a `projects/` directory of `<slug>/<session>.jsonl` files."""
    e = _env(env)
    roots = [Path(r).expanduser() for r in (cli_roots or [])]
    if roots:
        return roots
    if e.get("TOTAL_RECALL_PROJECTS"):
        return [Path(p).expanduser() for p in e["TOTAL_RECALL_PROJECTS"].split(os.pathsep) if p]
    config = e.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    return [Path(config).expanduser() / "projects"]
