"""The HTTP API (issue 16's contract). Every route but health and login needs `Authorization: Bearer`
with a login JWT or an API token; a project the caller cannot see (not a member, or outside the
token's scope) and a row of such a project are 404, never 403, so ids cannot be probed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated, Any

import orjson
import psycopg
from fastapi import APIRouter, Depends, Path, Query, Request, Response
from pydantic import BaseModel, Field

from lib.project_id import valid_project_id
from total_recall.server import hotpath, store
from total_recall.server.auth import (
    Credential,
    Principal,
    Unauthorized,
    bearer,
    check_password,
    is_api_token,
    issue_jwt,
    read_jwt,
    token_hash,
)
from total_recall.server.config import ServerConfig
from total_recall.server.errors import ApiError
from total_recall.server.migrations import current_version, has_vectors
from total_recall.server.vectors import ServerVectors

router = APIRouter(prefix="/api")
BIGINT = 2**63 - 1
RowId = Annotated[int, Path(ge=1, le=BIGINT)]


@contextlib.contextmanager
def _connection(request: Request) -> Iterator[psycopg.Connection]:
    try:
        with request.app.state.pool.connection() as conn:
            yield conn
    except psycopg.OperationalError as exc:
        raise ApiError(503, f"database unavailable: {type(exc).__name__}") from None


def _conn(request: Request) -> Iterator[psycopg.Connection]:
    with _connection(request) as conn:
        yield conn


# "function" scope: the connection is back in the pool before the response is sent. Its statements
# commit as they run (autocommit); writes of more than one statement run in `conn.transaction()`.
Conn = Annotated[psycopg.Connection, Depends(_conn, scope="function")]


def _config(request: Request) -> ServerConfig:
    cfg: ServerConfig = request.app.state.config
    return cfg


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, message, {"WWW-Authenticate": "Bearer"})


async def _credential(request: Request) -> Credential:
    """The caller's credential, checked as far as it can be without the database (a JWT's signature
    and expiry), then rate-limited per credential before any query runs. Async: it never blocks, and
    FastAPI runs a sync dependency through the thread pool (a hop per request)."""
    try:
        credential = bearer(request.headers.get("authorization"))
        if is_api_token(credential):
            cred, key = Credential(token_hash=token_hash(credential)), "t" + token_hash(credential)
        else:
            uid, _ = read_jwt(credential, _config(request).secret)
            cred, key = Credential(user_id=uid), f"u{uid}"
    except Unauthorized as exc:
        raise _unauthorized(str(exc)) from None
    wait = request.app.state.limiter.take(key)
    if wait:
        raise ApiError(429, "too many requests for this token", {"Retry-After": str(max(1, round(wait)))})
    return cred


Cred = Annotated[Credential, Depends(_credential)]


def _principal(conn: Conn, cred: Cred) -> Principal:
    """Who is calling (the routes other than push and recall, which check in their own statement)."""
    found = hotpath.caller(conn, cred)
    if found is None:
        raise _unauthorized(_invalid(cred))
    return found[0]


def _invalid(cred: Credential) -> str:
    if cred.token_hash is not None:
        return "the API token is not valid or was revoked"
    return "the user of this access token no longer exists"


def _checked(callers: int, role: str | None, cred: Credential, need: tuple[str, ...]) -> str:
    """401 (no such caller) / 404 (cannot see the project) / 403 (role not in `need`), in that order."""
    if callers == 0:
        raise _unauthorized(_invalid(cred))
    if role is None:
        raise ApiError(404, "no such project (or not visible to this token)")
    if role not in need:
        raise ApiError(403, f"a {role} of this project cannot do this (needs {' or '.join(need)})")
    return role


def _role(conn: psycopg.Connection, cred: Credential, project_id: str, need: tuple[str, ...]) -> str:
    """The caller's role in the project (the one rule: hotpath.ACCESS), or the 401/404/403."""
    if not valid_project_id(project_id):
        raise ApiError(404, "no such project (or not visible to this token)")
    found = hotpath.caller(conn, cred, project_id)
    return _checked(0 if found is None else 1, found[1] if found else None, cred, need)


def _vectors(request: Request, conn: psycopg.Connection) -> ServerVectors | None:
    """The server's model when it has one and the schema has the vector column (checked once)."""
    state = request.app.state
    if state.vectors is None:
        model = _config(request).embed
        state.vectors = ServerVectors(model) if model is not None and has_vectors(conn) else False
    return state.vectors or None


def _json(body: str | None, status: int = 200) -> Response:
    return Response(body or "null", status_code=status, media_type="application/json")


Who = Annotated[Principal, Depends(_principal)]


def _utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(name: str, value: str, limit: int) -> str:
    if "\x00" in value:
        raise ApiError(422, f"{name}: NUL characters are not allowed")
    if len(value) > limit:
        raise ApiError(413, f"{name} is longer than {limit} characters")
    return value


class LoginIn(BaseModel):
    username: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=1, max_length=1000)


class ContextIn(BaseModel):
    project_id: str = Field(min_length=1, max_length=128)
    title: str = Field(min_length=1)
    dense_summary: str = Field(min_length=1)
    context_type: str = Field(min_length=1, max_length=40, pattern=r"^[a-z][a-z0-9_-]*$")
    relevance_score: float = Field(ge=0, le=10)
    metadata: dict[str, Any] = Field(default_factory=dict)
    client_key: str | None = Field(default=None, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")


class StateIn(BaseModel):
    project_id: str = Field(min_length=1, max_length=128)
    state_type: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
    state_data: dict[str, Any]


def _json_field(name: str, value: dict[str, Any], limit: int) -> None:
    try:
        raw = orjson.dumps(value)
    except orjson.JSONEncodeError:  # lone surrogates, or nested deeper than JSON text may be stored
        raise ApiError(422, f"{name}: not storable JSON (invalid Unicode or nested too deep)") from None
    if len(raw) > limit:
        raise ApiError(413, f"{name} is larger than {limit} bytes")
    if b"\\u0000" in raw:
        raise ApiError(422, f"{name}: NUL characters are not allowed")


@router.get("/health")
def health(conn: Conn) -> dict[str, Any]:
    """Liveness and the schema version (no authentication)."""
    return {"status": "ok", "database": "ok", "schema_version": current_version(conn)}


@router.post("/auth/login")
def login(body: LoginIn, request: Request, conn: Conn) -> dict[str, Any]:
    cfg = _config(request)
    wait = request.app.state.limiter.take("login:" + body.username)
    if wait:
        raise ApiError(429, "too many login attempts", {"Retry-After": str(max(1, round(wait)))})
    if "\x00" in body.username or not _utf8(body.username):
        raise ApiError(401, "wrong username or password", {"WWW-Authenticate": "Bearer"})
    row = store.login_row(conn, body.username)
    if not check_password(row[1] if row else None, body.password) or row is None:
        raise ApiError(401, "wrong username or password", {"WWW-Authenticate": "Bearer"})
    ttl = cfg.limits.access_ttl_s
    return {
        "access_token": issue_jwt(row[0], body.username, cfg.secret, ttl),
        "token_type": "bearer",
        "expires_in": ttl,
    }


@router.post("/conversation-contexts", status_code=201)
def push_context(body: ContextIn, request: Request, cred: Cred) -> Response:
    """Store one context; a `client_key` already stored in the project answers 200 with that row.
    (Push and recall take their connection in the body, not as a dependency: one thread hop.)"""
    lim = _config(request).limits
    if not valid_project_id(body.project_id):
        raise ApiError(404, "no such project (or not visible to this token)")
    data = body.model_dump()
    _text("title", data["title"], lim.max_title)
    _text("dense_summary", data["dense_summary"], lim.max_summary)
    _json_field("metadata", data["metadata"], lim.max_metadata)
    with _connection(request) as conn:
        vectors, vector = _vectors(request, conn), None
        if vectors is not None:
            _role(conn, cred, body.project_id, store.WRITERS)
            vector = vectors.document(data["title"], data["dense_summary"])
        out = hotpath.push(conn, cred, data, store.WRITERS, vector)
    _checked(out.callers, out.role, cred, store.WRITERS)
    return _json(out.body, 201 if out.created else 200)


@router.get("/conversation-contexts/recall")
def recall(
    request: Request,
    cred: Cred,
    project_id: Annotated[str, Query(min_length=1, max_length=128)],
    q: Annotated[str, Query(max_length=1000)] = "",
    min_relevance_score: Annotated[float, Query(ge=0, le=10)] = 0.0,
    limit: Annotated[int, Query(ge=1)] = 10,
) -> Response:
    """Contexts of the project, best first: text match (websearch syntax) + relevance + recency, and
    similarity to the query when the server has vectors."""
    if not valid_project_id(project_id):
        raise ApiError(404, "no such project (or not visible to this token)")
    limit = min(limit, _config(request).limits.max_page)
    q = q.replace("\x00", " ")
    with _connection(request) as conn:
        vectors, qv = _vectors(request, conn), None
        if vectors is not None and q.strip():
            _role(conn, cred, project_id, store.ROLES)
            qv = vectors.query(q)
        out = hotpath.recall(conn, cred, project_id, q, min_relevance_score, limit, store.ROLES, qv)
    _checked(out.callers, out.role, cred, store.ROLES)
    return _json(out.body)


def _visible_context(conn: psycopg.Connection, who: Principal, cid: int, need: tuple[str, ...]) -> str:
    """The context's project, once the caller is known (`who`: a bad credential is 401 before any id
    is looked at); a context of a project it cannot see is 404 like one that does not exist."""
    project_id = store.context_project(conn, cid)
    found = hotpath.caller(conn, who.credential, project_id) if project_id is not None else None
    if project_id is None or found is None or found[1] is None:
        raise ApiError(404, "no such context")
    _checked(1, found[1], who.credential, need)
    return project_id


@router.get("/conversation-contexts/{cid}")
def get_context(cid: RowId, conn: Conn, who: Who) -> dict[str, Any]:
    project_id = _visible_context(conn, who, cid, store.ROLES)
    row = store.get_context(conn, project_id, cid)
    if row is None:
        raise ApiError(404, "no such context")
    store.audit(conn, who, project_id, "read", str(cid))
    return row


@router.delete("/conversation-contexts/{cid}", status_code=204)
def delete_context(cid: RowId, conn: Conn, who: Who) -> Response:
    project_id = _visible_context(conn, who, cid, store.WRITERS)
    if not store.delete_context(conn, who, project_id, cid):
        raise ApiError(404, "no such context")
    return Response(status_code=204)


@router.post("/project-states")
def push_state(body: StateIn, request: Request, conn: Conn, who: Who) -> dict[str, Any]:
    """Upsert a state: the posted object's top-level keys are merged into the stored one."""
    _role(conn, who.credential, body.project_id, store.WRITERS)
    _json_field("state_data", body.state_data, _config(request).limits.max_metadata)
    return store.upsert_state(conn, who, body.project_id, body.state_type, body.state_data)


@router.get("/projects/{project_id}")
def project(project_id: str, conn: Conn, who: Who) -> dict[str, Any]:
    role = _role(conn, who.credential, project_id, store.ROLES)
    return store.project_info(conn, project_id, role)


@router.get("/audit")
def audit(
    request: Request,
    conn: Conn,
    who: Who,
    project_id: Annotated[str, Query(min_length=1, max_length=128)],
    before: Annotated[int | None, Query(ge=1, le=BIGINT)] = None,
    limit: Annotated[int, Query(ge=1)] = 50,
) -> list[dict[str, Any]]:
    """The project's audit log, newest first (owners only); page with `before=<smallest id seen>`."""
    _role(conn, who.credential, project_id, ("owner",))
    return store.audit_log(conn, project_id, before, min(limit, _config(request).limits.max_page))
