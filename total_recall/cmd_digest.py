"""`digest SESSION` and the Markdown project memory: `memory write` (conversations/<session-id>.md and
master.md under `_memory/`) and `memory import` (the opt-in `@_memory/master.md` line in CLAUDE.md).

`memory write` is incremental: each conversation file ends with a mark holding a hash of its digest's
signature, so only sessions whose digest changed are rendered again; a file is rewritten only when
its bytes differ, and a conversation of ours whose session left the index (forgotten) is deleted.
Nothing else is written beside the files, so an append changes exactly one conversation and master.md.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import click

from lib import sqlite
from total_recall.options import json_option
from total_recall.output import emit_json, fail

MARK = "<!-- total-recall digest "
_UNSAFE = re.compile(r"[^\w.-]")


@click.command()
@click.argument("session_id", default="")
@click.option(
    "--current",
    default="",
    help="Session used when SESSION_ID is empty (the slash command passes ${CLAUDE_SESSION_ID}).",
)
@json_option
@click.pass_obj
def digest(obj: Any, session_id: str, current: str, as_json: bool) -> None:
    """A past session at a glance: request, investigated, learned, completed, next steps, files."""
    from index.retrieval import digest_markdown, session_digest
    from index.store import open_reader

    wanted = session_id.strip() or current.strip()
    if not wanted:
        fail(
            "say which session",
            "pass a SESSION_ID (or a unique prefix); find one with `total-recall search --sessions TOPIC`",
        )
    d = session_digest(open_reader(obj.db), wanted)
    if d is None:
        fail(f"no session {wanted!r} in the index", "find one with `total-recall search --sessions TOPIC`")
    if as_json:
        emit_json(d)
    else:
        click.echo(digest_markdown(d), nl=False)


@click.group("memory")
def memory_group() -> None:
    """Markdown project memory: conversations/<session>.md and a synthesised master.md."""


def _project(conn: sqlite.Connection, name: str | None) -> str:
    from index.retrieval import projects_named
    from index.store import stored_cwd
    from lib.project import project_key

    if name:
        keys = projects_named(conn, name)
        if len(keys) > 1:
            fail(f"project {name!r} is ambiguous ({', '.join(keys[:4])})", "pass the full project key")
    else:
        here = stored_cwd(project_key(os.getcwd()))
        keys = projects_named(conn, here) if here else []
        name = here
    if not keys:
        fail(f"no indexed sessions for project {name!r}", "pass --project NAME (see `total-recall status`)")
    return keys[0]


def _put(path: Path, text: str) -> bool:
    """Write `text` unless the file already holds exactly it; returns whether it wrote."""
    data = text.encode("utf-8")
    if path.is_file() and path.read_bytes() == data:
        return False
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return True


def _mark(path: Path) -> str | None:
    """The digest mark on the last line of a conversation file we wrote (None: not ours)."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - 200))
            tail = f.read().decode("utf-8", "replace").rstrip("\n").rsplit("\n", 1)[-1]
    except OSError:
        return None
    return tail if tail.startswith(MARK) else None


def write_memory(conn: sqlite.Connection, key: str, out: Path, budget: int) -> dict[str, Any]:
    """Write the project's conversations and master.md under `out`; returns what changed."""
    from index.retrieval import conversation_markdown, master_markdown, memory_sessions, session_digest

    conv = out / "conversations"
    conv.mkdir(parents=True, exist_ok=True)
    sessions = memory_sessions(conn, key)
    written: list[str] = []
    names = set()
    for sid, sig in sessions:
        path = conv / f"{_UNSAFE.sub('_', sid)}.md"
        names.add(path.name)
        mark = f"{MARK}{hashlib.blake2b(sig.encode(), digest_size=8).hexdigest()} -->"
        if _mark(path) == mark:
            continue
        d = session_digest(conn, sid)
        if d is not None and _put(path, conversation_markdown(d) + mark + "\n"):
            written.append(path.name)
    removed = []
    for path in sorted(conv.glob("*.md")):
        if path.name not in names and _mark(path) is not None:  # ours, and its session is gone
            path.unlink()
            removed.append(path.name)
    master = _put(out / "master.md", master_markdown(conn, key, budget))
    return {
        "project": key,
        "dir": str(out),
        "conversations": len(sessions),
        "written": written,
        "removed": removed,
        "master_changed": master,
    }


@memory_group.command("write")
@click.option("--project", help="Project key or its last path part (default: the current directory's).")
@click.option("--dir", "out_dir", default="_memory", show_default=True, type=click.Path(file_okay=False))
@click.option(
    "--budget",
    default=8192,
    show_default=True,
    type=click.IntRange(1000, 1_000_000),
    help="master.md size cap (chars).",
)
@json_option
@click.pass_obj
def memory_write(obj: Any, project: str | None, out_dir: str, budget: int, as_json: bool) -> None:
    """Write conversations/<session-id>.md for changed sessions and re-synthesise master.md."""
    from index.store import open_reader

    conn = open_reader(obj.db)
    key = _project(conn, project)
    try:
        res = write_memory(conn, key, Path(out_dir), budget)
    except OSError as exc:
        fail(f"cannot write the memory under {out_dir}: {exc.strerror or exc}", "pass a writable --dir")
    if as_json:
        emit_json(res)
        return
    click.echo(
        f"{res['dir']}: {res['conversations']} conversations, {len(res['written'])} written, "
        f"{len(res['removed'])} removed, master.md {'updated' if res['master_changed'] else 'unchanged'}"
    )


@memory_group.command("import")
@click.option("--dir", "out_dir", default="_memory", show_default=True, help="Folder `memory write` writes.")
@click.option("--file", "claude_md", default="CLAUDE.md", show_default=True, type=click.Path(dir_okay=False))
def memory_import(out_dir: str, claude_md: str) -> None:
    """Opt in: add `@<dir>/master.md` to CLAUDE.md so Claude Code loads the project memory (idempotent)."""
    line = f"@{out_dir.rstrip('/')}/master.md"
    path = Path(claude_md)
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        if line in text.splitlines():
            click.echo(f"{claude_md} already imports {line}")
            return
        sep = "" if not text or text.endswith("\n") else "\n"
        path.write_text(f"{text}{sep}{line}\n", encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot update {claude_md}: {exc}", "pass --file with a writable UTF-8 CLAUDE.md")
    click.echo(f"added {line} to {claude_md}")


@memory_group.command("show")
@click.option("--project", help="Project key or its last path part (default: the current directory's).")
@click.option("--dir", "out_dir", default="_memory", show_default=True, type=click.Path(file_okay=False))
@click.option("--budget", default=8192, show_default=True, type=click.IntRange(1000, 1_000_000))
@click.pass_obj
def memory_show(obj: Any, project: str | None, out_dir: str, budget: int) -> None:
    """Print <dir>/master.md; without one, the synthesis from the index (nothing written)."""
    from index.retrieval import master_markdown
    from index.store import open_reader

    master = Path(out_dir) / "master.md"
    if master.is_file():
        try:
            click.echo(master.read_text(encoding="utf-8"), nl=False)
            return
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"cannot read {master}: {exc}", "run `total-recall memory write` again")
    conn = open_reader(obj.db)
    click.echo(master_markdown(conn, _project(conn, project), budget), nl=False)


def register(cli: click.Group) -> None:
    cli.add_command(digest)
    cli.add_command(memory_group)
