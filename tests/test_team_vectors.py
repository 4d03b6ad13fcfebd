"""pgvector on the team server (issue 16): `migrate` creates the vector column and its index when
`CREATE EXTENSION vector` works and leaves a full-text schema when it does not; the server embeds pushed
contexts and recall queries with the local test model (all-MiniLM-L6-v2 int8, the one scripts/test.sh
installs), and recall ranks by similarity too. Against the pgvector-enabled PostgreSQL of the `pgserver`
wheel (tests/pg_fixture.py); skipped, with the reason, only where no pgvector is available."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx")
psycopg = pytest.importorskip("psycopg")

from pg_fixture import Postgres, serve, server_process  # noqa: E402
from test_vec import MODEL_NAME, model_dir  # noqa: E402, F401 - the session's test model

from total_recall.server import store  # noqa: E402
from total_recall.server.app import create_app  # noqa: E402
from total_recall.server.auth import hash_password, new_api_token  # noqa: E402
from total_recall.server.config import ServerConfig  # noqa: E402
from total_recall.server.migrations import has_vectors, migrate  # noqa: E402
from vec.embed import ModelConfig  # noqa: E402

SECRET = "vector-secret-0123456789abcdef-0123456789"
P = "proj-vec"
DOCS = [
    ("Friday deploys", "Never deploy to production on Fridays: releases wait until Monday."),
    ("Billing storage", "The billing service stores invoices in PostgreSQL with monthly partitions."),
    ("Package manager", "Use pnpm instead of npm for installing JavaScript packages."),
]
# Shares no word (after stemming) with any of DOCS: full text alone finds nothing.
QUERY = "shipping code before the weekend"


@pytest.fixture(scope="module")
def pgvector(postgres: Postgres) -> Postgres:
    if not postgres.has_pgvector():
        pytest.skip(
            "this PostgreSQL has no pgvector: install the dev extra (the `pgserver` wheel bundles "
            "PostgreSQL 16 with pgvector) or the distribution's pgvector package"
        )
    return postgres


def _seed(dsn: str) -> str:
    """A user owning P; returns an API token."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        store.add_user(conn, "vera", hash_password("vera-password"))
        store.add_project(conn, P, "vera")
        tok, digest = new_api_token()
        store.add_token(conn, "vera", digest, "laptop", None)
    return tok


@dataclass
class Served:
    url: str
    dsn: str
    token: str

    def push(self, title: str, summary: str, score: float = 5) -> httpx.Response:
        body = {
            "project_id": P,
            "title": title,
            "dense_summary": summary,
            "context_type": "decision",
            "relevance_score": score,
        }
        return httpx.post(self.url + "/api/conversation-contexts", json=body, headers=self.auth, timeout=30)

    def recall(self, q: str) -> list[dict[str, object]]:
        r = httpx.get(
            self.url + "/api/conversation-contexts/recall",
            params={"project_id": P, "q": q},
            headers=self.auth,
            timeout=30,
        )
        assert r.status_code == 200, r.text
        rows: list[dict[str, object]] = r.json()
        return rows

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def _model(path: Path) -> ModelConfig:
    """The local test model, its int8 copy made in a scratch models directory (as the data dir's)."""
    return ModelConfig(MODEL_NAME, str(path), tempfile.mkdtemp(prefix="tr-models-"))


@pytest.fixture(scope="module")
def with_vectors(pgvector: Postgres, model_dir: Path) -> Iterator[Served]:  # noqa: F811
    dsn = pgvector.new_database()
    assert migrate(dsn)["vectors"] is True
    token = _seed(dsn)
    with serve(create_app(ServerConfig(dsn=dsn, secret=SECRET, embed=_model(model_dir)))) as url:
        yield Served(url, dsn, token)


def test_migrate_creates_the_vector_column_and_index_once(pgvector: Postgres) -> None:
    dsn = pgvector.new_database()
    first, again = migrate(dsn), migrate(dsn)
    assert first["vectors"] is True and again["vectors"] is True and again["applied"] == []
    with psycopg.connect(dsn) as conn:
        kind = conn.execute(
            """SELECT format_type(atttypid, atttypmod) FROM pg_attribute
               WHERE attrelid = 'conversation_contexts'::regclass AND attname = 'embedding'"""
        ).fetchone()
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'contexts_embedding'"
        ).fetchone()
    assert kind == ("vector(384)",)
    assert index is not None and "hnsw" in index[0] and "vector_cosine_ops" in index[0]


def test_pushes_are_embedded_and_recall_finds_by_meaning(with_vectors: Served) -> None:
    for title, summary in DOCS:
        assert with_vectors.push(title, summary).status_code == 201
    with psycopg.connect(with_vectors.dsn) as conn:
        rows = conn.execute(
            "SELECT title, embedding_model, vector_dims(embedding) FROM conversation_contexts ORDER BY id"
        ).fetchall()
    assert rows == [(t, MODEL_NAME, 384) for t, _ in DOCS]
    hits = with_vectors.recall(QUERY)
    assert hits and hits[0]["title"] == "Friday deploys"
    assert hits[0]["text_rank"] == 0 and float(hits[0]["similarity"]) > 0.3  # type: ignore[arg-type]
    assert all(float(hits[0]["similarity"]) > float(h["similarity"]) for h in hits[1:])  # type: ignore[arg-type]
    # A word match still counts: the billing row comes first for its own words.
    assert with_vectors.recall("invoices partitions")[0]["title"] == "Billing storage"
    # The read is audited with the ids, in rank order.
    with psycopg.connect(with_vectors.dsn) as conn:
        detail = conn.execute(
            "SELECT detail FROM audit_log WHERE action = 'read' ORDER BY id LIMIT 1"
        ).fetchone()
    assert detail is not None and detail[0]["q"] == QUERY and detail[0]["ids"] == [h["id"] for h in hits]


def test_vectors_need_a_role_like_everything_else(with_vectors: Served) -> None:
    r = httpx.get(
        with_vectors.url + "/api/conversation-contexts/recall",
        params={"project_id": "someone-elses", "q": QUERY},
        headers=with_vectors.auth,
    )
    assert r.status_code == 404
    bad = {"Authorization": "Bearer trt_not-a-token"}
    r = httpx.get(
        with_vectors.url + "/api/conversation-contexts/recall",
        params={"project_id": P, "q": QUERY},
        headers=bad,
    )
    assert r.status_code == 401


def test_full_text_alone_does_not_find_it(pgvector: Postgres, model_dir: Path) -> None:  # noqa: F811
    """The same rows and query without a model on the server: the meaning match above is the vectors'."""
    dsn = pgvector.new_database()
    migrate(dsn)
    token = _seed(dsn)
    with serve(create_app(ServerConfig(dsn=dsn, secret=SECRET))) as url:
        served = Served(url, dsn, token)
        for title, summary in DOCS:
            assert served.push(title, summary).status_code == 201
        assert served.recall(QUERY) == []
        assert "similarity" not in served.recall("invoices")[0]
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT count(embedding) FROM conversation_contexts").fetchone() == (0,)


def test_without_the_extension_the_server_works_full_text(pgvector: Postgres, model_dir: Path) -> None:  # noqa: F811
    """A role that may not CREATE EXTENSION (as on a managed PostgreSQL without pgvector): migrate
    leaves the schema full-text only, and a server with a model configured still pushes and recalls."""
    dsn = pgvector.new_role_database("plain_owner")
    res = migrate(dsn)
    assert res["vectors"] is False and res["version"] >= 1
    with psycopg.connect(dsn) as conn:
        assert not has_vectors(conn)
        assert conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None
    token = _seed(dsn)
    with serve(create_app(ServerConfig(dsn=dsn, secret=SECRET, embed=_model(model_dir)))) as url:
        served = Served(url, dsn, token)
        assert served.push(*DOCS[1]).status_code == 201
        hits = served.recall("invoices")
        assert [h["title"] for h in hits] == ["Billing storage"] and "similarity" not in hits[0]
        assert served.recall(QUERY) == []


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="counts processes through /proc")
def test_server_run_embeds_with_the_configured_model_in_two_workers(
    pgvector: Postgres,
    model_dir: Path,  # noqa: F811
) -> None:
    """The CLI path: TOTAL_RECALL_EMBED_MODEL_PATH names the model, `--workers 2` forks two server
    processes on one port under a supervisor; they answer, and stopping the supervisor stops them."""
    dsn = pgvector.new_database()
    migrate(dsn)
    token = _seed(dsn)
    env = {"TOTAL_RECALL_EMBED_MODEL_PATH": str(model_dir), "TOTAL_RECALL_EMBED_MODEL": ""}
    with server_process(dsn, SECRET, "--workers", "2", env=env) as (url, proc):
        workers = _children(proc.pid)
        assert len(workers) == 2
        served = Served(url, dsn, token)
        for title, summary in DOCS:
            assert served.push(title, summary).status_code == 201
        for _ in range(6):  # new connections: the kernel hands them to either process
            assert served.recall(QUERY)[0]["title"] == "Friday deploys"
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)


def test_the_server_embeds_only_with_a_named_model_and_vectors_not_off(tmp_path: Path) -> None:
    from lib.settings import Settings
    from total_recall.server.vectors import configured_model

    named = {"TOTAL_RECALL_EMBED_MODEL_PATH": str(tmp_path), "TOTAL_RECALL_HOME": str(tmp_path)}
    assert configured_model(Settings.from_env({"TOTAL_RECALL_HOME": str(tmp_path)})) is None  # no download
    got = configured_model(Settings.from_env(named))
    assert got is not None and got.path == str(tmp_path) and got.name == MODEL_NAME
    assert configured_model(Settings.from_env({**named, "TOTAL_RECALL_VECTORS": "0"})) is None
