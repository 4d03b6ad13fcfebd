"""The team memory server (issue 16) against a real PostgreSQL, driven over HTTP on loopback:
authentication, per-project authorisation (404 for what a token cannot see), the endpoints, the one
error shape, limits, idempotent pushes, recall ranking and the append-only audit log."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

httpx = pytest.importorskip("httpx")
psycopg = pytest.importorskip("psycopg")

from pg_fixture import Postgres, serve  # noqa: E402

from total_recall.server import store  # noqa: E402
from total_recall.server.app import RateLimiter, create_app  # noqa: E402
from total_recall.server.auth import hash_password, issue_jwt, new_api_token  # noqa: E402
from total_recall.server.config import Limits, ServerConfig  # noqa: E402
from total_recall.server.migrations import migrate  # noqa: E402

SECRET = "test-secret-0123456789abcdef-0123456789"
PA, PB = "proj-a", "proj-b"
NASTY = [
    "'; DROP TABLE conversation_contexts; --",
    'a" OR "1"="1',
    "foo & | ! <-> ( ) :* \\ '' \"",
    "!!! ((( ::: <2> & !",
    "-",
    "%_ LIKE '%' \\x00",
    "select * from users where name = 'x' or 1=1 /* */",
    "ünïcödé — 日本語 🎉",
]


@dataclass
class World:
    url: str
    dsn: str
    alice: str  # owner of PA
    bob: str  # owner of PB
    carol: str  # reader of PA
    alice_scoped: str  # alice's token limited to PA (she also owns PA2)
    alice_id: int


@pytest.fixture(scope="module")
def world(postgres: Postgres) -> Iterator[World]:
    dsn = postgres.new_database()
    migrate(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        ids = {n: store.add_user(conn, n, hash_password(f"{n}-password")) for n in ("alice", "bob", "carol")}
        store.add_project(conn, PA, "alice")
        store.add_project(conn, "proj-a2", "alice")
        store.add_project(conn, PB, "bob")
        store.set_member(conn, PA, "carol", "reader")
        tokens = {}
        for name, user, scope in (
            ("alice", "alice", None),
            ("bob", "bob", None),
            ("carol", "carol", None),
            ("alice_scoped", "alice", [PA]),
        ):
            tok, digest = new_api_token()
            store.add_token(conn, user, digest, name, scope)
            tokens[name] = tok
    with serve(create_app(ServerConfig(dsn=dsn, secret=SECRET))) as url:
        yield World(
            url, dsn, tokens["alice"], tokens["bob"], tokens["carol"], tokens["alice_scoped"], ids["alice"]
        )


def h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def ctx(project: str = PA, **kw: object) -> dict[str, object]:
    body: dict[str, object] = {
        "project_id": project,
        "title": "Use PostgreSQL for the team tier",
        "dense_summary": "We decided to store shared memory in PostgreSQL with full-text ranking.",
        "context_type": "decision",
        "relevance_score": 7,
        "metadata": {"source": "test"},
    }
    body.update(kw)
    return body


def assert_error(r: httpx.Response, status: int) -> None:
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["status"] == status and isinstance(err["code"], str) and err["message"]


def test_health_needs_no_auth_and_docs_are_served(world: World) -> None:
    r = httpx.get(world.url + "/api/health")
    assert r.status_code == 200 and r.json()["status"] == "ok" and r.json()["schema_version"] >= 1
    assert httpx.get(world.url + "/docs").status_code == 200
    assert "/api/conversation-contexts/recall" in httpx.get(world.url + "/openapi.json").json()["paths"]


def test_migrate_is_idempotent(world: World) -> None:
    again = migrate(world.dsn)
    assert again["applied"] == [] and again["version"] >= 1


def test_a_version_1_database_is_upgraded_and_its_text_index_has_no_pending_list(
    postgres: Postgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    from total_recall.server import migrations

    dsn = postgres.new_database()
    with monkeypatch.context() as m:
        m.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:1])
        assert migrate(dsn)["version"] == 1
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT reloptions FROM pg_class WHERE relname = 'contexts_tsv'").fetchone() == (
            None,
        )
    res = migrate(dsn)
    assert res["applied"] == [2] and res["version"] == 2
    with psycopg.connect(dsn) as conn:
        options = conn.execute("SELECT reloptions FROM pg_class WHERE relname = 'contexts_tsv'").fetchone()
    assert options == (["fastupdate=off"],)


ROUTES = [
    ("POST", "/api/conversation-contexts", ctx()),
    ("GET", f"/api/conversation-contexts/recall?project_id={PA}&q=x", None),
    ("GET", "/api/conversation-contexts/1", None),
    ("DELETE", "/api/conversation-contexts/1", None),
    ("POST", "/api/project-states", {"project_id": PA, "state_type": "s", "state_data": {}}),
    ("GET", f"/api/projects/{PA}", None),
    ("GET", f"/api/audit?project_id={PA}", None),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
def test_every_route_needs_a_credential(world: World, method: str, path: str, body: object) -> None:
    for headers in ({}, {"Authorization": "Basic abc"}, h("not-a-jwt"), h("trt_unknown")):
        r = httpx.request(method, world.url + path, json=body, headers=headers)
        assert_error(r, 401)


def test_login_gives_a_24h_jwt_that_works(world: World) -> None:
    r = httpx.post(world.url + "/api/auth/login", json={"username": "alice", "password": "alice-password"})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["token_type"] == "bearer" and data["expires_in"] == 24 * 3600
    assert (
        httpx.get(world.url + f"/api/projects/{PA}", headers=h(data["access_token"])).json()["role"]
        == "owner"
    )
    for user, pw in (("alice", "wrong-password"), ("nobody", "whatever1")):
        assert_error(httpx.post(world.url + "/api/auth/login", json={"username": user, "password": pw}), 401)


def test_expired_tampered_or_foreign_jwt_is_401(world: World) -> None:
    expired = issue_jwt(world.alice_id, "alice", SECRET, 60, now=time.time() - 3600)
    good = issue_jwt(world.alice_id, "alice", SECRET, 60)
    head, payload, sig = good.split(".")
    tampered_sig = f"{head}.{payload}.{sig[:-2]}{'AA' if sig[-2:] != 'AA' else 'BB'}"
    import base64
    import json

    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["sub"] = "999"
    forged_payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    none_alg = base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').rstrip(b"=").decode()
    for bad in (
        expired,
        tampered_sig,
        f"{head}.{forged_payload}.{sig}",
        f"{none_alg}.{payload}.",
        issue_jwt(world.alice_id, "alice", "another-secret-of-enough-length-0123456789", 60),
    ):
        assert_error(httpx.get(world.url + f"/api/projects/{PA}", headers=h(bad)), 401)
    assert httpx.get(world.url + f"/api/projects/{PA}", headers=h(good)).status_code == 200


def test_push_is_201_and_a_repeated_client_key_is_not_stored_twice(world: World) -> None:
    body = ctx(client_key="k-idem-1", title="Idempotent push")
    r1 = httpx.post(world.url + "/api/conversation-contexts", json=body, headers=h(world.alice))
    assert r1.status_code == 201, r1.text
    assert r1.json()["id"] > 0 and r1.json()["title"] == "Idempotent push"
    r2 = httpx.post(world.url + "/api/conversation-contexts", json=body, headers=h(world.alice))
    assert r2.status_code == 200 and r2.json()["id"] == r1.json()["id"]
    with psycopg.connect(world.dsn) as conn:
        n = conn.execute(
            "SELECT count(*) FROM conversation_contexts WHERE client_key = 'k-idem-1'"
        ).fetchone()
    assert n is not None and n[0] == 1


def test_a_201_means_committed(world: World) -> None:
    """The transaction commits before the answer leaves: another connection sees the row at once."""
    with psycopg.connect(world.dsn, autocommit=True) as conn:
        for i in range(30):
            r = httpx.post(
                world.url + "/api/conversation-contexts",
                json=ctx(title=f"commit {i}"),
                headers=h(world.alice),
            )
            assert r.status_code == 201
            row = conn.execute(
                "SELECT title FROM conversation_contexts WHERE id = %s", (r.json()["id"],)
            ).fetchone()
            assert row == (f"commit {i}",)


def test_recall_ranks_matches_first_and_filters(world: World) -> None:
    p = "proj-a2"
    for title, summary, score in (
        ("Cache invalidation", "Redis cache keys expire after ten minutes", 3),
        ("Deploy process", "Deploys go through the staging cluster first", 9),
        ("Redis eviction", "The redis eviction policy is allkeys-lru", 8),
    ):
        r = httpx.post(
            world.url + "/api/conversation-contexts",
            json=ctx(p, title=title, dense_summary=summary, relevance_score=score),
            headers=h(world.alice),
        )
        assert r.status_code == 201
    got = httpx.get(
        world.url + "/api/conversation-contexts/recall",
        params={"project_id": p, "q": "redis"},
        headers=h(world.alice),
    ).json()
    assert [g["title"] for g in got] == ["Redis eviction", "Cache invalidation"]
    got = httpx.get(
        world.url + "/api/conversation-contexts/recall",
        params={"project_id": p, "q": "redis", "min_relevance_score": 5},
        headers=h(world.alice),
    ).json()
    assert [g["title"] for g in got] == ["Redis eviction"]
    everything = httpx.get(
        world.url + "/api/conversation-contexts/recall",
        params={"project_id": p, "limit": 2},
        headers=h(world.alice),
    ).json()
    assert [g["title"] for g in everything] == ["Deploy process", "Redis eviction"]  # relevance + recency


def test_recency_is_ranked_in_double_precision(world: World) -> None:
    """Not numeric: a numeric power() per matched row made a common word's recall tens of ms slower."""
    from total_recall.server.hotpath import RECENCY

    with psycopg.connect(world.dsn) as conn:
        kind = conn.execute(
            f"SELECT pg_typeof({RECENCY})::text FROM (SELECT now() AS created_at) c"
        ).fetchone()
    assert kind == ("double precision",)


def test_pages_are_bounded(world: World) -> None:
    r = httpx.get(
        world.url + "/api/conversation-contexts/recall",
        params={"project_id": PA, "limit": 100000},
        headers=h(world.alice),
    )
    assert r.status_code == 200 and len(r.json()) <= 100
    assert_error(
        httpx.get(
            world.url + "/api/conversation-contexts/recall",
            params={"project_id": PA, "limit": 0},
            headers=h(world.alice),
        ),
        422,
    )


def test_a_project_another_token_cannot_see_is_404_everywhere(world: World) -> None:
    b = httpx.post(
        world.url + "/api/conversation-contexts",
        json=ctx(PB, title="Bob's secret plan"),
        headers=h(world.bob),
    )
    assert b.status_code == 201
    bid = b.json()["id"]
    for token in (world.alice, world.carol):
        H = h(token)
        assert_error(httpx.post(world.url + "/api/conversation-contexts", json=ctx(PB), headers=H), 404)
        assert_error(
            httpx.get(
                world.url + "/api/conversation-contexts/recall",
                params={"project_id": PB, "q": "plan"},
                headers=H,
            ),
            404,
        )
        assert_error(httpx.get(world.url + f"/api/conversation-contexts/{bid}", headers=H), 404)
        assert_error(httpx.delete(world.url + f"/api/conversation-contexts/{bid}", headers=H), 404)
        assert_error(httpx.get(world.url + f"/api/projects/{PB}", headers=H), 404)
        assert_error(httpx.get(world.url + "/api/audit", params={"project_id": PB}, headers=H), 404)
        assert_error(
            httpx.post(
                world.url + "/api/project-states",
                json={"project_id": PB, "state_type": "x", "state_data": {"a": 1}},
                headers=H,
            ),
            404,
        )
    # guessing ids: every id around bob's answers 404, the same as one that does not exist
    for guess in range(max(1, bid - 3), bid + 50):
        r = httpx.get(world.url + f"/api/conversation-contexts/{guess}", headers=h(world.alice))
        if r.status_code == 200:
            assert r.json()["project_id"] != PB
        else:
            assert_error(r, 404)
    assert_error(httpx.get(world.url + "/api/projects/does-not-exist", headers=h(world.alice)), 404)
    assert httpx.get(world.url + f"/api/conversation-contexts/{bid}", headers=h(world.bob)).status_code == 200


def test_a_token_scoped_to_one_project_cannot_see_the_users_others(world: World) -> None:
    assert httpx.get(world.url + "/api/projects/proj-a2", headers=h(world.alice)).status_code == 200
    assert_error(httpx.get(world.url + "/api/projects/proj-a2", headers=h(world.alice_scoped)), 404)
    assert httpx.get(world.url + f"/api/projects/{PA}", headers=h(world.alice_scoped)).status_code == 200


def test_a_reader_reads_but_cannot_write(world: World) -> None:
    H = h(world.carol)
    assert (
        httpx.get(
            world.url + "/api/conversation-contexts/recall", params={"project_id": PA}, headers=H
        ).status_code
        == 200
    )
    assert_error(httpx.post(world.url + "/api/conversation-contexts", json=ctx(PA), headers=H), 403)
    assert_error(httpx.get(world.url + "/api/audit", params={"project_id": PA}, headers=H), 403)


def test_a_revoked_token_is_401(world: World) -> None:
    with psycopg.connect(world.dsn, autocommit=True) as conn:
        tok, digest = new_api_token()
        tid = store.add_token(conn, "alice", digest, "laptop", None)
        assert httpx.get(world.url + f"/api/projects/{PA}", headers=h(tok)).status_code == 200
        store.revoke_token(conn, tid, None)
    assert_error(httpx.get(world.url + f"/api/projects/{PA}", headers=h(tok)), 401)


def test_revocation_is_immediate_on_push_and_recall(world: World) -> None:
    """Push and recall check the token in their one statement: no cache lets a revoked token through,
    even on the same keep-alive connection right after a successful call."""
    with psycopg.connect(world.dsn, autocommit=True) as conn:
        tok, digest = new_api_token()
        tid = store.add_token(conn, "alice", digest, "laptop", None)
    recall = ("/api/conversation-contexts/recall", {"project_id": PA, "q": "postgresql"})
    with httpx.Client(base_url=world.url, headers=h(tok)) as http:
        assert http.get(recall[0], params=recall[1]).status_code == 200
        assert http.post("/api/conversation-contexts", json=ctx(client_key="before-revoke")).status_code in (
            200,
            201,
        )
        with psycopg.connect(world.dsn, autocommit=True) as conn:
            store.revoke_token(conn, tid, None)
        assert_error(http.get(recall[0], params=recall[1]), 401)
        assert_error(http.post("/api/conversation-contexts", json=ctx(client_key="after-revoke")), 401)
    with psycopg.connect(world.dsn) as conn:
        stored = conn.execute("SELECT count(*) FROM conversation_contexts WHERE client_key = 'after-revoke'")
        assert stored.fetchone() == (0,)


def test_push_and_recall_with_a_login_jwt_and_their_refusals_leave_no_trace(world: World) -> None:
    """The JWT path of the one-statement check, and a refused call (reader pushing, outsider reading,
    scoped token outside its scope) writes neither a row nor an audit line."""
    jwt_h = h(issue_jwt(world.alice_id, "alice", SECRET, 60))
    r = httpx.post(world.url + "/api/conversation-contexts", json=ctx(client_key="by-jwt"), headers=jwt_h)
    assert r.status_code in (200, 201) and r.json()["created_by"] == "alice"
    got = httpx.get(
        world.url + "/api/conversation-contexts/recall", params={"project_id": PA, "q": "x"}, headers=jwt_h
    )
    assert got.status_code == 200
    with psycopg.connect(world.dsn) as conn:
        before = conn.execute("SELECT count(*) FROM audit_log").fetchone()
    refused = [
        (world.carol, "post", PA, 403),
        (world.bob, "post", PA, 404),
        (world.bob, "get", PA, 404),
        (world.alice_scoped, "get", "proj-a2", 404),
        (world.alice_scoped, "post", "proj-a2", 404),
    ]
    for token, method, project, status in refused:
        if method == "post":
            r = httpx.post(
                world.url + "/api/conversation-contexts",
                json=ctx(project, client_key="refused"),
                headers=h(token),
            )
        else:
            r = httpx.get(
                world.url + "/api/conversation-contexts/recall",
                params={"project_id": project, "q": "postgresql"},
                headers=h(token),
            )
        assert_error(r, status)
    with psycopg.connect(world.dsn) as conn:
        assert conn.execute("SELECT count(*) FROM audit_log").fetchone() == before
        assert conn.execute(
            "SELECT count(*) FROM conversation_contexts WHERE client_key = 'refused'"
        ).fetchone() == (0,)
    gone = issue_jwt(987654, "ghost", SECRET, 60)
    assert_error(
        httpx.get(
            world.url + "/api/conversation-contexts/recall", params={"project_id": PA}, headers=h(gone)
        ),
        401,
    )


@pytest.mark.parametrize("text", NASTY)
def test_sql_and_tsquery_metacharacters_in_every_text_field(world: World, text: str) -> None:
    clean = text.replace("\\x00", "")
    body = ctx(
        PA, title=clean, dense_summary=clean + " tail", metadata={clean: clean, "k": [clean]}, client_key=None
    )
    r = httpx.post(world.url + "/api/conversation-contexts", json=body, headers=h(world.alice))
    assert r.status_code == 201, r.text
    got = r.json()
    assert (
        got["title"] == clean and got["dense_summary"] == clean + " tail" and got["metadata"][clean] == clean
    )
    for q in (text, clean, f'"{text}"', f"-{text}", f"{text} OR tail"):
        rr = httpx.get(
            world.url + "/api/conversation-contexts/recall",
            params={"project_id": PA, "q": q},
            headers=h(world.alice),
        )
        assert rr.status_code == 200, rr.text
    rs = httpx.post(
        world.url + "/api/project-states",
        json={"project_id": PA, "state_type": "meta", "state_data": {clean: clean}},
        headers=h(world.alice),
    )
    assert rs.status_code == 200 and rs.json()["state_data"][clean] == clean
    assert_error(
        httpx.get(
            world.url + "/api/conversation-contexts/recall",
            params={"project_id": text},
            headers=h(world.alice),
        ),
        404,
    )
    assert_error(
        httpx.post(
            world.url + "/api/conversation-contexts", json=ctx(PA, context_type=text), headers=h(world.alice)
        ),
        422,
    )
    with psycopg.connect(world.dsn) as conn:
        assert conn.execute("SELECT count(*) FROM users").fetchone() == (3,)


def test_nul_characters_are_refused_not_a_500(world: World) -> None:
    for body in (ctx(PA, title="a\x00b"), ctx(PA, metadata={"k": "a\x00"})):
        assert_error(
            httpx.post(world.url + "/api/conversation-contexts", json=body, headers=h(world.alice)), 422
        )
    r = httpx.get(
        world.url + "/api/conversation-contexts/recall",
        params={"project_id": PA, "q": "a\x00b"},
        headers=h(world.alice),
    )
    assert r.status_code == 200


def test_oversized_payloads_are_413(world: World) -> None:
    H = h(world.alice)
    assert_error(
        httpx.post(
            world.url + "/api/conversation-contexts", json=ctx(PA, dense_summary="x" * 200_000), headers=H
        ),
        413,
    )
    assert_error(
        httpx.post(world.url + "/api/conversation-contexts", json=ctx(PA, title="t" * 301), headers=H), 413
    )
    assert_error(
        httpx.post(
            world.url + "/api/conversation-contexts", json=ctx(PA, metadata={"m": "x" * 9000}), headers=H
        ),
        413,
    )

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit holds while the body streams
        yield b'{"project_id": "proj-a", "title": "'
        for _ in range(100):
            yield b"x" * 1024
        yield b'"}'

    r = httpx.post(
        world.url + "/api/conversation-contexts",
        content=chunks(),
        headers={**H, "Content-Type": "application/json"},
    )
    assert_error(r, 413)
    with psycopg.connect(world.dsn) as conn:
        longest = conn.execute(
            "SELECT coalesce(max(length(dense_summary)), 0) FROM conversation_contexts"
        ).fetchone()
    assert longest is not None and longest[0] < 20_000


def test_project_state_upsert_merges_json(world: World) -> None:
    H = h(world.alice)
    url = world.url + "/api/project-states"
    assert (
        httpx.post(
            url,
            json={"project_id": PA, "state_type": "build", "state_data": {"a": 1, "b": {"x": 1}}},
            headers=H,
        ).status_code
        == 200
    )
    r = httpx.post(
        url, json={"project_id": PA, "state_type": "build", "state_data": {"b": {"y": 2}, "c": 3}}, headers=H
    )
    assert r.json()["state_data"] == {"a": 1, "b": {"y": 2}, "c": 3}
    info = httpx.get(world.url + f"/api/projects/{PA}", headers=H).json()
    assert info["states"]["build"]["state_data"] == {"a": 1, "b": {"y": 2}, "c": 3} and info["contexts"] >= 1


def test_audit_log_records_push_read_delete_and_is_append_only(world: World) -> None:
    H = h(world.alice)
    cid = httpx.post(
        world.url + "/api/conversation-contexts", json=ctx(PA, title="to delete"), headers=H
    ).json()["id"]
    assert (
        httpx.get(world.url + f"/api/conversation-contexts/{cid}", headers=h(world.carol)).status_code == 200
    )
    assert httpx.delete(world.url + f"/api/conversation-contexts/{cid}", headers=H).status_code == 204
    assert_error(httpx.get(world.url + f"/api/conversation-contexts/{cid}", headers=H), 404)
    log = httpx.get(world.url + "/api/audit", params={"project_id": PA}, headers=H).json()
    mine = [(e["action"], e["user"]) for e in log if e["target"] == str(cid)]
    assert mine == [("delete", "alice"), ("read", "carol"), ("push", "alice")]
    with psycopg.connect(world.dsn) as conn, pytest.raises(psycopg.errors.RaiseException):
        conn.execute("UPDATE audit_log SET action = 'x'")
    with psycopg.connect(world.dsn) as conn, pytest.raises(psycopg.errors.RaiseException):
        conn.execute("DELETE FROM audit_log")


def test_rate_limit_per_token(postgres: Postgres, world: World) -> None:
    lim = RateLimiter(rate=1.0, burst=2.0)
    assert [lim.take("t", now=0.0), lim.take("t", now=0.0)] == [0.0, 0.0]
    assert lim.take("t", now=0.0) > 0 and lim.take("other", now=0.0) == 0.0
    assert lim.take("t", now=1.5) == 0.0
    lim.max_keys = 10
    for i in range(50):  # callers that pick new names cannot grow the table without bound
        lim.take(f"login:{i}", now=100.0 + i * 10)
    assert len(lim._buckets) <= 11
    app = create_app(ServerConfig(dsn=world.dsn, secret=SECRET, limits=Limits(rate_per_s=0.5, burst=3)))
    with serve(app) as url:
        codes = [httpx.get(url + f"/api/projects/{PA}", headers=h(world.alice)).status_code for _ in range(5)]
        assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]
        r = httpx.get(url + f"/api/projects/{PA}", headers=h(world.alice))
        assert_error(r, 429)
        assert int(r.headers["Retry-After"]) >= 1
        assert httpx.get(url + f"/api/projects/{PB}", headers=h(world.bob)).status_code == 200  # per token


RAW_BODIES = [
    # (what, raw JSON body): characters PostgreSQL text cannot hold, in every text field
    (
        "surrogate title",
        '{"project_id":"proj-a","title":"a\\ud800b","dense_summary":"s","context_type":"decision","relevance_score":1}',
    ),
    (
        "surrogate summary",
        '{"project_id":"proj-a","title":"t","dense_summary":"\\udfff","context_type":"decision","relevance_score":1}',
    ),
    (
        "surrogate metadata",
        '{"project_id":"proj-a","title":"t","dense_summary":"s","context_type":"decision","relevance_score":1,"metadata":{"\\ud800":"x"}}',
    ),
    (
        "nul client key",
        '{"project_id":"proj-a","title":"t","dense_summary":"s","context_type":"decision","relevance_score":1,"client_key":"a\\u0000"}',
    ),
    (
        "surrogate client key",
        '{"project_id":"proj-a","title":"t","dense_summary":"s","context_type":"decision","relevance_score":1,"client_key":"\\ud800"}',
    ),
    (
        "deep metadata",
        '{"project_id":"proj-a","title":"t","dense_summary":"s","context_type":"decision","relevance_score":1,"metadata":{"a":'
        + "[" * 400
        + "]" * 400
        + "}}",
    ),
]


@pytest.mark.parametrize(("what", "raw"), RAW_BODIES, ids=[w for w, _ in RAW_BODIES])
def test_text_postgresql_cannot_hold_is_refused_not_a_500(world: World, what: str, raw: str) -> None:
    r = httpx.post(
        world.url + "/api/conversation-contexts",
        content=raw.encode(),
        headers={**h(world.alice), "Content-Type": "application/json"},
    )
    assert r.status_code in (400, 413, 422), (what, r.text)
    assert r.json()["error"]["status"] == r.status_code


def test_bad_logins_and_ids_are_client_errors(world: World) -> None:
    for body in (
        '{"username":"a\\u0000","password":"x"}',
        '{"username":"\\ud800","password":"x"}',
        '{"username":"alice","password":"\\ud800"}',
    ):
        r = httpx.post(
            world.url + "/api/auth/login", content=body.encode(), headers={"Content-Type": "application/json"}
        )
        assert r.status_code in (401, 422), r.text
    for path in (
        "/api/conversation-contexts/99999999999999999999",
        "/api/conversation-contexts/-1",
        "/api/conversation-contexts/0",
    ):
        r = httpx.get(world.url + path, headers=h(world.alice))
        assert r.status_code in (404, 422), r.text
    r = httpx.get(
        world.url + "/api/audit", params={"project_id": PA, "before": 10**30}, headers=h(world.alice)
    )
    assert r.status_code in (200, 422), r.text


def test_an_unreachable_database_is_503_in_the_error_shape(tmp_path: object) -> None:
    dsn = "host=/nonexistent-socket-dir port=1 user=x dbname=y connect_timeout=1"
    with serve(create_app(ServerConfig(dsn=dsn, secret=SECRET, pool_timeout=0.5))) as url:
        assert_error(httpx.get(url + "/api/health", timeout=10), 503)
        assert_error(httpx.get(url + f"/api/projects/{PA}", headers=h("trt_x"), timeout=10), 503)


def test_concurrent_migrations_apply_each_step_once(postgres: Postgres) -> None:
    import threading

    dsn = postgres.new_database()
    results: list[dict[str, object]] = []
    threads = [threading.Thread(target=lambda: results.append(migrate(dsn))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    from total_recall.server.migrations import MIGRATIONS

    steps = len(MIGRATIONS)
    assert sorted(len(r["applied"]) for r in results) == [0, 0, steps]  # type: ignore[arg-type]
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone() == (steps,)
