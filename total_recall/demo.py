"""`total-recall demo`: index the user's transcripts (or a generated demo corpus) and show a search."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from total_recall.output import short
from total_recall.render import duration, highlight, plural, say


def _has_transcripts(roots: list[Path]) -> bool:
    return any(next(r.rglob("*.jsonl"), None) is not None for r in roots if r.is_dir())


@click.command()
@click.option("--demo-corpus", is_flag=True, help="Use the generated demo corpus even if transcripts exist.")
@click.pass_obj
def demo(obj: Any, demo_corpus: bool) -> None:
    """Index your transcripts (or a generated demo corpus when there are none) and show what it found."""
    from index.briefing import operator_context
    from index.retrieval import recall_topic as recall
    from index.retrieval import search_sessions
    from index.store import open_reader, run_index, snippet_terms
    from total_recall.democorpus import CWD, write_demo_corpus

    db: Path = obj.db
    roots = obj.settings.projects_roots()
    queries = ["error failed", "decided instead", "tests pass"]
    cwd, topic = os.getcwd(), ""
    if demo_corpus or not _has_transcripts(roots):
        home = obj.settings.data_dir() / "demo"
        roots = [write_demo_corpus(home)]
        db = home / "index.db"
        queries = ["retry webhook", "Celery RQ", "ERR_TIMEOUT", "flaky login"]
        cwd, topic = CWD, "celery"
        click.echo(f"No Claude Code transcripts found; using a generated demo corpus in {roots[0]}")
    report = run_index(db, roots, jobs=2)
    click.echo(
        f"Indexed {plural(report.records, 'record')} (+{plural(report.messages_added, 'message')}, "
        f"+{plural(report.extractions_added, 'extraction')}) from {plural(report.files, 'file')} in "
        f"{duration(report.elapsed_s)} into {db}"
    )
    conn = open_reader(db)
    for q in queries:
        click.echo(f"\n$ total-recall --db {db} search --sessions {q!r}")
        for s in search_sessions(conn, q, limit=3):
            click.echo(f"  {s.session_id[:8]}  {(s.last_ts or '')[:10]}  {short(s.title, 60)}")
            for h in s.hits[:2]:
                say(f"      {h.role}/{h.kind}: ", highlight(short(h.snippet, 110), snippet_terms(q)))
    click.echo(f"\n$ total-recall --db {db} recall {topic!r}")
    for r in recall(conn, topic, limit=6).hits:
        click.echo(f"  {(r.ts or '')[:10]}  {r.kind:<18} {short(r.content, 90)}")
    click.echo(f"\n$ total-recall --db {db} context --cwd {cwd}   # what a new session here starts with")
    click.echo(operator_context(conn, cwd).text or "  (nothing remembered for this directory yet)")
