"""Vector benchmarks (design.md §7, issue 6): embedding throughput, backfill time, hybrid query latency.

    TOTAL_RECALL_EMBED_MODEL_PATH=DIR .venv/bin/python bench/bench_vec.py --db INDEX.db \
        [--queries ../shared/eval/retrieval-dev.jsonl] [--skip-backfill] [--json]
    ... bench_vec.py --db INDEX.db --lengths 100 --corpus-mb 111   # where the embedding time goes

The index is copied to a temporary directory and its vector store rebuilt there (the original is
never touched), so the backfill figure is a full embedding of the corpus; a second, no-op backfill
shows the incremental cost. Query latency is measured in process, after one warm-up query (the
model load is reported separately), for FTS-only and hybrid, message and session search, as wall
time and as CPU time of the process (all threads: on a shared 2-core machine wall time is 2-3x noisy).
Backfill reports CPU seconds too, and how many distinct texts it embedded for how many chunks (a
replicated corpus, bench/make_corpus.py, repeats every text once per copy).

`--lengths N` instead profiles the embedding cost by token count: every distinct text a backfill of
the index would embed is tokenized, N texts of each token-count bucket are embedded (CPU time per
text), and the table gives each bucket's share of texts and of the estimated CPU; with `--corpus-mb`
(the size of the transcripts indexed) it adds texts per MB and the CPU-seconds per MB.
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
from vec.backfill import backfill, rebuild, text_hash  # noqa: E402
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


def distinct_texts(db: Path) -> list[tuple[str, str]]:
    """(kind, text) of every distinct chunk a full backfill embeds (as vec/backfill.py chunks and shares)."""
    conn = open_reader(db)
    kinds = ",".join(f"'{k}'" for k in MESSAGE_KINDS)
    sources = [
        ("message", unpack(body))
        for (body,) in conn.execute(f"SELECT body FROM messages WHERE kind IN ({kinds})")
    ]
    sources += [("extraction", str(c)) for (c,) in conn.execute("SELECT content FROM extractions")]
    sources += [
        ("session", str(t)) for (t,) in conn.execute("SELECT title FROM sessions WHERE title NOT NULL")
    ]
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, str]] = []
    for kind, text in sources:
        for chunk in chunk_text(text):
            key = (kind, text_hash(chunk))
            if key not in seen:
                seen.add(key)
                out.append((kind, chunk))
    return out


BUCKETS = (16, 32, 64, 96, 128, 192, 256, 512)  # upper bounds, in tokens


def lengths(db: Path, sample: int, corpus_mb: float) -> dict[str, Any]:
    """Where the embedding time goes: texts and estimated CPU by token count (one model session)."""
    import random

    emb = Embedder(model_config(SETTINGS))
    emb.embed(["warm up"])
    model = emb._load(0)
    texts = [t for _, t in distinct_texts(db)]
    counts = [sum(e.attention_mask) for e in model.model.tokenizer.encode_batch(texts)]
    by: dict[int, list[str]] = {b: [] for b in BUCKETS}
    for text, n in zip(texts, counts):
        by[next((b for b in BUCKETS if n <= b), BUCKETS[-1])].append(text)
    rng = random.Random(18)
    rows = []
    for b, xs in by.items():
        if not xs:
            continue
        part = sorted(rng.sample(xs, min(sample, len(xs))), key=len)
        c = time.process_time()
        for i in range(0, len(part), 4):
            list(model.embed(part[i : i + 4], batch_size=4))
        per = (time.process_time() - c) / len(part)
        rows.append(
            {
                "max_tokens": b,
                "texts": len(xs),
                "cpu_ms_per_text": round(per * 1000, 2),
                "cpu_s": per * len(xs),
            }
        )
    total = sum(r["cpu_s"] for r in rows) or 1.0
    for r in rows:
        r["share_texts"] = round(r["texts"] / len(texts), 3)
        r["share_cpu"] = round(r["cpu_s"] / total, 3)
        r["cpu_s"] = round(r["cpu_s"], 1)
    out: dict[str, Any] = {
        "texts": len(texts),
        "tokens": sum(counts),
        "mean_tokens": round(statistics.mean(counts), 1) if counts else 0,
        "cpu_s_one_session": round(total, 1),
        "texts_per_cpu_s": round(len(texts) / total, 1),
        "buckets": rows,
    }
    if corpus_mb:
        out["texts_per_mb"] = round(len(texts) / corpus_mb, 1)
        out["cpu_s_per_mb"] = round(total / corpus_mb, 2)
    return out


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
    ap.add_argument("--lengths", type=int, default=0, help="profile cost by token count, N texts a bucket")
    ap.add_argument("--corpus-mb", type=float, default=0.0, help="MB of transcripts the index holds")
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
    if args.lengths:
        res["lengths"] = lengths(args.db, args.lengths, args.corpus_mb)
        print(json.dumps(res, indent=2))
        return
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
