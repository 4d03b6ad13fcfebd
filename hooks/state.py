"""Small files the hooks keep beside the DB (never in the index): per-session policy state under
`sessions/`, continuation packets under `continuations/`, the first-run banner mark."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

BANNER_MARK = "banner.shown"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def safe_name(session_id: str) -> str:
    name = _SAFE.sub("_", session_id)[:120].lstrip(".")
    return name or "unknown"


def read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def write_json(path: Path, data: Any) -> bool:
    """Atomic write (temp file + rename); False when it could not be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
        os.replace(tmp, path)
        return True
    except (OSError, TypeError, ValueError):
        return False


def session_file(state: Path, session_id: str) -> Path:
    return state / "sessions" / f"{safe_name(session_id)}.json"


def continuation_file(state: Path, session_id: str) -> Path:
    return state / "continuations" / f"{safe_name(session_id)}.json"


def first_banner(state: Path) -> bool:
    """True exactly once per data dir: the caller shows the first-run banner."""
    try:
        state.mkdir(parents=True, exist_ok=True)
        fd = os.open(state / BANNER_MARK, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return False
    os.close(fd)
    return True
