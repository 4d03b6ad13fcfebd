"""Retrieval evaluation against a gold file (session hit@k, MRR, record-level hit@5).

Gold rows: {id, query, type, gold_sessions: [...], gold_uuids: [...]}; negatives (no gold sessions)
are reported separately: the score of their best hit, to check abstention.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from index.search import SessionHit, search_messages, search_sessions

SessionSearch = Callable[[sqlite3.Connection, str, int], list[SessionHit]]
MODES = {"fts": False, "hybrid": True}


def evaluate(conn: sqlite3.Connection, gold: Iterable[dict[str, Any]],
             session_search: SessionSearch | None = None, hybrid: bool | None = None) -> dict[str, Any]:
    """hybrid: None = whatever `search` does by default, False = FTS only, True = FTS + vectors."""

    def _sessions(c: sqlite3.Connection, q: str, k: int) -> list[SessionHit]:
        return search_sessions(c, q, limit=k, hybrid=hybrid)

    session_search = session_search or _sessions
    n = 0
    hits = {1: 0, 5: 0, 10: 0}
    rr = 0.0
    rec_n = rec_hit = 0
    misses: list[dict[str, Any]] = []
    negatives: list[float] = []
    by_type: dict[str, list[int]] = {}
    for row in gold:
        q = row["query"]
        want = set(row.get("gold_sessions") or [])
        ranked = session_search(conn, q, 10)
        if not want:
            negatives.append(ranked[0].score if ranked else 0.0)
            continue
        n += 1
        ids = [s.session_id for s in ranked]
        rank = next((i + 1 for i, sid in enumerate(ids) if sid in want), None)
        for k in hits:
            if rank is not None and rank <= k:
                hits[k] += 1
        rr += 1.0 / rank if rank else 0.0
        by_type.setdefault(row.get("type", "?"), []).append(1 if rank == 1 else 0)
        if rank != 1:
            misses.append({"id": row.get("id"), "query": q, "rank": rank})
        uuids = set(row.get("gold_uuids") or [])
        if uuids:
            rec_n += 1
            top = search_messages(conn, q, limit=5, hybrid=hybrid)
            rec_hit += any(h.uuid in uuids for h in top)
    return {
        "questions": n,
        "session_hit@1": round(hits[1] / n, 4) if n else 0.0,
        "session_hit@5": round(hits[5] / n, 4) if n else 0.0,
        "session_hit@10": round(hits[10] / n, 4) if n else 0.0,
        "mrr": round(rr / n, 4) if n else 0.0,
        "record_hit@5": round(rec_hit / rec_n, 4) if rec_n else 0.0,
        "hit@1_by_type": {t: round(sum(v) / len(v), 3) for t, v in sorted(by_type.items())},
        "negatives": len(negatives),
        "negative_top_score_mean": round(sum(negatives) / len(negatives), 3) if negatives else None,
        "misses": misses,
    }


def compare(conn: sqlite3.Connection, gold: Iterable[dict[str, Any]], modes: Iterable[str]) -> dict[str, Any]:
    """{mode: evaluate(...)} for each of 'fts' / 'hybrid' over the same gold rows."""
    rows = list(gold)
    return {m: evaluate(conn, rows, hybrid=MODES[m]) for m in modes}
