"""What the planner hands to a worker: light types only, so planning (and a no-op run) never
imports the extractors."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from lib.walker import FileInfo

HEAD_BYTES = 4096


@dataclass(slots=True)
class Task:
    path: str
    root: str
    project_dir: str
    info: FileInfo
    start: int
    carry: dict | None
    reset: bool
    size: int
    mtime_ns: int
    inode: int
    forgotten: frozenset[str] = frozenset()  # sessions the user asked to forget: never stored


def head_hash(path: str, n: int) -> str:
    """Fingerprint of the first n bytes (n is stored with it, so a growing file still matches)."""
    with open(path, "rb") as f:
        data = f.read(min(n, HEAD_BYTES))
    return f"{len(data)}:{hashlib.blake2b(data, digest_size=12).hexdigest()}"
