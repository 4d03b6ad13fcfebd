"""Stored session digests (S1): built at the end of every index run (`index/store/finalize.py`) for
the sessions whose inputs changed, so the MCP server, `total-recall digest`, `inspect` and the
Markdown memory read a digest instead of computing it per request.

A session's signature covers everything its digest is built from, all of it the session's own: its
message count and last timestamp (a new record, a rewind, a re-read file), its title and folder, its
extractions and API turns. So appending a session rebuilds only its digest. The signature is made of
values, never row ids, so incremental and full indexes store the same rows. Every session a chunk touched is
marked in `pending` too (`index/store/branches.py`, per chunk), since some changes show in no count:
a record taken over by a better copy in another file, a main branch that moved.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from index.store.digest_build import Digest, Item, build
from index.store.digest_rows import ITEM_COLUMNS, DigestRows, duration_s, made, store
from index.store.tx import transaction
from lib import sqlite

_SIG = """s.n_messages || '|' || coalesce(s.last_ts, '') || '|' || coalesce(s.title, '') || '|'
  || coalesce(s.cwd, '') || '|'
  || (SELECT count(*) FROM extractions e WHERE e.session_id = s.session_id) || '|'
  || (SELECT count(*) FROM turns t WHERE t.session_id = s.session_id)"""


def stale(conn: sqlite.Connection) -> list[tuple[str, str]]:
    """(session id, signature) of every session whose digest must be built: its signature changed,
    or a chunk marked it (`pending`)."""
    return conn.execute(
        f"""SELECT s.session_id, {_SIG} FROM sessions s LEFT JOIN digests d ON d.session_id = s.session_id
            WHERE d.sig IS NOT {_SIG} OR s.session_id IN (SELECT key FROM pending WHERE what = 'digest')"""
    ).fetchall()


def refresh(
    conn: sqlite.Connection,
    rows: list[tuple[str, str]] | None = None,
    built: Iterable[DigestRows | None] | None = None,
) -> int:
    """Rebuild the digests of sessions whose signature changed and drop orphans, in one transaction;
    returns how many were rebuilt. Cheap when nothing changed (one pass over sessions). `rows` are
    `stale(conn)` when the caller listed them already, `built` the rows of their digests in that order
    (None: a session not indexed) when another builds them (the helper, `index/store/digest_share.py`),
    read one by one as they are stored."""
    rows = stale(conn) if rows is None else rows
    marked = conn.execute("SELECT 1 FROM pending WHERE what = 'digest' LIMIT 1").fetchone() is not None
    orphans = [
        r[0]
        for r in conn.execute(
            "SELECT session_id FROM digests d WHERE NOT EXISTS(SELECT 1 FROM sessions s WHERE s.session_id = d.session_id)"
        )
    ]
    if not rows and not orphans and not marked:
        return 0
    with transaction(conn):
        conn.execute("DELETE FROM pending WHERE what = 'digest'")
        for sid in orphans:
            _delete(conn, sid)
        made_here = (made(conn, sid, sig) for sid, sig in rows)
        for (sid, _), ready in zip(rows, made_here if built is None else built, strict=True):
            _delete(conn, sid)
            if ready is not None:
                store(conn, ready)
    return len(rows)


def _delete(conn: sqlite.Connection, sid: str) -> None:
    conn.execute("DELETE FROM digest_items WHERE session_id = ?", (sid,))
    conn.execute("DELETE FROM digests WHERE session_id = ?", (sid,))


def stored(conn: sqlite.Connection, sid: str) -> Digest | None:
    """The stored digest of a session; built on the fly (not stored: readers hold no write lock) for
    an index whose last run predates digests."""
    try:
        row = conn.execute(
            """SELECT project_key, cwd, title, first_ts, last_ts, duration_s, turns, counts FROM digests
               WHERE session_id = ?""",
            (sid,),
        ).fetchone()
    except sqlite.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        row = None  # an index from before schema v7, opened read-only
    if row is None:
        built = build(conn, sid)
        if built is not None:
            built.meta["duration_s"] = duration_s(built.meta["first_ts"], built.meta["last_ts"])
        return built
    keys = ("project_key", "cwd", "title", "first_ts", "last_ts", "duration_s", "turns")
    meta: dict[str, Any] = {**orjson.loads(row[7]), **dict(zip(keys, row[:7]))}
    items = [
        Item(section, kind, text, uuid, ts, detail, obs, n)
        for section, kind, text, detail, obs, n, uuid, ts in conn.execute(
            f"SELECT {ITEM_COLUMNS} FROM digest_items WHERE session_id = ? ORDER BY section, ordinal", (sid,)
        )
    ]
    return Digest(sid, meta, items)
