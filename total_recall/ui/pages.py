"""The data behind each page, read through the index APIs only: one function per page, returning the
template context. Shared by the web app (`app.py`) and the self-contained exports (`export.py`)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from index.retrieval import (
    SessionFilter,
    digest_markdown,
    facets,
    list_sessions,
    memory_overview,
    search_messages,
    search_sessions,
    session_digest,
    session_errors,
    session_extractions,
    session_thread,
)
from index.stats import hook_stats, load_catalog, session_costs, usage_series
from index.store import PROMOTABLE, Filters, listing, load, project_labeller, stale_of, wrong_items
from lib import sqlite
from lib.paths import state_dir

PERIODS = ("day", "week", "month")
SEARCH_LIMIT = 30


def sessions_page(conn: sqlite.Connection, f: SessionFilter, page: int) -> dict[str, Any]:
    data = list_sessions(conn, f, page)
    ids = [r["session_id"] for r in data["rows"]]
    costs = session_costs(conn, load_catalog(), ids)
    errors = session_errors(conn, ids)
    for r in data["rows"]:
        r["cost"] = costs.get(r["session_id"])
        r["has_errors"] = r["session_id"] in errors
    return {"data": data, "filter": f, "facets": facets(conn), "label": project_labeller(conn)}


def resume_line(session_id: str, cwd: str | None) -> str:
    """The shell line that continues this session in Claude Code (quoted: cwd is transcript text)."""
    cmd = f"claude --resume {shlex.quote(session_id)}"
    return f"cd {shlex.quote(cwd)} && {cmd}" if cwd else cmd


def session_page(conn: sqlite.Connection, session_id: str, db: Path | None = None) -> dict[str, Any] | None:
    """The session's thread, digest and extractions; with the index's `db`, each extraction also carries
    its stale mark and the user's verdict (the viewer; exports leave them out)."""
    thread = session_thread(conn, session_id)
    if thread is None:
        return None
    digest = session_digest(conn, session_id)
    cost = session_costs(conn, load_catalog(), [session_id]).get(session_id)
    extractions = session_extractions(conn, session_id)
    if db is not None:
        _mark(conn, db, extractions)
    return {
        "s": thread,
        "cost": cost,
        "digest": digest_markdown(digest) if digest else "",
        "extractions": extractions,
        "marked": db is not None,
        "resume": resume_line(session_id, thread.get("cwd")),
        "label": project_labeller(conn),
    }


def agent_page(conn: sqlite.Connection, session_id: str, agent_id: str) -> dict[str, Any] | None:
    thread = session_thread(conn, session_id)
    if thread is None:
        return None
    agent = next((a for a in thread["agents"] if a["agent_id"] == agent_id), None)
    return None if agent is None else {"s": thread, "agent": agent}


def search_page(conn: sqlite.Connection, query: str, project: str | None, by_session: bool) -> dict[str, Any]:
    """The CLI's search (`search` / `search --sessions`, hybrid when a vector store exists)."""
    ctx: dict[str, Any] = {
        "q": query,
        "project": project,
        "by_session": by_session,
        "hits": [],
        "sessions": [],
    }
    if query.strip():
        f = Filters(project=project or None)
        if by_session:
            ctx["sessions"] = search_sessions(conn, query, f, SEARCH_LIMIT)
        else:
            ctx["hits"] = search_messages(conn, query, f, SEARCH_LIMIT)
    ctx["facets"] = facets(conn)
    ctx["label"] = project_labeller(conn)
    return ctx


def memory_page(conn: sqlite.Connection, db: Path, project: str | None) -> dict[str, Any]:
    data = memory_overview(conn, project or None, promotable=PROMOTABLE)
    _verdicts(conn, db, data)
    user = listing(conn, db)
    return {
        "m": data,
        "project": project,
        "facets": facets(conn),
        "promotable": PROMOTABLE,
        "demoted": user["demoted"],
        "forgotten": user["forgotten_sessions"],
        "label": project_labeller(conn),
    }


SECTIONS = ("decisions", "bans", "goals", "failed", "corrections", "promoted")


def _verdicts(conn: sqlite.Connection, db: Path, data: dict[str, Any]) -> None:
    """Each item's stale mark (the code it names is gone) and the user's verdict: `wrong` as the hooks'
    gate matches a memory (by id or text, index.store.verdicts), `helpful` by id."""
    _mark(conn, db, [it for s in SECTIONS for it in data[s]])


def _mark(conn: sqlite.Connection, db: Path, items: list[dict[str, Any]]) -> None:
    """Set each item's `stale_mark` and `verdict` (see `_verdicts`)."""
    stale = stale_of(conn, [it["item_id"] for it in items])
    wrong, feedback = wrong_items(db), load(db).feedback
    for it in items:
        it["stale_mark"] = stale.get(it["item_id"])
        fb = feedback.get(it["item_id"]) or {}
        if wrong.blocks(it["item_id"], it["content"]):
            it["verdict"] = "wrong"
        elif fb.get("verdict") == "helpful":
            it["verdict"] = "helpful"


def why_page(conn: sqlite.Connection, db: Path, item_id: str) -> dict[str, Any] | None:
    """`total-recall why ID --json`'s answer, for the viewer's why page."""
    from index.briefing import why

    res = why(conn, db, item_id)
    return None if res is None else {"w": res}


def usage_page(conn: sqlite.Connection, db: Path, by: str, since: str | None) -> dict[str, Any]:
    series = usage_series(conn, load_catalog(), by if by in PERIODS else "day", since)
    label = project_labeller(conn)
    for line in (line for lines in series["project"].values() for line in lines):
        if line["label"] not in ("?", "other"):  # a project key: its label, as the tables show it
            line["label"] = label(line["label"])
    hooks = hook_stats(state_dir(db), since)
    return {
        "u": series,
        "hooks": hooks,
        "by": series["by"],
        "since": since,
        "periods": PERIODS,
        "label": label,
    }
