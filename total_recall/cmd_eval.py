"""`total-recall eval retrieval|extractors`: measure recall quality against labelled files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from total_recall.options import json_option
from total_recall.output import emit_json, fail, read_jsonl
from total_recall.render import say


@click.group(name="eval")
def eval_group() -> None:
    """Measure retrieval and extraction quality against labelled data."""


_KEYS = ("questions", "session_hit@1", "session_hit@5", "session_hit@10", "mrr", "record_hit@5")
_MODES: dict[str, list[bool | None]] = {
    "auto": [None],
    "fts": [False],
    "hybrid": [True],
    "both": [False, True],
}


def _provenance(paths: tuple[str, ...]) -> dict[str, str]:
    """evidence_file (relative to projects/) -> repository, from corpora's PROVENANCE.tsv files."""
    out: dict[str, str] = {}
    for path in paths:
        p = Path(path)
        if not p.is_file():
            fail(f"provenance file {path} not found", "pass a PROVENANCE.tsv with path and repo columns")
        lines = p.read_text(encoding="utf-8").splitlines()
        head = lines[0].split("\t") if lines else []
        if "path" not in head or "repo" not in head:
            fail(f"{path} has no path and repo columns", "pass a corpus's PROVENANCE.tsv")
        ip, ir = head.index("path"), head.index("repo")
        for line in lines[1:]:
            cols = line.split("\t")
            if len(cols) > max(ip, ir):
                out[cols[ip].removeprefix("projects/")] = cols[ir]
    return out


@eval_group.command()
@click.option(
    "--gold",
    "golds",
    required=True,
    multiple=True,
    help="Retrieval gold .jsonl (query, gold_sessions, gold_uuids); repeatable.",
)
@click.option(
    "--index",
    "indexes",
    multiple=True,
    help="The index to evaluate each --gold on, in the same order (default: --db for every one).",
)
@click.option(
    "--provenance",
    "provs",
    multiple=True,
    help="A corpus's PROVENANCE.tsv: report per repository instead of per project; repeatable.",
)
@click.option(
    "--mode",
    type=click.Choice(list(_MODES)),
    default="auto",
    show_default=True,
    help="auto: rank as `search` does; fts: full-text only; hybrid: FTS + vectors; both: compare.",
)
@json_option
@click.pass_obj
def retrieval(
    obj: object,
    golds: tuple[str, ...],
    indexes: tuple[str, ...],
    provs: tuple[str, ...],
    mode: str,
    as_json: bool,
) -> None:
    """Session hit@1/5/10, MRR and record hit@5 of `search`, overall, per gold file and per source,
    plus how well scores separate the negative questions (abstention)."""
    from index.retrieval import report, run_questions
    from index.store import open_reader
    from vec.errors import VecError

    if indexes and len(indexes) != len(golds):
        fail(
            f"{len(golds)} --gold files but {len(indexes)} --index files",
            "pass one --index per --gold, or none",
        )
    prov = _provenance(provs)
    default_db: Path = obj.db  # type: ignore[attr-defined]
    sets = [
        (g, read_jsonl(g, "gold file"), Path(indexes[i]) if indexes else default_db)
        for i, g in enumerate(golds)
    ]
    res: dict[str, Any] = {}
    try:
        for hybrid in _MODES[mode]:
            outcomes, per_set = [], {}
            for name, rows, db in sets:
                conn = open_reader(db)
                got = run_questions(conn, rows, hybrid=hybrid, provenance=prov)
                conn.close()
                outcomes += got
                per_set[Path(name).name] = report(got)
            one = report(outcomes)
            if len(sets) > 1:
                one["sets"] = per_set
            res["auto" if hybrid is None else ("hybrid" if hybrid else "fts")] = one
    except VecError as exc:
        fail(str(exc), exc.fix)
    if as_json:
        emit_json(res["auto"] if mode == "auto" else res if mode == "both" else {"mode": mode, **res[mode]})
        return
    for name, r in res.items():
        _print_mode(name, r)


def _print_mode(name: str, r: dict[str, Any]) -> None:
    rows = [(k, v) for k, v in r.get("sets", {}).items()] + [("overall", r)]
    say(f"[{name}] {'':<22} " + " ".join(f"{k.replace('session_', ''):>8}" for k in _KEYS))
    for label, v in rows:
        say(f"  {label[:30]:<30}" + " ".join(f"{v[k]:>8}" for k in _KEYS))
    say("  per source:")
    for src, v in r["by_source"].items():
        say(f"    {src[:28]:<28}" + " ".join(f"{v[k]:>8}" for k in _KEYS))
    say(f"  worst source: {r['worst_source']}; abstention: {r['abstention']}")
    for m in r["misses"][:15]:
        say(f"  miss {m['id']} (rank {m['rank']}): {m['query'][:90]}")
