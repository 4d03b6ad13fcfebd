"""`total-recall eval retrieval|extractors`: measure recall quality against labelled files."""

from __future__ import annotations

from pathlib import Path

import click
import orjson

from total_recall.output import emit_json, fail


def _read_jsonl(path: str) -> list[dict]:
    p = Path(path)
    if not p.is_file():
        fail(f"gold file {path} not found", "pass the path of a .jsonl file")
    rows = []
    for i, line in enumerate(p.read_bytes().splitlines(), 1):
        if line.strip():
            try:
                rows.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                fail(f"{path}:{i} is not valid JSON", "fix or remove that line")
    return rows


@click.group(name="eval")
def eval_group() -> None:
    """Measure retrieval and extraction quality against labelled data."""


@eval_group.command()
@click.option("--gold", required=True, help="retrieval gold .jsonl (query, gold_sessions, gold_uuids).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def retrieval(obj: object, gold: str, as_json: bool) -> None:
    """Session hit@1/5/10, MRR and record-level hit@5 of `search`."""
    from index.db import open_reader
    from index.retrieval_eval import evaluate

    rows = _read_jsonl(gold)
    conn = open_reader(obj.db)  # type: ignore[attr-defined]
    res = evaluate(conn, rows)
    if as_json:
        emit_json(res)
        return
    for k in ("questions", "session_hit@1", "session_hit@5", "session_hit@10", "mrr", "record_hit@5"):
        click.echo(f"{k:>16}: {res[k]}")
    for m in res["misses"][:15]:
        click.echo(f"  miss {m['id']} (rank {m['rank']}): {m['query'][:90]}")
