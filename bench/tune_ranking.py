"""Leave-one-source-out check of the ranking weights (DOC_SHARE and the tool kinds' weights).

For every setting of a small grid, run the FTS retrieval eval on each (index, gold) pair and keep
each question's outcome. Then, for every source (repository), pick the setting that does best on
all *other* sources and score it on the held-out one: the held-out figures are what a new source
should expect; a weight that only one source supports shows up as a gap between the two.

Usage (the two indexes as in docs/eval.md):
  python bench/tune_ranking.py --pair IDX1 ../shared/eval/retrieval-dev.jsonl \
      --pair IDX2 ../shared/eval/retrieval-dev2.jsonl \
      --provenance ../shared/corpus/PROVENANCE.tsv --provenance ../shared/corpus-2/PROVENANCE.tsv
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from index.retrieval import search  # noqa: E402
from index.retrieval.retrieval_eval import Outcome, run_questions, summarise  # noqa: E402
from index.store.db import open_reader  # noqa: E402

GRID = {
    "doc_share": [0.4, 0.0, 0.2, 0.3, 0.5, 0.6],
    "tool_use": [0.6, 0.75, 0.5],
    "tool_result": [0.5, 0.6, 0.4],
}


def provenance(paths: list[str]) -> dict[str, str]:
    out = {}
    for path in paths:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        head = lines[0].split("\t")
        for line in lines[1:]:
            cols = line.split("\t")
            out[cols[head.index("path")].removeprefix("projects/")] = cols[head.index("repo")]
    return out


def run(
    setting: dict[str, float], pairs: list[tuple[str, list[dict]]], prov: dict[str, str]
) -> list[Outcome]:
    search.DOC_SHARE = setting["doc_share"]
    search.KIND_WEIGHT["tool_use"] = setting["tool_use"]
    search.KIND_WEIGHT["tool_result"] = setting["tool_result"]
    out: list[Outcome] = []
    for db, rows in pairs:
        conn = open_reader(Path(db))
        out += run_questions(conn, rows, hybrid=False, provenance=prov)
        conn.close()
    return out


def gain(outcomes: list[Outcome]) -> int:
    """What a setting is chosen by: answerable questions ranked first plus records found."""
    return sum((o.rank == 1) + bool(o.record_hit) for o in outcomes if not o.negative)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pair", nargs=2, action="append", metavar=("INDEX", "GOLD"), required=True)
    ap.add_argument("--provenance", action="append", default=[])
    args = ap.parse_args()
    pairs = [
        (db, [json.loads(x) for x in Path(g).read_text().splitlines() if x.strip()]) for db, g in args.pair
    ]
    prov = provenance(args.provenance)
    settings = [dict(zip(GRID, vals)) for vals in itertools.product(*GRID.values())]
    table = []
    for st in settings:
        got = run(st, pairs, prov)
        table.append((st, got))
        n = len(pairs[0][1])
        a, b = summarise(got[:n]), summarise(got[n:])
        print(
            f"{st}: set1 {a['session_hit@1']}/{a['session_hit@5']}/{a['record_hit@5']}  "
            f"set2 {b['session_hit@1']}/{b['session_hit@5']}/{b['record_hit@5']}",
            flush=True,
        )
    sources = sorted({o.source for _, got in table for o in got if not o.negative})
    held: list[Outcome] = []
    print("\nleave one source out (setting chosen on the other sources -> held-out figures):")
    for src in sources:
        best = max(table, key=lambda t: gain([o for o in t[1] if o.source != src]))  # first wins ties
        mine = [o for o in best[1] if o.source == src]
        held += mine
        s = summarise(mine)
        print(
            f"  {src:<42} {best[0]}  hit@1 {s['session_hit@1']}  record@5 {s['record_hit@5']}  (n={s['questions']})"
        )
    for i, (_, rows) in enumerate(pairs, 1):
        ids = {r.get("id") for r in rows}
        s = summarise([o for o in held if o.id in ids])
        print(
            f"held-out set{i}: hit@1 {s['session_hit@1']} hit@5 {s['session_hit@5']} record@5 {s['record_hit@5']}"
        )


if __name__ == "__main__":
    main()
