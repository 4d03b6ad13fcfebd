"""Where the client's files are and what they hold. TOTAL_RECALL_TEAM_URL and TOTAL_RECALL_TEAM_TOKEN
(read in `team_env` only) override the saved server and credential, e.g. on CI machines."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFIG = "team.json"
FOLDER = "team"


def team_env(env: Mapping[str, str]) -> dict[str, str]:
    """TOTAL_RECALL_TEAM_URL / TOTAL_RECALL_TEAM_TOKEN, when set (env: the settings' snapshot)."""
    e = env
    return {
        k: e[n]
        for k, n in (("url", "TOTAL_RECALL_TEAM_URL"), ("token", "TOTAL_RECALL_TEAM_TOKEN"))
        if e.get(n)
    }


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from `path`; {} when missing or damaged (the client then starts afresh)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Atomically (temp file + rename), private to the user: these files hold a credential."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
    try:
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


@dataclass
class TeamConfig:
    state: Path
    url: str = ""
    token: str = ""
    enabled: list[str] = field(default_factory=list)

    @property
    def logged_in(self) -> bool:
        return bool(self.url and self.token)

    def is_enabled(self, project_id: str) -> bool:
        return project_id in self.enabled

    def save(self) -> None:
        write_json(
            self.state / CONFIG, {"url": self.url, "token": self.token, "enabled": sorted(set(self.enabled))}
        )


def load(state: Path, env: Mapping[str, str]) -> TeamConfig:
    data = read_json(state / CONFIG)
    over = team_env(env)
    enabled = [p for p in data.get("enabled") or [] if isinstance(p, str)]
    return TeamConfig(
        state,
        over.get("url") or str(data.get("url") or ""),
        over.get("token") or str(data.get("token") or ""),
        enabled,
    )


def project_file(state: Path, project_id: str) -> Path:
    """Per-project client state (sent keys, private keys, the pulled cache). Ids are validated by the
    resolver (letters, digits, `._:-`), so they are safe file names."""
    return state / FOLDER / f"{project_id}.json"
