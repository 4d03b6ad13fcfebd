"""Scratch databases for the bench scripts: each run starts from an empty index file."""

from __future__ import annotations

import tempfile
from pathlib import Path


def fresh(db: Path) -> Path:
    """`db` with no index file, WAL or shared memory left from an earlier run."""
    for s in ("", "-wal", "-shm"):
        Path(str(db) + s).unlink(missing_ok=True)
    return db


def work_dir(given: Path | None, prefix: str) -> Path:
    """The run's work directory: the one asked for (created if needed) or a new temporary one."""
    work = given or Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    return work
