"""Cross-file resolution after a run: titles from summaries, subagent links, operator tables of the
projects that changed, folded profiles, then session documents and digests of the sessions touched.

A run that wrote anything leaves `pending('finalize')` in the same transaction as its rows; it is
cleared here, in the transaction that finalises. So a run killed between the two is finished by
the next one, even when that one finds no file to read.
"""

from __future__ import annotations

from pathlib import Path

from index.store.digest_share import start as share
from index.store.digests import refresh as refresh_digests
from index.store.digests import stale as stale_digests
from index.store.memories import reapply_memories
from index.store.operator import refold_pending
from index.store.profiles import materialise
from index.store.session_docs import refresh as refresh_session_docs
from index.store.session_docs import stale as stale_docs
from index.store.tx import transaction
from lib import sqlite


def finalize(conn: sqlite.Connection, jobs: int = 1, db: Path | None = None) -> bool:
    """Finalise if anything was written since the last finalisation; returns whether it did. With
    `jobs` > 1 (the run's parsers are gone by now) a helper process builds most session documents'
    texts and stale digests while this one does the rest (`index/store/digest_share.py`). `db`: the
    index path whose user state applies, when `conn` is not on it (a first index built beside it)."""
    if conn.execute("SELECT 1 FROM pending LIMIT 1").fetchone() is None:
        refresh_session_docs(conn)  # nothing new; builds the documents an index from before v6 lacks
        refresh_digests(conn)  # and the digests an index from before v7 lacks
        return False
    # the helper starts now: documents' texts read nothing the steps below write
    helper = share(conn, [r[0] for r in stale_docs(conn)], jobs) if jobs > 1 else None
    try:
        with transaction(conn):
            _titles(conn)
            _link_agents(conn)
            refold_pending(conn)
            materialise(conn)
            conn.execute("DELETE FROM pending WHERE what='finalize'")
            reapply_memories(
                conn, db
            )  # promoted memories missing from a new file, demoted ones that came back
        # digests and documents after the titles and the goal stack, which they read; nothing below
        # changes what they read
        if helper:
            helper.start_digests()
        rows = stale_digests(conn)
        docs = stale_docs(conn)
        merge_message_index(conn)  # first: the helper has the documents' texts ready by its end
        refresh_session_docs(conn, docs, helper.texts(conn, [r[0] for r in docs]) if helper else None)
        refresh_digests(conn, rows, helper.digests(conn, rows) if helper else None)
    finally:
        if helper:
            helper.stop()
    return True


# messages_fts is merged into one segment when its messages grew by this share (and at least
# MERGE_MIN_MESSAGES) since the last merge: a search opens every segment of each term it reads (13 %
# less CPU per search at 736 MB with one segment than with the 23 a full run left), and merging costs
# about what the index holds (0.34 CPU-s there), so growth-triggered merges cost a few percent of the
# indexing that triggers them (docs/benchmarks.md, issue 18).
MERGE_GROWTH = 0.25
MERGE_MIN_MESSAGES = 2000


def merge_message_index(conn: sqlite.Connection) -> bool:
    """Merge messages_fts into one segment if it grew enough since the last merge; returns whether it did."""
    newest = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
    row = conn.execute("SELECT value FROM schema_meta WHERE key = 'fts_merged_at'").fetchone()
    merged_at = int(row[0]) if row else 0
    if newest - merged_at < max(MERGE_MIN_MESSAGES, MERGE_GROWTH * merged_at):
        return False
    with transaction(conn):
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES('optimize')")
        conn.execute(
            "INSERT OR REPLACE INTO schema_meta(key, value) VALUES('fts_merged_at', ?)", (str(newest),)
        )
    return True


def _titles(conn: sqlite.Connection) -> None:
    """`summary.leafUuid` names the last message of a conversation, often in another file. A session
    takes the summary whose leaf is its latest message (the last stored summary of that leaf).

    Read from the summaries' side, each leaf found by its uuid (≈ 12 k probes at 736 MB), not from the
    sessions' side, which walked every message of every session twice (0.15-0.19 CPU-s of the serial
    finalize there)."""
    best: dict[str, str] = {}
    for sid, summary in conn.execute(
        """SELECT m.session_id, s.summary FROM summaries s CROSS JOIN messages m ON m.uuid = s.leaf_uuid
           ORDER BY m.id, s.rowid"""
    ):
        best[sid] = summary  # in (message, summary) order: the last one wins
    conn.executemany(
        """UPDATE sessions SET title=?, title_source='summary'
           WHERE session_id=? AND coalesce(title_source, '') NOT IN ('custom')""",
        [(summary, sid) for sid, summary in best.items()],
    )
    conn.execute(
        """UPDATE sessions SET title=substr(first_prompt, 1, 120), title_source='first_prompt'
           WHERE title IS NULL AND first_prompt IS NOT NULL"""
    )


def _link_agents(conn: sqlite.Connection) -> None:
    """Subagent -> spawning Task call: by toolUseResult.agentId, else by the prompt it was sent.

    Recomputed for every agent on each run rather than filled once: the agent id of a call is known
    only when its result is read, maybe runs after a link by prompt was made, and the link must be
    the one a full index makes."""
    by_id = "t.agent_id = agents.agent_id"
    by_prompt = "t.prompt_key = agents.prompt_key AND t.session_id = agents.session_id"
    conn.execute(f"""UPDATE agents SET spawn_tool_use_id=NULL, spawn_uuid=NULL, description=NULL
                     WHERE NOT EXISTS(SELECT 1 FROM task_spawns t WHERE {by_id} OR ({by_prompt}))""")
    for match, unless in ((by_prompt, by_id), (by_id, "0")):
        conn.execute(
            f"""UPDATE agents SET (spawn_tool_use_id, spawn_uuid, subagent_type, description) = (
                  SELECT t.tool_use_id, t.uuid, coalesce(agents.subagent_type, t.subagent_type), t.description
                  FROM task_spawns t WHERE {match} ORDER BY t.tool_use_id LIMIT 1)
                WHERE EXISTS(SELECT 1 FROM task_spawns t WHERE {match})
                  AND NOT EXISTS(SELECT 1 FROM task_spawns t WHERE {unless})"""
        )
