"""Instruction counts of the parsers' last steps and of the hand-over, for `valgrind --tool=callgrind`:
every file of a corpus prepared (parse ... pack, identifier parts, rows), the results pickled as the
pool pickles them, unpickled as the writer does, and the FTS fields (pack + identifier parts) of
every message built again on their own. Each phase ends with `os.getppid()`, so

    PYTHONHASHSEED=0 valgrind --tool=callgrind --dump-before=getppid \\
        --callgrind-out-file=/tmp/cg.out python bench/cg_handover.py [--projects DIR]

writes one profile per phase (`/tmp/cg.out.1` set-up, `.2` prepare, `.3` pickling, `.4` unpickling,
`.5` FTS fields alone, `.6` the writer's FTS rows); `callgrind_annotate FILE | head -20` gives each phase's total. Instruction
counts do not move with the machine's load (timings on a shared machine do), but they count a
`rep stosb` memset byte by byte: a large clear is cheaper than its count says.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from multiprocessing.reduction import ForkingPickler
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import index.store.prepare as prep  # noqa: E402
import index.store.writer as wr  # noqa: E402
from bench.scratch import corpus_options, planned_tasks  # noqa: E402
from index.store.idents import identifier_parts  # noqa: E402
from index.store.schema import session_token  # noqa: E402
from index.store.textstore import pack  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    corpus_options(ap)
    a = ap.parse_args()
    tasks = planned_tasks(a, "tr-cg-")
    os.getppid()
    prepared = [prep.prepare(t) for t in tasks]
    os.getppid()
    blobs = [ForkingPickler.dumps(p) for p in prepared]
    os.getppid()
    back = [ForkingPickler.loads(b) for b in blobs]
    os.getppid()
    memo = "memo" in inspect.signature(identifier_parts).parameters  # the trees before had none
    for p in back:
        texts = p.texts if hasattr(p, "texts") else [t for t, _ in p.bodies.values()]  # bodies: before
        by_word: dict[bytes, tuple[str, ...]] = {}
        for t in texts:
            pack(t)
            identifier_parts(t, by_word) if memo else identifier_parts(t)
    os.getppid()
    for p in back:  # the writer's FTS rows, as if every row were inserted (ids from 1)
        new = [(n, r[0]) for n, r in enumerate(p.messages, 1)]
        if hasattr(p, "texts"):
            wr._fts_rows(p.messages, p.texts, p.idents, new)
        else:  # the tree before: pairs in a dict by uuid
            tokens = {sid: session_token(sid) for sid in {r[1] for r in p.messages}}
            sessions = {r[0]: tokens[r[1]] for r in p.messages}
            [(rid, *p.bodies[u], sessions[u]) for rid, u in new]
    os.getppid()
    print(f"{len(tasks)} files, {sum(len(b) for b in blobs) / 1e6:.1f} MB pickled")


if __name__ == "__main__":
    main()
