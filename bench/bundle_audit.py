"""Audit the SessionStart bundle: for sessions of a labelled corpus, the bundle each would start with,
every memory item marked right/wrong against the labels and against its project.

Usage::

    .venv/bin/python bench/bundle_audit.py [--db PATH] [--root DIR ...] [--labels FILE] [--sessions 20]
                                           [--markdown]

The index is built (or reused) from ``--root`` (default ``../shared/corpus-2/projects``). For each of
``--sessions`` sessions (the ones with the most labelled prompts, ties by id) the bundle for that
session's cwd is built with ``index.briefing.bundle.operator_context`` (the session itself excluded from "last
sessions"). A memory item (goal, standing decision, ban, correction) is traced to the extraction it
came from and is *right* when that record's labels hold its class (goal -> goal, correction ->
correction, ban / standing decision -> rule or decision) and it comes from the session's project or is
stated operator-wide; *wrong* otherwise. *Unlabelled* (its record carries no label: with labels on
every human prompt, not the user's words) counts as wrong. Profile lines
(identity, voice, machines) are about the operator; "last sessions" lines are checked for project only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractors.model import STANDING_KINDS  # noqa: E402
from index.briefing.bundle import operator_context, operator_wide  # noqa: E402
from index.store.db import open_reader  # noqa: E402
from index.store.ingest import run_index  # noqa: E402
from index.store.labels import project_labeller  # noqa: E402

SHARED = ROOT.parent / "shared"
CLASS_OF = {
    "goal": ("goal",),
    "corrections": ("correction",),
    "decisions": ("rule", "decision"),
    "bans": ("rule", "decision"),
}
KIND_OF = {
    "goal": ("goal",),
    "corrections": ("correction", "model_correction"),
    "decisions": STANDING_KINDS,
    "bans": ("ban",),
}


def _source(conn: Any, section: str, item: Any) -> str | None:
    """The record uuid an item came from (matched by session and content)."""
    kinds = KIND_OF[section]
    marks = ",".join("?" * len(kinds))
    text = item.content.split(" (rejected: ")[0].rstrip("…").split(" [")[0]
    for sid_clause, args in (("session_id = ? AND", [item.session_id]), ("", [])):
        row = conn.execute(
            f"SELECT source_uuid FROM extractions WHERE {sid_clause} kind IN ({marks}) AND content LIKE ? LIMIT 1",
            [*args, *kinds, text[:60].replace("%", "") + "%"],
        ).fetchone()
        if row:
            return str(row[0])
    return None


def audit(conn: Any, labels: dict[str, list[str]], sessions: list[tuple[str, str, str]]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    name = project_labeller(conn)  # the bundle's items name projects by these labels
    for sid, cwd, project in sessions:
        ctx = operator_context(conn, cwd, session_id=sid)
        for section, items in ctx.sections.items():
            for item in items:
                row: dict[str, Any] = {
                    "session": sid[:8],
                    "project": name(project),
                    "section": section,
                    "item": item.content[:110],
                    "from": item.project or "-",
                }
                foreign = bool(item.project) and item.project != name(project)
                if section in CLASS_OF:
                    uuid = _source(conn, section, item)
                    got = labels.get(uuid or "")
                    scope_ok = not foreign or operator_wide(item.content)
                    if got is None:
                        row["verdict"] = "unlabelled" if scope_ok else "wrong (other project)"
                    else:
                        ok = any(c in got for c in CLASS_OF[section])
                        row["verdict"] = (
                            ("right" if ok else f"wrong (labels {','.join(got)})")
                            if scope_ok
                            else "wrong (other project)"
                        )
                        row["labels"] = got
                elif section == "sessions":
                    row["verdict"] = "wrong (other project)" if foreign else "right (project)"
                else:
                    row["verdict"] = "operator"
                rows.append(row)
    # Every human prompt of the labelled corpus carries a label, so a memory traced to an unlabelled
    # record came from something else (a tool's report, pasted text): it counts as wrong.
    judged = [r for r in rows if r["section"] in CLASS_OF]
    right = sum(r["verdict"] == "right" for r in judged)
    return {
        "sessions": len(sessions),
        "rows": rows,
        "memory_items": len(judged),
        "right": right,
        "precision": round(right / len(judged), 3) if judged else None,
        "other_project": sum(r["verdict"] == "wrong (other project)" for r in rows),
        "unlabelled": sum(r["verdict"] == "unlabelled" for r in rows),
        "by_section": dict(Counter(r["section"] for r in judged)),
    }


def _sessions(conn: Any, labels_items: list[dict[str, Any]], n: int) -> list[tuple[str, str, str]]:
    per = Counter(it["session_id"] for it in labels_items)
    out = []
    for sid, _ in sorted(per.items(), key=lambda kv: (-kv[1], kv[0])):
        row = conn.execute("SELECT cwd, project_key FROM sessions WHERE session_id = ?", (sid,)).fetchone()
        if row and row[0]:
            out.append((sid, str(row[0]), str(row[1])))
        if len(out) >= n:
            break
    return out


def markdown(res: dict[str, Any]) -> str:
    """The audit as a Markdown table; operator-wide profile lines (the same in every bundle) once."""
    lines = ["| session | project | section | item | from | verdict |", "|---|---|---|---|---|---|"]
    shown: set[str] = set()
    for r in res["rows"]:
        if r["verdict"] == "operator":
            if r["item"] in shown:
                continue
            shown.add(r["item"])
        item = r["item"].replace("|", "\\|")
        lines.append(
            f"| {r['session']} | {r['project']} | {r['section']} | {item} | {r['from']} | {r['verdict']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, default=Path("/tmp/total-recall-bundle-audit/index.db"))
    ap.add_argument("--root", type=Path, action="append", help="transcript root (repeatable)")
    ap.add_argument("--labels", type=Path, default=SHARED / "eval" / "extract-dev2.jsonl")
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    roots = args.root or [SHARED / "corpus-2" / "projects"]
    run_index(args.db, roots, full=True)  # re-extract: the audit is of the extractors as they are now
    items = [json.loads(line) for line in args.labels.open() if line.strip()]
    labels = {it["uuid"]: list(it["labels"]) for it in items}
    conn = open_reader(args.db)
    try:
        res = audit(conn, labels, _sessions(conn, items, args.sessions))
    finally:
        conn.close()
    if args.markdown:
        print(markdown(res))
    else:
        for r in res["rows"]:
            print(
                f"{r['session']} {r['project'][:20]:<20} {r['section']:<12} {r['verdict']:<28} {r['item'][:80]}"
            )
    print(
        f"\n{res['sessions']} sessions; memory items {res['memory_items']}: {res['right']} right "
        f"(precision {res['precision']}); from another project and not operator-wide: {res['other_project']}; "
        f"unlabelled: {res['unlabelled']}; by section {res['by_section']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
