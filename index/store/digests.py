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

from typing import Any

import orjson

from index.store.digest_build import Digest, Item, build
from index.store.digest_share import Built
from index.store.filters import parse_ts
from index.store.tx import transaction
from lib import sqlite

_SIG = """s.n_messages || '|' || coalesce(s.last_ts, '') || '|' || coalesce(s.title, '') || '|'
  || coalesce(s.cwd, '') || '|'
  || (SELECT count(*) FROM extractions e WHERE e.session_id = s.session_id) || '|'
  || (SELECT count(*) FROM turns t WHERE t.session_id = s.session_id)"""
ITEM_COLUMNS = "section, kind, text, detail, obs_type, n, source_uuid, ts"


def stale(conn: sqlite.Connection) -> list[tuple[str, str]]:
    """(session id, signature) of every session whose digest must be built: its signature changed,
    or a chunk marked it (`pending`)."""
    return conn.execute(
        f"""SELECT s.session_id, {_SIG} FROM sessions s LEFT JOIN digests d ON d.session_id = s.session_id
            WHERE d.sig IS NOT {_SIG} OR s.session_id IN (SELECT key FROM pending WHERE what = 'digest')"""
    ).fetchall()


def refresh(
    conn: sqlite.Connection, rows: list[tuple[str, str]] | None = None, built: Built | None = None
) -> int:
    """Rebuild the digests of sessions whose signature changed and drop orphans, in one transaction;
    returns how many were rebuilt. Cheap when nothing changed (one pass over sessions). `rows` are
    `stale(conn)` when the caller listed them already, `built` their digests built already (by a
    helper, `index/store/digest_share.py`); any not there is built here."""
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
        for sid, sig in rows:
            digest = built[sid] if built is not None and sid in built else build(conn, sid)
            _delete(conn, sid)
            if digest is not None:
                _store(conn, digest, sig)
    return len(rows)


def _delete(conn: sqlite.Connection, sid: str) -> None:
    conn.execute("DELETE FROM digest_items WHERE session_id = ?", (sid,))
    conn.execute("DELETE FROM digests WHERE session_id = ?", (sid,))


def duration_s(first: str | None, last: str | None) -> int | None:
    a, b = parse_ts(first), parse_ts(last)
    return max(int((b - a).total_seconds()), 0) if a and b else None


def _store(conn: sqlite.Connection, d: Digest, sig: str) -> None:
    m = d.meta
    counts = {
        k: v for k, v in m.items() if k not in ("project_key", "cwd", "title", "first_ts", "last_ts", "turns")
    }
    conn.execute(
        """INSERT INTO digests(session_id, sig, project_key, cwd, title, first_ts, last_ts, duration_s, turns, counts)
           VALUES(?,?,?,?,?,?,?,?,?,?)""",
        (
            d.session_id,
            sig,
            m["project_key"],
            m["cwd"],
            m["title"],
            m["first_ts"],
            m["last_ts"],
            duration_s(m["first_ts"], m["last_ts"]),
            m["turns"],
            orjson.dumps(counts, option=orjson.OPT_SORT_KEYS).decode(),
        ),
    )
    ordinals: dict[str, int] = {}
    rows = []
    for it in d.items:
        n = ordinals.get(it.section, 0)
        ordinals[it.section] = n + 1
        rows.append(
            (d.session_id, it.section, n, it.kind, it.text, it.detail, it.obs_type, it.n, it.uuid, it.ts)
        )
    conn.executemany(
        f"INSERT INTO digest_items(session_id, ordinal, {ITEM_COLUMNS}) VALUES(?,?,?,?,?,?,?,?,?,?)",
        [(r[0], r[2], r[1], *r[3:]) for r in rows],
    )


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
