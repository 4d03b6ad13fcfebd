"""Vectors shared by identical chunks (issue 18): embedded once, found for every row that says it,
kept while any of those rows is, and stores made before sharing keep working after an in-place upgrade.
Uses the real small test model of tests/test_vec.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_vec import cfg, current, model_dir, registered, vec_env, write_session  # noqa: F401  (fixtures)
from test_vec_old_store import to_float32_layout

from index.store.db import open_existing_writer, open_reader
from index.store.ingest import run_index
from index.store.manage import forget
from vec import driver as vdriver
from vec import hybrid
from vec.backfill import backfill
from vec.embed import GROUP, INT8_GROUP, WORKERS, embedder
from vec.store import Store

REPEATED = (
    "The nightly backup job failed because the disk quota on the archive volume was exhausted.",
    "I raised the quota to 2 TB and added an alert when the archive volume passes 80 percent.",
)


@pytest.fixture()
def repeated(tmp_path: Path) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    """Two sessions (another project, as a continued session would be) repeating one exchange, and one
    unrelated session."""
    root = tmp_path / "projects"
    ids = {
        "first": write_session(root, "first", "/home/dev/projects/ops", [REPEATED]),
        "again": write_session(root, "again", "/home/dev/projects/ops-copy", [REPEATED]),
        "other": write_session(
            root,
            "other",
            "/home/dev/projects/web",
            [("Make the login button blue.", "The login button now uses the brand blue colour.")],
        ),
    }
    db = tmp_path / "index.db"
    run_index(db, [root])
    yield db, root, ids


def _vec(db: Path) -> Any:
    return vdriver.connect(db)


def _counts(db: Path) -> tuple[int, int, int]:
    """(items, distinct vector ids the items use, vectors stored), checking both vector tables agree."""
    conn = _vec(db)
    try:
        items, used = conn.execute("SELECT count(*), count(DISTINCT vec_id) FROM vec_items").fetchone()
        rows = conn.execute("SELECT count(*) FROM vec_floats").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM vec_bits").fetchone()[0] == rows
    finally:
        conn.close()
    return int(items), int(used), int(rows)


def _message_vectors(db: Path, sid: str) -> set[int]:
    conn = _vec(db)
    try:
        return {
            r[0]
            for r in conn.execute(
                "SELECT v.vec_id FROM vec_items v JOIN messages m ON m.id = v.ref_id "
                "WHERE v.ref_kind='message' AND m.session_id=?",
                (sid,),
            )
        }
    finally:
        conn.close()


def _message_sessions(db: Path, query: str) -> set[str]:
    hits = hybrid.semantic(open_reader(db), query, current(), limit=10, kinds=("message",))
    return {h["session_id"] for h in hits if h["similarity"] > 0.5}


@pytest.mark.usefixtures("vec_env")
def test_identical_chunks_share_one_vector(
    repeated: tuple[Path, Path, dict[str, str]],
) -> None:
    db, _, ids = repeated
    rep = backfill(db, cfg())
    assert rep.messages == 6
    items, used, rows = _counts(db)
    # the repeated prompt and answer (and what was extracted from them) are embedded once for both
    assert items == rep.vectors_added and used == rows == rep.embedded <= items - 2
    assert _message_vectors(db, ids["first"]) == _message_vectors(db, ids["again"])
    assert len(_message_vectors(db, ids["first"])) == 2
    assert {ids["first"], ids["again"]} <= _message_sessions(db, "backup failed, disk quota full")


@pytest.mark.usefixtures("vec_env")
def test_a_shared_vector_lives_while_any_row_uses_it(
    repeated: tuple[Path, Path, dict[str, str]],
) -> None:
    db, _, ids = repeated
    backfill(db, cfg())
    items, _, rows = _counts(db)
    w = open_existing_writer(db)
    forget(w, db, [ids["first"]])
    w.close()
    hybrid.reset()
    left_items, used, left_rows = _counts(db)
    # the shared vectors stay for the other session
    assert left_items < items and left_rows == used == rows and _message_vectors(db, ids["again"])
    found = _message_sessions(db, "backup failed, disk quota full")
    assert ids["again"] in found and ids["first"] not in found
    w = open_existing_writer(db)
    forget(w, db, [ids["again"]])
    w.close()
    hybrid.reset()
    _, used, left_rows = _counts(db)
    assert left_rows == used  # no vector is left without an item
    assert not {ids["first"], ids["again"]} & _message_sessions(db, "backup failed, disk quota full")


@pytest.mark.usefixtures("vec_env")
def test_a_store_from_before_sharing_is_searched_then_upgraded(
    repeated: tuple[Path, Path, dict[str, str]],
) -> None:
    db, root, ids = repeated
    backfill(db, cfg())
    to_float32_layout(db, "before sharing")
    conn = _vec(db)
    assert not Store(conn).shares_vectors()
    conn.close()
    assert {ids["first"], ids["again"]} <= _message_sessions(db, "backup failed, disk quota full")
    hybrid.reset()
    write_session(root, "third", "/home/dev/projects/ops-third", [REPEATED])
    run_index(db, [root])  # the store exists: indexing backfills it, upgrading it first
    conn = _vec(db)
    assert Store(conn).shares_vectors()
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name='vec_index'").fetchone()[0] == 0
    conn.close()
    items, used, rows = _counts(db)
    assert used == rows  # old items kept their own vectors; the new ones are stored too
    found = _message_sessions(db, "backup failed, disk quota full")
    assert {ids["first"], ids["again"]} <= found and len(found) == 3
    assert backfill(db, cfg()).vectors_added == 0


@pytest.mark.usefixtures("vec_env")
def test_parallel_embedding_keeps_each_text_with_its_vector() -> None:
    texts = [
        f"note {i}: " + "the build " * (i % 7) + ("passed" if i % 2 else "failed badly") for i in range(80)
    ]
    assert len(texts) > GROUP * WORKERS
    emb = embedder(cfg())
    together = emb.embed(texts)
    local, size = emb._local, {}
    for emb._local, most in ((local, INT8_GROUP), ("", GROUP)):  # the int8 copy; a float model
        groups = emb._groups(texts)
        assert sorted(i for g in groups for i in g) == list(range(len(texts)))
        for g in groups:  # one model call embeds texts of one token count: nothing is padded
            assert len(g) <= most and len({len(emb._counter.encode(texts[i]).ids) for i in g}) == 1
        size[most] = len(groups)
    emb._local = local
    assert size[INT8_GROUP] == len(texts) and size[GROUP] < len(texts) / 4
    for i in (0, 5, 11, 22, 79):  # a text's vector does not depend on the texts embedded with it
        alone = emb.embed([texts[i]])[0]
        assert float(together[i] @ alone) > 0.9999


@pytest.mark.usefixtures("vec_env")
def test_knn_gives_k_rows_when_copies_share_a_vector(repeated: tuple[Path, Path, dict[str, str]]) -> None:
    """Fusion gets k rows, as before sharing: not k vectors times every copy of their text."""
    db, _, ids = repeated
    backfill(db, cfg())
    query = embedder(cfg()).embed_query(REPEATED[0])
    conn = _vec(db)
    try:
        one = Store(conn).knn(query, 1, ("message",))
        two = Store(conn).knn(query, 2, ("message",))
    finally:
        conn.close()
    assert len(one) == 1 and len(two) == 2
    assert two[0][3] == two[1][3] < 0.01  # the same text in both sessions, nearest first
    assert one[0][1] == two[0][1]
