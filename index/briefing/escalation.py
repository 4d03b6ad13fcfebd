"""Escalation risk with real inputs (D1): gather the session's recent prompts, corrections,
interrupts, the project's bans and the learned typos, then call the pure detector."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import orjson

from detector.escalation import PastPrompt, Signals
from detector.escalation import assess as detect
from index.store.scope import stored_cwd
from index.store.textstore import unpack
from lib import sqlite
from lib.project import project_key

HISTORY = 8
RECENT_TURNS = 20
PROJECT_WINDOW_HOURS = 6


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()[:400]


def session_history(
    conn: sqlite.Connection, session_id: str, current: str | None = None, n: int = HISTORY
) -> list[PastPrompt]:
    """The session's latest human prompts, oldest first, each flagged when it was a correction.
    The live prompt is dropped if the index already holds it."""
    rows = conn.execute(
        """SELECT uuid, body FROM messages WHERE session_id = ? AND kind = 'prompt' AND is_sidechain = 0
           ORDER BY id DESC LIMIT ?""",
        (session_id, n + 1),
    ).fetchall()
    if not rows:
        return []
    uuids = [r[0] for r in rows]
    marks = ",".join("?" * len(uuids))
    corrected = {
        r[0]
        for r in conn.execute(
            f"""SELECT source_uuid FROM extractions WHERE source_uuid IN ({marks})
            AND kind IN ('correction','model_correction')""",
            uuids,
        )
    }
    out = [PastPrompt(unpack(body), uuid in corrected) for uuid, body in rows]
    if current is not None and out and _norm(out[0].text) == _norm(current):
        out = out[1:]
    return list(reversed(out[:n]))


def recent_interrupts(conn: sqlite.Connection, session_id: str) -> int:
    row = conn.execute(
        """SELECT count(*) FROM (SELECT kind FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT ?)
           WHERE kind = 'interrupt'""",
        (session_id, RECENT_TURNS),
    ).fetchone()
    return int(row[0]) if row else 0


def project_corrections(conn: sqlite.Connection, key: str | None, now: datetime) -> int:
    if not key:
        return 0
    since = (now - timedelta(hours=PROJECT_WINDOW_HOURS)).strftime("%Y-%m-%dT%H:%M:%S")
    row = conn.execute(
        """SELECT count(*) FROM extractions WHERE project_key = ? AND kind = 'correction' AND ts >= ?""",
        (key, since),
    ).fetchone()
    return int(row[0]) if row else 0


def project_bans(conn: sqlite.Connection, key: str | None) -> list[str]:
    if key:
        rows = conn.execute(
            "SELECT content FROM bans WHERE project_key = ? AND active = 1", (key,)
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT content FROM bans WHERE active = 1 ORDER BY mentions DESC LIMIT 200"
        ).fetchall()
    return [r[0] for r in rows]


def learned_typos(conn: sqlite.Connection) -> list[tuple[str, str]]:
    row = conn.execute("SELECT data FROM profiles WHERE name = 'voice_profile'").fetchone()
    if not row:
        return []
    try:
        data = orjson.loads(row[0])
    except orjson.JSONDecodeError:
        return []
    typos = data.get("typos") if isinstance(data, dict) else None
    return [
        (str(t.get("typo")), str(t.get("meant") or ""))
        for t in typos or []
        if isinstance(t, dict) and t.get("typo")
    ]


def gather(
    conn: sqlite.Connection,
    *,
    prompt: str,
    session_id: str | None = None,
    cwd: str | None = None,
    now: datetime | None = None,
) -> Signals:
    now = now or datetime.now(timezone.utc)
    key = project_key(stored_cwd(cwd)) if cwd else None
    if key is None and session_id:
        row = conn.execute("SELECT project_key FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        key = row[0] if row else None
    return Signals(
        history=session_history(conn, session_id, prompt) if session_id else [],
        interrupts=recent_interrupts(conn, session_id) if session_id else 0,
        project_corrections=project_corrections(conn, key, now),
        bans=project_bans(conn, key),
        typos=learned_typos(conn),
    )


def assess(
    conn: sqlite.Connection,
    *,
    prompt: str,
    draft: str | None = None,
    session_id: str | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """{"score", "state", "action", "reasons", "banned_phrases", "typos": [{"typo", "meant"}]}."""
    signals = gather(conn, prompt=prompt, session_id=session_id, cwd=cwd)
    return detect(prompt, signals, draft)
