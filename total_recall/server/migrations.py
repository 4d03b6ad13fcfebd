"""The server's PostgreSQL schema, as numbered migrations applied in order, each in its own
transaction, under an advisory lock (two `migrate` runs at once apply each step once). Additive only;
`migrate` is idempotent.

pgvector is optional: after the numbered steps, every `migrate` tries `CREATE EXTENSION vector` (in a
savepoint) and, when that works, adds the `embedding` column and its HNSW index (`ensure_vectors`).
Without the extension (not installed, or a role that may not create it) the schema stays full-text
only and the server works as before; a later `migrate` on a server that gained pgvector adds them."""

from __future__ import annotations

import psycopg

LOCK_KEY = 0x7472_6D73  # "trms": the advisory lock that serialises migrations

_V1 = """
CREATE TABLE users(
  id BIGSERIAL PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE projects(
  id TEXT PRIMARY KEY,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE memberships(
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('owner', 'member', 'reader')),
  PRIMARY KEY(project_id, user_id)
);
CREATE INDEX memberships_user ON memberships(user_id);
CREATE TABLE api_tokens(
  id BIGSERIAL PRIMARY KEY,
  user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL DEFAULT '',
  projects TEXT[],  -- NULL: every project of the user
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  revoked_at TIMESTAMPTZ
);
CREATE TABLE conversation_contexts(
  id BIGSERIAL PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  title TEXT NOT NULL,
  dense_summary TEXT NOT NULL,
  context_type TEXT NOT NULL,
  relevance_score REAL NOT NULL CHECK (relevance_score >= 0 AND relevance_score <= 10),
  metadata JSONB NOT NULL DEFAULT '{}',
  client_key TEXT,
  created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  tsv TSVECTOR GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', dense_summary), 'B')
  ) STORED,
  UNIQUE(project_id, client_key)
);
CREATE INDEX contexts_tsv ON conversation_contexts USING GIN(tsv);
CREATE INDEX contexts_recent ON conversation_contexts(project_id, created_at DESC);
CREATE TABLE project_states(
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  state_type TEXT NOT NULL,
  state_data JSONB NOT NULL DEFAULT '{}',
  updated_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY(project_id, state_type)
);
-- Who pushed, read and deleted what. Append-only: a trigger refuses UPDATE and DELETE.
CREATE TABLE audit_log(
  id BIGSERIAL PRIMARY KEY,
  project_id TEXT NOT NULL,
  user_id BIGINT,
  token_id BIGINT,
  action TEXT NOT NULL,
  target TEXT,
  detail JSONB NOT NULL DEFAULT '{}',
  at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX audit_project ON audit_log(project_id, id DESC);
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END $$;
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
"""

# The full-text index without GIN's pending list: with it, every insert is cheap but every search also
# scans the list of recent inserts sequentially, which under steady pushes cost recall more than the
# direct index update costs a push (bench_team.py: PostgreSQL CPU per request 0.99 -> 0.59 ms).
_V2 = """
ALTER INDEX contexts_tsv SET (fastupdate = off);
SELECT gin_clean_pending_list('contexts_tsv'::regclass);
"""

MIGRATIONS: list[tuple[int, str]] = [(1, _V1), (2, _V2)]

# The stored vectors' dimension: the local models the project uses (all-MiniLM-L6-v2, bge-small-en-v1.5)
# both give 384. `embedding_model` names the model of each row; recall compares only the server's own.
VECTOR_DIM = 384
_VECTORS = f"""
ALTER TABLE conversation_contexts
  ADD COLUMN IF NOT EXISTS embedding vector({VECTOR_DIM}),
  ADD COLUMN IF NOT EXISTS embedding_model TEXT;
CREATE INDEX IF NOT EXISTS contexts_embedding ON conversation_contexts
  USING hnsw (embedding vector_cosine_ops);
"""


def vector_available(conn: psycopg.Connection) -> bool:
    """Is pgvector installed on this PostgreSQL (whether or not this database may create it)?"""
    row = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    return row is not None


def has_vectors(conn: psycopg.Connection) -> bool:
    """Does the schema hold the `embedding` column (pgvector created by `ensure_vectors`)?"""
    row = conn.execute(
        """SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('conversation_contexts')
           AND attname = 'embedding' AND NOT attisdropped"""
    ).fetchone()
    return row is not None


def ensure_vectors(conn: psycopg.Connection) -> bool:
    """Create the extension, the column and the index when pgvector can be had; False otherwise."""
    if has_vectors(conn):
        return True
    if not vector_available(conn):
        return False
    try:
        with conn.transaction():  # a failed CREATE EXTENSION (no privilege) leaves nothing behind
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(_VECTORS)
    except psycopg.errors.InsufficientPrivilege:
        return False
    return True


def current_version(conn: psycopg.Connection) -> int:
    """The applied schema version (0 for an empty database)."""
    exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0
    row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    return int(row[0]) if row else 0


def migrate(dsn: str) -> dict[str, object]:
    """Bring the database at `dsn` to the latest schema; returns what was applied."""
    applied: list[int] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
        try:
            conn.execute(
                """CREATE TABLE IF NOT EXISTS schema_migrations(
                     version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"""
            )
            for version, sql in MIGRATIONS:
                with conn.transaction():
                    if current_version(conn) >= version:
                        continue
                    conn.execute(sql)
                    conn.execute("INSERT INTO schema_migrations(version) VALUES (%s)", (version,))
                    applied.append(version)
            vectors = ensure_vectors(conn)
            version = current_version(conn)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))
    return {"version": version, "applied": applied, "vectors": vectors}
