"""Progressive disclosure over messages (S2): a compact index of search hits with token estimates,
the timeline around one hit, and full records by uuid — so an agent reads little before it reads much."""

from __future__ import annotations

from typing import Any

from index.retrieval.budget import estimate_tokens
from index.retrieval.search import Hit
from index.store.filters import MAX_KEY_CHARS
from index.store.labels import Label, project_labeller
from index.store.textstore import unpack
from lib import sqlite
from lib.text import clip

_COLS = """m.id, m.uuid, m.session_id, m.ts, m.role, m.kind, m.tool_name, m.tool_target, m.is_error, m.on_main,
           m.is_sidechain, m.body, s.project_key, s.title"""


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _bodies(conn: sqlite.Connection, uuids: list[str]) -> dict[str, str]:
    if not uuids:
        return {}
    rows = conn.execute(f"SELECT uuid, body FROM messages WHERE uuid IN ({_marks(len(uuids))})", uuids)
    return {u: unpack(b) for u, b in rows}


def hit_index(conn: sqlite.Connection, hits: list[Hit], preview: int = 100) -> list[dict[str, Any]]:
    """One short row per hit: where and when, a preview, and how many tokens the full record costs."""
    bodies = _bodies(conn, [h.uuid for h in hits])
    sids = sorted({h.session_id for h in hits})
    titles = (
        dict(
            conn.execute(
                f"SELECT session_id, title FROM sessions WHERE session_id IN ({_marks(len(sids))})", sids
            ).fetchall()
        )
        if sids
        else {}
    )
    out, label = [], project_labeller(conn)
    for h in hits:
        body = bodies.get(h.uuid, "")
        out.append(
            {
                "uuid": h.uuid,
                "session_id": h.session_id,
                "date": (h.ts or "")[:10] or None,
                "project": label(h.project) if h.project else None,
                "agent": h.agent,
                "role": h.role,
                "kind": h.kind,
                "title": clip(titles.get(h.session_id) or "", 60) or None,
                "preview": clip(h.snippet, preview),
                "tokens": estimate_tokens(body) if body else 0,
                "score": h.score,
            }
        )
    return out


def _row(r: tuple[Any, ...], chars: int, label: Label, flat: bool = True) -> dict[str, Any]:
    text = unpack(r[11])
    out: dict[str, Any] = {
        "uuid": r[1],
        "session_id": r[2],
        "ts": r[3],
        "role": r[4],
        "kind": r[5],
        "project": label(r[12]) if r[12] else None,
    }
    if r[6]:
        out["tool_name"] = r[6]
    if r[7]:
        out["tool_target"] = r[7]
    if r[8]:
        out["is_error"] = True
    if not r[9]:
        out["on_main"] = False
    if r[10]:
        out["is_sidechain"] = True
    out["tokens"] = estimate_tokens(text) if text else 0
    if flat:
        out["text"] = clip(text, chars)
    else:
        out["text"] = text if len(text) <= chars else text[: chars - 1] + "…"
        if len(text) > chars:
            out["text_truncated"] = True
    return out


def timeline(
    conn: sqlite.Connection,
    uuid: str,
    *,
    before: int = 3,
    after: int = 3,
    chars: int = 300,
    main_only: bool = False,
) -> dict[str, Any] | None:
    """The messages around one message of a session, in file order; None when the uuid is unknown."""
    anchor = conn.execute(
        f"""SELECT {_COLS} FROM messages m LEFT JOIN sessions s ON s.session_id = m.session_id
            WHERE m.uuid = ?""",
        (uuid,),
    ).fetchone()
    if anchor is None:
        if not 8 <= len(uuid) <= MAX_KEY_CHARS:
            return None
        rows = conn.execute("SELECT uuid FROM messages WHERE uuid LIKE ? LIMIT 2", (uuid + "%",)).fetchall()
        if len(rows) != 1:
            return None
        return timeline(conn, rows[0][0], before=before, after=after, chars=chars, main_only=main_only)
    sid, mid = anchor[2], anchor[0]
    main = " AND m.on_main = 1" if main_only else ""
    prev = conn.execute(
        f"""SELECT {_COLS} FROM messages m LEFT JOIN sessions s ON s.session_id = m.session_id
            WHERE m.session_id = ? AND m.id < ? {main} ORDER BY m.id DESC LIMIT ?""",
        (sid, mid, before),
    ).fetchall()
    nxt = conn.execute(
        f"""SELECT {_COLS} FROM messages m LEFT JOIN sessions s ON s.session_id = m.session_id
            WHERE m.session_id = ? AND m.id > ? {main} ORDER BY m.id LIMIT ?""",
        (sid, mid, after),
    ).fetchall()
    rows, label = [*reversed(prev), anchor, *nxt], project_labeller(conn)
    msgs = [_row(r, chars, label) for r in rows]
    for m in msgs:
        del m["session_id"], m["project"]
        m["anchor"] = m["uuid"] == anchor[1] or None
        if m["anchor"] is None:
            del m["anchor"]
    total = conn.execute("SELECT count(*) FROM messages WHERE session_id = ?", (sid,)).fetchone()[0]
    return {
        "session_id": sid,
        "title": anchor[13],
        "project": label(anchor[12]) if anchor[12] else None,
        "anchor": anchor[1],
        "messages": msgs,
        "session_messages": total,
        "more_before": len(prev) == before,
        "more_after": len(nxt) == after,
    }


def records(
    conn: sqlite.Connection, uuids: list[str], *, chars: int
) -> tuple[list[dict[str, Any]], list[str]]:
    """Full messages by uuid (text clipped at `chars`), in the order asked; and the uuids not found."""
    if not uuids:
        return [], []
    rows = conn.execute(
        f"""SELECT {_COLS} FROM messages m LEFT JOIN sessions s ON s.session_id = m.session_id
            WHERE m.uuid IN ({_marks(len(uuids))})""",
        uuids,
    ).fetchall()
    by = {r[1]: r for r in rows}
    label = project_labeller(conn)
    found = [_row(by[u], chars, label, flat=False) for u in uuids if u in by]
    return found, [u for u in uuids if u not in by]
