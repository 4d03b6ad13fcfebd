"""Retrieval evaluation against gold files: session hit@k, MRR, record hit@5, per source, abstention.

Gold rows: {id, query, type, gold_sessions: [...], gold_uuids: [...], evidence_file}; negatives (no
gold sessions) are not counted in hit@k but measure abstention: how well the top hit's score
separates them from answerable questions. Each question belongs to a source (its repository when a
provenance map is given, else the project of its first gold session), so a ranking change that helps
one source and hurts another shows up (issue 11: measure generalisation, not fit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from index.retrieval.search import SessionHit, search_messages, search_sessions
from lib import sqlite

SessionSearch = Callable[[sqlite.Connection, str, int], list[SessionHit]]
MODES = {"fts": False, "hybrid": True}
NEGATIVE = "(negative)"


@dataclass(slots=True)
class Outcome:
    """One question's result."""

    id: Any
    query: str
    source: str
    type: str
    negative: bool
    rank: int | None = None  # of the first gold session among the distinct sessions returned
    record_hit: bool | None = None  # a gold record among the first 5 messages (None: no gold uuids)
    top_score: float = 0.0  # score of the best message of the top session (abstention)


def source_of(conn: sqlite.Connection, row: Mapping[str, Any], provenance: Mapping[str, str] | None) -> str:
    """The question's repository (provenance: evidence file -> repo), else its gold session's project."""
    golds = row.get("gold_sessions") or []
    if not golds:
        return NEGATIVE
    if provenance and row.get("evidence_file") in provenance:
        return provenance[row["evidence_file"]]
    got = conn.execute("SELECT project_key FROM sessions WHERE session_id=?", (golds[0],)).fetchone()
    return str(got[0]).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] if got and got[0] else "?"


def run_questions(
    conn: sqlite.Connection,
    gold: Iterable[Mapping[str, Any]],
    hybrid: bool | None = None,
    session_search: SessionSearch | None = None,
    provenance: Mapping[str, str] | None = None,
) -> list[Outcome]:
    """hybrid: None = whatever `search` does by default, False = FTS only, True = FTS + vectors."""

    def _sessions(c: sqlite.Connection, q: str, k: int) -> list[SessionHit]:
        return search_sessions(c, q, limit=k, hybrid=hybrid)

    search = session_search or _sessions
    out = []
    for row in gold:
        q = row["query"]
        want = set(row.get("gold_sessions") or [])
        ranked = search(conn, q, 10)
        o = Outcome(row.get("id"), q, source_of(conn, row, provenance), row.get("type", "?"), not want)
        o.top_score = ranked[0].hits[0].score if ranked and ranked[0].hits else 0.0
        if want:
            o.rank = next((i + 1 for i, s in enumerate(ranked) if s.session_id in want), None)
            uuids = set(row.get("gold_uuids") or [])
            if uuids:
                o.record_hit = any(h.uuid in uuids for h in search_messages(conn, q, limit=5, hybrid=hybrid))
        out.append(o)
    return out


def summarise(outcomes: list[Outcome]) -> dict[str, Any]:
    """hit@1/5/10, MRR and record hit@5 over the answerable questions of `outcomes`."""
    pos = [o for o in outcomes if not o.negative]
    n = len(pos)
    rec = [o.record_hit for o in pos if o.record_hit is not None]

    def share(xs: list[bool]) -> float:
        return round(sum(xs) / len(xs), 4) if xs else 0.0

    by_type: dict[str, list[bool]] = {}
    for o in pos:
        by_type.setdefault(o.type, []).append(o.rank == 1)
    return {
        "questions": n,
        "session_hit@1": share([o.rank == 1 for o in pos]),
        "session_hit@5": share([o.rank is not None and o.rank <= 5 for o in pos]),
        "session_hit@10": share([o.rank is not None and o.rank <= 10 for o in pos]),
        "mrr": round(sum(1.0 / o.rank for o in pos if o.rank) / n, 4) if n else 0.0,
        "record_hit@5": share(rec),
        "hit@1_by_type": {t: round(sum(v) / len(v), 3) for t, v in sorted(by_type.items())},
    }


def abstention(outcomes: list[Outcome]) -> dict[str, Any]:
    """How well the top hit's score separates negatives from answerable questions: AUC (1.0 = every
    answerable question scores above every negative, 0.5 = chance) and the share of negatives a
    threshold keeping 90 % of answerable questions would reject."""
    neg = [o.top_score for o in outcomes if o.negative]
    pos = sorted(o.top_score for o in outcomes if not o.negative)
    if not neg or not pos:
        return {"negatives": len(neg)}
    wins = sum((p > x) + 0.5 * (p == x) for p in pos for x in neg)
    cut = pos[int(0.1 * (len(pos) - 1))]
    return {
        "negatives": len(neg),
        "auc": round(wins / (len(pos) * len(neg)), 3),
        "negative_top_score_mean": round(sum(neg) / len(neg), 2),
        "answerable_top_score_median": round(pos[len(pos) // 2], 2),
        "negatives_rejected_at_90pct_recall": round(sum(x < cut for x in neg) / len(neg), 3),
    }


def report(outcomes: list[Outcome]) -> dict[str, Any]:
    """Overall figures, the same per source, the worst source, abstention and the misses."""
    sources = sorted({o.source for o in outcomes if not o.negative})
    per = {s: summarise([o for o in outcomes if o.source == s]) for s in sources}
    worst = min(sources, key=lambda s: (per[s]["session_hit@1"], per[s]["record_hit@5"]), default=None)
    return {
        **summarise(outcomes),
        "by_source": per,
        "worst_source": worst,
        "abstention": abstention(outcomes),
        "misses": [
            {"id": o.id, "query": o.query, "rank": o.rank, "source": o.source}
            for o in outcomes
            if not o.negative and o.rank != 1
        ],
    }


def evaluate(
    conn: sqlite.Connection,
    gold: Iterable[Mapping[str, Any]],
    session_search: SessionSearch | None = None,
    hybrid: bool | None = None,
    provenance: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """`report` of one gold set on one index."""
    return report(run_questions(conn, gold, hybrid, session_search, provenance))
