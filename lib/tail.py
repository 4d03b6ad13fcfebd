"""The freshest part of one transcript, read-only, for hooks that need what is not indexed yet
(the PreCompact continuation packet). Delivery code calls this instead of parsing JSONL itself."""

from __future__ import annotations

import os

from lib.model import Carry, Message
from lib.walker import FileInfo, parse_file

TAIL_BYTES = 2 << 20


def _line_start(path: str, offset: int) -> int:
    """The offset of the first line that starts at or after `offset`."""
    if offset <= 0:
        return 0
    with open(path, "rb") as f:
        f.seek(offset - 1)
        if f.read(1) == b"\n":
            return offset
        f.readline()
        return f.tell()


def tail_messages(path: str, after: int = 0, max_bytes: int = TAIL_BYTES) -> list[Message]:
    """Messages of the main transcript at `path` from byte `after` (e.g. the index cursor), at most the
    last `max_bytes` of the file. Missing or unreadable files give []."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return []
    start = max(after, size - max_bytes, 0)
    if start >= size:
        return []
    try:
        start = _line_start(path, start)
        stem = os.path.basename(path)
        stem = stem[:-6] if stem.endswith(".jsonl") else stem
        chunk = parse_file(path, start, Carry(), FileInfo("main", stem))
    except (OSError, ValueError):
        return []
    return chunk.messages
