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

import sqlite3
from collections.abc import Iterable

from index.store.fts_query import Query
from index.store.textstore import unpack
from index.store.tx import transaction

DOC_KINDS = ("prompt", "text", "away_summary")
DOC_CLIP = 2000  # chars of one message in the document: a pasted log or a long report cannot dominate
_SIG = "s.n_messages || '|' || coalesce(s.last_ts, '') || '|' || coalesce(s.title, '')"


def refresh(conn: sqlite3.Connection) -> int:
    """Rebuild stale documents and drop orphans in one transaction; returns how many were rebuilt.
    Cheap when nothing changed (one join over sessions), so it runs after every index run."""
    stale = conn.execute(f"""SELECT s.session_id, coalesce(s.title, ''), {_SIG}, d.id FROM sessions s
                             LEFT JOIN session_docs d ON d.session_id = s.session_id
                             WHERE d.sig IS NOT {_SIG}""").fetchall()
    orphans = [
        r[0]
        for r in conn.execute("""SELECT id FROM session_docs d WHERE NOT EXISTS(
                                                 SELECT 1 FROM sessions s WHERE s.session_id = d.session_id)""")
    ]
    if not stale and not orphans:
        return 0
    with transaction(conn):
        _drop(conn, [r[3] for r in stale if r[3] is not None] + orphans)
        for sid, title, sig, _ in stale:
            prompts, answers = _texts(conn, sid)
            cur = conn.execute(
                "INSERT INTO session_docs(session_id, sig, title, prompts, answers) VALUES(?,?,?,?,?)",
                (sid, sig, title, prompts, answers),
            )
            conn.execute(
                "INSERT INTO session_fts(rowid, title, prompts, answers) VALUES(?,?,?,?)",
                (cur.lastrowid, title, prompts, answers),
            )
    return len(stale)


def _drop(conn: sqlite3.Connection, ids: list[int]) -> None:
    for did in ids:
        conn.execute(
            """INSERT INTO session_fts(session_fts, rowid, title, prompts, answers)
                        SELECT 'delete', id, title, prompts, answers FROM session_docs WHERE id=?""",
            (did,),
        )
        conn.execute("DELETE FROM session_docs WHERE id=?", (did,))


def _texts(conn: sqlite3.Connection, session_id: str) -> tuple[str, str]:
    """(the user's prompts, the assistant's text and away summaries), each message clipped."""
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


def doc_scores(conn: sqlite3.Connection, q: Query, sessions: Iterable[str]) -> dict[str, float]:
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
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return {}
        raise
    return {sid: -float(score) for sid, score in rows}
