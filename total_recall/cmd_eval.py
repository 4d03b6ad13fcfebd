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


_KEYS = ("questions", "session_hit@1", "session_hit@5", "session_hit@10", "mrr", "record_hit@5")


@eval_group.command()
@click.option("--gold", required=True, help="retrieval gold .jsonl (query, gold_sessions, gold_uuids).")
@click.option("--mode", type=click.Choice(["auto", "fts", "hybrid", "both"]), default="auto", show_default=True,
              help="auto: rank as `search` does; fts: full-text only; hybrid: FTS + vectors; both: compare.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def retrieval(obj: object, gold: str, mode: str, as_json: bool) -> None:
    """Session hit@1/5/10, MRR and record-level hit@5 of `search` (FTS-only vs hybrid with --mode)."""
    from index.db import open_reader
    from index.retrieval_eval import compare, evaluate
    from vec.store import VecError

    rows = _read_jsonl(gold)
    conn = open_reader(obj.db)  # type: ignore[attr-defined]
    try:
        if mode == "auto":
            res = evaluate(conn, rows)
        else:
            both = compare(conn, rows, ["fts", "hybrid"] if mode == "both" else [mode])
            res = both if mode == "both" else {"mode": mode, **both[mode]}
    except VecError as exc:
        fail(str(exc), exc.fix)
    if as_json:
        emit_json(res)
        return
    if mode == "both":
        click.echo(f"{'':>16}  {'fts':>8}  {'hybrid':>8}")
        for k in _KEYS:
            click.echo(f"{k:>16}  {res['fts'][k]:>8}  {res['hybrid'][k]:>8}")
        for m in res["hybrid"]["misses"][:15]:
            click.echo(f"  hybrid miss {m['id']} (rank {m['rank']}): {m['query'][:90]}")
        return
    for k in _KEYS:
        click.echo(f"{k:>16}: {res[k]}")
    for m in res["misses"][:15]:
        click.echo(f"  miss {m['id']} (rank {m['rank']}): {m['query'][:90]}")
