"""A vector store an older total-recall wrote, its float32 vectors in a `vec0` table `vec_index` (before
vectors were shared, or shared but before the one-bit scan), is told apart on open: it is searched
exactly as it is (same answers, no crash), `vec status`, `status` and `doctor` say to run
`vec backfill`, and that backfill (or a `forget`, before it deletes) moves it to the current layout in
place without embedding anything again. Uses the real small test model of tests/test_vec.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_vec import TOPICS, cfg, current, model_dir, registered, vec_env, write_session  # noqa: F401  (fixtures)

from index.stats import status
from index.store.db import open_existing_writer, open_reader
from index.store.ingest import run_index
from index.store.manage import forget
from total_recall.cli import cli
from total_recall.cmd_doctor import _vector_store_check
from vec import driver as vdriver
from vec import hybrid
from vec.backfill import backfill
from vec.store import Store, old_layout

LAYOUTS = ("before sharing", "before the one-bit scan")
OldStore = tuple[Path, Path, dict[str, str], list[Any]]  # db, transcripts, session ids, answers before
pytestmark = [
    pytest.mark.usefixtures("vec_env"),
    pytest.mark.parametrize("old_store", LAYOUTS, indirect=True),
]
QUERIES = (
    "my car battery died in the cold",
    "reproducible builds with pinned versions",
    "YAML tabs break parsing",
)


def to_float32_layout(db: Path, layout: str) -> None:
    """Rewrite the store as an older version left it: the float32 vectors in a vec0 `vec_index`
    (cosine), no vec_floats or vec_bits; before sharing, rowid = vec_items.id and no vec_id/hash."""
    conn = vdriver.connect(db)
    with conn:
        shared = layout == "before the one-bit scan"
        key = "i.vec_id" if shared else "i.id"
        rows = conn.execute(
            f"SELECT DISTINCT {key}, f.embedding, i.ref_kind FROM vec_items i JOIN vec_floats f ON f.id = i.vec_id"
        ).fetchall()
        conn.execute(
            "CREATE VIRTUAL TABLE vec_index USING vec0(embedding float[384] distance_metric=cosine, ref_kind text)"
        )
        conn.executemany("INSERT INTO vec_index(rowid, embedding, ref_kind) VALUES(?,?,?)", rows)
        conn.execute("DROP TABLE vec_bits")
        conn.execute("DROP TABLE vec_floats")
        if not shared:
            conn.execute("CREATE TABLE old AS SELECT id, ref_kind, ref_id, chunk, sig FROM vec_items")
            conn.execute("DROP TABLE vec_items")
            conn.execute(
                """CREATE TABLE vec_items(id INTEGER PRIMARY KEY, ref_kind TEXT NOT NULL,
                   ref_id NOT NULL, chunk INTEGER NOT NULL DEFAULT 0, sig TEXT)"""
            )
            conn.execute("INSERT INTO vec_items SELECT * FROM old")
            conn.execute("DROP TABLE old")
    conn.close()


def _answers(db: Path) -> list[list[tuple[str, Any, float]]]:
    """Each query's nearest rows (kind, id, similarity), as `vec search` ranks them."""
    hybrid.reset()
    conn = open_reader(db)
    return [
        [
            (h["ref_kind"], h["ref_id"], round(h["similarity"], 3))
            for h in hybrid.semantic(conn, q, current(), 5)
        ]
        for q in QUERIES
    ]


def _is_old(db: Path) -> bool:
    conn = open_reader(db)
    try:
        return old_layout(conn)
    finally:
        conn.close()


@pytest.fixture()
def old_store(tmp_path: Path, request: pytest.FixtureRequest) -> OldStore:
    root = tmp_path / "projects"
    ids = {name: write_session(root, name, cwd, turns) for name, cwd, turns in TOPICS}
    db = tmp_path / "index.db"
    run_index(db, [root])
    backfill(db, cfg())
    want = _answers(db)
    to_float32_layout(db, request.param)
    assert _is_old(db)
    return db, root, ids, want


def test_an_old_float32_store_is_searched_reported_then_upgraded_in_place(old_store: OldStore) -> None:
    db, _, _, want = old_store
    assert _answers(db) == want  # the exact float scan: the same answers, no crash

    runner = CliRunner()
    doc = json.loads(runner.invoke(cli, ["--db", str(db), "vec", "status", "--json"]).output)
    assert doc["store"]["layout"] == "old float32" and "vec backfill" in doc["fix"]
    said = runner.invoke(cli, ["--db", str(db), "vec", "status"])
    assert "float32 layout" in said.output and "total-recall vec backfill" in said.output
    assert "old float32 layout" in runner.invoke(cli, ["--db", str(db), "status"]).output
    [check] = _vector_store_check(db)
    assert check["status"] == "warn" and "vec backfill" in check["fix"]

    conn = open_reader(db)
    items = status(conn, db)["vectors"]["vectors"]
    conn.close()
    report = backfill(db, cfg())
    assert report.upgraded and report.embedded == 0 and report.vectors_added == 0  # nothing re-embedded
    assert not _is_old(db)
    conn = vdriver.connect(db)
    try:
        assert Store(conn).shares_vectors()
        n_items, used = conn.execute("SELECT count(*), count(DISTINCT vec_id) FROM vec_items").fetchone()
        assert n_items == items
        assert conn.execute("SELECT count(*) FROM vec_floats").fetchone()[0] == used
        assert conn.execute("SELECT count(*) FROM vec_bits").fetchone()[0] == used
    finally:
        conn.close()
    assert _answers(db) == want
    assert _vector_store_check(db)[0]["status"] == "ok"
    assert "layout" not in runner.invoke(cli, ["--db", str(db), "vec", "status"]).output
    assert not backfill(db, cfg()).upgraded


def test_forget_on_an_old_store_upgrades_it_before_deleting(old_store: OldStore) -> None:
    db, _, ids, want = old_store
    conn = open_reader(db)
    gone = {r[0] for r in conn.execute("SELECT id FROM messages WHERE session_id = ?", (ids["car"],))}
    conn.close()
    assert gone & {ref for kind, ref, _ in want[0] if kind == "message"}  # the car query finds them
    w = open_existing_writer(db)
    forget(w, db, [ids["car"]])
    w.close()
    assert not _is_old(db)
    hits = {row for answer in _answers(db) for row in answer}
    assert hits and not {ref for kind, ref, _ in hits if kind == "message"} & gone
