"""Parse (and optionally scrub) every file of a corpus the way `index/store/prepare.prepare` does, and
nothing else: a small, deterministic harness for instruction counts of those two worker stages
(`PYTHONHASHSEED=0 valgrind --tool=callgrind python bench/walk_harness.py --stage parse`), so a change
to the walker or the scrubber is measured apart from extraction, packing and the writer.

Usage: python bench/walk_harness.py [--projects DIR] [--stage parse|scrub|none] [--profile N]
`--stage none` plans and reads the file list only (the start-up to subtract); `parse` parses every file;
`scrub` parses and scrubs every chunk (scrub's count = scrub run − parse run). `--profile N` prints the
N costliest functions by cProfile instead (to rank; callgrind to confirm).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.scratch import planned  # noqa: E402
from index.store.prepare import scrub_chunk  # noqa: E402
from lib.model import Carry  # noqa: E402
from lib.sources import parse  # noqa: E402


def run(tasks: list, stage: str) -> int:
    n = 0
    for t in tasks:
        chunk = parse(t.path, t.start, Carry.from_json(t.carry), t.info)
        if stage == "scrub":
            scrub_chunk(chunk)
        n += len(chunk.messages)
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--projects", type=Path, default=ROOT.parent / "shared" / "corpus" / "projects")
    ap.add_argument("--stage", choices=("parse", "scrub", "none"), default="parse")
    ap.add_argument("--profile", type=int, default=0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tr-walk-") as work:
        tasks = planned(a.projects, Path(work) / "plan.db")
    tasks.sort(key=lambda t: t.path)
    if a.stage == "none":
        print(len(tasks), "files")
        return
    if a.profile:
        prof = cProfile.Profile()
        prof.enable()
        n = run(tasks, a.stage)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(a.profile)
    else:
        n = run(tasks, a.stage)
    print(len(tasks), "files,", n, "messages")


if __name__ == "__main__":
    main()
