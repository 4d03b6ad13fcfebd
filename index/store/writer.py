"""The single writer: applies one parsed file chunk (rows + cursor) in one transaction (I4).

The per-record tables (turns, durations, compactions, summaries, spawns, agents) are written by
index/store/record_rows.py, the sessions and their main branches by index/store/session_rows.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from index.store.branch_rows import KnownRows
from index.store.idents import identifier_parts
from index.store.message_rows import PARENT
from index.store.operator import mark_projects
from index.store.pending import mark_pending
from index.store.record_rows import name_task_results, write_record_rows
from index.store.schema import session_token
from index.store.session_rows import copy_rank, count_sessions, update_main_branches, write_sessions
from index.store.textstore import unpack
from lib import sqlite
from lib.discovery import path_key
from lib.model import FileChunk

# Rows that come from one file and go when it is re-read (messages and extractions, with their FTS
# entries, are dropped first; the operator tables are re-folded from what remains).
PER_FILE_TABLES = (
    "aliases",
    "turns",
    "turn_durations",
    "compactions",
    "summaries",
    "task_spawns",
    "agents",
    "profile_counters",
)
# Rows of one record that follow its message to the copy that takes it over (`_take_over`).
PER_RECORD_TABLES = ("turns", "turn_durations", "compactions", "task_spawns")
# The extractors count the sessions of each chunk; summed over increments, a session spread over
# two of them would count twice. Nothing reads that counter, so it is not stored.
NOT_ADDITIVE = frozenset({("workflow", "sessions_touched")})


@dataclass(slots=True)
class Prepared:
    """A chunk plus what the worker derived from it (extraction rows), ready to write."""

    chunk: FileChunk
    root: str
    project_dir: str
    layout: str
    size: int
    mtime_ns: int
    inode: int
    head_hash: str
    reset: bool  # the file was truncated/rewritten/rotated: drop its rows first
    agent: str = "claude"  # the coding agent that wrote the file (lib.sources)
    extractions: list[tuple[Any, ...]] = field(default_factory=list)
    # The chunk's messages, aliases and usage travel as plain rows, ready for SQL: tuples pickle
    # several times faster than dataclasses on their way from the parser to the writer (the
    # worker empties the chunk's own lists). `messages`: `message_rows`; `externals`: (index in
    # `messages`, parent, fallback) of the parents the writer resolves against the index;
    # `aliases`: (uuid, parent_uuid); `turns`: `record_rows.turn_rows`.
    messages: list[tuple[Any, ...]] = field(default_factory=list)
    externals: list[tuple[int, str | None, str | None]] = field(default_factory=list)
    aliases: list[tuple[str, str | None]] = field(default_factory=list)
    turns: list[tuple[Any, ...]] = field(default_factory=list)
    # The FTS text and identifier parts of each row of `messages`, in the same order (a uuid seen twice:
    # its last text in both rows). Lists beside the rows rather than a dict by uuid: no key or pair per
    # message to pickle and unpickle, and the writer pairs them with the rows it inserted by position.
    texts: tuple[str, ...] = ()
    idents: tuple[str, ...] = ()
    counters: list[tuple[str, str, float]] = field(default_factory=list)  # (profile, key, delta)


@dataclass(slots=True)
class Deferred:
    """What the rows written in the current transaction still need, done once just before it commits
    (`flush`). Their FTS entries: FTS5 writes a table's pending terms out as a new segment whenever a
    later statement of the transaction opens a savepoint (any multi-row write does), so indexing chunk
    by chunk flushed the FTS tables once per file instead of once per batch, and the extra segments
    cost merges too. Anything that deletes FTS entries flushes first (FTS5 can only forget what it
    holds). And the counts and main branch of the sessions touched: a session's main file and its
    subagents' files often share a batch, and both depend only on the session's rows at the end."""

    messages: list[tuple[int, str, str, str]] = field(default_factory=list)  # (rowid, text, idents, session)
    after: int | None = None  # extractions with a larger id are not in extractions_fts yet
    sessions: dict[str, None] = field(default_factory=dict)  # touched, in the order first seen
    marked: bool = False  # the `pending` mark is in this transaction already (one statement per batch)
    rows: KnownRows = field(default_factory=KnownRows)  # main-line rows of sessions new in this batch

    def mark_pending(self, conn: sqlite.Connection) -> None:
        if not self.marked:
            mark_pending(conn)
            self.marked = True

    def flush(self, conn: sqlite.Connection) -> None:
        self.marked = False  # before a commit (or a delete mid-batch): the next chunk marks again
        if self.messages:
            _index_messages(conn, self.messages)
            self.messages = []
        if self.after is not None:
            _index_extractions(conn, self.after)
            self.after = None
        if self.sessions:
            count_sessions(conn, self.sessions)
            update_main_branches(conn, self.sessions, self.rows)
            self.sessions = {}
        self.rows.clear()

    def drop(self) -> None:
        """The transaction was rolled back: nothing is pending any more."""
        self.messages, self.after, self.sessions, self.marked = [], None, {}, False
        self.rows.clear()


def file_id_for(conn: sqlite.Connection, path: str) -> int:
    """The id of a file's ingest_state row (created on first sight); `path` is stored as its key."""
    key = path_key(path)
    cur = conn.execute("INSERT OR IGNORE INTO ingest_state(path) VALUES(?)", (key,))
    if cur.rowcount == 1 and cur.lastrowid is not None:  # a new file: the row just inserted
        return cur.lastrowid
    fid: int = conn.execute("SELECT id FROM ingest_state WHERE path=?", (key,)).fetchone()[0]
    return fid


def delete_file_rows(conn: sqlite.Connection, file_id: int) -> None:
    """Forget every row that came from one file (before re-reading it from the start); the projects
    whose goals, decisions, bans or failed attempts came from it are re-folded when the run ends."""
    _delete_messages(conn, "file_id = ?", (file_id,))
    _delete_extractions(conn, "file_id = ?", (file_id,))
    for table in PER_FILE_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE file_id=?", (file_id,))
    mark_pending(conn)


def _delete_messages(conn: sqlite.Connection, where: str, args: tuple[Any, ...]) -> None:
    """Messages and their terms in the contentless FTS (which needs the text to forget it), by rowid: FTS5
    flushes a segment at each rowid below the last (uuid order: 0.13 → 0.01 CPU-s at 736 MB)."""
    by_id = f"SELECT id, body, session_id FROM messages WHERE {where} ORDER BY id"
    rows = conn.execute(by_id, args).fetchall()
    conn.executemany(
        "INSERT INTO messages_fts(messages_fts, rowid, text, idents, session) VALUES('delete', ?, ?, ?, ?)",
        [(r[0], t, identifier_parts(t), session_token(r[2])) for r, t in ((r, unpack(r[1])) for r in rows)],
    )
    conn.execute(f"DELETE FROM messages WHERE {where}", args)


def _delete_extractions(conn: sqlite.Connection, where: str, args: tuple[Any, ...]) -> int:
    """Delete the matching extractions and their FTS entries (by rowid); returns how many went."""
    mark_projects(conn, where, args)
    conn.execute(
        f"""INSERT INTO extractions_fts(extractions_fts, rowid, content, context)
                     SELECT 'delete', id, content, context FROM extractions WHERE {where} ORDER BY id""",
        args,
    )
    n: int = conn.execute(f"DELETE FROM extractions WHERE {where}", args).rowcount
    return max(n, 0)


def _take_over(conn: sqlite.Connection, path: str, uuids: list[str], fid: int) -> list[str]:
    """Records of this chunk already stored from another file (a resumed session's copied prefix):
    the copy that ranks first keeps them, whatever order the files are indexed in. Returns the uuids
    of those this file takes over (`_drop_taken` drops their rows, to be written again from it)."""
    if not uuids:
        return []
    held = conn.execute(
        """SELECT m.uuid, m.session_id, f.path FROM messages m LEFT JOIN ingest_state f ON f.id = m.file_id
           WHERE m.uuid IN (SELECT value FROM json_each(?)) AND m.file_id IS NOT ?""",
        (orjson.dumps(uuids).decode(), fid),
    ).fetchall()
    return [u for u, sid, cur in held if cur is None or copy_rank(path, sid) < copy_rank(cur, sid)]


def _drop_taken(conn: sqlite.Connection, taken: list[str], deferred: Deferred | None) -> int:
    """Drop the rows of the records taken over; returns the extractions dropped (written again from
    this file, so not new: counting them made `extractions_added` depend on the order files are
    written in, which varies with --jobs)."""
    if deferred is not None:
        deferred.flush(conn)  # the copy taken over may have been written earlier in this batch
    arg = (orjson.dumps(taken).decode(),)
    _delete_messages(conn, "uuid IN (SELECT value FROM json_each(?))", arg)
    return _delete_extractions(conn, "source_uuid IN (SELECT value FROM json_each(?))", arg)


def _insert_messages(
    conn: sqlite.Connection, rows: list[tuple[Any, ...]], fid: int
) -> tuple[int, list[tuple[int, str]]]:
    """Insert the rows not stored yet; returns the largest id before them and (id, uuid) of those
    inserted, in file order. When every row went in, their ids are known without reading them back:
    `messages.id` is a plain rowid, so each insert takes the largest id + 1."""
    last: int = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
    n = conn.executemany(
        """INSERT OR IGNORE INTO messages(uuid, session_id, parent_uuid, role, kind, ts, body, agent_id,
           is_sidechain, tool_name, tool_use_id, tool_target, is_error, message_id, model, byte_offset, agent,
           file_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
        [r + (fid,) for r in rows],
    ).rowcount
    if n == len(rows):
        return last, [(last + k, r[0]) for k, r in enumerate(rows, 1)]
    return last, conn.execute("SELECT id, uuid FROM messages WHERE id > ? ORDER BY id", (last,)).fetchall()


def _write_messages(
    conn: sqlite.Connection, path: str, rows: list[tuple[Any, ...]], fid: int, deferred: Deferred | None
) -> tuple[list[tuple[int, str]], list[str], int]:
    """Insert a chunk's messages; returns (id, uuid) of the rows written, the uuids taken over and the
    extractions dropped with them.
    Inserted first: only the records found stored already (rare: a resume copy) are checked against
    their other copy, instead of probing every uuid of every chunk. When this file takes some over,
    the rows just inserted (every id above the largest before) are deleted and inserted again once
    the taken ones are dropped, so a chunk's rows keep file order in their ids (the main branch and
    the digests read them in that order). A delete rather than a savepoint rolled back: a savepoint
    copies every page the insert first touches (the uuid index's, at random) to its journal, which
    cost a fifth of the inserts' CPU for a take-over that few chunks need."""
    last, new = _insert_messages(conn, rows, fid)
    taken: list[str] = []
    if len(new) < len(rows):
        written = {u for _, u in new}
        taken = _take_over(conn, path, [r[0] for r in rows if r[0] not in written], fid)
    dropped = 0
    if taken:
        conn.execute("DELETE FROM messages WHERE id > ?", (last,))
        dropped = _drop_taken(conn, taken, deferred)
        new = _insert_messages(conn, rows, fid)[1]
    return new, taken, dropped


def _follow(conn: sqlite.Connection, taken: list[str], fid: int) -> None:
    """A record's other rows belong to the file that holds its message (so that re-reading the copy
    it was first stored from does not drop them)."""
    arg = (fid, orjson.dumps(taken).decode())
    for table in PER_RECORD_TABLES:
        conn.execute(f"UPDATE {table} SET file_id=? WHERE uuid IN (SELECT value FROM json_each(?))", arg)


def resolve_parent(conn: sqlite.Connection, parent: str | None, fallback: str | None) -> str | None:
    """Follow skipped nodes (aliases) until a stored message; dangling bridges use the fallback."""
    p = parent
    for _ in range(10000):
        if p is None:
            return None
        if conn.execute("SELECT 1 FROM messages WHERE uuid=?", (p,)).fetchone():
            return p
        row = conn.execute("SELECT parent_uuid FROM aliases WHERE uuid=?", (p,)).fetchone()
        if row is None:
            break
        p = row[0]
    if fallback is not None and fallback != parent:
        return resolve_parent(conn, fallback, None)
    return p


def write_chunk(conn: sqlite.Connection, prep: Prepared, deferred: Deferred | None = None) -> tuple[int, int]:
    """Write a chunk's rows and advance its cursor inside the caller's transaction.

    The caller (ingest) batches a few files per transaction; a file's rows and its cursor always
    commit together. With `deferred`, the extractions' FTS entries wait for `deferred.flush`, which
    the caller runs before it commits. Returns (messages_added, extractions_added).
    """
    c = prep.chunk
    fid = file_id_for(conn, c.path)
    if deferred is None:
        mark_pending(conn)
    else:
        deferred.mark_pending(conn)
    if prep.reset:
        if deferred is not None:
            deferred.flush(conn)  # FTS5 can only forget what it was given
        delete_file_rows(conn, fid)
    if prep.aliases:
        conn.executemany(
            "INSERT OR IGNORE INTO aliases(uuid, parent_uuid, file_id) VALUES(?,?,?)",
            [a + (fid,) for a in prep.aliases],
        )
    rows = prep.messages
    for i, parent, fallback in prep.externals:
        r = rows[i]
        rows[i] = (*r[:PARENT], resolve_parent(conn, parent, fallback), *r[PARENT + 1 :])
    new, taken, dropped = _write_messages(conn, c.path, rows, fid, deferred)
    fts = _fts_rows(rows, prep.texts, prep.idents, new)
    if deferred is None:
        _index_messages(conn, fts)
    else:
        deferred.messages += fts
        deferred.rows.add(conn, rows, new)
    added = len(new) - len(taken)  # a copy taken over is written again, not new
    written = 0
    if prep.extractions:
        ext_last = _last_extraction(conn)
        if deferred is not None and deferred.after is None:
            deferred.after = ext_last
        written = write_extractions(conn, prep.extractions, fid, fts=deferred is None, after=ext_last)
        if written:
            mark_projects(conn, "id > ?", (ext_last,))
    if prep.counters:
        conn.executemany(
            """INSERT INTO profile_counters(file_id, profile, key, value) VALUES(?,?,?,?)
               ON CONFLICT(file_id, profile, key) DO UPDATE SET value = value + excluded.value""",
            [(fid, p, k, v) for p, k, v in prep.counters if (p, k) not in NOT_ADDITIVE],
        )
    write_record_rows(conn, c, prep.turns, fid)
    name_task_results(conn, rows)
    write_sessions(conn, c, fid, prep.layout)
    if deferred is None:
        count_sessions(conn, c.sessions)
        update_main_branches(conn, c.sessions)
    else:
        deferred.sessions.update(dict.fromkeys(c.sessions))
    if taken:
        _follow(conn, taken, fid)
    reset = int(prep.reset)  # an int binds directly; a bool takes the adapter protocol's two failed lookups
    conn.execute(
        """UPDATE ingest_state SET root=?, project_dir=?, layout=?, size=?, mtime_ns=?, inode=?, offset=?,
           head_hash=?, carry=?, missing=0, agent=?,
           records=CASE WHEN ? THEN ? ELSE records + ? END,
           lines=CASE WHEN ? THEN ? ELSE lines + ? END,
           bad_lines=CASE WHEN ? THEN ? ELSE bad_lines + ? END,
           indexed_at=strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id=?""",
        (
            prep.root,
            prep.project_dir,
            prep.layout,
            prep.size,
            prep.mtime_ns,
            prep.inode,
            c.end,
            prep.head_hash,
            orjson.dumps(c.carry.to_json()).decode(),
            prep.agent,
            reset,
            c.records,
            c.records,
            reset,
            c.lines,
            c.lines,
            reset,
            sum(c.bad_lines.values()),
            sum(c.bad_lines.values()),
            fid,
        ),
    )
    # Net of the rows taken over from another copy (written again, not new), so that a run's total is
    # what it added whatever order its files were written in.
    return added, written - dropped


def _fts_rows(
    rows: list[tuple[Any, ...]], texts: tuple[str, ...], idents: tuple[str, ...], new: list[tuple[int, str]]
) -> list[tuple[int, str, str, str]]:
    """(rowid, text, identifier parts, session token) of the rows inserted (`new`: (id, uuid))."""
    tokens = {sid: session_token(sid) for sid in {r[1] for r in rows}}  # a file may hold several sessions
    if len(new) == len(rows):  # every row inserted, so in file order: ids grow as rows are inserted
        return [(rid, t, i, tokens[r[1]]) for (rid, _), r, t, i in zip(new, rows, texts, idents, strict=True)]
    at = {r[0]: n for n, r in enumerate(rows)}  # some were stored already (a resumed copy's prefix)
    return [(rid, texts[at[u]], idents[at[u]], tokens[rows[at[u]][1]]) for rid, u in new]


def _last_extraction(conn: sqlite.Connection) -> int:
    """The largest extraction id (0 when none): rows inserted after it have larger ids."""
    last: int = conn.execute("SELECT coalesce(max(id), 0) FROM extractions").fetchone()[0]
    return last


def write_extractions(
    conn: sqlite.Connection,
    rows: list[tuple[Any, ...]],
    file_id: int | None,
    *,
    fts: bool = True,
    after: int | None = None,
) -> int:
    """rows: (kind, content, context_json, score, session_id, source_uuid, ordinal, cwd, project_key, ts).
    Without `fts`, the caller indexes the new rows itself (`Deferred`); `after`: the largest id
    before them, when the caller has just read it. Returns the rows added."""
    if not rows:
        return 0
    last = _last_extraction(conn) if after is None else after
    n: int = conn.executemany(
        """INSERT OR IGNORE INTO extractions(kind, content, context, score, session_id, source_uuid, ordinal,
           cwd, project_key, ts, file_id) VALUES(?,?,?,?,?,?,?,?,?,?,?)""",
        [r + (file_id,) for r in rows],
    ).rowcount
    if fts:
        _index_extractions(conn, last)
    return max(n, 0)


def _index_messages(conn: sqlite.Connection, rows: list[tuple[int, str, str, str]]) -> None:
    conn.executemany("INSERT INTO messages_fts(rowid, text, idents, session) VALUES(?,?,?,?)", rows)


def _index_extractions(conn: sqlite.Connection, after: int) -> None:
    conn.execute(
        """INSERT INTO extractions_fts(rowid, content, context)
           SELECT id, content, context FROM extractions WHERE id > ?""",
        (after,),
    )
