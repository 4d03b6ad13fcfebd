"""The main-table reads a vector plugin needs: what to embed, what still exists, who owns a row.

vec/ keeps its own tables but never runs SQL on messages, extractions or sessions; it calls these
(the schema stays index/'s to change). A row is named by kind — 'message' (messages.id),
'extraction' (extractions.id) or 'session' (sessions.session_id) — as vec_items does. Every function
takes any DB-API connection to the index file (vec/ uses one with sqlite-vec loaded).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from index.store.textstore import unpack

_TABLES = {
    "message": ("messages", "id"),
    "extraction": ("extractions", "id"),
    "session": ("sessions", "session_id"),
}
_BATCH = 500  # ids per IN (...) list, well under SQLite's variable limit


def _marks(kinds: Sequence[str]) -> str:
    return ",".join("?" * len(kinds))


def messages_after(
    conn: Any, after: int, hi: int, kinds: Sequence[str], limit: int
) -> list[tuple[int, str, str]]:
    """(id, uuid, text) of messages of `kinds` with after < id <= hi, oldest first, at most `limit`."""
    rows = conn.execute(
        f"""SELECT id, uuid, body FROM messages WHERE id > ? AND id <= ? AND kind IN ({_marks(kinds)})
            ORDER BY id LIMIT ?""",
        [after, hi, *kinds, limit],
    ).fetchall()
    return [(int(r[0]), str(r[1]), unpack(r[2])) for r in rows]


def extractions_after(conn: Any, after: int, hi: int, limit: int) -> list[tuple[int, str]]:
    """(id, content) of extractions with after < id <= hi, oldest first, at most `limit`."""
    rows = conn.execute(
        "SELECT id, content FROM extractions WHERE id > ? AND id <= ? ORDER BY id LIMIT ?", (after, hi, limit)
    ).fetchall()
    return [(int(r[0]), str(r[1])) for r in rows]


def last_message(conn: Any) -> tuple[int, str]:
    """(id, uuid) of the newest message; (0, '') in an empty index."""
    row = conn.execute("SELECT id, uuid FROM messages ORDER BY id DESC LIMIT 1").fetchone()
    return (int(row[0]), str(row[1])) if row else (0, "")


def last_extraction_id(conn: Any) -> int:
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM extractions").fetchone()[0])


def message_uuid(conn: Any, rid: object) -> str | None:
    row = conn.execute("SELECT uuid FROM messages WHERE id=?", (rid,)).fetchone()
    return str(row[0]) if row else None


def extraction_content(conn: Any, rid: object) -> str | None:
    row = conn.execute("SELECT content FROM extractions WHERE id=?", (rid,)).fetchone()
    return str(row[0]) if row else None


def count_after(
    conn: Any, after_message: int, after_extraction: int, kinds: Sequence[str]
) -> tuple[int, int]:
    """How many messages of `kinds` and extractions lie beyond the two watermarks (the backlog)."""
    m = conn.execute(
        f"SELECT count(*) FROM messages WHERE id > ? AND kind IN ({_marks(kinds)})", [after_message, *kinds]
    ).fetchone()[0]
    e = conn.execute("SELECT count(*) FROM extractions WHERE id > ?", (after_extraction,)).fetchone()[0]
    return int(m), int(e)


def session_titles(conn: Any) -> Iterator[tuple[str, str]]:
    """(session_id, title) of every titled session."""
    for sid, title in conn.execute("SELECT session_id, title FROM sessions WHERE title IS NOT NULL"):
        yield str(sid), str(title)


def _by_ids(conn: Any, sql: str, refs: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    for i in range(0, len(refs), _BATCH):
        part = list(refs[i : i + _BATCH])
        yield from conn.execute(sql.format(marks=_marks(part)), part)


def existing(conn: Any, kind: str, refs: Sequence[Any]) -> set[Any]:
    """The refs of one kind whose row still exists."""
    table, key = _TABLES[kind]
    return {r[0] for r in _by_ids(conn, f"SELECT {key} FROM {table} WHERE {key} IN ({{marks}})", refs)}


def owners(conn: Any, kind: str, refs: Sequence[Any]) -> dict[Any, str]:
    """Session id of each message id / extraction id / session id."""
    if kind == "session":
        return {r: r for r in refs}
    table, key = _TABLES[kind]
    return {
        r[0]: r[1]
        for r in _by_ids(conn, f"SELECT {key}, session_id FROM {table} WHERE {key} IN ({{marks}})", refs)
    }


def source(conn: Any, kind: str, ref: object) -> dict[str, Any] | None:
    """What a vector stands for, to show it: session_id, uuid, ts, kind and the full text."""
    if kind == "message":
        row = conn.execute(
            "SELECT session_id, uuid, ts, kind, body FROM messages WHERE id=?", (ref,)
        ).fetchone()
        return (
            None
            if row is None
            else {"session_id": row[0], "uuid": row[1], "ts": row[2], "kind": row[3], "text": unpack(row[4])}
        )
    if kind == "extraction":
        row = conn.execute(
            "SELECT session_id, source_uuid, ts, kind, content FROM extractions WHERE id=?", (ref,)
        ).fetchone()
        return (
            None
            if row is None
            else {"session_id": row[0], "uuid": row[1], "ts": row[2], "kind": row[3], "text": row[4]}
        )
    row = conn.execute("SELECT last_ts, title FROM sessions WHERE session_id=?", (ref,)).fetchone()
    return (
        None
        if row is None
        else {"session_id": ref, "uuid": None, "ts": row[0], "kind": "title", "text": row[1]}
    )
