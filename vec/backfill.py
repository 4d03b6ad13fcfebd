"""Incremental backfill (V4): embed what the index gained since the last run, resumably.

Watermarks in `vec_meta` (`last_message_id`, `last_extraction_id`) make a run cost only the new
rows; every batch of vectors commits together with its watermark, so an interrupted backfill
resumes where it stopped. Each vector carries a signature of its source row (the message uuid, a
hash of the extraction or of the session title), so rows re-read after a transcript rewrite, or
ids that SQLite reused, are detected and re-embedded instead of pointing at the wrong text.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from index.store import IndexMissing, transaction
from index.store import embeddable as rows_of
from lib import sqlite
from lib.settings import Settings
from vec.driver import connect, unavailable_reason
from vec.embed import MESSAGE_KINDS, METRIC, Embedder, ModelConfig, chunk_text, embedder, model_config
from vec.store import Stamp, Store, VectorsUnavailable, check_stamp, read_stamp

log = logging.getLogger("total_recall.vec")
log.addHandler(logging.NullHandler())

Progress = Callable[[int, int], None]  # (items done, items total)
FLUSH_CHUNKS = 256  # new texts per embedding call and commit
FLUSH_ITEMS = 2048  # items per commit when most chunks reuse stored vectors
PAGE = 500


@dataclass
class BackfillReport:
    model: str = ""
    dim: int = 0
    created: bool = False
    upgraded: bool = False  # an older version's float32 store moved to the current layout
    messages: int = 0  # source rows embedded
    extractions: int = 0
    sessions: int = 0
    vectors_added: int = 0  # items (chunk -> vector); identical chunks share one vector
    embedded: int = 0  # distinct texts embedded (new vectors)
    vectors_removed: int = 0
    embed_s: float = 0.0
    elapsed_s: float = 0.0
    cpu_s: float = 0.0  # CPU time of the whole process (all threads) during the run

    @property
    def texts_per_s(self) -> float:
        return self.embedded / self.embed_s if self.embed_s else 0.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["elapsed_s"] = round(self.elapsed_s, 3)
        d["embed_s"] = round(self.embed_s, 3)
        d["cpu_s"] = round(self.cpu_s, 3)
        d["texts_per_s"] = round(self.texts_per_s, 1)
        return d


def _sig(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()


def text_hash(chunk: str) -> str:
    """Identity of a chunk's text for sharing vectors: the same words with any spacing."""
    return _sig(" ".join(chunk.split()))


class _Run:
    """One backfill pass: buffers chunks, embeds each distinct new text once, commits items, vectors and
    watermarks together."""

    def __init__(
        self, store: Store, emb: Embedder, report: BackfillReport, progress: Progress | None, total: int
    ) -> None:
        self.store, self.emb, self.report, self.progress = store, emb, report, progress
        # kind, ref, chunk, sig, text hash, stored vector (None: one of `texts`, stored at the flush)
        self.items: list[tuple[str, object, int, str | None, str, int | None]] = []
        self.texts: list[str] = []  # distinct texts with no vector yet
        self.new: dict[tuple[str, str], int] = {}  # (kind, text hash) -> position in texts
        self.state: dict[str, object] = {}
        self.done = 0
        self.total = total

    def add(self, kind: str, ref: object, sig: str, text: str) -> None:
        chunks = chunk_text(text)
        for i, chunk in enumerate(chunks):
            key = (kind, text_hash(chunk))
            vid = None if key in self.new else self.store.vector_of(*key)
            if vid is None and key not in self.new:
                self.new[key] = len(self.texts)
                self.texts.append(chunk)
            self.items.append((kind, ref, i, sig, key[1], vid))
        if chunks:  # too short to mean anything: skipped, not counted
            setattr(self.report, kind + "s", getattr(self.report, kind + "s") + 1)
        self.done += 1

    def mark(self, **state: object) -> None:
        """Advance watermarks; they commit with the next batch (after every row before them)."""
        self.state.update(state)
        if len(self.texts) >= FLUSH_CHUNKS or len(self.items) >= FLUSH_ITEMS:
            self.flush()

    def flush(self) -> None:
        if not self.items and not self.state:
            return
        t = time.perf_counter()
        vecs = self.emb.embed(self.texts)
        self.report.embed_s += time.perf_counter() - t
        store = self.store
        with transaction(store.conn):
            keys = list(self.new)
            ids = dict(zip(keys, store.add_vectors([kind for kind, _ in keys], vecs)))
            store.add_items(
                [
                    (kind, ref, chunk, sig, ids[(kind, h)] if vid is None else vid, h)
                    for kind, ref, chunk, sig, h, vid in self.items
                ]
            )
            for k, v in self.state.items():
                store.set(k, v)
        self.report.vectors_added += len(self.items)
        self.report.embedded += len(self.texts)
        self.items, self.texts, self.new, self.state = [], [], {}, {}
        if self.progress:
            self.progress(self.done, self.total)


def _row_sig(conn: Any, kind: str, rid: object) -> str | None:
    if kind == "message":
        return rows_of.message_uuid(conn, rid)
    content = rows_of.extraction_content(conn, rid)
    return None if content is None else _sig(content)


def _repair(store: Store, kind: str) -> None:
    """If the row at the watermark is gone or changed, ids below it may have been reused (a
    transcript was re-read from the start): drop vectors whose source row changed and rescan from
    the beginning (rows that still have current vectors are skipped, so nothing is re-embedded)."""
    conn, key = store.conn, f"last_{kind}_id"
    last = int(store.get(key, "0") or 0)
    if not last or _row_sig(conn, kind, last) == store.get(key + "_sig"):
        return
    items = conn.execute("SELECT id, ref_id, sig FROM vec_items WHERE ref_kind=?", (kind,)).fetchall()
    stale = [vid for vid, ref, sig in items if _row_sig(conn, kind, ref) != sig]
    with transaction(conn):
        store.drop_items(stale)
        store.set(key, 0)
    log.info("vector store: %s rows changed under the watermark; %d stale vectors dropped", kind, len(stale))


def _current(store: Store, kind: str, rows: list[tuple[int, str, str]]) -> set[int]:
    """Ids among (id, sig, text) rows that already have a vector of the same signature."""
    have = store.sigs(kind, [r[0] for r in rows])
    return {rid for rid, sig, _ in rows if sig in have.get(rid, ())}


def _messages(conn: Any, store: Store, after: int, hi: int) -> Iterator[tuple[int, str, str]]:
    """(id, uuid, text) of embeddable messages in (after, hi] that have no current vector."""
    while True:
        rows = rows_of.messages_after(conn, after, hi, MESSAGE_KINDS, PAGE)
        done = _current(store, "message", rows)
        yield from (r for r in rows if r[0] not in done)
        if len(rows) < PAGE:
            return
        after = rows[-1][0]


def _extractions(conn: Any, store: Store, after: int, hi: int) -> Iterator[tuple[int, str, str]]:
    """(id, signature, content) of extractions in (after, hi] that have no current vector."""
    while True:
        page = rows_of.extractions_after(conn, after, hi, PAGE)
        rows = [(rid, _sig(content), content) for rid, content in page]
        done = _current(store, "extraction", rows)
        yield from (r for r in rows if r[0] not in done)
        if len(page) < PAGE:
            return
        after = page[-1][0]


def _pending(conn: Any, store: Store) -> int:
    m, e = rows_of.count_after(
        conn,
        int(store.get("last_message_id", "0") or 0),
        int(store.get("last_extraction_id", "0") or 0),
        MESSAGE_KINDS,
    )
    return m + e


def backfill(
    db: Path, cfg: ModelConfig, progress: Progress | None = None, create: bool = True
) -> BackfillReport:
    """Embed everything new since the last run (creating and stamping the store if needed)."""
    if not db.exists():
        raise IndexMissing(f"no index at {db}")
    started, cpu = time.perf_counter(), time.process_time()
    emb = embedder(cfg)
    conn = connect(db)
    report = BackfillReport(model=cfg.name)
    try:
        store = Store(conn)
        stamp = store.stamp()
        if stamp is None:
            if not create:
                check_stamp(None, cfg.name)
            stamp = Stamp(cfg.name, emb.dim, METRIC)
            store.create(stamp)
            report.created = True
        check_stamp(stamp, cfg.name)
        report.upgraded = store.upgrade()
        report.dim = stamp.dim
        _repair(store, "message")
        _repair(store, "extraction")
        run = _Run(store, emb, report, progress, _pending(conn, store))
        if progress:
            progress(0, run.total)
        hi_m, hi_m_uuid = rows_of.last_message(conn)
        for rid, uuid, text in _messages(conn, store, int(store.get("last_message_id", "0") or 0), hi_m):
            run.add("message", rid, uuid, text)
            run.mark(last_message_id=rid, last_message_id_sig=uuid)
        run.mark(last_message_id=hi_m, last_message_id_sig=hi_m_uuid)
        hi_e = rows_of.last_extraction_id(conn)
        for rid, sig, text in _extractions(conn, store, int(store.get("last_extraction_id", "0") or 0), hi_e):
            run.add("extraction", rid, sig, text)
            run.mark(last_extraction_id=rid, last_extraction_id_sig=sig)
        hi_sig = _row_sig(conn, "extraction", hi_e) if hi_e else ""
        run.mark(last_extraction_id=hi_e, last_extraction_id_sig=hi_sig)
        _sessions(conn, store, run)
        run.flush()
        report.vectors_removed += _prune(store)
    finally:
        conn.close()
    report.elapsed_s = time.perf_counter() - started
    report.cpu_s = time.process_time() - cpu
    return report


def _sessions(conn: Any, store: Store, run: _Run) -> None:
    """Session titles: embed new ones, re-embed changed ones (titles improve as summaries arrive)."""
    have = store.session_sigs()
    changed = []
    for sid, title in rows_of.session_titles(conn):
        sig = _sig(title)
        if have.get(sid) != sig:
            changed.append((sid, sig, title))
    if not changed:
        return
    stale = [sid for sid, _, _ in changed if sid in have]
    if stale:
        with transaction(conn):
            run.report.vectors_removed += store.remove("session", stale)
    run.total += len(changed)
    for sid, sig, title in changed:
        run.add("session", sid, sig, title)
        if len(run.texts) >= FLUSH_CHUNKS or len(run.items) >= FLUSH_ITEMS:
            run.flush()


def _prune(store: Store) -> int:
    conn = store.conn
    with transaction(conn):
        n = store.prune()
    return n


def rebuild(db: Path, cfg: ModelConfig, progress: Progress | None = None) -> BackfillReport:
    """Drop the store and embed everything again with the configured model."""
    conn = connect(db)
    try:
        Store(conn).drop()
    finally:
        conn.close()
    return backfill(db, cfg, progress)


def store_exists(db: Path) -> bool:
    """Cheap check with the stdlib driver (no extension needed to read vec_meta)."""
    if not db.exists():
        return False
    conn = sqlite.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return read_stamp(conn) is not None
    finally:
        conn.close()


def after_index(db: Path, settings: Settings) -> BackfillReport | None:
    """Called at the end of an index run that added rows: keep an existing store current (or create
    one when TOTAL_RECALL_VECTORS=1). Never fails the index run; problems are logged."""
    if settings.vectors == "off" or unavailable_reason() is not None:
        return None
    try:
        if settings.vectors != "on" and not store_exists(db):
            return None
        return backfill(db, model_config(settings))
    except Exception as exc:
        log.warning("vector backfill after indexing failed: %s", exc)
        return None


def prune_deleted(db: Path) -> int:
    """Drop the vectors of deleted rows (embeddings are derived from the text); -1 when a vector store
    exists but cannot be opened here (the `vec` extra is not installed)."""
    if not store_exists(db):
        return 0
    try:
        conn = connect(db)
    except VectorsUnavailable:
        return -1
    try:
        conn.execute("PRAGMA secure_delete=ON")
        Store(conn).upgrade()  # an older version's layout: moved first, so the deletes find their tables
        with transaction(conn):
            n = Store(conn).prune()
    finally:
        conn.close()
    return n
