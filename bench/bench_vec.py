"""Vector benchmarks (design.md §7, issue 6): embedding throughput, backfill time, hybrid query latency.

    TOTAL_RECALL_EMBED_MODEL_PATH=DIR .venv/bin/python bench/bench_vec.py --db INDEX.db \
        [--queries ../shared/eval/retrieval-dev.jsonl] [--skip-backfill] [--json]

The index is copied to a temporary directory and its vector store rebuilt there (the original is
never touched), so the backfill figure is a full embedding of the corpus; a second, no-op backfill
shows the incremental cost. Query latency is measured in process, after one warm-up query (the
model load is reported separately), for FTS-only and hybrid, message and session search, as wall
time and as CPU time of the process (all threads: on a shared 2-core machine wall time is 2-3x noisy).
Backfill reports CPU seconds too, and how many distinct texts it embedded for how many chunks (a
replicated corpus, bench/make_corpus.py, repeats every text once per copy).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from index.retrieval.search import search_messages, search_sessions  # noqa: E402
from index.store.db import open_reader  # noqa: E402
from index.store.textstore import unpack  # noqa: E402
from lib.settings import Settings  # noqa: E402
from vec import register as register_vectors  # noqa: E402
from vec.backfill import backfill, rebuild  # noqa: E402
from vec.driver import unavailable_reason  # noqa: E402
from vec.embed import MESSAGE_KINDS, Embedder, chunk_text, model_config  # noqa: E402
from vec.hybrid import clear_cache  # noqa: E402

SETTINGS = Settings.from_env()  # this script's one read of the environment


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))], 2) if xs else 0.0


def _sample_chunks(db: Path, n: int) -> list[str]:
    conn = open_reader(db)
    kinds = ",".join(f"'{k}'" for k in MESSAGE_KINDS)
    out: list[str] = []
    for (body,) in conn.execute(f"SELECT body FROM messages WHERE kind IN ({kinds}) ORDER BY id"):
        out += chunk_text(unpack(body))
        if len(out) >= n:
            break
    return out[:n]


def throughput(db: Path, n: int) -> dict[str, Any]:
    emb = Embedder(model_config(SETTINGS))
    t = time.perf_counter()
    emb.embed(["warm up"])
    load_s = time.perf_counter() - t
    texts = _sample_chunks(db, n)
    t = time.perf_counter()
    emb.embed(texts)
    dt = time.perf_counter() - t
    return {
        "model_load_s": round(load_s, 3),
        "texts": len(texts),
        "mean_chars": round(statistics.mean(len(x) for x in texts), 1) if texts else 0,
        "texts_per_s": round(len(texts) / dt, 1) if dt else 0.0,
    }


def backfill_times(db: Path, work: Path) -> dict[str, Any]:
    copy = work / "index.db"
    for suffix in ("", "-wal", "-shm"):
        if Path(str(db) + suffix).exists():
            shutil.copyfile(str(db) + suffix, str(copy) + suffix)
    full = rebuild(copy, model_config(SETTINGS))
    t = time.perf_counter()
    noop = backfill(copy, model_config(SETTINGS))
    return {
        "full": full.to_json(),
        "noop_s": round(time.perf_counter() - t, 3),
        "noop_vectors_added": noop.vectors_added,
        "db": str(copy),
    }


def latency(db: Path, queries: list[str]) -> dict[str, Any]:
    conn = open_reader(db)
    t = time.perf_counter()
    search_messages(conn, "warm up the model", hybrid=True)
    first = time.perf_counter() - t
    out: dict[str, Any] = {"queries": len(queries), "first_hybrid_query_s": round(first, 3)}
    for name, fn in (("messages", search_messages), ("sessions", search_sessions)):
        for mode, hybrid in (("fts", False), ("hybrid", True)):
            ms, cpu = [], []
            clear_cache()  # every query pays for its own embedding and KNN
            for q in queries:
                t, c = time.perf_counter(), time.process_time()
                fn(conn, q, limit=10, hybrid=hybrid)
                ms.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)
            out[f"{name}_{mode}_ms"] = {"p50": _pct(ms, 0.5), "p95": _pct(ms, 0.95), "max": _pct(ms, 1.0)}
            out[f"{name}_{mode}_cpu_ms"] = {
                "p50": _pct(cpu, 0.5),
                "p95": _pct(cpu, 0.95),
                "max": _pct(cpu, 1.0),
            }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument(
        "--queries",
        type=Path,
        default=Path(__file__).resolve().parent.parent.parent / "shared" / "eval" / "retrieval-dev.jsonl",
    )
    ap.add_argument("--texts", type=int, default=1000, help="texts for the throughput run")
    ap.add_argument("--skip-backfill", action="store_true", help="use the DB's existing store for latency")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    reason = unavailable_reason()
    if reason:
        sys.exit(reason)
    register_vectors(SETTINGS)  # search ranks with vectors as the CLI does
    queries = [json.loads(line)["query"] for line in args.queries.read_text().splitlines() if line.strip()]
    res: dict[str, Any] = {
        "model": model_config(SETTINGS).label,
        "cpus": os.cpu_count(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
    }
    res["throughput"] = throughput(args.db, args.texts)
    with tempfile.TemporaryDirectory() as work:
        db = args.db
        if not args.skip_backfill:
            res["backfill"] = backfill_times(args.db, Path(work))
            db = Path(res["backfill"].pop("db"))
        res["latency"] = latency(db, queries)
    res["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    if args.json:
        print(json.dumps(res, indent=2))
        return
    t = res["throughput"]
    print(f"model {res['model']} on {res['cpus']} CPUs (load {res['loadavg_start']} -> {res['loadavg_end']})")
    print(
        f"embedding: {t['texts_per_s']} texts/s ({t['texts']} chunks, mean {t['mean_chars']} chars); "
        f"model load {t['model_load_s']} s"
    )
    if "backfill" in res:
        b = res["backfill"]
        f = b["full"]
        print(
            f"backfill (full): {f['vectors_added']} chunks, {f['embedded']} distinct texts embedded, in "
            f"{f['elapsed_s']} s wall / {f['cpu_s']} s CPU ({f['texts_per_s']} texts/s); "
            f"no-op backfill {b['noop_s']} s; peak RSS {res['peak_rss_mb']} MB"
        )
    lat = res["latency"]
    print(
        f"latency over {lat['queries']} queries (first hybrid query incl. model load: {lat['first_hybrid_query_s']} s)"
    )
    for k, v in lat.items():
        if k.endswith("_ms"):
            print(f"  {k[:-3]:<18} p50 {v['p50']:>7} ms   p95 {v['p95']:>7} ms   max {v['max']:>7} ms")


if __name__ == "__main__":
    main()
