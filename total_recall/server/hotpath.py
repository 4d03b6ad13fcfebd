"""Push and recall, the two calls every session makes, as ONE SQL statement each: the caller check
(API token not revoked, or the JWT's user, and its role in the project), the insert or the ranked
query, and the audit row, in CTEs. On an autocommit connection that is one round trip and one
transaction per request (the audit row is written with the data or not at all); the answer's JSON is
built by PostgreSQL and passed through. Nothing about a caller is cached: a revoked token fails on its
next request.

The statement answers `callers` (0: no such token or user, a 401), the caller's `role` in the project
(NULL: it cannot see it, a 404; not one of `need`: a 403) and the rows, so the route maps the outcome
without another query. With vectors (pgvector and an embedding model on the server) the vector is
computed after a separate check (`caller`), so no one without a role makes the server embed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from total_recall.server.auth import Credential, Principal


def _params(cred: Credential, project_id: str, need: tuple[str, ...]) -> dict[str, Any]:
    return {"th": cred.token_hash, "uid": cred.user_id, "p": project_id, "need": list(need)}


@dataclass(frozen=True, slots=True)
class Outcome:
    callers: int
    role: str | None
    body: str | None = None  # JSON text built by PostgreSQL
    created: bool = False


ACCESS = """
WITH caller AS (
  SELECT t.user_id, t.id AS token_id, t.projects FROM api_tokens t
  WHERE t.token_hash = %(th)s::text AND t.revoked_at IS NULL
  UNION ALL
  SELECT u.id, NULL::bigint, NULL::text[] FROM users u WHERE u.id = %(uid)s::bigint
), access AS (
  SELECT c.user_id, c.token_id, u.name AS user_name, m.role
  FROM caller c JOIN users u ON u.id = c.user_id
  LEFT JOIN memberships m ON m.user_id = c.user_id AND m.project_id = %(p)s::text
    AND (c.projects IS NULL OR %(p)s::text = ANY(c.projects))
), allowed AS (
  SELECT * FROM access WHERE role = ANY(%(need)s::text[])
)"""
_STATUS = "(SELECT count(*) FROM access) AS callers, (SELECT role FROM access LIMIT 1) AS role"


def row_json(alias: str, created_by: str, extra: tuple[str, ...] = ()) -> str:
    """A context row as a JSON object (the API's shape), from table alias `alias`."""
    keys = [f"'{k}', {alias}.{k}" for k in ("id", "project_id", "title", "dense_summary", "context_type")]
    keys += [
        f"'relevance_score', {alias}.relevance_score::numeric::float8",
        f"'metadata', {alias}.metadata",
        f"'created_at', {alias}.created_at",
        f"'created_by', {created_by}",
        *(f"'{k}', round({alias}.{k}::numeric, 4)::float8" for k in extra),
    ]
    return f"json_build_object({', '.join(keys)})"


# Recall ranks text relevance (ts_rank_cd normalised to 0..1), the pusher's relevance score (0..10),
# recency (a 30-day half-life) and, with vectors, cosine similarity to the query. Candidates are the
# text matches (GIN index) and, with vectors, the `near` rows closest to the query's vector.
_QUERY = "websearch_to_tsquery('english', %(q)s::text)"
# In double precision: `extract` answers numeric (PostgreSQL 14+), and a numeric power() costs ~50 µs a
# row, which made a common word's recall (a thousand matches to rank) take tens of milliseconds.
RECENCY = "power(0.5::float8, date_part('epoch', now() - c.created_at) / (30 * 86400.0))"
_RECALL = (
    ACCESS
    + """{near},
hits AS (
  SELECT r.*, {score} AS score FROM (
    SELECT c.id, c.project_id, c.title, c.dense_summary, c.context_type, c.relevance_score, c.metadata,
           c.created_at, c.created_by, {text_rank} AS text_rank, {similarity} AS similarity,
           """
    + RECENCY
    + """ AS recency
    FROM conversation_contexts c
    WHERE EXISTS (SELECT 1 FROM allowed) AND c.project_id = %(p)s::text
      AND c.relevance_score >= %(min)s::real {text_filter}
  ) r ORDER BY score DESC, r.id DESC LIMIT %(limit)s::int
), logged AS (
  INSERT INTO audit_log(project_id, user_id, token_id, action, detail)
  SELECT %(p)s::text, a.user_id, a.token_id, 'read', jsonb_build_object('q', left(%(q)s::text, 200),
    'ids', coalesce((SELECT jsonb_agg(h.id ORDER BY h.score DESC, h.id DESC) FROM hits h), '[]'))
  FROM allowed a
)
SELECT """
    + _STATUS
    + """, (SELECT coalesce(json_agg({row} ORDER BY h.score DESC, h.id DESC), '[]')::text
           FROM hits h LEFT JOIN users u ON u.id = h.created_by) AS body
"""
)
_TEXT_SCORE = "0.6 * r.text_rank + 0.3 * r.relevance_score / 10.0 + 0.1 * r.recency"
_VEC_SCORE = "0.4 * r.text_rank + 0.3 * r.similarity + 0.2 * r.relevance_score / 10.0 + 0.1 * r.recency"
NEAR_K = 50  # rows the vector side adds as candidates, before the final ranking
_NEAR = f""", near AS (
  SELECT c.id FROM conversation_contexts c
  WHERE EXISTS (SELECT 1 FROM allowed) AND c.project_id = %(p)s::text AND c.embedding_model = %(model)s::text
  ORDER BY c.embedding <=> %(qv)s::vector LIMIT {NEAR_K}
)"""
_SIMILARITY = (
    "CASE WHEN c.embedding_model = %(model)s::text "
    "THEN greatest(0.0, 1 - (c.embedding <=> %(qv)s::vector)) ELSE 0.0 END"
)


def _recall_sql(text: bool, vectors: bool) -> str:
    if vectors:  # only with a query: without one there is nothing to compare to
        near, similarity, score = _NEAR, _SIMILARITY, _VEC_SCORE
        text_filter = f"AND (c.tsv @@ {_QUERY} OR c.id = ANY(ARRAY(SELECT id FROM near)))"
        extra: tuple[str, ...] = ("text_rank", "similarity", "score")
    else:
        near, similarity, score = "", "0.0", _TEXT_SCORE
        text_filter = f"AND c.tsv @@ {_QUERY}" if text else ""
        extra = ("text_rank", "score")
    text_rank = f"ts_rank_cd(c.tsv, {_QUERY}, 32)" if text else "0.0"
    return _RECALL.format(
        near=near,
        score=score,
        text_rank=text_rank,
        similarity=similarity,
        text_filter=text_filter,
        row=row_json("h", "u.name", extra),
    )


RECALL_TEXT = _recall_sql(text=True, vectors=False)
RECALL_ALL = _recall_sql(text=False, vectors=False)
RECALL_VECTORS = _recall_sql(text=True, vectors=True)


def recall(
    conn: psycopg.Connection,
    cred: Credential,
    project_id: str,
    q: str,
    min_score: float,
    limit: int,
    need: tuple[str, ...],
    query_vector: tuple[str, str] | None = None,
) -> Outcome:
    """The project's contexts, best first (JSON text); `query_vector` is (model, pgvector literal)."""
    params = {**_params(cred, project_id, need), "q": q, "min": min_score, "limit": limit}
    if query_vector is not None and q.strip():
        sql = RECALL_VECTORS
        params["model"], params["qv"] = query_vector
    else:
        sql = RECALL_TEXT if q.strip() else RECALL_ALL
    row = conn.execute(sql, params).fetchone()
    assert row is not None
    return Outcome(int(row[0]), row[1], row[2])


_COLUMNS = "id, project_id, title, dense_summary, context_type, relevance_score, metadata, created_at"
PUSH = (
    ACCESS
    + """, ins AS (
  INSERT INTO conversation_contexts(project_id, title, dense_summary, context_type, relevance_score,
    metadata, client_key, created_by{vector_columns})
  SELECT %(p)s::text, %(title)s::text, %(summary)s::text, %(ctype)s::text, %(rel)s::real,
    %(meta)s::jsonb, %(key)s::text, a.user_id{vector_values} FROM allowed a
  ON CONFLICT (project_id, client_key) DO NOTHING
  RETURNING """
    + _COLUMNS
    + """
), logged AS (
  INSERT INTO audit_log(project_id, user_id, token_id, action, target, detail)
  SELECT i.project_id, a.user_id, a.token_id, 'push', i.id::text,
         jsonb_build_object('context_type', i.context_type)
  FROM ins i CROSS JOIN allowed a
)
SELECT """
    + _STATUS
    + """,
  (SELECT """
    + row_json("i", "(SELECT user_name FROM access LIMIT 1)")
    + """::text FROM ins i) AS created
"""
)
PUSH_TEXT = PUSH.format(vector_columns="", vector_values="")
PUSH_VECTORS = PUSH.format(
    vector_columns=", embedding, embedding_model", vector_values=", %(vec)s::vector, %(model)s::text"
)
EXISTING = f"""SELECT {row_json("c", "u.name")}::text FROM conversation_contexts c
  LEFT JOIN users u ON u.id = c.created_by WHERE c.project_id = %s AND c.client_key = %s"""


def push(
    conn: psycopg.Connection,
    cred: Credential,
    ctx: dict[str, Any],
    need: tuple[str, ...],
    vector: tuple[str, str] | None = None,
) -> Outcome:
    """Insert one context; a `client_key` the project holds already answers that row (created False)."""
    params = {
        **_params(cred, ctx["project_id"], need),
        "title": ctx["title"],
        "summary": ctx["dense_summary"],
        "ctype": ctx["context_type"],
        "rel": ctx["relevance_score"],
        "meta": Jsonb(ctx.get("metadata") or {}),
        "key": ctx.get("client_key"),
    }
    if vector is not None:
        params["model"], params["vec"] = vector
    row = conn.execute(PUSH_VECTORS if vector else PUSH_TEXT, params).fetchone()
    assert row is not None
    callers, role, created = int(row[0]), row[1], row[2]
    if created is not None or role not in need:
        return Outcome(callers, role, created, created is not None)
    # Not inserted although allowed: the key exists (committed before this statement, or just now by
    # a concurrent push of the same key, which this statement's snapshot does not see).
    old = conn.execute(EXISTING, (ctx["project_id"], ctx["client_key"])).fetchone()
    assert old is not None
    return Outcome(callers, role, old[0], False)


CALLER = ACCESS + "\nSELECT user_id, token_id, user_name, role FROM access"


def caller(
    conn: psycopg.Connection, cred: Credential, project_id: str = ""
) -> tuple[Principal, str | None] | None:
    """The caller and its role in `project_id` (None: it cannot see it); None when the credential is
    not (or no longer) valid. The one authorisation rule, for every route that is not push or recall."""
    row = conn.execute(CALLER, _params(cred, project_id, ())).fetchone()
    if row is None:
        return None
    return Principal(int(row[0]), str(row[2]), row[1], cred), row[3]
