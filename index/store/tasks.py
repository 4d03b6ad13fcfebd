"""What the planner hands to a worker: light types only, so planning (and a no-op run) never
imports the extractors."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from lib.discovery import key_path
from lib.walker import FileInfo

HEAD_BYTES = 4096  # fingerprinted at each end of the indexed part of a file


@dataclass(slots=True)
class Task:
    path: str  # index key (lib.discovery.path_key)
    root: str
    project_dir: str
    info: FileInfo
    start: int
    carry: dict[str, Any] | None
    reset: bool
    size: int
    mtime_ns: int
    inode: int
    forgotten: frozenset[str] = frozenset()  # sessions the user asked to forget: never stored


def head_hash(path: str, end: int) -> str:
    """The file fingerprint, `end:head:tail`: hashes of the first and the last HEAD_BYTES before
    `end` (the cursor).

    Stored with the cursor and recomputed at the same `end` when a file's stat changes, so a file
    that only grew still matches, while a rewrite of its start or of its last indexed lines (an
    editor saving in place, same size or not) does not."""
    with open(key_path(path), "rb") as f:
        head = f.read(min(end, HEAD_BYTES))
        n = min(end, HEAD_BYTES)
        f.seek(end - n)
        tail = f.read(n)
    return f"{end}:{_h(head)}:{_h(tail)}"


def fingerprint_matches(path: str, stored: str | None) -> bool:
    """Does the file still hold the bytes that were indexed? A missing or unparsable fingerprint
    (`forget` writes a placeholder to force a re-read) never matches."""
    if not stored:
        return True  # nothing recorded: trust size and inode
    parts = stored.split(":")
    try:
        if len(parts) == 3:
            return head_hash(path, int(parts[0])) == stored
        if len(parts) == 2:  # before the tail was fingerprinted: `n:head` over the first n bytes
            with open(key_path(path), "rb") as f:
                data = f.read(min(int(parts[0]), HEAD_BYTES))
            return f"{len(data)}:{_h(data)}" == stored
    except (ValueError, OSError):
        return False
    return False


def _h(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=12).hexdigest()
