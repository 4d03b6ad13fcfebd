"""Which files must be re-read from the start, and dropping their rows first (I4).

A file that was truncated, rewritten or rotated loses its rows and is read again. Rows derived
from several files cannot be subtracted one file at a time (a session's first and last timestamps,
title, models), so every file that shares a session with it is re-read too, and those sessions are
rebuilt whole: the result equals indexing the files from scratch. Files that are no longer on disk
are never part of this: their rows, and the sessions they contributed to, stay as they are.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from typing import Any

import orjson

from index.store.writer import delete_file_rows
from lib import sqlite
from lib.discovery import key_path, path_key

_IN = "IN (SELECT value FROM json_each(?))"


def drop_duplicates(
    conn: sqlite.Connection, state: Mapping[str, tuple[Any, ...]], found: Collection[str]
) -> set[int]:
    """Rows stored under another name of a file found now (a relative root, a symlinked folder, an
    index made before keys were canonical): returns their file ids, to be dropped by `reset_files`
    (which re-reads the file under its canonical name)."""
    dups = set()
    for key, row in state.items():
        if key in found or row[7]:  # seen now, or already known to be missing
            continue
        canon = path_key(os.path.realpath(key_path(key)))
        if canon != key and canon in found:
            dups.add(int(row[8]))
    return dups


def reset_files(
    conn: sqlite.Connection, file_ids: set[int], on_disk: Collection[str], drop: Collection[int] = ()
) -> list[str]:
    """Drop the rows of `file_ids` and of every readable file sharing a session with them; rows of
    `drop` go with their ingest_state entry. Returns the keys of the files to read from the start."""
    paths = dict(conn.execute("SELECT id, path FROM ingest_state"))
    readable = {fid for fid, p in paths.items() if p in on_disk}
    files, sessions = _closure(conn, set(file_ids), lambda fid: fid in readable or fid in drop)
    reread = {fid for fid in files if fid in readable and fid not in drop}
    kept = files - reread - set(drop)  # no longer on disk: what they gave stays
    keep_sessions = _sessions_of(conn, kept)
    for fid in reread | set(drop):
        delete_file_rows(conn, fid)
    conn.execute(
        f"DELETE FROM sessions WHERE session_id {_IN}",
        (orjson.dumps(sorted(sessions - keep_sessions)).decode(),),
    )
    conn.execute(
        f"""UPDATE ingest_state SET size=NULL, offset=0, head_hash=NULL, carry=NULL, records=0,
                     lines=0, bad_lines=0 WHERE id {_IN}""",
        (orjson.dumps(sorted(reread)).decode(),),
    )
    conn.execute(f"DELETE FROM ingest_state WHERE id {_IN}", (orjson.dumps(sorted(drop)).decode(),))
    return [paths[fid] for fid in reread]


def _closure(
    conn: sqlite.Connection, seeds: set[int], expand: Callable[[int], bool]
) -> tuple[set[int], set[str]]:
    """Files and sessions connected to `seeds` (a file holds rows of a session); the walk goes on
    only through files for which `expand(fid)` holds."""
    files, sessions = set(seeds), set[str]()
    frontier = {f for f in seeds if expand(f)}
    while frontier:
        new_sessions = _sessions_of(conn, frontier) - sessions
        sessions |= new_sessions
        new_files = _files_of(conn, new_sessions) - files
        files |= new_files
        frontier = {f for f in new_files if expand(f)}
    return files, sessions


def _sessions_of(conn: sqlite.Connection, file_ids: set[int]) -> set[str]:
    return {str(v) for v in _linked(conn, "session_id", "file_id", file_ids)}


def _files_of(conn: sqlite.Connection, session_ids: set[str]) -> set[int]:
    return {int(v) for v in _linked(conn, "file_id", "session_id", session_ids)}


def _linked(conn: sqlite.Connection, want: str, by: str, values: Collection[Any]) -> set[Any]:
    """`want` of the rows whose `by` is in `values`, over the tables that tie a file to a session."""
    if not values:
        return set()
    arg = (orjson.dumps(sorted(values)).decode(),) * 3
    return {
        r[0]
        for r in conn.execute(
            f"""SELECT {want} FROM messages WHERE {by} {_IN} UNION SELECT {want} FROM sessions WHERE {by} {_IN}
            UNION SELECT {want} FROM agents WHERE {by} {_IN}""",
            arg,
        )
        if r[0] is not None
    }
