"""The operator-context bundle (H2): what a new session should already know about its operator and
project, read from the operator tables and rendered as compact text within a character budget.

Used by the SessionStart hook and the MCP `get_operator_context` tool. Sections are fitted with
`index.retrieval.budget.fit_fenced`: the least important lines go first (machines, voice, then identity
and last sessions, then corrections; goal, bans and standing decisions and orders last).

Recalled text is untrusted (issue 10 #15): the whole bundle is fenced with the total-recall marker
(lib/injected.py), each item's text is quoted «like this» after `safe_text` removed what could end
the quote or the fence or pose as markup, and each item keeps its date and session.

This module reads the sections from the index; the items, their ids and the fenced rendering are in
index/briefing/items.py (re-exported here).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

import orjson

from extractors.model import STANDING_KINDS
from index.briefing.gate import Gate
from index.briefing.items import HEADER as HEADER
from index.briefing.items import Item as Item
from index.briefing.items import OperatorContext, day, meta
from index.briefing.items import render as render
from index.briefing.quoting import ITEM_CHARS as ITEM_CHARS
from index.briefing.quoting import provenance as provenance
from index.briefing.quoting import quote as quote
from index.briefing.quoting import safe_text as safe_text
from index.retrieval.rule_match import operator_wide as operator_wide
from index.retrieval.rule_match import statement_of
from index.store.labels import Label, project_labeller
from index.store.operator import decayed_status, row_kind
from index.store.scope import stored_cwd
from index.store.verdicts import Wrong
from lib import sqlite
from lib.memid import memory_id
from lib.project import project_key

_MODEL = re.compile(r"^claude-|-\d{8}$")


def _profile(conn: sqlite.Connection, name: str) -> dict[str, Any]:
    row = conn.execute("SELECT data FROM profiles WHERE name=?", (name,)).fetchone()
    if not row:
        return {}
    try:
        data = orjson.loads(row[0])
    except orjson.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _names(pairs: Any, n: int) -> list[str]:
    out = []
    for p in pairs or []:
        if isinstance(p, (list, tuple)) and p:
            out.append(str(p[0]))
        elif isinstance(p, str):
            out.append(p)
    return out[:n]


def identity(conn: sqlite.Connection) -> list[Item]:
    p = _profile(conn, "operator_profile")
    if not p:
        return []
    users = [u for u in p.get("usernames") or [] if isinstance(u, str) and "[" not in u]
    first = (p.get("first_ts") or "")[:7]
    head = f"{'/'.join(users[:2]) or 'operator'}: {p.get('sessions', 0)} sessions, {p.get('projects', 0)} projects"
    head += f" since {first}" if first else ""
    items = [Item(head, day(p.get("last_ts")))]
    tools = []
    for label, key, n in (
        ("languages", "languages", 4),
        ("package managers", "package_managers", 2),
        ("tests", "test_runners", 2),
        ("models", "models", 2),
    ):
        names = [_MODEL.sub("", x) for x in _names(p.get(key), n)]
        if names:
            tools.append(f"{label}: {', '.join(names)}")
    if tools:
        items.append(Item("; ".join(tools)))
    return items


def goals(
    conn: sqlite.Connection, key: str | None, now: datetime, label: Label, gate: Gate | None = None
) -> list[Item]:
    """The project's latest active goal (else its latest paused or blocked one), named by `label`."""
    gate = gate or Gate()
    if not key:
        return []
    rows = conn.execute(
        """SELECT g.content, g.status, g.ts, g.updated_ts, g.session_id, g.project_key, g.source_uuid,
                  coalesce(e.score, 1) FROM goal_stack g
           LEFT JOIN extractions e ON e.id = g.extraction_id
           WHERE g.project_key = ? AND g.status IN ('active','paused','blocked') AND coalesce(e.score, 1) >= ?
           ORDER BY max(coalesce(g.updated_ts,''), coalesce(g.ts,'')) DESC, g.id DESC LIMIT 6""",
        (key, gate.cut("goal")),
    ).fetchall()
    active: list[Item] = []
    parked: list[Item] = []
    for content, status, ts, updated, sid, project, src, score in rows:
        touch = max(ts or "", updated or "") or None
        eff = decayed_status(status, touch, now)
        if eff == "abandoned":
            continue
        item_id = gate.admit("goal", project, content, project)
        if item_id is None:
            continue
        item = Item(
            safe_text(content),
            day(touch),
            sid,
            label(project),
            {"status": eff, "recorded_status": status}
            | meta(item_id, "goal", src, project, score, f"the latest {eff} goal of this project"),
        )
        (active if eff == "active" else parked).append(item)
    if active:
        return active[:1]
    for it in parked[:1]:
        it.content = f"({it.extra['status']}) {it.content}"
    return parked[:1]


def _rules(
    conn: sqlite.Connection,
    table: str,
    key: str | None,
    n_project: int,
    n_global: int,
    label: Label,
    gate: Gate | None = None,
) -> list[Item]:
    """Active bans, or standing decisions and orders, above the injection threshold: this project's
    first, then other projects' only when stated operator-wide. A row's kind is its latest mention's
    (a standing decision and a standing order share one table)."""
    kinds = STANDING_KINDS if table == "standing_decisions" else ("ban",)
    status = " AND t.status = 'active'" if table == "standing_decisions" else " AND t.active = 1"
    status += " AND coalesce(e.score, 0) >= ?"
    sql = f"""SELECT t.content, t.norm, t.last_ts, t.session_id, t.project_key, e.context, t.source_uuid,
                     e.score, t.mentions, {row_kind(kinds[0])} FROM {table} t
              LEFT JOIN extractions e ON e.id = t.extraction_id
              WHERE t.project_key {{}} {status} ORDER BY t.mentions DESC, t.last_ts DESC LIMIT ?"""
    gate = gate or Gate()
    cuts = {k: gate.cut(k) for k in kinds}
    out: list[Item] = []
    seen: set[str] = set()
    if key:
        for content, norm, last, sid, project, _ctx, src, score, n, kind in conn.execute(
            sql.format("= ?"), (key, min(cuts.values()), n_project * 3)
        ):
            if (score or 0) < cuts.get(kind, 1.0):
                continue
            item_id = gate.admit(kind, project, content, project)
            if item_id is None or len(out) >= n_project:
                continue
            seen.add(norm)
            why = f"an active {kind.replace('_', ' ')} of this project, mentioned {n}×"
            out.append(
                Item(
                    safe_text(content),
                    day(last),
                    sid,
                    label(project),
                    {"scope": "project"} | meta(item_id, kind, src, project, score, why),
                )
            )
    n_here = len(out)
    for content, norm, last, sid, project, ctx, src, score, n, kind in conn.execute(
        sql.format("IS NOT ?"), (key, min(cuts.values()), 200)
    ):
        if norm in seen or len(out) >= n_here + n_global or (score or 0) < cuts.get(kind, 1.0):
            continue
        if not operator_wide(content + " " + statement_of(ctx)):
            continue
        item_id = gate.admit(kind, project, content, project)
        if item_id is None:
            continue
        seen.add(norm)
        where = label(project) if project else "global"
        why = f"an operator-wide {kind.replace('_', ' ')}, mentioned {n}×"
        out.append(
            Item(
                safe_text(content, ITEM_CHARS - 20) + f" [{where}]",
                day(last),
                sid,
                label(project),
                {"scope": "global"} | meta(item_id, kind, src, project, score, why),
            )
        )
    return out


def corrections(
    conn: sqlite.Connection,
    key: str | None,
    label: Label,
    n_project: int = 4,
    n_global: int = 2,
    gate: Gate | None = None,
) -> list[Item]:
    gate = gate or Gate()
    out: list[Item] = []
    seen: set[str] = set()

    def add(rows: list[tuple[Any, ...]], scope: str, cap: int) -> None:
        n = 0
        for content, context, ts, sid, src, project, kind, score in rows:
            norm = " ".join(content.lower().split())[:80]
            if src in seen or norm in seen or n >= cap:
                continue
            if scope == "global" and not operator_wide(content):
                continue
            item_id = gate.admit(kind, project, content, project)
            if item_id is None:
                continue
            seen.update((src, norm))
            rejected = ""
            try:
                ctx = orjson.loads(context or "{}")
                rejected = str(ctx.get("rejected_approach") or "") if isinstance(ctx, dict) else ""
            except orjson.JSONDecodeError:
                pass
            text = safe_text(content, 110)
            if rejected:
                text += " (rejected: " + safe_text(rejected, 50) + ")"
            why = "a recent correction " + (
                "in this project" if scope == "project" else "stated operator-wide"
            )
            extra = {"scope": scope} | meta(item_id, kind, src, project, score, why)
            out.append(Item(text, day(ts), sid, label(project), extra))
            n += 1

    q = """SELECT content, context, ts, session_id, source_uuid, project_key, kind, score FROM extractions
           WHERE kind IN ('correction','model_correction') AND score >= ? AND {} ORDER BY ts DESC LIMIT ?"""
    cut = gate.cut("correction")
    if key:
        add(
            conn.execute(q.format("project_key = ?"), (cut, key, n_project * 3)).fetchall(),
            "project",
            n_project,
        )
    add(conn.execute(q.format("project_key IS NOT ?"), (cut, key, 200)).fetchall(), "global", n_global)
    return out


def voice(conn: sqlite.Connection) -> list[Item]:
    v = _profile(conn, "voice_profile")
    if not v or not v.get("prompts"):
        return []
    items = []
    style = [s for s in v.get("style") or [] if isinstance(s, str)]
    items.append(Item(f"writes {', '.join(style) or 'plainly'} (avg {v.get('avg_words', 0)} words/prompt)"))
    typos = [t for t in v.get("typos") or [] if isinstance(t, dict) and t.get("typo")]
    if typos:
        items.append(
            Item(
                "typos: " + ", ".join(f"{t['typo']}→{t.get('meant', '?')}" for t in typos[:6]),
                extra={"typos": typos[:20]},
            )
        )
    openers = _names(v.get("openers"), 5)
    if openers:
        items.append(Item("often opens with: " + ", ".join(openers)))
    return items


def machines(conn: sqlite.Connection, n: int = 3) -> list[Item]:
    items = []
    hosts = ""
    for machine, os_name, users, homes, sessions, last, host_csv in conn.execute(
        """SELECT machine, os, users, homes, sessions, last_ts, hosts FROM machines
               WHERE users != '?' ORDER BY last_ts DESC LIMIT ?""",
        (n,),
    ):
        hosts = hosts or (host_csv or "")
        items.append(
            Item(
                f"{os_name} as {users} ({homes or '?'}), {sessions} sessions",
                day(last),
                extra={"machine": machine},
            )
        )
    if items and hosts:
        items.append(Item("hosts mentioned: " + ", ".join(hosts.split(",")[:6])))
    return items


def last_sessions(
    conn: sqlite.Connection, key: str | None, label: Label, n: int = 4, exclude: str | None = None
) -> list[Item]:
    if not key:
        return []
    rows = conn.execute(
        """SELECT session_id, title, last_ts, project_key FROM sessions
           WHERE project_key = ? AND n_prompts > 0 AND session_id IS NOT ?
           ORDER BY last_ts DESC LIMIT ?""",
        (key, exclude, n * 4),
    ).fetchall()
    out: list[Item] = []
    seen: set[str] = set()
    for sid, title, last, project in rows:
        text = safe_text(title or "(untitled)", 90)
        if text.lower() in seen:
            continue  # resumed and copied sessions share a title
        seen.add(text.lower())
        why = "one of the last sessions in this project"
        out.append(
            Item(
                text,
                day(last),
                sid,
                label(project),
                meta(memory_id("session", sid, ""), "session", None, project, None, why),
            )
        )
        if len(out) >= n:
            break
    return out


def operator_context(
    conn: sqlite.Connection,
    cwd: str | None,
    *,
    budget: int = 1800,
    now: datetime | None = None,
    session_id: str | None = None,
    team: list[Item] | None = None,
    wrong: Wrong | None = None,
    stale_budget_s: float = 0.0,
) -> OperatorContext:
    """The SessionStart bundle for `cwd` (None = no project: only operator-wide sections); `team` is
    the Team memory section the hook fetched (issue 16), fitted within the same budget. Memories the
    user marked `wrong`, and those stale marks (or git checks, up to `stale_budget_s`) show to name
    code that is gone, are left out (`left_out`); `new_marks` are the checks made now, to store."""
    now = now or datetime.now(timezone.utc)
    cwd = stored_cwd(cwd)
    key = project_key(cwd) if cwd else None
    gate = Gate.open(conn, wrong, stale_budget_s)
    label = project_labeller(conn)  # `work/api` and `home/api`, as every other surface names them
    sections: dict[str, list[Item]] = {
        "identity": identity(conn),
        "goal": goals(conn, key, now, label, gate),
        "decisions": _rules(conn, "standing_decisions", key, 5, 2, label, gate),
        "bans": _rules(conn, "bans", key, 5, 2, label, gate),
        "voice": voice(conn),
        "corrections": corrections(conn, key, label, gate=gate),
        "machines": machines(conn),
        "sessions": last_sessions(conn, key, label, exclude=session_id),
        "team": list(team or []),
    }
    also = ", ".join(f"{n} {why}" for why, n in gate.counts().items())
    text, dropped, tokens = render(sections, budget, f"left out: {also}" if also else "")
    ctx = OperatorContext(text, sections, cwd, key, budget, dropped, tokens, gate.left_out)
    ctx.project = label(key) if key else None
    ctx.new_marks = gate.checker.new if gate.checker else []
    return ctx
