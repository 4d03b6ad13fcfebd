"""Files the parser cannot read: it raised, or its process died, on both tries of one run (or a crash
killed two runs in a row while they parsed the file here). Remembered with the size and mtime they
had, so later runs leave them unread instead of failing on them at every run, and read them again once
they change, on `index --full`, or under another total-recall version (whose parser may read them)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from index.store.tasks import Task
from lib import sqlite
from lib.discovery import Found, key_path
from lib.paths import state_dir

if TYPE_CHECKING:  # the parsers load the writer and the extractors: not for `status`
    from index.store.parsers import Unread

SKIPPED = "skipped until the file changes"
DIED = "the index run died while parsing it (a crash in the parser)"

Skips = dict[str, tuple[tuple[int, int, str], int]]  # path -> ((size, mtime_ns, version), tries)


@lru_cache(maxsize=1)
def parser_version() -> str:
    """The installed total-recall's version: a new one may read what this one could not."""
    return version("total-recall")


class Parsing:
    """The file this process parses now, in a small file beside the index (`parse_all`'s note): a run
    killed by a crash in the parser leaves it behind, and the next run counts it as a failed try.

    One descriptor for the whole run: each note is written at the start of the file and blanked (spaces)
    after, so the file holds a note followed by blanks, or only blanks, which note nothing (JSON allows
    the blanks after a value). Creating and unlinking the file around every file cost the writer ≈ 1.7 %
    of its CPU (28 µs a file, a directory update each); emptying it with `ftruncate` still 9 µs, two
    writes in place 2 µs. `close` removes the file when the run ends."""

    def __init__(self, db: Path) -> None:
        self.path = state_dir(db) / f"{db.name}.parsing"
        self._fd: int | None = None
        self._noted = 0  # bytes of the note in the file now

    def __call__(self, t: Task | None) -> None:
        if t is None:
            if self._fd is not None and self._noted:
                _write_at_start(self._fd, b" " * self._noted)
                self._noted = 0
            return
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        note = orjson.dumps([t.path, t.size, t.mtime_ns])
        _write_at_start(self._fd, note)
        self._noted = len(note)

    def close(self) -> None:
        """The run is over (or stopped without a crash): nothing is being parsed."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self.path.unlink(missing_ok=True)

    def take(self, conn: sqlite.Connection) -> str | None:
        """Count the file a killed run left noted as a failed try (inside the caller's transaction);
        the error line when that was its second, and it is now skipped."""
        try:
            path, size, mtime_ns = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError, ValueError):
            return None
        finally:
            self.path.unlink(missing_ok=True)
        now = (size, mtime_ns, parser_version())
        before = _load(conn).get(path)
        tries = before[1] + 1 if before and before[0] == now else 1
        _put(conn, path, now, DIED, tries)
        return f"{path}: {DIED}, twice; {SKIPPED}" if tries >= 2 else None


def _write_at_start(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, data)


def _load(conn: sqlite.Connection) -> Skips:
    rows = _read(conn, "SELECT path, size, mtime_ns, version, tries FROM skipped_files")
    return {path: ((size, mtime_ns, ver), tries) for path, size, mtime_ns, ver, tries in rows}


def _put(conn: sqlite.Connection, path: str, state: tuple[int, int, str], reason: str, tries: int) -> None:
    conn.execute(
        """INSERT OR REPLACE INTO skipped_files(path, size, mtime_ns, version, reason, tries, at)
           VALUES(?,?,?,?,?,?,strftime('%Y-%m-%dT%H:%M:%fZ','now'))""",
        (path, *state, reason, tries),
    )


def record_skips(conn: sqlite.Connection, failed: list[Unread]) -> None:
    """Remember the files this run gave up on, and forget the tries of those it read after a crash
    (a run that gets here parsed them): inside the caller's transaction."""
    conn.execute("DELETE FROM skipped_files WHERE tries < 2")
    for u in failed:
        _put(conn, u.task.path, (u.task.size, u.task.mtime_ns, parser_version()), u.reason, 2)


def left_unread(conn: sqlite.Connection, found: Mapping[str, Found], full: bool) -> set[str]:
    """The remembered files this run leaves unread: those unchanged since (and no `full` run). The
    others are forgotten, to be read again (changed, another version) or because they are gone."""
    skips = _load(conn)
    same = {
        p
        for p, (state, _) in skips.items()
        if not full and p in found and state == (found[p].size, found[p].mtime_ns, parser_version())
    }
    gone = [p for p in skips if p not in same and (p in found or full or not os.path.exists(key_path(p)))]
    conn.executemany("DELETE FROM skipped_files WHERE path = ?", [(p,) for p in gone])
    return {p for p in same if skips[p][1] >= 2}


def skipped_files(conn: sqlite.Connection) -> list[dict[str, Any]]:
    """The files left unread, and why (status, health)."""
    rows = _read(
        conn, "SELECT path, reason, at, size, mtime_ns FROM skipped_files WHERE tries >= 2 ORDER BY path"
    )
    return [
        {"path": p, "reason": why, "at": at, "size": size, "mtime_ns": mtime}
        for p, why, at, size, mtime in rows
    ]


def _read(conn: sqlite.Connection, sql: str) -> list[tuple[Any, ...]]:
    """The rows, or none on an index an older version wrote (no table until its next run migrates it)."""
    try:
        return conn.execute(sql).fetchall()
    except sqlite.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        return []
