"""Copies of a session count once: a session whose matching texts all appeared in a better-ranked
session of its project (a resumed or continued copy, a re-written file) is listed under that one."""

from __future__ import annotations

from index.store.plugins import Ranked
from lib import sqlite

FOLD_DEPTH = 50  # copies are looked for among this many of the best sessions (MCP's largest limit)


def fold_copies(
    conn: sqlite.Connection, order: list[str], per: dict[str, Ranked], same_doc: dict[str, list[str]]
) -> dict[str, list[str]]:
    """A session of the same project whose every matching text already appeared in a session ranked
    above it, its conversation included (a resumed or continued copy, a re-written file), adds
    nothing: it is listed once, under the first. Identical tool output alone (the same test log in
    two sessions) does not make a copy. `same_doc`: sessions found to hold the same document as one of
    `order` (`top_sessions`), never searched, copies of that one. Returns {kept session: [copies]}."""
    order = order[:FOLD_DEPTH]
    projects = _projects(conn, order)
    seen: dict[str | None, dict[int, str]] = {}  # project -> text hash -> first session holding it
    out: dict[str, list[str]] = {}
    for sid in order:
        texts = {hash(r.body) for _, r in per[sid]}
        have = seen.setdefault(projects.get(sid), {})
        owners = {have.get(t) for t in texts}
        talk = any(r.kind in _CONVERSATION for _, r in per[sid])
        if talk and None not in owners:
            keep = next(s for s in order if s in owners)  # the best-ranked session it copies
            out.setdefault(keep, []).append(sid)
            continue
        for t in texts:
            have.setdefault(t, sid)
    merged = {c for cs in out.values() for c in cs}
    for kept in (sid for sid in order if sid not in merged):
        for sid in [kept, *out.get(kept, [])]:
            if sid in same_doc:
                out.setdefault(kept, []).extend(same_doc[sid])
    return out


_CONVERSATION = ("prompt", "text")


def _projects(conn: sqlite.Connection, ids: list[str]) -> dict[str, str | None]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return dict(
        conn.execute(f"SELECT session_id, project_key FROM sessions WHERE session_id IN ({marks})", ids)
    )
