"""The first index of a database is built beside it, without a write-ahead log, then moved into place.

Nobody reads an index that does not exist yet, so the run that writes the most (a whole history at
once) need not keep the log that lets readers read while it writes: in WAL mode every page of every
batch is written twice (to the log, then into the file at a checkpoint) and read back once, with a
checksum per page and a look-up in the log's index at every page read. Here a rollback journal keeps
each batch atomic and nothing is forced to disk until the end (`db.set_journal`): at 143 MB of
transcripts, 39 k page writes instead of 59 k and 16 k page reads instead of 34 k (docs/benchmarks.md,
"The first index built beside").

The file is `<index>.building`. Before finalize it turns to WAL (finalize's helper reads while the
writer writes); once the run is done it is synced and renamed over the index path, so readers see
either no index or a whole one. A run stopped in any way (an error, Ctrl-C, a crash, kill -9) leaves
the file as of its last committed batch (SQLite rolls back a half-written one from its journal when
the file is next opened), and the next run goes on from there; a file found damaged (the machine went
down before the OS wrote what it was given) is started again from nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

_SUFFIX = ".building"
_SIDES = ("", "-journal", "-wal", "-shm")


def building_path(db: Path) -> Path:
    return db.with_name(db.name + _SUFFIX)


def is_first(db: Path) -> bool:
    """Whether `db` holds no index yet (missing, or an empty file that a bare connect left behind)."""
    try:
        return db.stat().st_size == 0
    except FileNotFoundError:
        return True


def publish(build: Path, db: Path) -> None:
    """Move the finished index into place, atomically. Files beside the index path that no index
    owns any more (a log left by a deleted one would be replayed into this one) go first."""
    _fsync(build)
    for side in _SIDES[1:]:
        Path(str(db) + side).unlink(missing_ok=True)
    os.replace(build, db)
    if os.name == "posix":  # the rename itself on disk (a folder cannot be opened for fsync elsewhere)
        _fsync(db.parent)


def discard_build(db: Path) -> None:
    """Remove the building file of `db` with its side files (rebuild, a damaged build)."""
    build = building_path(db)
    for side in _SIDES:
        Path(str(build) + side).unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
