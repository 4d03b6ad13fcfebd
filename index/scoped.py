"""Scope walking for read-side queries (I8): run a query in the asked scope, widen through the one
scope resolver (`index.scope.scope_chain`) when it finds nothing, and say so.

Operator tables carry only a project key; they reach a cwd through their source extraction, so every
scoped query here runs over an alias `e` of `extractions` (or a table with `cwd` and `project_key`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from index.filters import Filters
from index.scope import scope_chain, widen_note
from index.search import Hit, search_messages, search_sessions
from lib.project import display_name

EXTRACTION_KINDS = (
    "ban", "standing_decision", "correction", "model_correction", "decision", "goal", "goal_progress",
    "failed_attempt", "implicit_preference", "domain_fact", "self_correction", "progress", "truth_rhetoric",
)


@dataclass(slots=True)
class Scoped:
    """Rows found, the scope that found them, and a note when the asked scope was widened."""

    items: list[Any]
    scope: str
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


Runner = Callable[[str, list[object]], list[Any]]


def walk(scope: str, cwd: str | None, run: Runner, alias: str = "e") -> Scoped:
    """Call `run(where, args)` for the asked scope, then the wider ones, until something is found.
    `where` is "" for global (no condition)."""
    chain = scope_chain(scope, cwd, alias)
    for sc in chain:
        items = run(sc.where, sc.args)
        if items or sc.name == "global":
            return Scoped(items, sc.name, widen_note(scope, sc.name))
    return Scoped([], scope, None)


def and_where(where: str, extra: str = "") -> str:
    """Join optional SQL fragments into an ` AND …` tail (empty when there is nothing)."""
    parts = [p for p in (where, extra) if p]
    return (" AND " + " AND ".join(parts)) if parts else ""


def _filters(name: str, args: list[object], base: Filters) -> Filters:
    f = Filters(since=base.since, role=base.role, kind=base.kind, session=base.session)
    if name == "this_cwd":
        f.cwd = str(args[0])
    elif name == "this_project":
        f.project = str(args[0])
    return f


def search_scoped(conn: sqlite3.Connection, text: str, scope: str, cwd: str | None, base: Filters,
                  limit: int, now: datetime | None = None) -> Scoped:
    """`index.search.search_messages` with scope widening."""
    chain = scope_chain(scope, cwd, "s")
    for sc in chain:
        hits: list[Hit] = search_messages(conn, text, _filters(sc.name, sc.args, base), limit=limit, now=now)
        if hits or sc.name == "global":
            return Scoped(hits, sc.name, widen_note(scope, sc.name))
    return Scoped([], scope, None)


def sessions_scoped(conn: sqlite3.Connection, text: str, scope: str, cwd: str | None, base: Filters,
                    limit: int) -> Scoped:
    """`index.search.search_sessions` with scope widening."""
    chain = scope_chain(scope, cwd, "s")
    for sc in chain:
        found = search_sessions(conn, text, _filters(sc.name, sc.args, base), limit=limit, hits_per_session=1)
        if found or sc.name == "global":
            return Scoped(found, sc.name, widen_note(scope, sc.name))
    return Scoped([], scope, None)


def day(ts: str | None) -> str | None:
    return ts[:10] if ts else None


def provenance(session_id: str | None, ts: str | None, project_key: str | None,
               uuid: str | None = None) -> dict[str, Any]:
    """Where a recalled item comes from: date, session, project (and the source message)."""
    out: dict[str, Any] = {"date": day(ts), "session_id": session_id, "project": display_name(project_key)
                           if project_key else None}
    if uuid:
        out["uuid"] = uuid
    return out
