"""The rows a session's main branch is computed from (`branches.update_main_branch`), kept from the
batch's own inserts when the writer knows them all, so the batch's end need not read them back.

At the end of each batch the writer recomputes the main branch of every session the batch touched,
from the session's non-sidechain message rows in id order. Read back, that was a probe of the session
index and of the table per row and a Python row fetched for each (0.20 CPU-s of the writer's at 736 MB,
one read per session per batch). A session whose first main-line row arrives in this batch, in a chunk
whose rows all went in (so their ids are the largest before + 1, 2, …), has exactly the rows this
batch inserted for it, as they were inserted (`on_main` at its default, 1): those rows are kept here
and handed to the computation instead. Anything else (a session with main-line rows from before this
batch, a chunk some rows of which were stored already) is read back as before. A delete of messages
(a reset, a copy taken over) flushes the batch's pending work first, which clears what is kept."""

from __future__ import annotations

from typing import Any

from index.store.message_rows import KIND, MESSAGE_ID, PARENT, SIDECHAIN
from lib import sqlite

Row = tuple[int, str, str | None, str, int, str | None]  # (id, uuid, parent, kind, on_main, message_id)


class KnownRows:
    """Per session touched in this batch: its rows as the main branch's query would return them, or
    None where they must be read (`rows`)."""

    def __init__(self) -> None:
        self._known: dict[str, list[Row]] = {}
        self._unknown: set[str] = set()

    def add(self, conn: sqlite.Connection, rows: list[tuple[Any, ...]], new: list[tuple[int, str]]) -> None:
        """A chunk's `message_rows` and (id, uuid) of those inserted (`writer._insert_messages`)."""
        if len(new) != len(rows):  # some were stored already: their ids and rows are not all known
            for sid in {r[1] for r in rows if not r[SIDECHAIN]}:
                self._known.pop(sid, None)
                self._unknown.add(sid)
            return
        mains: dict[str, list[Row]] = {}
        for (rid, _), r in zip(new, rows):  # every row went in, in order: its id is `new`'s
            if not r[SIDECHAIN]:
                mains.setdefault(r[1], []).append((rid, r[0], r[PARENT], r[KIND], 1, r[MESSAGE_ID]))
        for sid, kept in mains.items():
            have = self._known.get(sid)
            if have is not None:
                have += kept
            elif sid not in self._unknown:
                if _first_main_rows(conn, sid, kept[0][0]):
                    self._known[sid] = kept
                else:
                    self._unknown.add(sid)

    def rows(self, session_id: str) -> list[Row] | None:
        """The session's main-line rows in id order, or None: read them back."""
        return self._known.get(session_id)

    def clear(self) -> None:
        """The batch's pending work is done (or dropped): what comes next is another batch's."""
        self._known.clear()
        self._unknown.clear()


def _first_main_rows(conn: sqlite.Connection, session_id: str, first: int) -> bool:
    """Whether the session has no main-line row with an id below `first` (the chunk's first)."""
    return (
        conn.execute(
            "SELECT 1 FROM messages WHERE session_id=? AND is_sidechain=0 AND id<? LIMIT 1",
            (session_id, first),
        ).fetchone()
        is None
    )
