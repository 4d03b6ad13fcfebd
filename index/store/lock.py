"""One index run at a time: an exclusive lock file beside the DB.

Two runs over the same files would read the same cursors and add the same bytes twice to the
additive per-file counters, so `run_index` always holds this lock. It is re-entrant within a process
(the hooks' detached worker takes it without waiting, to collapse ticks, then calls `run_index`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from index.store.db import IndexError_
from lib.paths import state_dir

LOCK_NAME = "index.lock"
_held: dict[str, int] = {}  # lock path -> fd, for this process


class IndexBusy(IndexError_):
    fix = "another `total-recall index` run is in progress; try again when it finishes"


@contextmanager
def writer_lock(db: Path, wait: float = 120.0) -> Iterator[None]:
    """Hold the index lock; wait up to `wait` seconds for another run, then raise IndexBusy."""
    path = state_dir(db) / LOCK_NAME
    key = str(path)
    if key in _held or sys.platform == "win32":  # re-entrant; no flock on Windows
        yield
        return
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise IndexBusy(f"the index at {db} is being written by another run") from None
            time.sleep(0.1)
    _held[key] = fd
    try:
        yield
    finally:
        del _held[key]
        os.close(fd)
