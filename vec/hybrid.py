"""Hybrid ranking (V3): reciprocal rank fusion of the FTS ranking with vector neighbours.

Registered with index/ as its vector plugin (`vec.register(settings)`, index/store/plugins.py), `index/retrieval/search.py`
calls `prefetch()` before its FTS query (the query embedding and the KNN scan run in a worker thread
meanwhile), then `fuse()` on its bm25 ranking of `Candidate` rows:
- messages: plain RRF (k=60) of the FTS order and the nearest messages' order, times a promotion
  for rows quoting the query's identifiers verbatim (top-5 lists gain from interleaving sources);
- sessions (`fuse_sessions`): RRF over score-gap ranks of the FTS session scores and each session's
  nearest vector (message, extraction or title) — deciding the top session needs to know how
  decisively each source prefers it, which positions alone cannot tell. One rank is 0.05 in both
  lists (relative FTS score, cosine): a finer cosine step let vectors outvote clear FTS leaders.
In auto mode (`hybrid=None`) vectors are used only when the driver, sqlite-vec and fastembed are
installed and the DB holds a store stamped with the configured model; any failure then falls back to
the FTS ranking, logging one line on the `total_recall.vec` logger.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from index.retrieval import candidates_by_id, row_text
from index.store import Candidate, Filters, Query, Ranked, db_file
from index.store import embeddable as rows_of
from lib.settings import Settings
from vec.driver import connect, unavailable_reason
from vec.embed import chunk_text, embedder, model_config
from vec.errors import VecError
from vec.store import (
    KINDS,
    OLD_LAYOUT,
    UPGRADE,
    NoStore,
    Store,
    VectorsUnavailable,
    check_stamp,
    old_layout,
    read_stamp,
)

log = logging.getLogger("total_recall.vec")
log.addHandler(logging.NullHandler())  # silent unless the application configures logging

RRF_K = 60  # the usual reciprocal-rank constant: flattens the head so neither list dominates
W_FTS = 1.0
W_VEC = 1.0
VEC_K = 200  # nearest chunks to fetch (all kinds)
VEC_MESSAGES = 50  # distinct messages taken from them into the fused message ranking
MAX_DISTANCE = 0.75  # cosine distance beyond which a neighbour is noise, not meaning
FTS_STEP = 0.05  # session fusion: 5 % of the best FTS session score = one rank
VEC_STEP = 0.05  # session fusion: 0.05 cosine similarity = one rank (docs/eval.md: both dev sets)
EXACT_BONUS = 0.5  # x(1 + bonus * share of the query's identifiers found verbatim)

_conns: dict[str, Any] = {}
_recent: dict[tuple[Any, ...], tuple[float, list[tuple[str, Any, int, float]]]] = {}
_pending: dict[tuple[Any, ...], Future[list[tuple[str, Any, int, float]]]] = {}
_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()
_logged: set[str] = set()


def _log_once(msg: str) -> None:
    if msg not in _logged:
        _logged.add(msg)
        log.warning(msg)


def enabled(conn: Any, settings: Settings) -> bool:
    """Auto mode: is there a usable store for the configured model? (cheap; no model load)."""
    if settings.vectors == "off" or unavailable_reason() is not None:
        return False
    stamp = read_stamp(conn)
    if stamp is None:
        return False
    model = model_config(settings).name
    if stamp.model != model:
        _log_once(
            f"vector store is stamped for {stamp.model}, configured model is {model}: "
            f"using full-text ranking only (run `total-recall vec rebuild`)"
        )
        return False
    return True


def _reader(path: str) -> Any:
    """The cached reader of the index at `path` with sqlite-vec loaded, opened once on the caller's
    thread before any worker runs (`prefetch`), and kept. It comes from the process's one SQLite
    library (lib/sqlite.py), like the caller's own connection."""
    if not path:
        raise VectorsUnavailable("vectors need an on-disk index")
    with _lock:
        vconn = _conns.get(path)
        if vconn is None:
            vconn = connect(Path(path), readonly=True)
            vconn.execute("PRAGMA mmap_size=268435456")  # the KNN scan reads every vector
            _conns[path] = vconn
    return vconn


def _search(
    path: str, text: str, kinds: Sequence[str], k: int, settings: Settings
) -> list[tuple[str, Any, int, float]]:
    vconn = _reader(path)
    cfg = model_config(settings)
    with _lock:
        check_stamp(read_stamp(vconn), cfg.name)
        if old_layout(vconn):  # searched all the same, exactly; say once how to make it fast
            _log_once(f"{OLD_LAYOUT}: {UPGRADE}")
    query = embedder(cfg).embed_query(text)
    with _lock:
        return Store(vconn).knn(query, k, kinds)


def nearest(
    conn: Any, text: str, settings: Settings, kinds: Sequence[str] = KINDS, k: int = VEC_K
) -> list[tuple[str, Any, int, float]]:
    """(ref_kind, ref_id, chunk, distance) nearest to `text`; raises NoStore / StampMismatch / VecError.

    Uses the answer `prefetch` started, or one computed in the last seconds (message and session
    fusion of one query embed it once)."""
    path = db_file(conn)
    key = (path, text, tuple(kinds), k)
    with _lock:
        fut = _pending.pop(key, None)
        hit = _recent.get(key)
    if fut is not None:
        out = fut.result()
    elif hit and time.monotonic() - hit[0] < 5.0:
        return hit[1]
    else:
        out = _search(path, text, kinds, k, settings)
    with _lock:
        _recent[key] = (time.monotonic(), out)
        while len(_recent) > 16:
            _recent.pop(next(iter(_recent)))
    return out


def prefetch(conn: Any, text: str, settings: Settings, explicit: bool = False) -> None:
    """Start the query embedding and KNN in a worker thread while the caller runs its FTS query
    (onnxruntime and SQLite both release the GIL, so the two overlap on a multi-core machine)."""
    global _pool
    try:
        if not explicit and not enabled(conn, settings):
            return
        path = db_file(conn)
    except Exception:  # nothing started: fuse() will meet (and handle) the same problem
        return
    key = (path, text, KINDS, VEC_K)
    try:
        _reader(path)  # here, not in the worker thread while the caller reads the index (see _reader)
    except Exception:  # nothing started: fuse() will meet (and handle) the same problem
        return
    with _lock:
        if key in _pending or not path:
            return
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="total-recall-vec")
        _pending[key] = _pool.submit(_search, path, text, KINDS, VEC_K, settings)
        while len(_pending) > 8:  # prefetched but never collected (the search returned early)
            _pending.pop(next(iter(_pending)))


def _by_source(near: list[tuple[str, Any, int, float]], kind: str) -> list[tuple[Any, float]]:
    """Distinct source rows of one kind, nearest first: [(ref_id, similarity)]."""
    seen: dict[Any, float] = {}
    for ref_kind, ref, _, dist in near:
        if ref_kind == kind and dist <= MAX_DISTANCE and ref not in seen:
            seen[ref] = 1.0 - dist
    return list(seen.items())


def vector_ranking(
    conn: Any, text: str, kind: str, settings: Settings, k: int = VEC_K
) -> list[tuple[Any, float]]:
    """Distinct source rows of one kind, nearest first: [(ref_id, similarity)]."""
    return _by_source(nearest(conn, text, settings, (kind,), k), kind)


def rrf(rankings: Sequence[Sequence[Any]], weights: Sequence[float] | None = None) -> dict[Any, float]:
    """Reciprocal rank fusion: sum of w / (RRF_K + rank), scaled so rank 1 in one list scores w."""
    weights = weights or [1.0] * len(rankings)
    out: dict[Any, float] = {}
    for ranking, w in zip(rankings, weights):
        for pos, key in enumerate(ranking, 1):
            out[key] = out.get(key, 0.0) + w * (RRF_K + 1) / (RRF_K + pos)
    return out


def exact_factor(text: str, wanted: Sequence[str]) -> float:
    """Exact-identifier promotion: rows quoting the query's identifiers (`identifiers(q)`) verbatim
    rank higher, in proportion to how many of them they contain."""
    if not wanted:
        return 1.0
    low = text.lower()
    return 1.0 + EXACT_BONUS * sum(1 for e in wanted if e in low) / len(wanted)


def identifiers(q: Query) -> list[str]:
    return [e.lower() for e in q.exact if len(e) > 2]


def fuse(
    conn: Any, text: str, q: Query, f: Filters, ranked: Ranked, settings: Settings, explicit: bool = False
) -> Ranked:
    """FTS ranking + message vectors -> one fused ranking (same row shape, new scores).

    explicit=False (auto): no store / other model / any error -> `ranked` unchanged (logged once).
    explicit=True: the caller asked for vectors, so problems raise (VecError with a fix).
    """
    if not explicit and not enabled(conn, settings):
        return ranked
    try:
        near = _by_source(nearest(conn, text, settings), "message")
    except Exception as exc:
        _failed(exc, explicit)
        return ranked
    return _fuse_rows(conn, q, f, ranked, near)


def _failed(exc: Exception, explicit: bool) -> None:
    """Explicit hybrid: raise with a fix. Auto: log one line, the caller keeps the FTS ranking."""
    if explicit:
        if isinstance(exc, VecError):
            raise exc
        raise VecError(f"vector search failed: {exc}") from exc
    _log_once(
        f"vector search unavailable, using full-text ranking only: {exc}"
        + (f" ({exc.fix})" if isinstance(exc, VecError) and exc.fix else "")
    )


def fuse_ids(
    conn: Any,
    text: str,
    fts_ids: Sequence[Any],
    settings: Settings,
    kind: str = "extraction",
    explicit: bool = False,
) -> list[Any] | None:
    """RRF of an FTS-ranked id list with the vector neighbours of one kind (e.g. `recall` over
    extractions). Returns the fused id order (vector-only ids included: the caller applies its own
    scope filters to them), or None when vectors are off or failed (keep the FTS order)."""
    if not explicit and not enabled(conn, settings):
        return None
    try:
        near = [ref for ref, _ in _by_source(nearest(conn, text, settings), kind)]
    except Exception as exc:
        _failed(exc, explicit)
        return None
    scores = rrf([list(fts_ids), near], [W_FTS, W_VEC])
    return sorted(scores, key=lambda i: -scores[i])


def _fuse_rows(conn: Any, q: Query, f: Filters, ranked: Ranked, near: list[tuple[Any, float]]) -> Ranked:
    rows: dict[int, Candidate] = {}
    fts_order: list[int] = []
    for _, r in ranked:
        if r.id not in rows:
            rows[r.id] = r
            fts_order.append(r.id)
    if not f.sql()[0]:
        near = near[:VEC_MESSAGES]  # deeper vector ranks cannot reach the top; filtered searches need them
    missing = [int(ref) for ref, _ in near if int(ref) not in rows]
    for r in candidates_by_id(conn, missing, f):
        rows[r.id] = r
    vec_order = [int(ref) for ref, _ in near if int(ref) in rows]  # rows the filters let through
    scores = rrf([fts_order, vec_order], [W_FTS, W_VEC])
    wanted = identifiers(q)
    if wanted:  # reading every row's text (a decompression each) is the costly part of fusing
        fused = [(s * exact_factor(row_text(rows[i]), wanted), rows[i]) for i, s in scores.items()]
    else:
        fused = [(s, rows[i]) for i, s in scores.items()]
    fused.sort(key=lambda x: -x[0])
    return fused


def fuse_sessions(
    conn: Any,
    text: str,
    totals: dict[str, float],
    candidates: set[str],
    settings: Settings,
    explicit: bool = False,
) -> dict[str, float]:
    """Session ranking: RRF of the FTS session scores and each session's nearest vector (a message,
    an extraction or its title), over score-gap ranks (see `gap_rrf`). Only `candidates` (sessions
    with a message that passed the search filters) are ranked."""
    try:
        near = nearest(conn, text, settings)
        sims: dict[str, float] = {}
        for kind in KINDS:
            owners = rows_of.owners(conn, kind, [ref for ref, _ in _by_source(near, kind)])
            for ref, sim in _by_source(near, kind):
                sid = owners.get(ref)
                if sid in candidates and sim > sims.get(sid, -1.0):
                    sims[sid] = sim
    except Exception as exc:
        _failed(exc, explicit)
        return totals
    return gap_rrf(
        [({s: v for s, v in totals.items() if s in candidates}, FTS_STEP, True), (sims, VEC_STEP, False)]
    )


def gap_rrf(lists: Sequence[tuple[dict[Any, float], float, bool]]) -> dict[Any, float]:
    """RRF whose ranks are measured in score gaps, not positions: an item trailing a list's leader by
    `step` counts as one rank further down (relative steps for bm25-like scores, absolute for cosine).
    Plain RRF scores "second by a hair" and "second by a mile" alike, which decides sessions wrongly
    whenever the two lists disagree on the leader."""
    out: dict[Any, float] = {}
    for scores, step, relative in lists:
        if not scores:
            continue
        top = max(scores.values())
        for key, s in scores.items():
            gap = (1.0 - s / top) if relative and top > 0 else (top - s)
            out[key] = out.get(key, 0.0) + (RRF_K + 1) / (RRF_K + 1 + gap / step)
    return out


def semantic(
    conn: Any, text: str, settings: Settings, limit: int = 10, kinds: Sequence[str] = KINDS
) -> list[dict[str, Any]]:
    """Vector-only search (`total-recall vec search`): nearest chunks, one per source row.
    Refuses (raises) on a missing store or one stamped with another model."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, Any]] = set()
    for kind, ref, chunk, dist in nearest(conn, text, settings, kinds, max(limit * 4, 40)):
        if (kind, ref) in seen:
            continue
        seen.add((kind, ref))
        hit = rows_of.source(conn, kind, ref)
        if hit is None:
            continue
        if kind == "message":  # the chunk that matched, not the whole message
            parts = chunk_text(hit["text"])
            hit["text"] = parts[chunk] if chunk < len(parts) else hit["text"][:500]
        out.append({"ref_kind": kind, "ref_id": ref, "similarity": round(1.0 - dist, 4), **hit})
        if len(out) >= limit:
            break
    return out


def clear_cache() -> None:
    """Forget recent query answers (benchmarks, or after the store changed under a long process)."""
    with _lock:
        _recent.clear()


def reset() -> None:
    """Close cached vector connections (tests, `vec rebuild`)."""
    with _lock:
        running = list(_pending.values())
    for fut in running:
        fut.exception()  # wait; a failure no longer matters
    with _lock:
        for c in _conns.values():
            c.close()
        _conns.clear()
        _recent.clear()
        _pending.clear()
        _logged.clear()


__all__ = [
    "NoStore",
    "clear_cache",
    "enabled",
    "exact_factor",
    "fuse",
    "fuse_ids",
    "fuse_sessions",
    "gap_rrf",
    "identifiers",
    "nearest",
    "prefetch",
    "reset",
    "rrf",
    "semantic",
    "vector_ranking",
]
