"""`recall` (extractions by topic), `dump` (export rows) and `eval extractors`."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

import click

from extractors.model import ALL_KINDS
from index.store import project_labeller
from total_recall.options import json_option, kinds_choice, since_option, timezone_option
from total_recall.output import emit_json, fail, json_text, read_jsonl, short
from total_recall.render import Col, emit_rows, output_options, pick_format, say, styled


@click.command()
@click.argument("topic", nargs=-1)
@click.option(
    "--kind",
    callback=kinds_choice(ALL_KINDS),
    help="Extraction kind(s), comma-separated: " + ", ".join(ALL_KINDS) + ".",
)
@click.option(
    "--scope", type=click.Choice(["this_cwd", "this_project", "global"]), default="global", show_default=True
)
@click.option("--cwd", help="Working directory for this_cwd / this_project (default: the current one).")
@since_option
@timezone_option
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 500))
@output_options
@click.pass_obj
def recall(
    obj: Any,
    topic: tuple[str, ...],
    kind: str | None,
    scope: str,
    cwd: str | None,
    since: str | None,
    tz_name: str | None,
    limit: int,
    fmt: str | None,
    as_json: bool,
) -> None:
    """Recall decisions, corrections, bans, goals… about a topic (no topic: the most recent). Exits 1
    when nothing is recalled."""
    from index.retrieval import recall_topic as do_recall
    from index.store import open_reader
    from total_recall.cmd_search import nothing
    from total_recall.options import since as read_since

    conn = open_reader(obj.db)
    res = do_recall(
        conn,
        " ".join(topic),
        kind=kind,
        scope=scope,
        cwd=cwd or os.getcwd(),
        since=read_since(since, tz_name),
        limit=limit,
    )
    fmt = pick_format(fmt, as_json)
    label = project_labeller(conn)

    def human() -> None:
        if res.note:
            say(f"({res.note})")
        for h in res.hits:
            say(
                styled((h.ts or "")[:10], "green"), "  ", styled(f"{h.kind:<18}", "cyan"), " ",
                short(h.content, 110), styled(" (superseded)" if h.stale else "", "dim"),
            )  # fmt: skip
            origin = f"session {h.session_id[:8]}" if h.session_id else "promoted by you"
            say(styled(f"            {origin} · {label(h.project)}", "dim"))

    emit_rows(
        [Col("date"), Col("kind"), Col("content"), Col("superseded"), Col("project"), Col("session")],
        [[(h.ts or "")[:10], h.kind, h.content, h.stale, label(h.project), h.session_id] for h in res.hits],
        fmt,
        json_data=[h.to_json() for h in res.hits],
        human=human,
    )
    if not res.hits:
        nothing(
            "nothing recalled" + (f" ({res.note})" if res.note else ""),
            "try another topic, --scope global or drop --since",
        )


@click.command()
@click.option(
    "--source", type=click.Choice(["extractions", "messages"]), default="extractions", show_default=True
)
@click.option("--kind")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "markdown"]), default="jsonl", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, writable=True), help="Write here instead of stdout.")
@click.pass_obj
def dump(obj: Any, source: str, kind: str | None, fmt: str, out: str | None) -> None:
    """Export extractions or messages as JSONL or Markdown."""
    from index.retrieval import iter_extractions, iter_messages
    from index.store import open_reader

    conn = open_reader(obj.db)
    rows = iter_extractions(conn, kind) if source == "extractions" else iter_messages(conn, kind)
    with contextlib.ExitStack() as stack:
        stream = stack.enter_context(open(out, "wb")) if out else sys.stdout.buffer
        n = 0
        for r in rows:
            if fmt == "jsonl":
                stream.write(json_text(r).encode() + b"\n")
            else:
                title = f"### {(r.get('ts') or '')[:16]} · {r['kind']} · session {str(r.get('session_id'))[:8]}\n\n"
                stream.write((title + str(r.get("content") or "") + "\n\n").encode())
            n += 1
    if out:
        click.echo(f"wrote {n} {source} to {out}", err=True)


@click.command()
@click.option(
    "--labels",
    "labels",
    required=True,
    multiple=True,
    help="Labelled .jsonl (uuid, labels, file); repeatable: several sets are scored together.",
)
@click.option(
    "--provenance",
    "provenance",
    multiple=True,
    help="PROVENANCE.tsv beside a corpus (path -> repo); repeatable. Sources default to the project dir.",
)
@json_option
@click.pass_obj
def extractors(obj: Any, labels: tuple[str, ...], provenance: tuple[str, ...], as_json: bool) -> None:
    """Precision / recall / F1 of the index's extractions against labelled records: pooled, per source
    (repository) and macro-averaged over sources."""
    from extractors.evaluation import (
        format_macro,
        format_sources,
        format_table,
        macro,
        predicted_classes,
        read_provenance,
        score_by_source,
        score_labelled,
    )
    from index.retrieval import kinds_by_uuid
    from index.stats import has_messages
    from index.store import open_reader

    items: list[dict[str, Any]] = []
    for n, path in enumerate(labels):
        items += [dict(it, id=f"{n}:{it.get('id', it['uuid'])}") for it in read_jsonl(path, "labels file")]
    repo: dict[str, str] = {}
    for path in provenance:
        if not Path(path).is_file():
            fail(f"provenance file {path} not found", "pass the PROVENANCE.tsv beside the corpus")
        repo.update(read_provenance(path))
    conn = open_reader(obj.db)
    found = kinds_by_uuid(conn, [it["uuid"] for it in items])
    if not has_messages(conn):
        fail("the index holds no messages", "index the corpus the labels refer to first")
    pooled = score_labelled(items, found)
    source = {
        it["id"]: repo.get(str(it.get("file")), _project_dir(str(it.get("file") or ""))) for it in items
    }
    per_source = score_by_source(
        items, {it["id"]: predicted_classes(found.get(it["uuid"], ())) for it in items}, source
    )
    averaged = macro(per_source)
    if as_json:
        emit_json({"pooled": pooled, "macro": averaged, "per_source": per_source})
        return
    click.echo(format_table(pooled))
    click.echo("\nmacro over sources:\n" + format_macro(averaged))
    click.echo("\nper source (P/R (positives)):\n" + format_sources(per_source))


def _project_dir(rel: str) -> str:
    parts = Path(rel).parts
    return parts[1] if len(parts) > 2 and parts[0] == "projects" else "?"
