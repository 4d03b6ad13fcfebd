"""Versioned schema and idempotent migrations (I1): the DDL of the main schema. (vec/store.py creates
vec/'s own tables; index/llm/refine.py its `refinements` table.)"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable

from index.store.idents import identifier_parts
from index.store.textstore import unpack
from index.store.tx import transaction
from lib import sqlite

SCHEMA_VERSION = 11

_V1 = """
CREATE TABLE IF NOT EXISTS schema_meta(key TEXT PRIMARY KEY, value TEXT);

CREATE TABLE IF NOT EXISTS sessions(
  session_id TEXT PRIMARY KEY,
  project_key TEXT, cwd TEXT, git_branch TEXT,
  title TEXT, title_source TEXT, first_prompt TEXT,
  first_ts TEXT, last_ts TEXT,
  n_messages INTEGER DEFAULT 0, n_prompts INTEGER DEFAULT 0, n_tool_calls INTEGER DEFAULT 0,
  n_compactions INTEGER DEFAULT 0,
  version TEXT, models TEXT, resumed_from TEXT,
  file_id INTEGER, source_state TEXT DEFAULT 'present',
  main_leaf TEXT
);
CREATE INDEX IF NOT EXISTS sessions_project ON sessions(project_key, last_ts);
CREATE INDEX IF NOT EXISTS sessions_cwd ON sessions(cwd);

CREATE TABLE IF NOT EXISTS messages(
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  parent_uuid TEXT,
  role TEXT NOT NULL, kind TEXT NOT NULL,
  ts TEXT,
  body BLOB NOT NULL,             -- text, packed by index/store/textstore.py
  agent_id TEXT, is_sidechain INTEGER NOT NULL DEFAULT 0, on_main INTEGER NOT NULL DEFAULT 1,
  tool_name TEXT, tool_use_id TEXT, tool_target TEXT, is_error INTEGER NOT NULL DEFAULT 0,
  message_id TEXT, model TEXT,
  file_id INTEGER, byte_offset INTEGER
);
CREATE INDEX IF NOT EXISTS messages_session ON messages(session_id, id);
CREATE INDEX IF NOT EXISTS messages_file ON messages(file_id);

-- Contentless: terms only; text lives (compressed) in messages.body. `session`: one token naming the
-- message's session (index/store/fts_query.session_token; schema v10).
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
  text, idents, session, content='', tokenize='porter unicode61'
);

CREATE TABLE IF NOT EXISTS aliases(
  uuid TEXT PRIMARY KEY, parent_uuid TEXT, file_id INTEGER
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS turns(
  message_id TEXT NOT NULL, request_id TEXT NOT NULL,
  session_id TEXT, uuid TEXT, ts TEXT, model TEXT,
  input_tokens INTEGER, output_tokens INTEGER, cache_creation_tokens INTEGER,
  cache_5m_tokens INTEGER, cache_1h_tokens INTEGER, cache_read_tokens INTEGER,
  web_search_requests INTEGER DEFAULT 0,
  is_sidechain INTEGER, agent_id TEXT, file_id INTEGER,
  PRIMARY KEY(message_id, request_id)
);
CREATE INDEX IF NOT EXISTS turns_session ON turns(session_id);

CREATE TABLE IF NOT EXISTS turn_durations(
  uuid TEXT PRIMARY KEY, session_id TEXT, parent_uuid TEXT, duration_ms INTEGER, ts TEXT, file_id INTEGER
);

CREATE TABLE IF NOT EXISTS compactions(
  uuid TEXT PRIMARY KEY, session_id TEXT, ts TEXT, kind TEXT, trigger TEXT,
  pre_tokens INTEGER, tokens_saved INTEGER, logical_parent_uuid TEXT, file_id INTEGER
);

CREATE TABLE IF NOT EXISTS summaries(
  leaf_uuid TEXT NOT NULL, summary TEXT NOT NULL, file_id INTEGER,
  PRIMARY KEY(leaf_uuid, summary)
);

CREATE TABLE IF NOT EXISTS agents(
  agent_id TEXT PRIMARY KEY, session_id TEXT, layout TEXT, file_id INTEGER,
  spawn_tool_use_id TEXT, spawn_uuid TEXT, subagent_type TEXT, description TEXT,
  is_compaction_helper INTEGER DEFAULT 0, first_ts TEXT, prompt_key TEXT
);
CREATE INDEX IF NOT EXISTS agents_session ON agents(session_id);

CREATE TABLE IF NOT EXISTS task_spawns(
  tool_use_id TEXT PRIMARY KEY, session_id TEXT, uuid TEXT, subagent_type TEXT, description TEXT,
  prompt_key TEXT, agent_id TEXT, file_id INTEGER
);
CREATE INDEX IF NOT EXISTS task_spawns_prompt ON task_spawns(prompt_key);

CREATE TABLE IF NOT EXISTS extractions(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL, content TEXT NOT NULL, context TEXT NOT NULL DEFAULT '{}',
  score REAL NOT NULL DEFAULT 0.5,
  session_id TEXT, source_uuid TEXT NOT NULL, ordinal INTEGER NOT NULL DEFAULT 0,
  cwd TEXT, project_key TEXT, ts TEXT, file_id INTEGER,
  UNIQUE(kind, source_uuid, ordinal)
);
CREATE INDEX IF NOT EXISTS extractions_kind ON extractions(kind, ts);
CREATE INDEX IF NOT EXISTS extractions_session ON extractions(session_id);
CREATE INDEX IF NOT EXISTS extractions_source ON extractions(source_uuid);
CREATE INDEX IF NOT EXISTS extractions_project ON extractions(project_key, kind);

CREATE VIRTUAL TABLE IF NOT EXISTS extractions_fts USING fts5(
  content, context, content='extractions', content_rowid='id', tokenize='porter unicode61'
);

-- Operator tables, folded from extractions in the same transaction (index/store/operator.py).
CREATE TABLE IF NOT EXISTS bans(
  id INTEGER PRIMARY KEY, project_key TEXT, norm TEXT NOT NULL, content TEXT NOT NULL,
  first_ts TEXT, last_ts TEXT, mentions INTEGER NOT NULL DEFAULT 1,
  session_id TEXT, source_uuid TEXT, extraction_id INTEGER, active INTEGER NOT NULL DEFAULT 1,
  UNIQUE(project_key, norm)
);
CREATE TABLE IF NOT EXISTS standing_decisions(
  id INTEGER PRIMARY KEY, project_key TEXT, norm TEXT NOT NULL, content TEXT NOT NULL,
  from_text TEXT, to_text TEXT, status TEXT NOT NULL DEFAULT 'active',  -- active | superseded
  superseded_by INTEGER, first_ts TEXT, last_ts TEXT, mentions INTEGER NOT NULL DEFAULT 1,
  session_id TEXT, source_uuid TEXT, extraction_id INTEGER,
  UNIQUE(project_key, norm)
);
CREATE TABLE IF NOT EXISTS failed_attempts(
  id INTEGER PRIMARY KEY, project_key TEXT, content TEXT NOT NULL, by_role TEXT, error TEXT,
  ts TEXT, session_id TEXT, source_uuid TEXT, extraction_id INTEGER UNIQUE
);
CREATE INDEX IF NOT EXISTS failed_attempts_project ON failed_attempts(project_key, ts);
CREATE TABLE IF NOT EXISTS goal_stack(
  id INTEGER PRIMARY KEY, project_key TEXT, content TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active',  -- active | paused | blocked | done | abandoned
  ts TEXT, updated_ts TEXT, session_id TEXT, source_uuid TEXT, extraction_id INTEGER UNIQUE,
  status_source_uuid TEXT
);
CREATE INDEX IF NOT EXISTS goal_stack_project ON goal_stack(project_key, updated_ts);

-- Profile counters per source file (so a re-read file can be subtracted), summed at read time.
CREATE TABLE IF NOT EXISTS profile_counters(
  file_id INTEGER NOT NULL, profile TEXT NOT NULL, key TEXT NOT NULL, value REAL NOT NULL,
  PRIMARY KEY(file_id, profile, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS profile_counters_key ON profile_counters(profile, key);

-- Materialised after every index run from counters, sessions and extractions (index/store/profiles.py).
CREATE TABLE IF NOT EXISTS profiles(name TEXT PRIMARY KEY, data TEXT NOT NULL, updated_at TEXT);
CREATE TABLE IF NOT EXISTS projects(
  project_key TEXT PRIMARY KEY, name TEXT, cwds TEXT, sessions INTEGER, prompts INTEGER,
  first_ts TEXT, last_ts TEXT, branches TEXT, models TEXT
);
CREATE TABLE IF NOT EXISTS machines(
  machine TEXT PRIMARY KEY, os TEXT, users TEXT, homes TEXT, sessions INTEGER, first_ts TEXT, last_ts TEXT,
  hosts TEXT
);
CREATE TABLE IF NOT EXISTS vocabulary(
  term TEXT PRIMARY KEY, uses INTEGER, projects TEXT, definition TEXT, source_uuid TEXT
);

-- Sessions the user asked to forget (I5): never stored again, even if their transcript is re-read.
CREATE TABLE IF NOT EXISTS forgotten(session_id TEXT PRIMARY KEY, at TEXT, reason TEXT);

CREATE TABLE IF NOT EXISTS ingest_state(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  root TEXT, project_dir TEXT, layout TEXT,
  size INTEGER, mtime_ns INTEGER, inode INTEGER,
  offset INTEGER NOT NULL DEFAULT 0, head_hash TEXT,
  carry TEXT, missing INTEGER NOT NULL DEFAULT 0,
  records INTEGER DEFAULT 0, lines INTEGER DEFAULT 0, bad_lines INTEGER DEFAULT 0,
  indexed_at TEXT
);

CREATE TABLE IF NOT EXISTS ingest_runs(
  id INTEGER PRIMARY KEY, started_at TEXT, elapsed_s REAL, mode TEXT, jobs INTEGER,
  files INTEGER, files_unchanged INTEGER, records INTEGER, messages_added INTEGER,
  extractions_added INTEGER, bytes_read INTEGER, bad_lines TEXT, errors INTEGER DEFAULT 0
);
"""

# v2: `forgotten` table and turns(session_id, ts). Every statement above is IF NOT EXISTS, so v2
# re-applies the current DDL; a v1 index gains the new table without losing anything.
# v3: `refinements`, the verdicts of the optional local-LLM lane (index/llm/refine.py).
_V3 = """
CREATE TABLE IF NOT EXISTS refinements(
  extraction_id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL, source_uuid TEXT NOT NULL, ordinal INTEGER NOT NULL,
  model TEXT NOT NULL, verdict TEXT NOT NULL,  -- confirm | doubt | unclear
  note TEXT, score_before REAL, score_after REAL, at TEXT
);
"""
# v5: `pending` work a run must finish even if the previous one was killed (index/store/finalize.py),
# and file_id indexes on the big per-file tables, so dropping one file's rows does not scan them.
_V5 = """
CREATE TABLE IF NOT EXISTS pending(what TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY(what, key)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS extractions_file ON extractions(file_id);
CREATE INDEX IF NOT EXISTS aliases_file ON aliases(file_id);
CREATE INDEX IF NOT EXISTS turns_file ON turns(file_id);
CREATE INDEX IF NOT EXISTS task_spawns_agent ON task_spawns(agent_id);
"""


def _v4(conn: sqlite.Connection) -> None:
    """Drop extractions.scope (a constant nothing read: scope is decided at query time,
    index/store/scope.py) by rebuilding the table: ALTER TABLE … DROP COLUMN needs SQLite 3.35, newer than
    some Python 3.10 builds ship. Ids are kept, so the external-content FTS stays valid."""
    if "scope" not in {r[1] for r in conn.execute("PRAGMA table_info(extractions)")}:
        return  # created without it
    ddl = re.search(r"CREATE TABLE IF NOT EXISTS extractions\(.*?\n\);", _V1, re.S)
    assert ddl is not None
    conn.execute(ddl.group(0).replace("IF NOT EXISTS extractions(", "extractions_v4("))
    cols = ", ".join(r[1] for r in conn.execute("PRAGMA table_info(extractions_v4)"))
    conn.execute(f"INSERT INTO extractions_v4({cols}) SELECT {cols} FROM extractions")
    conn.execute("DROP TABLE extractions")
    conn.execute("ALTER TABLE extractions_v4 RENAME TO extractions")
    for stmt in _statements(_V1):
        if stmt.startswith("CREATE INDEX") and " ON extractions(" in stmt:
            conn.execute(stmt)


# v6: one document per session (title, the user's prompts, the assistant's text; index/store/session_docs.py)
# in its own FTS table, to rank sessions without scoring every message. Deleting a session (forget)
# deletes its document in the same statement, so no copy of its text outlives it.
_V6 = """
CREATE TABLE IF NOT EXISTS session_docs(
  id INTEGER PRIMARY KEY, session_id TEXT NOT NULL UNIQUE, sig TEXT NOT NULL,
  title TEXT NOT NULL, prompts TEXT NOT NULL, answers TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS session_fts USING fts5(
  title, prompts, answers, content='session_docs', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS session_docs_gone AFTER DELETE ON sessions BEGIN
  INSERT INTO session_fts(session_fts, rowid, title, prompts, answers)
    SELECT 'delete', id, title, prompts, answers FROM session_docs WHERE session_id = old.session_id;
  DELETE FROM session_docs WHERE session_id = old.session_id;
END;
"""

# v7: the coding agent of each message, session and file (lib.sources: claude, codex, gemini, copilot,
# opencode). Rows written before it are Claude Code's, the only source there was.
_V7 = """
ALTER TABLE messages ADD COLUMN agent TEXT NOT NULL DEFAULT 'claude';
ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT 'claude';
ALTER TABLE ingest_state ADD COLUMN agent TEXT NOT NULL DEFAULT 'claude';
CREATE INDEX IF NOT EXISTS sessions_agent ON sessions(agent, last_ts);
"""

# v8: session digests (S1), built at the end of every index run for the sessions whose inputs changed
# (index/store/digests.py): one row per session and its items, each with its source message uuid.
# Deleting a session deletes its digest in the same statement.
_V8 = """
CREATE TABLE IF NOT EXISTS digests(
  session_id TEXT PRIMARY KEY, sig TEXT NOT NULL, project_key TEXT, cwd TEXT, title TEXT,
  first_ts TEXT, last_ts TEXT, duration_s INTEGER, turns INTEGER, counts TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS digests_project ON digests(project_key, last_ts);
CREATE TABLE IF NOT EXISTS digest_items(
  session_id TEXT NOT NULL, section TEXT NOT NULL, ordinal INTEGER NOT NULL,
  kind TEXT NOT NULL, text TEXT NOT NULL, detail TEXT, obs_type TEXT, n INTEGER NOT NULL DEFAULT 1,
  source_uuid TEXT, ts TEXT,
  PRIMARY KEY(session_id, section, ordinal)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS digests_gone AFTER DELETE ON sessions BEGIN
  DELETE FROM digest_items WHERE session_id = old.session_id;
  DELETE FROM digests WHERE session_id = old.session_id;
END;
"""

# v9 (issue 19): git-aware staleness. One row per memory checked against its project's repository at
# one HEAD: the file, function, flag or package it names, and whether that is gone, with the commit.
# Derived state (git is the truth): `rebuild` drops it and the next check recomputes it.
_V9 = """
CREATE TABLE IF NOT EXISTS stale_marks(
  item_id TEXT PRIMARY KEY, head TEXT NOT NULL, stale INTEGER NOT NULL, ref TEXT, reason TEXT,
  commit_sha TEXT, commit_date TEXT, checked_at TEXT NOT NULL
);
"""
# v11: files whose parser failed (index/store/skips.py): after `tries` 2, left unread until they change.
_V11 = """
CREATE TABLE IF NOT EXISTS skipped_files(
  path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, version TEXT, reason TEXT, at TEXT,
  tries INTEGER NOT NULL DEFAULT 2
);
"""


def session_token(session_id: str) -> str:
    """The one token naming a session in messages_fts's `session` column: digits (unicode61 and the
    porter stemmer keep them whole) of a 64-bit checksum pair, so any session id fits. zlib, not
    hashlib: every hook imports this module. Two sessions sharing a token is harmless: rows are
    checked against their session_id after the match. Stored in every index: changing it needs a
    migration that rewrites messages_fts."""
    data = session_id.encode()
    return str(zlib.crc32(data) << 32 | zlib.adler32(data))


def _v10(conn: sqlite.Connection) -> None:
    """messages_fts gains its `session` column (one token per message naming its session), so a search
    inside a few sessions lets FTS5 skip to their rows instead of walking every match in the index.
    FTS5 cannot add a column and the table is contentless, so it is rebuilt from the stored bodies
    (the same text and identifier parts the writer indexes; about 5 CPU-s per 700 MB of transcripts)."""
    if "session" in {r[1] for r in conn.execute("PRAGMA table_info(messages_fts)")}:
        return  # created with it
    conn.execute(
        "CREATE VIRTUAL TABLE messages_fts_v10 USING fts5(text, idents, session, content='', "
        "tokenize='porter unicode61')"
    )
    cur = conn.execute("SELECT id, session_id, body FROM messages ORDER BY id")
    while rows := cur.fetchmany(2000):
        conn.executemany(
            "INSERT INTO messages_fts_v10(rowid, text, idents, session) VALUES(?,?,?,?)",
            [
                (rid, t, identifier_parts(t), session_token(sid))
                for rid, sid, t in ((r[0], r[1], unpack(r[2])) for r in rows)
            ],
        )
    conn.execute("DROP TABLE messages_fts")
    conn.execute("ALTER TABLE messages_fts_v10 RENAME TO messages_fts")
    conn.execute(
        "INSERT INTO messages_fts(messages_fts) VALUES('optimize')"
    )  # one segment, as after an index


# Every FTS5 index: forget merges them all so no deleted term survives in an old segment.
FTS_TABLES = ("messages_fts", "extractions_fts", "session_fts")

Migration = str | Callable[[sqlite.Connection], None]
MIGRATIONS: dict[int, Migration] = {
    1: _V1,
    2: _V1 + "CREATE INDEX IF NOT EXISTS turns_session_ts ON turns(session_id, ts);",
    3: _V3,
    4: _v4,
    5: _V5,
    6: _V6,
    7: _V7,
    8: _V8,
    9: _V9,
    10: _v10,
    11: _V11,
}


def current_version(conn: sqlite.Connection) -> int:
    try:
        row = conn.execute("SELECT value FROM schema_meta WHERE key='schema_version'").fetchone()
    except sqlite.OperationalError:
        return 0
    return int(row[0]) if row else 0


def migrate(conn: sqlite.Connection) -> int:
    """Bring the DB to SCHEMA_VERSION; safe to run any number of times. Each version is applied in
    its own transaction, with the version number, so a crash leaves a DB at some whole version."""
    have = current_version(conn)
    for version in sorted(MIGRATIONS):
        if version <= have:
            continue
        step = MIGRATIONS[version]
        with transaction(conn):
            if callable(step):
                step(conn)
            else:
                for stmt in _statements(step):
                    conn.execute(stmt)
            conn.execute(
                "INSERT OR REPLACE INTO schema_meta(key, value) VALUES('schema_version', ?)", (str(version),)
            )
    return SCHEMA_VERSION


def _statements(script: str) -> list[str]:
    """Split a DDL script into statements; a trigger body's `;` does not end its statement
    (`sqlite.complete_statement` decides)."""
    lines = [ln for ln in script.splitlines() if not ln.lstrip().startswith("--")]
    out: list[str] = []
    pending = ""
    for part in "\n".join(lines).split(";"):
        pending += part + ";"
        if sqlite.complete_statement(pending):
            if pending.strip(" \n;"):
                out.append(pending.strip().removesuffix(";").strip())
            pending = ""
    return out
