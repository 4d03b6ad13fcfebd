"""`search`, `sessions` and `inspect`: finding a past session and going back to it (`claude --resume`)."""

from __future__ import annotations

import shlex
from typing import Any

import click

from index.store import project_labeller
from lib.sources import AGENTS
from total_recall.options import (
    cwd_option,
    json_option,
    project_option,
    since_option,
    timezone_option,
)
from total_recall.output import emit_json, fail, is_tty, short
from total_recall.render import (
    Col,
    ago,
    emit_rows,
    fit,
    highlight,
    output_options,
    pick_format,
    plural,
    say,
    size,
    styled,
)

MESSAGE_KINDS = ("prompt", "text", "tool_use", "tool_result", "compact_summary", "away_summary", "command")
NOT_FOUND = 1  # like grep and ripgrep: nothing matched


def resume_line(cwd: str | None, session_id: str) -> str:
    """The shell line that reopens a session in Claude Code."""
    go = f"cd {shlex.quote(cwd)} && " if cwd else ""
    return f"{go}claude --resume {session_id}"


def nothing(what: str, fix: str) -> None:
    """Nothing matched: say so (on stderr, so a pipe stays empty) and exit 1, like grep; JSON: `[]`."""
    click.echo(f"{what} — {fix}", err=True)
    raise click.exceptions.Exit(NOT_FOUND)


def when(ts: str | None) -> str:
    return (ts or "")[:16].replace("T", " ")


@click.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 500))
@project_option
@cwd_option
@since_option
@timezone_option
@click.option("--role", type=click.Choice(["user", "assistant", "system"]), help="Only this speaker.")
@click.option("--kind", type=click.Choice(MESSAGE_KINDS), help="Only this kind of message.")
@click.option("--session", help="Only this session (id or prefix).")
@click.option("--agent", type=click.Choice(AGENTS), help="Only this coding agent's sessions.")
@click.option("--sessions", "by_session", is_flag=True, help="Rank whole sessions (with the resume line).")
@click.option(
    "--mode",
    type=click.Choice(["auto", "fts", "hybrid"]),
    default="auto",
    show_default=True,
    help="auto: add vectors when a vector store exists (loads the model: ~0.5 s per process).",
)
@output_options
@click.pass_obj
def search(
    obj: Any,
    query: tuple[str, ...],
    limit: int,
    project: str | None,
    cwd: str | None,
    since: str | None,
    tz_name: str | None,
    role: str | None,
    kind: str | None,
    session: str | None,
    agent: str | None,
    by_session: bool,
    mode: str,
    fmt: str | None,
    as_json: bool,
) -> None:
    """Full-text (and, with vectors, hybrid) search over past messages. Exits 1 when nothing matches."""
    from index.retrieval import search_messages, search_sessions
    from index.store import Filters, open_reader
    from total_recall.options import since as read_since

    f = Filters(
        project=project,
        cwd=cwd,
        since=read_since(since, tz_name),
        role=role,
        kind=kind,
        session=session,
        agent=agent,
    )
    conn = open_reader(obj.db)
    text = " ".join(query)
    hybrid = {"auto": None, "fts": False, "hybrid": True}[mode]
    fmt = pick_format(fmt, as_json)
    label = project_labeller(conn)
    if by_session:
        sessions = search_sessions(conn, text, f, limit, hybrid=hybrid)
        emit_rows(
            [Col("date"), Col("project"), Col("title"), Col("score"), Col("id"), Col("resume")],
            [
                [(s.last_ts or "")[:10], label(s.project), s.title, round(s.score, 2), s.session_id,
                 resume_line(_cwd(s), s.session_id)]
                for s in sessions
            ],
            fmt,
            json_data=[s.to_json() for s in sessions],
            human=lambda: _print_sessions(sessions, text, label),
        )  # fmt: skip
        if not sessions:
            nothing("no matching sessions", "try fewer words, or drop --since/--project")
        return
    hits = search_messages(conn, text, f, limit, hybrid=hybrid)
    emit_rows(
        [Col("time"), Col("project"), Col("session"), Col("kind"), Col("text")],
        [
            [when(h.ts), label(h.project), h.session_id, f"{h.role}/{h.kind}", _plain(h.snippet, text)]
            for h in hits
        ],
        fmt,
        json_data=[h.to_json() for h in hits],
        human=lambda: _print_hits(hits, text, label),
    )
    if not hits:
        nothing("no matches", "try fewer words, or drop --since/--project/--kind")


def _terms(text: str) -> list[str]:
    from index.store import snippet_terms

    return snippet_terms(text)


def _plain(marked: str, text: str) -> str:
    from index.store import split_marks

    return "".join(p for p, _ in split_marks(marked, _terms(text)))


def _cwd(s: Any) -> str | None:
    return next((h.cwd for h in s.hits if h.cwd), None)


def _print_hits(hits: list[Any], text: str, label: Any) -> None:
    terms = _terms(text)
    for h in hits:
        say(
            styled(when(h.ts), "green"),
            "  ",
            styled(label(h.project), "cyan"),
            "  ",
            styled(h.session_id[:8], "magenta"),
            "  ",
            styled(f"{h.role}/{h.kind}", "dim"),
        )
        say("    ", highlight(h.snippet, terms))


def _print_sessions(sessions: list[Any], text: str, label: Any) -> None:
    terms = _terms(text)
    for s in sessions:
        say(
            styled((s.last_ts or "")[:10], "green"),
            "  ",
            styled(label(s.project), "cyan"),
            "  ",
            styled(short(s.title, 70), "bold"),
            "  ",
            styled(f"score {s.score:.2f}", "dim"),
        )
        for h in s.hits:
            say("    ", styled(f"{h.role}/{h.kind}: ", "dim"), highlight(short(h.snippet, 160), terms))
        say("    ", styled(resume_line(_cwd(s), s.session_id), "yellow"), wrap=False)


@click.command()
@click.argument("text", nargs=-1)
@project_option
@cwd_option
@since_option
@timezone_option
@click.option("--limit", "-n", default=30, show_default=True, type=click.IntRange(1, 10000))
@output_options
@click.pass_obj
def sessions(
    obj: Any,
    text: tuple[str, ...],
    project: str | None,
    cwd: str | None,
    since: str | None,
    tz_name: str | None,
    limit: int,
    fmt: str | None,
    as_json: bool,
) -> None:
    """Recent sessions, newest first, one line each: date, project, title, size, id. TEXT filters the
    titles and first prompts. Piped, the lines are tab-separated: fit for fzf and cut."""
    from index.stats import recent_sessions
    from index.store import Filters, open_reader
    from total_recall.options import since as read_since

    conn = open_reader(obj.db)
    rows = recent_sessions(
        conn, Filters(project=project, cwd=cwd), read_since(since, tz_name), " ".join(text) or None, limit
    )
    label = project_labeller(conn)
    fmt = pick_format(fmt, as_json)
    emit_rows(
        [
            Col("date", style="green"),
            Col("project", style="cyan"),
            Col("title", wrap=True),
            Col("size", right=True),
            Col("id", style="dim", clip=8),
        ],
        [
            [when(r["last_ts"]), label(r["project"]), r["title"], size(r["bytes"]), r["session_id"]]
            for r in rows
        ],
        fmt,
        json_data=[dict(r, resume=resume_line(r["cwd"], r["session_id"])) for r in rows],
    )
    if not rows:
        nothing("no sessions", "drop the filters, or run `total-recall index`")


@click.command()
@click.argument("session_id")
@click.option(
    "--messages",
    type=click.IntRange(0, None),
    default=None,
    help="Show only the first N messages of the conversation (default: all of them).",
)
@json_option
@click.pass_obj
def inspect(obj: Any, session_id: str, messages: int | None, as_json: bool) -> None:
    """Everything the index knows about one session: how to resume it, its extractions, files, tools and
    the whole conversation (in a pager on a terminal)."""
    from index.stats import find_session, inspect_session
    from index.store import open_reader

    conn = open_reader(obj.db)
    sid = find_session(conn, session_id) or session_id
    data = inspect_session(conn, sid, messages, chars=None if not as_json else 300)
    if data is None:
        fail(
            f"no session {session_id!r} in the index",
            "list them with `total-recall sessions`, or search with `total-recall search --sessions TOPIC`",
            kind="not_found",
        )
    from index.retrieval import digest_notes, session_digest

    data["resume"] = resume_line(data.get("cwd"), data["session_id"])
    data["digest"] = session_digest(conn, sid)
    data["digest_notes"] = digest_notes(data["digest"]) if data["digest"] else []
    if as_json:
        emit_json(data)
        return
    lines = "\n".join(_inspect_lines(data, project_labeller(conn)(data.get("project_key")))).split("\n")
    text = "\n".join(lines[:2] + fit(lines[2:])) + "\n"  # the resume line stays whole, to be copied
    if is_tty():
        click.echo_via_pager(text)
    else:
        click.echo(text, nl=False)


def _inspect_lines(d: dict[str, Any], project: str) -> list[str]:
    out = [d.get("title") or d["session_id"], f"  resume:      {d['resume']}"]
    facts = [
        ("session", d["session_id"]),
        ("project", f"{project} ({d.get('project_key')})" if d.get("project_key") else ""),
        ("branch", d.get("git_branch")),
        ("when", _span(d)),
        ("messages", f"{d.get('n_messages') or 0:,} ({plural(d.get('n_prompts') or 0, 'prompt')})"),
        ("models", (d.get("models") or "").replace(",", ", ")),
        ("resumed from", d.get("resumed_from")),
        ("resumed by", ", ".join(d.get("resumed_by") or [])),
        ("subagents", len(d["agents"]) or None),
        ("compactions", len(d["compactions"]) or None),
        ("off the main branch", d["off_main_branch"] and plural(d["off_main_branch"], "message")),
        ("transcript", f"{d.get('source_file')} ({d.get('source_state')})" if d.get("source_file") else ""),
    ]
    out += [f"  {k + ':':<12} {v}" for k, v in facts if v]
    if d["digest_notes"]:  # the whole digest: `total-recall digest SESSION`
        out += ["", "digest:"] + [f"  {line}" for line in d["digest_notes"]]
    if d["tools"]:
        out += ["", "tools: " + ", ".join(f"{t} {n:,}" for t, n in d["tools"].items())]
    out += ["", f"extractions ({len(d['extractions'])}):"]
    out += [f"  {(e['ts'] or '')[:10]}  {e['kind']:<18} {e['content']}" for e in d["extractions"]] or [
        "  none"
    ]
    edits = d["files_edited"]
    out += ["", f"files edited ({len(edits)}):" if edits else "files edited: none"]
    out += [f"  {p} ({plural(n, 'edit')})" for p, n in edits.items()]
    if len(d["files"]) > 1:
        out += ["", f"transcript files ({len(d['files'])}):"] + [f"  {p}" for p in d["files"]]
    shown = [m for m in d["messages"] if (m["text"] or "").strip()]
    empty = len(d["messages"]) - len(shown)
    total = d["conversation_messages"]
    head = f"conversation ({plural(total, 'message')}"
    if len(d["messages"]) < total:
        head += f"; the first {len(d['messages']):,} shown, --messages N to see more"
    if empty:
        head += f"; {plural(empty, 'empty message')} left out"
    out += ["", head + "):"]
    for m in shown:
        who = "you" if m["kind"] == "prompt" else m["role"] if m["kind"] == "text" else m["kind"]
        body = m["text"].strip().replace("\n", "\n      ")
        out.append(
            f"  {(m['ts'] or '')[:16].replace('T', ' ')}  {who}{'' if m['on_main'] else ' (abandoned branch)'}"
        )
        out.append(f"      {body}")
    return out


def _span(d: dict[str, Any]) -> str:
    first, last = when(d.get("first_ts")), when(d.get("last_ts"))
    if not first:
        return ""
    return f"{first} → {last} ({ago(d.get('last_ts'))})" if last and last != first else first
