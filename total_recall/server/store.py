"""Every SQL statement of the server (PostgreSQL, psycopg 3). Callers pass a connection; the routes
take one from the pool per request and the admin commands open their own. Text is always bound as a
parameter, and queries go through `websearch_to_tsquery`, which accepts any text without raising.
Push and recall, one statement each, are in hotpath.py."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from total_recall.server.auth import Principal

ROLES = ("owner", "member", "reader")
WRITERS = ("owner", "member")
_COLUMNS = """c.id, c.project_id, c.title, c.dense_summary, c.context_type, c.relevance_score, c.metadata,
              c.created_at, u.name AS created_by"""


class Conflict(Exception):
    """A name or id that must be unique already exists."""


class NotFound(Exception):
    """A named user, project or token does not exist."""


def _row(r: dict[str, Any]) -> dict[str, Any]:
    out = dict(r)
    for k, v in out.items():
        if isinstance(v, datetime):
            out[k] = v.isoformat()
    if "relevance_score" in out:
        out["relevance_score"] = float(out["relevance_score"])
    for k in ("score", "text_rank"):
        if k in out:
            out[k] = round(float(out[k]), 4)
    return out


# --- users, projects, memberships, tokens (the admin commands and login) ---


def add_user(conn: psycopg.Connection, name: str, password_hash: str) -> int:
    try:
        row = conn.execute(
            "INSERT INTO users(name, password_hash) VALUES (%s, %s) RETURNING id", (name, password_hash)
        ).fetchone()
    except psycopg.errors.UniqueViolation:
        raise Conflict(f"user {name!r} exists already") from None
    assert row is not None
    return int(row[0])


def user_id(conn: psycopg.Connection, name: str) -> int:
    row = conn.execute("SELECT id FROM users WHERE name = %s", (name,)).fetchone()
    if row is None:
        raise NotFound(f"no user {name!r}: add it with `total-recall server user add {name}`")
    return int(row[0])


def login_row(conn: psycopg.Connection, name: str) -> tuple[int, str] | None:
    row = conn.execute("SELECT id, password_hash FROM users WHERE name = %s", (name,)).fetchone()
    return (int(row[0]), str(row[1])) if row else None


def add_project(conn: psycopg.Connection, project_id: str, owner: str) -> None:
    uid = user_id(conn, owner)
    with conn.transaction():
        try:
            conn.execute("INSERT INTO projects(id) VALUES (%s)", (project_id,))
        except psycopg.errors.UniqueViolation:
            raise Conflict(f"project {project_id!r} exists already") from None
        conn.execute(
            "INSERT INTO memberships(project_id, user_id, role) VALUES (%s, %s, 'owner')", (project_id, uid)
        )


def set_member(conn: psycopg.Connection, project_id: str, name: str, role: str) -> None:
    uid = user_id(conn, name)
    if conn.execute("SELECT 1 FROM projects WHERE id = %s", (project_id,)).fetchone() is None:
        raise NotFound(f"no project {project_id!r}: add it with `total-recall server project add`")
    conn.execute(
        """INSERT INTO memberships(project_id, user_id, role) VALUES (%s, %s, %s)
           ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role""",
        (project_id, uid, role),
    )


def add_token(
    conn: psycopg.Connection, user: str, token_hash: str, name: str, projects: list[str] | None
) -> int:
    uid = user_id(conn, user)
    row = conn.execute(
        "INSERT INTO api_tokens(user_id, token_hash, name, projects) VALUES (%s, %s, %s, %s) RETURNING id",
        (uid, token_hash, name, projects),
    ).fetchone()
    assert row is not None
    return int(row[0])


def revoke_token(conn: psycopg.Connection, token_id: int | None, token_hash: str | None) -> int:
    """Revoke by id or by the token itself; returns the id revoked."""
    row = conn.execute(
        """UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
           WHERE id = %s OR token_hash = %s RETURNING id""",
        (token_id, token_hash),
    ).fetchone()
    if row is None:
        raise NotFound("no such token: see `total-recall server token list`")
    return int(row[0])


def list_tokens(conn: psycopg.Connection) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            """SELECT t.id, u.name AS user, t.name, t.projects, t.created_at, t.revoked_at
               FROM api_tokens t JOIN users u ON u.id = t.user_id ORDER BY t.id"""
        )
        return [_row(r) for r in cur.fetchall()]


def audit(
    conn: psycopg.Connection,
    who: Principal,
    project_id: str,
    action: str,
    target: str | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    conn.execute(
        """INSERT INTO audit_log(project_id, user_id, token_id, action, target, detail)
           VALUES (%s, %s, %s, %s, %s, %s)""",
        (project_id, who.user_id, who.token_id, action, target, Jsonb(detail or {})),
    )


def get_context(conn: psycopg.Connection, project_id: str, cid: int) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            f"""SELECT {_COLUMNS} FROM conversation_contexts c LEFT JOIN users u ON u.id = c.created_by
                WHERE c.id = %s AND c.project_id = %s""",
            (cid, project_id),
        )
        r = cur.fetchone()
        return _row(r) if r else None


def context_project(conn: psycopg.Connection, cid: int) -> str | None:
    row = conn.execute("SELECT project_id FROM conversation_contexts WHERE id = %s", (cid,)).fetchone()
    return str(row[0]) if row else None


def delete_context(conn: psycopg.Connection, who: Principal, project_id: str, cid: int) -> bool:
    with conn.transaction():  # the row and its audit line together (the pool's connections autocommit)
        row = conn.execute(
            "DELETE FROM conversation_contexts WHERE id = %s AND project_id = %s RETURNING id",
            (cid, project_id),
        ).fetchone()
        if row is not None:
            audit(conn, who, project_id, "delete", str(cid))
    return row is not None


def upsert_state(
    conn: psycopg.Connection, who: Principal, project_id: str, state_type: str, data: dict[str, Any]
) -> dict[str, Any]:
    """Insert, or merge `data` into the stored JSON object (top-level keys replaced)."""
    with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            """INSERT INTO project_states(project_id, state_type, state_data, updated_by)
               VALUES (%s, %s, %s, %s)
               ON CONFLICT (project_id, state_type) DO UPDATE
                 SET state_data = project_states.state_data || EXCLUDED.state_data,
                     updated_by = EXCLUDED.updated_by, updated_at = now()
               RETURNING project_id, state_type, state_data, updated_at""",
            (project_id, state_type, Jsonb(data), who.user_id),
        )
        row = cur.fetchone()
        assert row is not None
        audit(conn, who, project_id, "state", state_type)
    return _row(row)


def project_info(conn: psycopg.Connection, project_id: str, my_role: str) -> dict[str, Any]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            """SELECT p.id, p.created_at,
                 (SELECT count(*) FROM conversation_contexts c WHERE c.project_id = p.id) AS contexts,
                 (SELECT count(*) FROM memberships m WHERE m.project_id = p.id) AS members
               FROM projects p WHERE p.id = %s""",
            (project_id,),
        )
        head = cur.fetchone()
        assert head is not None
        cur.execute(
            "SELECT state_type, state_data, updated_at FROM project_states WHERE project_id = %s ORDER BY 1",
            (project_id,),
        )
        states = {r["state_type"]: _row(r) for r in cur.fetchall()}
    return {**_row(head), "role": my_role, "states": states}


def audit_log(
    conn: psycopg.Connection, project_id: str, before: int | None, limit: int
) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            """SELECT a.id, a.action, a.target, a.detail, a.at, u.name AS user, a.token_id
               FROM audit_log a LEFT JOIN users u ON u.id = a.user_id
               WHERE a.project_id = %s AND (%s::bigint IS NULL OR a.id < %s)
               ORDER BY a.id DESC LIMIT %s""",
            (project_id, before, before, limit),
        )
        return [_row(r) for r in cur.fetchall()]
