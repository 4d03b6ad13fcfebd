"""Session documents: one FTS row per session holding what the session is about.

Ranking a session by its matching messages rewards volume: a long session whose tool output (diffs,
merge conflicts, test logs, file listings) repeats the query's words collects many hits. A session's
document holds only its title, the user's prompts and the assistant's text (subagents' included; no
tool calls or output, no compaction summaries, which copy an earlier session), each message clipped
to DOC_CLIP chars; bm25 over it saturates repeated terms and normalises for length, so it measures
how much of the session is about the query. `index/retrieval/search.py` mixes it with the best message.

Documents are rebuilt at the end of every index run (`index/store/finalize.py`) for sessions whose message
count, last timestamp or title changed; deleting a session deletes its document (trigger, schema v6).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from index.store.fts_query import Query
from index.store.textstore import unpack
from index.store.tx import transaction
from lib import sqlite

DOC_KINDS = ("prompt", "text", "away_summary")
COPIES_PER_SESSION = 20  # documents read per session wanted by `top_sessions`, for sessions with copies
DOC_CLIP = 2000  # chars of one message in the document: a pasted log or a long report cannot dominate
_SIG = "s.n_messages || '|' || coalesce(s.last_ts, '') || '|' || coalesce(s.title, '')"


Stale = list[tuple[str, str, str, int | None]]  # (session id, title, signature, its document's id) of each
Texts = tuple[str, str]  # a session's document text: (prompts, answers)


def stale(conn: sqlite.Connection) -> Stale:
    """The sessions whose document must be rebuilt: none yet, or its signature changed."""
    return conn.execute(f"""SELECT s.session_id, coalesce(s.title, ''), {_SIG}, d.id FROM sessions s
                            LEFT JOIN session_docs d ON d.session_id = s.session_id
                            WHERE d.sig IS NOT {_SIG}""").fetchall()


def refresh(conn: sqlite.Connection, rows: Stale | None = None, made: Iterable[Texts] | None = None) -> int:
    """Rebuild stale documents and drop orphans in one transaction; returns how many were rebuilt.
    Cheap when nothing changed (one join over sessions), so it runs after every index run. `rows` are
    `stale(conn)` when the caller listed them already, `made` their texts in that order when another
    builds them (the finalize helper, `index/store/digest_share.py`), read one by one as they are stored."""
    rows = stale(conn) if rows is None else rows
    orphans = [
        r[0]
        for r in conn.execute("""SELECT id FROM session_docs d WHERE NOT EXISTS(
                                                 SELECT 1 FROM sessions s WHERE s.session_id = d.session_id)""")
    ]
    if not rows and not orphans:
        return 0
    with transaction(conn):
        _drop(conn, [r[3] for r in rows if r[3] is not None] + orphans)
        made_here = (texts(conn, r[0]) for r in rows)
        for (sid, title, sig, _), (prompts, answers) in zip(
            rows, made_here if made is None else made, strict=True
        ):
            cur = conn.execute(
                "INSERT INTO session_docs(session_id, sig, title, prompts, answers) VALUES(?,?,?,?,?)",
                (sid, sig, title, prompts, answers),
            )
            conn.execute(
                "INSERT INTO session_fts(rowid, title, prompts, answers) VALUES(?,?,?,?)",
                (cur.lastrowid, title, prompts, answers),
            )
    return len(rows)


def _drop(conn: sqlite.Connection, ids: list[int]) -> None:
    for did in ids:
        conn.execute(
            """INSERT INTO session_fts(session_fts, rowid, title, prompts, answers)
                        SELECT 'delete', id, title, prompts, answers FROM session_docs WHERE id=?""",
            (did,),
        )
        conn.execute("DELETE FROM session_docs WHERE id=?", (did,))


def texts(conn: sqlite.Connection, session_id: str) -> Texts:
    """(the user's prompts, the assistant's text and away summaries), each message clipped. Reads
    only messages and agents' compaction flags, which finalize never writes, so the helper may build
    them before the titles are set."""
    prompts: list[str] = []
    answers: list[str] = []
    marks = ",".join("?" * len(DOC_KINDS))
    for kind, body in conn.execute(
        f"""SELECT kind, body FROM messages m WHERE session_id=? AND kind IN ({marks})
                                       AND NOT EXISTS(SELECT 1 FROM agents a WHERE a.agent_id = m.agent_id
                                                      AND a.is_compaction_helper = 1)
                                       ORDER BY ts, uuid""",
        (session_id, *DOC_KINDS),
    ):
        (prompts if kind == "prompt" else answers).append(unpack(body)[:DOC_CLIP])
    return "\n".join(prompts), "\n".join(answers)


def top_sessions(
    conn: sqlite.Connection, q: Query, limit: int
) -> tuple[dict[str, float], dict[str, list[str]]]:
    """The `limit` sessions whose documents match `q` best (parsed without the idents column), in one
    query: ({session: bm25, higher is better}, {session: its copies}). Sessions of one project with the
    same document score, message count, last timestamp and title hold the same conversation (a copied
    file): the first stands for them and the others are its copies, so they neither take the places of
    other sessions nor get searched again. Empty on an index without documents (before schema v6)."""
    if q.empty:
        return {}, {}
    try:
        ranked = conn.execute(
            "SELECT rowid, bm25(session_fts) FROM session_fts WHERE session_fts MATCH ? ORDER BY 2 LIMIT ?",
            (q.any_of(), limit * COPIES_PER_SESSION),
        ).fetchall()
    except sqlite.OperationalError as exc:
        if "no such table" in str(exc):
            return {}, {}
        raise
    # Each distinct score keeps at least one session, and a copy shares its kept session's score: the
    # rows down to the `limit`-th distinct score decide everything, so only those are read.
    distinct: set[float] = set()
    cut = 0
    while cut < len(ranked) and (len(distinct) < limit or ranked[cut][1] in distinct):
        distinct.add(ranked[cut][1])
        cut += 1
    score = dict(ranked[:cut])
    marks = ",".join("?" * len(score))
    rows = sorted(
        (
            (sid, score[did], project, sig)
            for did, sid, project, sig in conn.execute(
                f"""SELECT d.id, d.session_id, s.project_key, d.sig FROM session_docs d
                    LEFT JOIN sessions s ON s.session_id = d.session_id WHERE d.id IN ({marks})""",
                list(score),
            )
        ),
        key=lambda r: (r[1], r[0]),
    )
    scores: dict[str, float] = {}
    copies: dict[str, list[str]] = {}
    first: dict[tuple[Any, ...], str] = {}
    for sid, score, project, sig in rows:
        kept = first.setdefault((project, score, sig), sid)
        if kept != sid:
            copies.setdefault(kept, []).append(sid)
        elif len(scores) < limit:
            scores[sid] = -float(score)
    return scores, {k: v for k, v in copies.items() if k in scores}


def doc_scores(conn: sqlite.Connection, q: Query, sessions: Iterable[str]) -> dict[str, float]:
    """bm25 of each given session's document for `q` (parsed without the idents column), higher is
    better; sessions whose document does not match are absent. An index from before schema v6 that
    has not been re-indexed yet has no documents: {} (ranking then uses messages alone)."""
    ids = list(sessions)
    if q.empty or not ids:
        return {}
    marks = ",".join("?" * len(ids))
    try:
        rows = conn.execute(
            f"""SELECT d.session_id, bm25(session_fts) FROM session_fts
                                JOIN session_docs d ON d.id = session_fts.rowid
                                WHERE session_fts MATCH ? AND d.session_id IN ({marks})""",
            [q.any_of(), *ids],
        ).fetchall()
    except sqlite.OperationalError as exc:
        if "no such table" in str(exc):
            return {}
        raise
    return {sid: -float(score) for sid, score in rows}
