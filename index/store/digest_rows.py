"""A session digest as the rows that store it (`digests`, `digest_items`), made where it is built.

The digest helper (`index/store/digest_share.py`) sends these plain tuples rather than `Digest` and
`Item` objects: for 1,815 digests (736 MB) pickling and unpickling them costs 0.06 CPU-s instead of
0.25 (slotted dataclasses pickle through their state dicts), and the writer, which stores them in a
serial step at the end of a run, only inserts what the helper made ready (issue 18).
"""

from __future__ import annotations

from typing import Any

import orjson

from index.store.digest_build import Digest, build
from index.store.filters import parse_ts
from lib import sqlite

ITEM_COLUMNS = "section, kind, text, detail, obs_type, n, source_uuid, ts"
# (the `digests` row, its `digest_items` rows), both in their INSERT's column order
DigestRows = tuple[tuple[Any, ...], list[tuple[Any, ...]]]


def duration_s(first: str | None, last: str | None) -> int | None:
    a, b = parse_ts(first), parse_ts(last)
    return max(int((b - a).total_seconds()), 0) if a and b else None


def made(conn: sqlite.Connection, sid: str, sig: str) -> DigestRows | None:
    """The rows of a session's digest with signature `sig`, or None when the session is not indexed."""
    d = build(conn, sid)
    return None if d is None else rows_of(d, sig)


def rows_of(d: Digest, sig: str) -> DigestRows:
    m = d.meta
    counts = {
        k: v for k, v in m.items() if k not in ("project_key", "cwd", "title", "first_ts", "last_ts", "turns")
    }
    head = (
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
    )
    ordinals: dict[str, int] = {}
    items = []
    for it in d.items:
        n = ordinals.get(it.section, 0)
        ordinals[it.section] = n + 1
        items.append(
            (d.session_id, n, it.section, it.kind, it.text, it.detail, it.obs_type, it.n, it.uuid, it.ts)
        )
    return head, items


def store(conn: sqlite.Connection, rows: DigestRows) -> None:
    head, items = rows
    conn.execute(
        """INSERT INTO digests(session_id, sig, project_key, cwd, title, first_ts, last_ts, duration_s, turns, counts)
           VALUES(?,?,?,?,?,?,?,?,?,?)""",
        head,
    )
    conn.executemany(
        f"INSERT INTO digest_items(session_id, ordinal, {ITEM_COLUMNS}) VALUES(?,?,?,?,?,?,?,?,?,?)", items
    )
