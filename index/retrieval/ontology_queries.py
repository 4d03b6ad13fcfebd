"""Read-side queries over the ontology and profile tables (X12–X17): projects as a graph, machines,
the operator's vocabulary, and the materialised profiles."""

from __future__ import annotations

import re
from typing import Any

import orjson

from extractors.model import STANDING_KINDS
from index.retrieval.search import search_messages
from index.store.filters import Filters
from index.store.labels import Label, project_labeller
from index.store.profiles import PROFILE_NAMES
from lib import sqlite
from lib.project import project_key

_SEP = re.compile(r"[/\\]")

# Extraction kinds that can state what a term means in this project.
_TERM_KINDS = ("domain_fact", "implicit_preference", *STANDING_KINDS, "decision", "ban")


def profile(conn: sqlite.Connection, name: str) -> tuple[dict[str, Any], str | None]:
    """A materialised profile (`index.store.profiles.PROFILE_NAMES`) and when it was computed."""
    if name not in PROFILE_NAMES:
        raise ValueError(f"unknown profile {name!r}")
    row = conn.execute("SELECT data, updated_at FROM profiles WHERE name=?", (name,)).fetchone()
    if not row:
        return {}, None
    try:
        data = orjson.loads(row[0])
    except orjson.JSONDecodeError:
        return {}, row[1]
    return (data if isinstance(data, dict) else {"items": data}), row[1]


def _csv(value: str | None) -> list[str]:
    return [x for x in (value or "").split(",") if x]


def _home(path: str) -> str | None:
    m = re.match(r"^(?:/Users/|/home/|[A-Za-z]:\\Users\\)[^/\\]+", path)
    return m.group(0) if m else None


def _under(child: str, parent: str) -> bool:
    return len(child) > len(parent) and child.startswith(parent) and child[len(parent)] in "/\\"


def project_graph(conn: sqlite.Connection, *, focus: str | None, limit: int) -> dict[str, Any]:
    """Projects as nodes; edges for nesting (a project inside another's tree), a shared machine home,
    and — for the focus project — files its sessions touched inside other projects."""
    rows = conn.execute(
        """SELECT project_key, name, cwds, sessions, prompts, first_ts, last_ts, branches, models FROM projects
           ORDER BY last_ts DESC"""
    ).fetchall()
    label = project_labeller(conn)
    nodes = [
        {
            "project": label(r[0]) if r[0] else r[1],
            "project_key": r[0],
            "cwds": _csv(r[2]),
            "sessions": r[3],
            "prompts": r[4],
            "first_date": (r[5] or "")[:10] or None,
            "last_date": (r[6] or "")[:10] or None,
            "branches": _csv(r[7])[:5],
            "models": _csv(r[8])[:3],
        }
        for r in rows
    ]
    keys = [n["project_key"] for n in nodes if n["project_key"]]
    focus_key, candidates = _focus(keys, focus, label) if focus else (None, [])
    edges: list[dict[str, Any]] = []
    for a in keys:
        for b in keys:
            if a != b and _under(b, a):
                edges.append({"from": label(a), "to": label(b), "kind": "contains"})
    homes: dict[str, list[str]] = {}
    for k in keys:
        h = _home(k)
        if h and k != h:
            homes.setdefault(h, []).append(k)
    if focus_key:
        edges += _references(conn, focus_key, keys, label)
        fh = _home(focus_key)
        for k in homes.get(fh or "", []):
            if k != focus_key:
                edges.append({"from": label(focus_key), "to": label(k), "kind": "same_machine"})
        near = {focus_key} | {k for e in edges for k in keys if label(k) in (e["from"], e["to"])}
        nodes = [n for n in nodes if n["project_key"] in near] + [
            n for n in nodes if n["project_key"] not in near
        ]
    else:
        for h, ks in homes.items():
            if len(ks) > 1:
                edges.append(
                    {
                        "machine_home": h,
                        "projects": [label(k) for k in ks[:20]],
                        "kind": "same_machine",
                    }
                )
    return {
        "focus": label(focus_key) if focus_key else None,
        "focus_key": focus_key,
        **({"focus_ambiguous": candidates} if candidates else {}),
        "projects_total": len(nodes),
        "nodes": nodes[:limit],
        "edges": edges[: limit * 3],
    }


def _focus(keys: list[str], focus: str, label: Label) -> tuple[str | None, list[str]]:
    """The project `focus` names — a key, its unique label (`work/api`), a bare name that only one
    project ends with (`api`), a path inside one — and, when a bare name fits several, their labels
    (no focus then: picking one of two `api`s would answer about the wrong project)."""
    if focus in keys:
        return focus, []
    fits = [k for k in keys if label(k) == focus or label(k).endswith("/" + focus)]
    if len(fits) > 1:
        return None, sorted(label(k) for k in fits)
    found = fits[0] if fits else project_key(focus)
    if found in keys:
        return found, []
    return next((k for k in keys if focus in k), None), []


REFERENCE_SESSIONS = 12


def _references(conn: sqlite.Connection, focus: str, keys: list[str], label: Label) -> list[dict[str, Any]]:
    """Files the focus project's latest sessions read or edited that live inside another project."""
    others = {k for k in keys if k != focus and not _under(k, focus) and len(k) > 3}
    counts: dict[str, int] = {}
    seen: dict[str, str | None] = {}
    for (target,) in conn.execute(
        """SELECT m.tool_target FROM messages m WHERE m.session_id IN (
                   SELECT session_id FROM sessions WHERE project_key = ? ORDER BY last_ts DESC LIMIT ?)
               AND m.kind = 'tool_use' AND m.tool_name IN ('Read','Edit','Write','MultiEdit','NotebookEdit',
               'Grep','Glob') AND m.tool_target IS NOT NULL""",
        (focus, REFERENCE_SESSIONS),
    ):
        if target.startswith(focus):
            continue
        if target not in seen:
            seen[target] = _owner(target, others)
        owner = seen[target]
        if owner:
            counts[owner] = counts.get(owner, 0) + 1
    return [
        {
            "from": label(focus),
            "to": label(k),
            "kind": "references_files",
            "count": n,
            "from_last_sessions": REFERENCE_SESSIONS,
        }
        for k, n in sorted(counts.items(), key=lambda kv: -kv[1])
    ]


def _owner(path: str, keys: set[str]) -> str | None:
    """The deepest project key that `path` lies in (walking up its parent directories)."""
    p = path.rstrip("/\\")
    while p:
        if p in keys:
            return p
        cut = max(p.rfind("/"), p.rfind("\\"))
        if cut <= 0:
            return None
        p = p[:cut]
    return None


def machine_inventory(conn: sqlite.Connection) -> dict[str, Any]:
    rows = conn.execute(
        "SELECT machine, os, users, homes, sessions, first_ts, last_ts, hosts FROM machines ORDER BY last_ts DESC"
    ).fetchall()
    hosts: list[str] = []
    machines = []
    for machine, os_name, users, homes, sessions, first, last, host_csv in rows:
        hosts = hosts or _csv(host_csv)
        machines.append(
            {
                "machine": machine,
                "os": os_name,
                "user": users,
                "homes": _csv(homes),
                "sessions": sessions,
                "first_date": (first or "")[:10] or None,
                "last_date": (last or "")[:10] or None,
            }
        )
    return {"machines": machines, "hosts_mentioned": hosts}


def define_term(conn: sqlite.Connection, term: str, *, limit: int) -> dict[str, Any]:
    """What the operator means by `term`: the vocabulary entry, facts that mention it, and the places
    it was used (through the one search function)."""
    t = term.strip()
    row = conn.execute(
        "SELECT term, uses, projects, definition, source_uuid FROM vocabulary WHERE term = ? "
        "COLLATE NOCASE ORDER BY uses DESC LIMIT 1",
        (t,),
    ).fetchone()
    entry = None
    if row:
        entry = {
            "term": row[0],
            "uses": row[1],
            "projects": _csv(row[2]),
            "definition": row[3],
            "definition_uuid": row[4],
        }
    facts, label = [], project_labeller(conn)
    phrase = '"' + t.replace('"', "") + '"'
    try:
        for content, sid, src, proj, ts in conn.execute(
            f"""SELECT e.content, e.session_id, e.source_uuid, e.project_key, e.ts
                   FROM extractions_fts f JOIN extractions e ON e.id = f.rowid
                   WHERE extractions_fts MATCH ? AND e.kind IN ({",".join("?" * len(_TERM_KINDS))})
                   ORDER BY e.ts DESC LIMIT ?""",
            (phrase, *_TERM_KINDS, limit),
        ):
            facts.append(
                {
                    "content": content,
                    "date": (ts or "")[:10] or None,
                    "session_id": sid,
                    "project": label(proj) if proj else None,
                    "uuid": src,
                }
            )
    except sqlite.OperationalError:
        facts = []
    uses = [
        {
            "snippet": h.snippet,
            "date": (h.ts or "")[:10] or None,
            "session_id": h.session_id,
            "project": label(h.project) if h.project else None,
            "uuid": h.uuid,
            "role": h.role,
        }
        for h in search_messages(conn, t, Filters(kind="prompt"), limit=limit)
    ]
    if len(uses) < limit:
        seen = {u["uuid"] for u in uses}
        uses += [
            {
                "snippet": h.snippet,
                "date": (h.ts or "")[:10] or None,
                "session_id": h.session_id,
                "project": label(h.project) if h.project else None,
                "uuid": h.uuid,
                "role": h.role,
            }
            for h in search_messages(conn, t, Filters(kind="text"), limit=limit - len(uses))
            if h.uuid not in seen
        ]
    return {"term": t, "entry": entry, "facts": facts, "uses": uses}
