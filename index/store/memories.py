"""User-curated memories: promote (make durable), unpromote (undo a promotion, or demote a mined memory
for good) and list them. Each decision goes to the user-state file first (index/store/userstate.py), then to
the index, so a rebuild re-applies it. Callers hold the writer lock (index.store.manage.maintenance)."""

from __future__ import annotations

import uuid as uuidlib
from pathlib import Path
from typing import Any

import index.store.userstate as userstate
from extractors.scrubber import scrub_text
from index.store.db import db_file
from index.store.operator import fold_new, norm, refold
from index.store.scope import stored_cwd
from index.store.tx import transaction
from index.store.writer import write_extractions
from lib import sqlite
from lib.project import project_key

_PROMOTED = '%"promoted": true%'


def promote(
    conn: sqlite.Connection,
    db: Path,
    kind: str,
    *,
    text: str | None = None,
    extraction_id: int | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """Make a memory durable on request: typed text, or an existing extraction (e.g. a one-off decision),
    becomes a ban / standing decision / goal / preference for the project, folded like any other row.
    Its source is the original message, or `manual:<id>` for typed text (scrubbed like all stored text)."""
    if kind not in userstate.PROMOTABLE:
        raise ValueError(f"kind {kind!r}: use one of {', '.join(userstate.PROMOTABLE)}")
    if extraction_id is not None:
        row = conn.execute(
            "SELECT content, session_id, source_uuid, cwd, project_key FROM extractions WHERE id=?",
            (extraction_id,),
        ).fetchone()
        if row is None:
            raise LookupError(f"no extraction with id {extraction_id}")
        content, session_id, source, where, project = row
    else:
        if not text or not text.strip():
            raise ValueError("nothing to promote: give a text or an extraction id")
        where = stored_cwd(cwd)
        content, session_id, source, project = (
            scrub_text(text.strip()),
            None,
            f"manual:{uuidlib.uuid4()}",
            project_key(where),
        )
    context = '{"promoted": true, "status": "active"}' if kind == "goal" else '{"promoted": true}'
    entry = {
        "kind": kind,
        "content": content,
        "context": context,
        "session_id": session_id,
        "source_uuid": source,
        "cwd": where,
        "project_key": project,
        "ts": userstate.now_iso(),
    }
    state = userstate.load(db)
    state.promoted.append(entry)
    userstate.save(db, state)
    with transaction(conn):
        insert_memory(conn, entry)
    return {"kind": kind, "content": content, "project": project, "source_uuid": source, "ts": entry["ts"]}


def unpromote(conn: sqlite.Connection, db: Path, extraction_id: int) -> dict[str, Any]:
    """Undo a promotion; for a memory mined from transcripts, demote it: it and every extraction of the
    same kind, project and normalised content are deleted now and after every later index run."""
    row = conn.execute(
        "SELECT kind, content, context, source_uuid, project_key FROM extractions WHERE id=?",
        (extraction_id,),
    ).fetchone()
    if row is None:
        raise LookupError(f"no memory with id {extraction_id}")
    kind, content, context, source, project = row
    promoted = '"promoted": true' in (context or "")
    state = userstate.load(db)
    if promoted:
        state.promoted = [
            p
            for p in state.promoted
            if (p["kind"], p["source_uuid"], p["content"]) != (kind, source, content)
        ]
        ids = [extraction_id]
    else:
        state.demoted.append(
            {
                "kind": kind,
                "project_key": project,
                "norm": norm(content),
                "content": content,
                "at": userstate.now_iso(),
            }
        )
        ids = matching_extractions(conn, kind, project, norm(content))
    userstate.save(db, state)
    with transaction(conn):
        removed = delete_extractions(conn, ids)
    return {
        "id": extraction_id,
        "kind": kind,
        "content": content,
        "project": project,
        "action": "unpromoted" if promoted else "demoted",
        "removed": removed,
    }


def listing(conn: sqlite.Connection, db: Path, mined: bool = False) -> dict[str, Any]:
    """Promoted memories (with the ids `unpromote` takes), demoted ones, forgotten sessions; with
    `mined`, also the durable memories mined from transcripts."""
    cols = "id, kind, content, project_key, ts, session_id"
    promoted = [
        _item(r)
        for r in conn.execute(
            f"SELECT {cols} FROM extractions WHERE context LIKE ? ORDER BY id", (_PROMOTED,)
        )
    ]
    state = userstate.load(db)
    out: dict[str, Any] = {
        "promoted": promoted,
        "demoted": [{k: d.get(k) for k in ("kind", "content", "project_key", "at")} for d in state.demoted],
        "forgotten_sessions": sorted(state.forgotten),
    }
    if mined:
        marks = ",".join("?" * len(userstate.PROMOTABLE))
        out["mined"] = [
            _item(r)
            for r in conn.execute(
                f"""SELECT {cols} FROM extractions WHERE kind IN ({marks}) AND context NOT LIKE ?
                ORDER BY project_key, kind, id""",
                (*userstate.PROMOTABLE, _PROMOTED),
            )
        ]
    return out


def _item(r: tuple[Any, ...]) -> dict[str, Any]:
    return {"id": r[0], "kind": r[1], "content": r[2], "project_key": r[3], "ts": r[4], "session_id": r[5]}


def insert_memory(conn: sqlite.Connection, p: dict[str, Any]) -> None:
    """One promoted memory as an extraction (no source file: index runs never delete it), folded."""
    ordinal = conn.execute(
        "SELECT count(*) FROM extractions WHERE kind=? AND source_uuid=?", (p["kind"], p["source_uuid"])
    ).fetchone()[0]
    last = conn.execute("SELECT coalesce(max(id), 0) FROM extractions").fetchone()[0]
    write_extractions(
        conn,
        [
            (
                p["kind"],
                p["content"],
                p["context"],
                1.0,
                p.get("session_id"),
                p["source_uuid"],
                ordinal,
                p.get("cwd"),
                p.get("project_key"),
                p.get("ts"),
            )
        ],
        None,
    )
    fold_new(conn, last)


def matching_extractions(conn: sqlite.Connection, kind: str, project: str | None, normed: str) -> list[int]:
    """Extractions of this kind and project whose normalised content is `normed` (all mentions of a rule)."""
    return [
        eid
        for eid, content in conn.execute(
            "SELECT id, content FROM extractions WHERE kind=? AND project_key IS ?", (kind, project)
        )
        if norm(content) == normed
    ]


def delete_extractions(conn: sqlite.Connection, ids: list[int]) -> int:
    """Delete extractions with their FTS entries and reviews, then re-fold their projects' operator
    tables from what remains (a rule other extractions still mention stays, with fewer mentions)."""
    if not ids:
        return 0
    marks = ",".join("?" * len(ids))
    projects = [
        p for (p,) in conn.execute(f"SELECT DISTINCT project_key FROM extractions WHERE id IN ({marks})", ids)
    ]
    conn.execute(
        f"""INSERT INTO extractions_fts(extractions_fts, rowid, content, context)
                     SELECT 'delete', id, content, context FROM extractions WHERE id IN ({marks})""",
        ids,
    )
    conn.execute(f"DELETE FROM refinements WHERE extraction_id IN ({marks})", ids)
    n: int = conn.execute(f"DELETE FROM extractions WHERE id IN ({marks})", ids).rowcount
    refold(conn, projects)
    return n


def reapply_memories(conn: sqlite.Connection, db: Path | None = None) -> dict[str, int]:
    """Insert promoted memories that are missing and delete demoted ones that came back, inside the
    caller's transaction."""
    db = db or (Path(db_file(conn)) if db_file(conn) else None)
    if db is None:
        return {"promoted": 0, "demoted": 0}
    state = userstate.load(db)
    gone = set(state.forgotten)
    added = removed = 0
    for p in state.promoted:
        if p.get("session_id") in gone:
            continue
        if (
            conn.execute(
                "SELECT 1 FROM extractions WHERE kind=? AND source_uuid=? AND content=?",
                (p["kind"], p["source_uuid"], p["content"]),
            ).fetchone()
            is None
        ):
            insert_memory(conn, p)
            added += 1
    for d in state.demoted:
        ids = matching_extractions(conn, d["kind"], d.get("project_key"), d["norm"])
        removed += delete_extractions(conn, ids)
    return {"promoted": added, "demoted": removed}
