"""Instruction counts of the worker's stages one by one and of the hand-over, for
`valgrind --tool=callgrind`: every file of a corpus parsed, then every chunk scrubbed, extracted,
counted (profile counters) and assembled into its `Prepared` (FTS fields, rows, fingerprint), the
results pickled as the pool pickles them and unpickled as the writer does. Each phase ends with
`os.getppid()`, so

    PYTHONHASHSEED=0 valgrind --tool=callgrind --dump-before=getppid \\
        --callgrind-out-file=/tmp/cg.out python bench/cg_glue.py [--projects DIR]

writes one profile per phase (`.1` set-up, `.2` parse, `.3` scrub, `.4` extract, `.5` counters,
`.6` assemble, `.7` pickling, `.8` unpickling); `callgrind_annotate FILE | head -20` gives each total.
Without valgrind it prints each phase's process time and the pickled size and object count.
"""

from __future__ import annotations

import argparse
import os
import pickletools
import sys
import time
from multiprocessing.reduction import ForkingPickler
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import index.store.prepare as prep  # noqa: E402
from bench.scratch import corpus_options, planned_tasks  # noqa: E402
from extractors.profiles import chunk_counters  # noqa: E402
from lib.model import Carry  # noqa: E402
from lib.sources import parse  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    corpus_options(ap)
    ap.add_argument("--objects", action="store_true", help="count the pickles' opcodes (slow)")
    a = ap.parse_args()
    tasks = planned_tasks(a, "tr-glue-")
    tasks.sort(key=lambda t: t.path)
    clock = [time.process_time()]

    def phase(name: str) -> None:
        os.getppid()
        clock.append(time.process_time())
        print(f"{name:10s} {clock[-1] - clock[-2]:.3f} s", file=sys.stderr)

    phase("set-up")
    chunks = [parse(t.path, t.start, Carry.from_json(t.carry), t.info) for t in tasks]
    phase("parse")
    for c in chunks:
        prep.scrub_chunk(c)
    phase("scrub")
    extracted = [prep._extract(c) for c in chunks]
    phase("extract")
    counters = [chunk_counters(c.messages, prompts) for c, (_, prompts) in zip(chunks, extracted)]
    phase("counters")
    prepared = [
        prep.assemble(t, c, rows, n) for t, c, (rows, _), n in zip(tasks, chunks, extracted, counters)
    ]
    phase("assemble")
    blobs = [ForkingPickler.dumps(p) for p in prepared]
    phase("pickling")
    back = [ForkingPickler.loads(b) for b in blobs]
    phase("unpickling")
    print(f"{len(tasks)} files, {len(back)} results, {sum(len(b) for b in blobs) / 1e6:.2f} MB pickled")
    if a.objects:
        ops = sum(1 for b in blobs for _ in pickletools.genops(bytes(b)))
        print(f"{ops} pickle opcodes")


if __name__ == "__main__":
    main()
