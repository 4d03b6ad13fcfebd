"""Extraction and profile counters alone, over files parsed and scrubbed once.

Usage: python bench/bench_extract.py [--projects DIR] [--work DIR] [--stage extract|counters|none] [--rounds N]
       [--profile N]

The worker's extraction (`index.store.prepare._extract`) and profile counters (`chunk_counters`) run
over the chunks of every file of the corpus, after the parse and the scrub they need (done once, not
timed). Timing on a shared machine drifts by more than these stages change, so count instructions:

    PYTHONHASHSEED=0 valgrind --tool=callgrind python bench/bench_extract.py --stage extract
    PYTHONHASHSEED=0 valgrind --tool=callgrind python bench/bench_extract.py --stage none

A stage costs the first count minus the second (start-up, parse and scrub are in both). Run it once
without valgrind first: a first run also compiles every module.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import index.store.prepare as prep  # noqa: E402
from bench.scratch import corpus_options, planned_tasks  # noqa: E402
from extractors.profiles import chunk_counters  # noqa: E402
from lib.model import Carry  # noqa: E402
from lib.sources import parse  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    corpus_options(ap)
    ap.add_argument("--stage", choices=("extract", "counters", "none"), default="extract")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--profile", type=int, default=0, help="print the N costliest functions (cProfile)")
    args = ap.parse_args()
    tasks = planned_tasks(args, "bench-extract-")
    chunks = [parse(t.path, t.start, Carry.from_json(t.carry), t.info) for t in tasks]
    for c in chunks:
        prep.scrub_chunk(c)
    prompts = [prep._extract(c)[1] for c in chunks] if args.stage == "counters" else []
    best = float("inf")
    prof = cProfile.Profile() if args.profile else None
    for _ in range(args.rounds if args.stage != "none" else 0):
        t0 = time.process_time()
        if prof:
            prof.enable()
        if args.stage == "extract":
            for c in chunks:
                prep._extract(c)
        else:
            for c, p in zip(chunks, prompts, strict=True):
                chunk_counters(c.messages, p)
        if prof:
            prof.disable()
        best = min(best, time.process_time() - t0)
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.profile)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(args.profile)
    size = sum(t.size for t in tasks) / 1e6
    if args.stage == "none":
        print(f"none: parsed and scrubbed {len(chunks)} chunks, {size:.0f} MB")
    else:
        print(
            f"{args.stage}: {best:.3f} CPU-s (best of {args.rounds}) over {len(chunks)} chunks, {size:.0f} MB"
        )


if __name__ == "__main__":
    main()
