"""The one search implementation (I7): FTS5 bm25 + kind + recency, filters, snippets, de-duplication.

The FTS candidate rows (AND, then OR of the rare terms) come from index/retrieval/candidates.py; this
module ranks them and turns them into message and session hits.

CLI `search`, the hooks and the MCP tools all call `search_messages` / `search_sessions`; when a vector
plugin is registered (index/store/plugins.py, implemented by vec/), it fuses vector neighbours into the
ranking of `Candidate` rows.

Ranking rewards answers, not volume: tool calls and output weigh less than what the user and the
assistant said; a session is scored by its best message and by its document (index/store/session_docs.py:
title, prompts, assistant text, bm25-saturated and length-normalised), never by how many messages
repeat the query; a message's score is scaled by its session's; copies of a session are listed once.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from index.retrieval.candidates import query_rows, row_text
from index.retrieval.copies import fold_copies
from index.store.filters import Filters, recency
from index.store.fts_query import Query, bounded, parse
from index.store.plugins import Candidate, Ranked, require_vectors
from index.store.session_docs import doc_scores, top_sessions
from index.store.textstore import snippet
from lib import sqlite

# How much a hit of each kind is worth relative to a human prompt or an assistant answer. Tool calls
# and their output are evidence the work happened, not the answer (docs/eval.md: the weights were
# checked on both dev sets, leave one source out).
KIND_WEIGHT = {
    "prompt": 1.0,
    "text": 1.0,
    "away_summary": 0.9,
    "tool_use": 0.6,
    "tool_result": 0.5,
    "agent_prompt": 0.55,
    "command": 0.7,
    "bash_input": 0.7,
    "command_output": 0.5,
    "compact_summary": 0.35,
    "compact_prompt": 0.2,
    "meta": 0.3,
    "system_reminder": 0.2,
    "interrupt": 0.1,
    "api_error": 0.2,
    "compact_boundary": 0.1,
}
RECENCY_HALF_LIFE_DAYS = 180.0
EXACT_BONUS_DEPTH = 150  # exact-identifier promotion looks at this many of the best candidates
TOOL_KINDS = frozenset({"tool_use", "tool_result", "command_output"})
LONG_TOOL_CHARS = 500  # tool text longer than this is worth sqrt(LONG_TOOL_CHARS / length) of its score
LONG_TOOL_DEPTH = 50  # ... among this many of the best candidates (each one read costs an unpack)
# A session's score: (1 - DOC_SHARE) x its best message + DOC_SHARE x its document, each relative to
# the best session of the query (docs/eval.md: leave-one-source-out choice on both dev sets).
DOC_SHARE = 0.3
DOC_DEPTH = 50  # sessions (by best message) whose document is scored
# Sessions ranked by their document first; messages are then searched inside these alone (unfiltered
# searches), so FTS5 scores the matches of a few sessions, not of the whole index.
SESSION_DEPTH = 20


@dataclass(slots=True)
class Hit:
    session_id: str
    uuid: str
    ts: str | None
    role: str
    kind: str
    cwd: str | None
    project: str | None
    snippet: str
    score: float
    source_file: str | None
    is_sidechain: bool = False
    on_main: bool = True
    agent: str = "claude"  # the coding agent the session ran in

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class SessionHit:
    session_id: str
    title: str | None
    project: str | None
    first_ts: str | None
    last_ts: str | None
    score: float
    hits: list[Hit] = field(default_factory=list)
    copies: list[str] = field(default_factory=list)  # sessions folded into this one (nothing new matched)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["hits"] = [h.to_json() for h in self.hits]
        return d


def _rank(rows: list[Candidate], q: Query, now: datetime) -> Ranked:
    scored = []
    for r in rows:
        base = -float(r.rank)  # bm25: lower is better
        w = KIND_WEIGHT.get(r.kind, 0.5)
        if not r.on_main:
            w *= 0.8  # abandoned branch
        scored.append((base * w * recency(r.ts, now, 0.85, RECENCY_HALF_LIFE_DAYS), r))
    scored.sort(key=lambda x: -x[0])
    # Only the leaders can reach the top, so only their text is read: exact identifiers promote a
    # row; long tool output is down-weighted (bm25 normalises length against the table's average,
    # which tool output itself inflates, so a long diff or log repeating the query escapes it).
    exact = [e.lower() for e in q.exact if len(e) > 2]

    def adjust(score: float, r: Candidate) -> float:
        if not exact and r.kind not in TOOL_KINDS:
            return score
        text = row_text(r)
        if r.kind in TOOL_KINDS and len(text) > LONG_TOOL_CHARS:
            score *= math.sqrt(LONG_TOOL_CHARS / len(text))
        if exact:
            low = text.lower()
            score *= 1.0 + 0.25 * sum(1 for e in exact if e in low)
        return score

    depth = EXACT_BONUS_DEPTH if exact else LONG_TOOL_DEPTH
    head = [(adjust(sc, r), r) for sc, r in scored[:depth]]
    scored = sorted(head, key=lambda x: -x[0]) + scored[depth:]
    return scored


@dataclass(slots=True)
class _Result:
    q: Query
    ranked: Ranked  # messages, best first (fused with vectors when they took part)
    sessions: dict[str, float]  # session scores, the best 1.0
    per: dict[str, Ranked]  # each session's messages, best first
    order: list[str]  # sessions, best first, copies folded away
    copies: dict[str, list[str]]  # kept session -> sessions folded into it


def _ranked(
    conn: sqlite.Connection, text: str, f: Filters, limit: int, now: datetime | None, hybrid: bool | None
) -> _Result | None:
    """The one pipeline behind both search functions: messages, then sessions, then messages
    scaled by their session's score."""
    text = bounded(text)  # the vector side gets the same capped query as FTS
    q = parse(text)
    if q.empty:
        return None
    now = now or datetime.now(timezone.utc)
    # hybrid=None: auto (vectors when the plugin has a store for its model; any failure -> FTS only),
    # True: require vectors (errors raise with a fix), False: FTS only.
    vectors = None if hybrid is False else require_vectors(hybrid is True)
    if vectors is not None:  # the query's vector search overlaps the FTS query
        vectors.prefetch(conn, text, hybrid is True)
    # Unfiltered: the sessions whose documents answer best, then messages inside them (filters can
    # exclude every one of those sessions, so a filtered search ranks the messages of the whole index).
    docs, doc_copies = (
        ({}, {}) if f.sql()[0] else top_sessions(conn, parse(text, idents=False), max(SESSION_DEPTH, limit))
    )
    _, rows = query_rows(conn, q, f, limit, list(docs) or None)
    if docs and len({r.session_id for r in rows}) < limit:  # too few: sessions whose messages match
        docs, doc_copies = {}, {}  # but whose documents do not (tool output) must still be listed
        _, rows = query_rows(conn, q, f, limit)
    fts = _rank(rows, q, now)
    ranked = fts if vectors is None else vectors.fuse_messages(conn, text, q, f, fts, hybrid is True)
    per: dict[str, Ranked] = {}
    for score, r in ranked:
        per.setdefault(r.session_id, []).append((score, r))
    sessions = session_scores(conn, text, fts, docs or None)
    if vectors is not None and ranked is not fts:  # vectors took part: fuse the session rankings too
        sessions = vectors.fuse_sessions(conn, text, sessions, set(per), hybrid is True)
    top = max(sessions.values(), default=0.0) or 1.0
    sessions = {sid: v / top for sid, v in sessions.items()}
    order = sorted(per, key=lambda sid: -sessions.get(sid, 0.0))
    copies = fold_copies(conn, order, per, doc_copies)
    folded = {c for cs in copies.values() for c in cs}
    # a message is worth as much as it answers the query times how much its session is about it
    ranked = sorted(
        ((sc * sessions.get(r.session_id, 0.0), r) for sc, r in ranked if r.session_id not in folded),
        key=lambda x: -x[0],
    )
    return _Result(q, ranked, sessions, per, [sid for sid in order if sid not in folded], copies)


def session_scores(
    conn: sqlite.Connection, text: str, fts: Ranked, docs: dict[str, float] | None = None
) -> dict[str, float]:
    """Each matching session: its best message and its document, each relative to the query's best.
    Further matches add nothing, so a long session cannot win by repeating the query's words.
    `docs`: the document scores when the sessions were ranked by them first (`top_sessions`)."""
    best: dict[str, float] = {}
    for score, r in fts:
        best.setdefault(r.session_id, score)  # `fts` is sorted: the first is the best
    if not best:
        return {}
    top = max(best.values()) or 1.0
    # only sessions the document could still lift to the top are scored (bm25 costs per session)
    if docs is None:
        leaders = sorted(best, key=lambda sid: -best[sid])[:DOC_DEPTH]
        docs = doc_scores(conn, parse(text, idents=False), leaders)
    top_doc = max(docs.values(), default=0.0) or 1.0
    return {
        sid: (1.0 - DOC_SHARE) * b / top + DOC_SHARE * docs.get(sid, 0.0) / top_doc for sid, b in best.items()
    }


def search_messages(
    conn: sqlite.Connection,
    text: str,
    f: Filters | None = None,
    limit: int = 10,
    now: datetime | None = None,
    hybrid: bool | None = None,
) -> list[Hit]:
    f = f or Filters()
    got = _ranked(conn, text, f, limit, now, hybrid)
    if got is None:
        return []
    out: Ranked = []
    seen_text: set[tuple[str, int]] = set()
    for score, r in got.ranked:
        key = (r.session_id, hash(r.body))
        if key in seen_text:
            continue  # the same text twice in one session (resume copies, mirrors)
        seen_text.add(key)
        out.append((score, r))
        if len(out) >= limit:
            break
    words = got.q.exact + got.q.words
    return [_hit(r, score, snippet(row_text(r), words)) for score, r in out]


def _hit(r: Candidate, score: float, snippet: str) -> Hit:
    return Hit(
        session_id=r.session_id,
        uuid=r.uuid,
        ts=r.ts,
        role=r.role,
        kind=r.kind,
        cwd=r.cwd,
        project=r.project,
        snippet=snippet,
        score=round(score, 4),
        source_file=r.source_file,
        is_sidechain=bool(r.is_sidechain),
        on_main=bool(r.on_main),
        agent=r.agent,
    )


def search_sessions(
    conn: sqlite.Connection,
    text: str,
    f: Filters | None = None,
    limit: int = 10,
    hits_per_session: int = 3,
    now: datetime | None = None,
    hybrid: bool | None = None,
) -> list[SessionHit]:
    """Rank whole sessions (`session_scores`), each with its best hits."""
    f = f or Filters()
    got = _ranked(conn, text, f, limit, now, hybrid)
    if got is None:
        return []
    order = got.order[:limit]
    meta = _session_meta(conn, order)
    words = got.q.exact + got.q.words
    out = []
    for sid in order:
        title, project, first_ts, last_ts = meta.get(sid, (None, None, None, None))
        hits = [_hit(r, s, snippet(row_text(r), words)) for s, r in got.per[sid][:hits_per_session]]
        out.append(
            SessionHit(
                sid,
                title,
                project,
                first_ts,
                last_ts,
                round(got.sessions.get(sid, 0.0), 4),
                hits,
                got.copies.get(sid, []),
            )
        )
    return out


def _session_meta(conn: sqlite.Connection, ids: list[str]) -> dict[str, tuple[Any, ...]]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT session_id, title, project_key, first_ts, last_ts FROM sessions "
        f"WHERE session_id IN ({marks})",
        ids,
    ).fetchall()
    return {r[0]: r[1:] for r in rows}
