"""Search latency of this checkout against another one (e.g. `git archive <rev>` unpacked) on one index,
or each on its own (`--baseline-db`: the index the other tree's code wrote, for a change of its layout).

CPU time (process_time) per query, so the comparison holds on a busy machine where wall-clock
figures drift; the two trees run alternately in separate processes over the same queries (both dev
gold sets, 3 rounds). Usage:
  python bench/bench_search.py --db INDEX [--baseline DIR [--baseline-db INDEX]] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDS = [ROOT.parent / "shared" / "eval" / f"{g}.jsonl" for g in ("retrieval-dev", "retrieval-dev2")]

_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from lib import sqlite
from index.retrieval.search import search_messages, search_sessions
qs = json.loads(sys.argv[3])
conn = sqlite.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
for q in qs[:5]:
    search_messages(conn, q, hybrid=False)
out = {}
for name, fn in (("search", search_messages), ("search --sessions", search_sessions)):
    ts = []
    for _ in range(3):
        for q in qs:
            t = time.process_time()
            fn(conn, q, limit=10, hybrid=False)
            ts.append(time.process_time() - t)
    out[name] = ts
print(json.dumps(out))
"""


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def run(tree: Path, db: str, queries: list[str]) -> dict[str, list[float]]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tree), db, json.dumps(queries)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--baseline", help="another source tree to compare with")
    ap.add_argument("--baseline-db", help="the index the baseline tree searches (default: --db)")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    queries = [
        json.loads(x)["query"] for g in GOLDS if g.exists() for x in g.read_text().splitlines() if x.strip()
    ]
    trees = [("this", ROOT, args.db)]
    if args.baseline:
        trees.append(("baseline", Path(args.baseline), args.baseline_db or args.db))
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for label, tree, db in trees:
            for name, ts in run(tree, db, queries).items():
                times.setdefault((label, name), []).extend(ts)
    for (label, name), ts in sorted(times.items()):
        print(
            f"{label:>8} {name:<18} CPU p50 {statistics.median(ts) * 1000:.1f} ms  p95 {pct(ts, 95) * 1000:.1f} ms"
            f"  ({len(ts)} queries)"
        )


if __name__ == "__main__":
    main()
