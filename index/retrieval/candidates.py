"""FTS5 candidate rows for search (I7), split from search.py: what matches and its bm25, not how it ranks."""

from __future__ import annotations

from typing import Any

from index.store.filters import Filters
from index.store.fts_query import Query, in_message_text, in_sessions
from index.store.plugins import Candidate
from index.store.textstore import unpack
from lib import sqlite

CANDIDATES = 400
# A term in more than this share of messages is left out of the OR widening (it still counts in the
# AND query): it adds little to bm25 but makes FTS5 score tens of thousands of rows.
COMMON_TERM_SHARE = 0.1
RARITY_WINDOW = 20_000  # newest messages that COMMON_TERM_SHARE is counted in
_WEIGHTS = "1.0, 0.6, 0.0"  # bm25 weights of messages_fts's text, identifier parts and session token


# In `Candidate`'s field order, then the rank and the body (`Candidate._make` refuses any other count).
_COLUMNS = """m.id, m.session_id, m.uuid, m.ts, m.role, m.kind, s.cwd, s.project_key, f.path,
               m.is_sidechain, m.on_main, m.agent"""
_JOINS = """LEFT JOIN sessions s ON s.session_id = m.session_id
        LEFT JOIN ingest_state f ON f.id = m.file_id"""


def _candidates(
    conn: sqlite.Connection,
    match: str,
    f: Filters,
    limit: int,
    within: list[str] | None = None,
    by_session: bool = False,
) -> list[Candidate]:
    """Best `limit` matches as rows (`_COLUMNS`, rank, packed body), of the sessions `within` when
    given (`by_session`: messages_fts has its session column, `has_session_column`). Unfiltered, FTS5
    ranks alone and only the winners are read; with filters the join has to come first."""
    where, args = f.sql()
    inside, ids = "", list(within or ())
    if within and by_session:  # FTS5 skips to those sessions' rows (schema v10)
        match, ids = in_sessions(match, within), []
    elif within:
        # `+`: FTS5 must not take the ids as lookups (one full query per id); they filter its
        # matches before bm25 is computed, so only those of the given sessions are scored.
        inside = f"""AND +messages_fts.rowid IN (SELECT id FROM messages
                     WHERE session_id IN ({",".join("?" * len(within))}))"""
    if not where:
        rank = dict(
            conn.execute(
                f"""SELECT rowid, bm25(messages_fts, {_WEIGHTS}) FROM messages_fts
                    WHERE messages_fts MATCH ? {inside} ORDER BY 2 LIMIT ?""",
                (match, *ids, limit),
            ).fetchall()
        )
        out = sorted(_read(conn, rank), key=lambda r: r.rank)
    else:
        sql = f"""
            SELECT {_COLUMNS}, bm25(messages_fts, {_WEIGHTS}) AS rank, m.body
            FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
            {_JOINS}
            WHERE messages_fts MATCH ? {inside} AND {where}
            ORDER BY rank LIMIT ?"""
        out = [Candidate._make(r) for r in conn.execute(sql, [match, *ids, *args, limit])]
    if within:  # two sessions can share a token (a hash): keep only the ones asked for
        wanted = set(within)
        out = [r for r in out if r.session_id in wanted]
    return out


def _read(conn: sqlite.Connection, rank: dict[int, float]) -> list[Candidate]:
    """The messages `rank` holds, with that rank. Their sessions' and files' columns are read once
    each rather than joined to every row (hundreds of rows come from a few sessions)."""
    if not rank:
        return []
    rows = conn.execute(
        f"""SELECT id, session_id, uuid, ts, role, kind, file_id, is_sidechain, on_main, agent, body
            FROM messages WHERE id IN ({",".join("?" * len(rank))})""",
        list(rank),
    ).fetchall()
    sids = list({r[1] for r in rows})
    fids = list({r[6] for r in rows})
    where = {
        sid: (cwd, project)
        for sid, cwd, project in conn.execute(
            f"SELECT session_id, cwd, project_key FROM sessions WHERE session_id IN ({','.join('?' * len(sids))})",
            sids,
        )
    }
    paths = dict(
        conn.execute(f"SELECT id, path FROM ingest_state WHERE id IN ({','.join('?' * len(fids))})", fids)
    )
    none = (None, None)
    return [
        Candidate(
            mid,
            sid,
            uuid,
            ts,
            role,
            kind,
            *where.get(sid, none),
            paths.get(fid),
            side,
            main,
            agent,
            rank[mid],
            body,
        )
        for mid, sid, uuid, ts, role, kind, fid, side, main, agent, body in rows
    ]


def has_session_column(conn: sqlite.Connection) -> bool:
    """Whether messages_fts names each message's session (schema v10; an index the writer has not
    migrated yet is searched the older way)."""
    row = conn.execute("SELECT 1 FROM pragma_table_info('messages_fts') WHERE name = 'session'").fetchone()
    return row is not None


_RANK = Candidate._fields.index("rank")


def _ranked_as(r: tuple[Any, ...], rank: float) -> Candidate:
    """The row with another rank (`_replace` costs four times as much, on hundreds of rows a query)."""
    return Candidate._make(r[:_RANK] + (rank,) + r[_RANK + 1 :])


def row_text(r: Candidate) -> str:
    """The message text of a candidate row (bodies stay packed until someone needs them)."""
    return unpack(r.body)


def _messages_total(conn: sqlite.Connection) -> int:
    row = conn.execute("SELECT max(id) FROM messages").fetchone()
    return int(row[0] or 0)


def _rare_terms(conn: sqlite.Connection, terms: list[str]) -> list[str]:
    """`terms` minus those in more than COMMON_TERM_SHARE of messages (all, if none is rare).
    The share is counted among the newest RARITY_WINDOW messages: exact on an index that small, an
    estimate from recent work on a larger one, whose counting would otherwise grow with the index."""
    if len(terms) < 2:
        return terms
    newest = _messages_total(conn)
    window = min(newest, RARITY_WINDOW)
    cap = max(50, int(COMMON_TERM_SHARE * window))
    rare = [
        t
        for t in terms
        if conn.execute(
            """SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? AND rowid > ?
                                  LIMIT ?)""",
            (t, newest - window, cap + 1),
        ).fetchone()[0]
        <= cap
    ]
    return rare or terms


def query_rows(
    conn: sqlite.Connection, q: Query, f: Filters, limit: int, within: list[str] | None = None
) -> tuple[str, list[Candidate]]:
    """AND of all terms first; widen to an OR of the distinctive terms when that finds too little.
    `within`: only messages of these sessions, ranked by that OR alone (their documents already
    matched the query: the AND adds a statement whose bm25 counts every common term's rows over the
    whole index; dropping it changed one answer of the dev sets, for the better)."""
    by_session = has_session_column(conn)
    terms = [in_message_text(t) for t in q.terms] if by_session else q.terms
    match = " AND ".join(terms)
    rows = _candidates(conn, match, f, CANDIDATES, None, by_session) if len(terms) > 1 and not within else []
    if (
        len({(r.session_id, hash(r.body)) for r in rows}) < limit * 3 or len(terms) == 1
    ):  # a text repeated in a session counts once
        match = " OR ".join(_rare_terms(conn, terms))
        more = _candidates(conn, match, f, CANDIDATES, within, by_session)
        have = {r.id for r in rows}
        # AND-matches keep a head start over OR-only matches
        rows = [_ranked_as(r, r.rank * 1.5) for r in rows] + [r for r in more if r.id not in have]
    return match, rows


def candidates_by_id(conn: sqlite.Connection, ids: list[int], f: Filters) -> list[Candidate]:
    """Candidate rows (rank 0) for messages found another way (vector neighbours), those `f` lets through."""
    if not ids:
        return []
    where, args = f.sql()
    marks = ",".join("?" * len(ids))
    sql = f"""SELECT {_COLUMNS}, 0.0, m.body FROM messages m {_JOINS}
              WHERE m.id IN ({marks}) {"AND " + where if where else ""}"""
    return [Candidate._make(r) for r in conn.execute(sql, [*ids, *args])]
