"""What a project's team tier may receive (issue 16): the durable memories of one project — standing
decisions, bans, failed attempts, live goals, recent corrections above the bundle's confidence
threshold — and one summary per finished session. Rows of forgotten sessions are never returned, nor
memories the user marked `wrong`; the thresholds are the ones the user's verdicts calibrated.

This only reads; the team client (total_recall/team) scrubs, reviews and sends what it returns."""

from __future__ import annotations

from dataclasses import dataclass

from extractors.confidence import bundle_threshold
from extractors.model import STANDING_KINDS, SUMMARY_KIND
from index.store.operator import row_kind
from index.store.verdicts import Wrong
from lib import sqlite
from lib.memid import memory_id
from lib.text import clip

SUMMARY_CHARS = 1200
_NOT_FORGOTTEN = "{col} IS NULL OR {col} NOT IN (SELECT session_id FROM forgotten)"


@dataclass(frozen=True, slots=True)
class Shareable:
    kind: str  # standing_decision | standing_order | ban | failed_attempt | goal | correction | session
    key: str  # stable per memory: the same memory gives the same key on every run
    title: str
    content: str
    ts: str | None
    session_id: str | None
    confidence: float
    mentions: int = 1


def _rules(conn: sqlite.Connection, key: str, wrong: Wrong) -> list[Shareable]:
    out = []
    for table, kinds, live in (
        ("standing_decisions", STANDING_KINDS, "t.status = 'active'"),
        ("bans", ("ban",), "t.active = 1"),
    ):
        cuts = {k: wrong.cut(k, bundle_threshold(k)) for k in kinds}
        rows = conn.execute(
            f"""SELECT t.norm, t.content, t.last_ts, t.session_id, coalesce(e.score, 0), t.mentions,
                       {row_kind(kinds[0])}
                FROM {table} t LEFT JOIN extractions e ON e.id = t.extraction_id
                WHERE t.project_key = ? AND {live} AND coalesce(e.score, 0) >= ?
                  AND ({_NOT_FORGOTTEN.format(col="t.session_id")})
                ORDER BY t.mentions DESC, t.last_ts DESC LIMIT 50""",
            (key, min(cuts.values())),
        ).fetchall()
        for norm, content, ts, sid, score, mentions, kind in rows:
            if score < cuts.get(kind, 1.0):
                continue
            title = kind.replace("_", " ").capitalize()
            out.append(
                Shareable(kind, f"{kind}:{norm}", title, content, ts, sid, float(score), int(mentions or 1))
            )
    return out


def _extracted(conn: sqlite.Connection, key: str, wrong: Wrong) -> list[Shareable]:
    """Failed attempts, live goals and recent corrections, each keyed by the record it came from."""
    out = []
    queries = (
        (
            "failed_attempt",
            "Failed attempt",
            """SELECT t.source_uuid, t.content, t.ts, t.session_id, coalesce(e.score, 0) FROM failed_attempts t
               LEFT JOIN extractions e ON e.id = t.extraction_id
               WHERE t.project_key = ? AND coalesce(e.score, 0) >= ? AND ({nf}) ORDER BY t.ts DESC LIMIT 30""",
        ),
        (
            "goal",
            "Goal",
            """SELECT t.source_uuid, t.content, max(coalesce(t.updated_ts, ''), coalesce(t.ts, '')), t.session_id,
                      coalesce(e.score, 1) FROM goal_stack t LEFT JOIN extractions e ON e.id = t.extraction_id
               WHERE t.project_key = ? AND t.status IN ('active', 'paused', 'blocked') AND coalesce(e.score, 1) >= ?
                 AND ({nf}) ORDER BY 3 DESC LIMIT 5""",
        ),
        (
            "correction",
            "Correction",
            """SELECT t.source_uuid, t.content, t.ts, t.session_id, t.score FROM extractions t
               WHERE t.project_key = ? AND t.kind IN ('correction', 'model_correction') AND t.score >= ?
                 AND ({nf}) ORDER BY t.ts DESC LIMIT 20""",
        ),
    )
    for kind, title, sql in queries:
        rows = conn.execute(
            sql.format(nf=_NOT_FORGOTTEN.format(col="t.session_id")),
            (key, wrong.cut(kind, bundle_threshold(kind))),
        )
        for src, content, ts, sid, score in rows.fetchall():
            out.append(Shareable(kind, f"{kind}:{src}", title, content, ts or None, sid, float(score)))
    return out


def _sessions(conn: sqlite.Connection, key: str, exclude: str | None, limit: int) -> list[Shareable]:
    """One summary per finished session: its title and its last recap (else its first prompt)."""
    rows = conn.execute(
        f"""SELECT s.session_id, s.title, s.first_prompt, s.last_ts,
                   (SELECT e.content FROM extractions e WHERE e.session_id = s.session_id AND e.kind = ?
                    ORDER BY e.ts DESC LIMIT 1)
            FROM sessions s WHERE s.project_key = ? AND s.n_prompts > 0 AND s.session_id IS NOT ?
              AND ({_NOT_FORGOTTEN.format(col="s.session_id")})
            ORDER BY s.last_ts DESC LIMIT ?""",
        (SUMMARY_KIND, key, exclude, limit),
    ).fetchall()
    out = []
    for sid, title, first, last, recap in rows:
        head = (title or "").strip() or "(untitled session)"
        body = (recap or first or "").strip()
        text = clip(f"{head}. {body}" if body and body != head else head, SUMMARY_CHARS)
        out.append(Shareable("session", f"session:{sid}:{last}", "Session", text, last, sid, 0.5))
    return out


def shareable(
    conn: sqlite.Connection,
    project_key: str,
    *,
    wrong: Wrong | None = None,
    exclude_session: str | None = None,
    sessions: int = 20,
) -> list[Shareable]:
    """Everything of the project the team tier may receive, before scrubbing and review; `wrong` (the
    user's verdicts, index.store.wrong_items) keeps out what they marked wrong."""
    wrong = wrong or Wrong()
    memories = [*_rules(conn, project_key, wrong), *_extracted(conn, project_key, wrong)]
    kept = [m for m in memories if not wrong.blocks(memory_id(m.kind, project_key, m.content), m.content)]
    return [*kept, *_sessions(conn, project_key, exclude_session, sessions)]
