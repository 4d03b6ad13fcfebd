"""Scope walking for read-side queries (I8): run a query in the asked scope, widen through the one
scope resolver (`index.store.scope.scope_chain`) when it finds nothing, and say so.

Operator tables carry only a project key; they reach a cwd through their source extraction, so every
scoped query here runs over an alias `e` of `extractions` (or a table with `cwd` and `project_key`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from extractors.model import ALL_KINDS
from index.retrieval.search import search_messages, search_sessions
from index.store.filters import Filters
from index.store.labels import Label
from index.store.scope import widen
from lib import sqlite

EXTRACTION_KINDS = ALL_KINDS  # every kind the extractors write (extractors/model.py)


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
    return Scoped(*widen(scope, cwd, lambda sc: run(sc.where, sc.args), alias))


def and_where(where: str, extra: str = "") -> str:
    """Join optional SQL fragments into an ` AND …` tail (empty when there is nothing)."""
    parts = [p for p in (where, extra) if p]
    return (" AND " + " AND ".join(parts)) if parts else ""


def _filters(name: str, args: list[object], base: Filters) -> Filters:
    f = Filters(since=base.since, role=base.role, kind=base.kind, session=base.session, agent=base.agent)
    if name == "this_cwd":
        f.cwd = str(args[0])
    elif name == "this_project":
        f.project = str(args[0])
    return f


def search_scoped(
    conn: sqlite.Connection,
    text: str,
    scope: str,
    cwd: str | None,
    base: Filters,
    limit: int,
    now: datetime | None = None,
) -> Scoped:
    """`index.retrieval.search.search_messages` with scope widening."""
    return Scoped(
        *widen(
            scope,
            cwd,
            lambda sc: search_messages(conn, text, _filters(sc.name, sc.args, base), limit=limit, now=now),
            "s",
        )
    )


def sessions_scoped(
    conn: sqlite.Connection, text: str, scope: str, cwd: str | None, base: Filters, limit: int
) -> Scoped:
    """`index.retrieval.search.search_sessions` with scope widening."""
    return Scoped(
        *widen(
            scope,
            cwd,
            lambda sc: search_sessions(
                conn, text, _filters(sc.name, sc.args, base), limit=limit, hits_per_session=1
            ),
            "s",
        )
    )


def day(ts: str | None) -> str | None:
    return ts[:10] if ts else None


def provenance(
    label: Label, session_id: str | None, ts: str | None, project_key: str | None, uuid: str | None = None
) -> dict[str, Any]:
    """Where a recalled item comes from: date, session, project (its `label`, index/store/labels.py)
    and the source message."""
    out: dict[str, Any] = {
        "date": day(ts),
        "session_id": session_id,
        "project": label(project_key) if project_key else None,
    }
    if uuid:
        out["uuid"] = uuid
    return out
