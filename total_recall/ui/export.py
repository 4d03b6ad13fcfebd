"""Self-contained HTML files from the viewer's templates: one session (`export --format html`, the Session
page's download) and a period's report (`report --html`). CSS and scripts are inlined and a
Content-Security-Policy meta allows exactly those inline scripts (by hash), nothing else, so a file
opened from disk runs no transcript text and fetches nothing."""

from __future__ import annotations

import base64
import hashlib
from importlib.resources import files
from pathlib import Path
from typing import Any

from index.retrieval import SessionFilter, list_sessions
from index.stats import find_session, inspect_session, load_catalog, session_costs
from index.store import session_transcript
from lib import sqlite
from total_recall.ui import pages
from total_recall.ui.render import code_css, environment

REPORT_SESSIONS = 500  # sessions listed in a report (the newest of the period)


def _static(name: str) -> str:
    return files("total_recall.ui").joinpath("static").joinpath(name).read_text(encoding="utf-8")


def _csp(scripts: list[str]) -> str:
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in scripts
    )
    return (
        f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src {hashes or chr(39) + 'none' + chr(39)}; base-uri 'none'; form-action 'none'"
    )


def _standalone(template: str, ctx: dict[str, Any], scripts: list[str]) -> str:
    css = _static("app.css") + "\n" + code_css()
    return (
        environment()
        .get_template(template)
        .render(
            **ctx,
            standalone=True,
            inline_css=css,
            inline_scripts=scripts,
            csp=_csp(scripts),
            csrf="",
            path="",
            nav="",
        )
    )


def session_html(conn: sqlite.Connection, session_id: str) -> str | None:
    """One session as a single HTML file (no scripts at all: the thread folds with <details>)."""
    ctx = pages.session_page(conn, session_id)
    return None if ctx is None else _standalone("session.html", ctx, [])


def session_markdown(conn: sqlite.Connection, session_id: str) -> str | None:
    sid = find_session(conn, session_id) or session_id
    info = inspect_session(conn, sid, 0)
    if info is None:
        return None
    return markdown_export(sid, info, session_transcript(conn, sid, include_tools=True))


def report_html(conn: sqlite.Connection, db: Path, since: str | None, by: str = "day") -> str:
    """Usage charts and the sessions of a period as one HTML file (Chart.js inlined)."""
    usage = pages.usage_page(conn, db, by, since)
    data = list_sessions(conn, SessionFilter(since=since), 1, REPORT_SESSIONS)
    costs = session_costs(conn, load_catalog(), [r["session_id"] for r in data["rows"]])
    for r in data["rows"]:
        r["cost"] = costs.get(r["session_id"])
    scripts = [_static("chart.umd.min.js"), _static("app.js")]
    return _standalone("report.html", {**usage, "data": data}, scripts)


def markdown_export(sid: str, info: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """One session as Markdown (the `export` command and the viewer's download)."""
    head = [
        f"# {info.get('title') or sid}",
        "",
        f"- session: `{sid}`",
        f"- project: `{info.get('project_key')}`",
        f"- from {info.get('first_ts')} to {info.get('last_ts')}",
        "",
    ]
    body = []
    for r in rows:
        who = "**you**" if r["role"] == "user" else ("assistant" if r["role"] == "assistant" else r["role"])
        mark = "" if r["on_main"] else " _(abandoned branch)_"
        body.append(f"### {who} · {(r['ts'] or '')[:19]}{mark}\n\n{r['text']}\n")
    return "\n".join(head + body)
