"""Sources whose session is one JSON document (Gemini CLI chats, OpenCode exports).

Such a file is rewritten whole as the session grows, so there is no byte cursor: the planner
re-reads it from the start whenever its size, mtime or inode changes (`FileInfo.whole`), after
dropping its rows. A document that does not decode (cut mid-write, damaged) is counted as one bad
line and skipped until the file changes again; it never stops a run.
"""

from __future__ import annotations

import json
import os
from typing import Any

import orjson

from lib.discovery import key_path
from lib.model import FileChunk


def load(path: str, chunk: FileChunk) -> dict[str, Any] | None:
    """The document at `path` (opened read-only), or None, counted in `chunk.bad_lines`."""
    with open(key_path(path), "rb") as f:
        data = f.read()
    chunk.end = len(data)
    chunk.lines = 1
    if not data.strip():
        chunk.bad_lines["blank"] += 1
        return None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        try:  # invalid UTF-8 inside strings: the stdlib decoder takes the replaced text
            doc = json.loads(data.decode("utf-8", "replace"))
        except (json.JSONDecodeError, RecursionError):
            chunk.bad_lines["invalid_json"] += 1
            return None
        chunk.repaired["recovered"] += 1
    if not isinstance(doc, dict):
        chunk.bad_lines["not_object"] += 1
        return None
    return doc


def read_text(path: str, limit: int = 4096) -> str | None:
    """A small side file (Gemini's `.project_root`), or None when absent or unreadable."""
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace").strip() or None
    except OSError:
        return None


def sibling(path: str, *parts: str) -> str:
    """A path relative to the folder of `path` (`..` allowed)."""
    return os.path.normpath(os.path.join(os.path.dirname(key_path(path)), *parts))
