"""`memory write` on a 500-session project (issue 14, target ≤ 2 s): the first write (every
conversation and master.md), a re-run with nothing changed, and a re-run after one appended session.

Usage: python bench/bench_memory.py [--sessions 500] [--work DIR]
Sessions are generated (tests/fixtures/make.py): a prompt, a decision, a read, an edit, a commit, a
passing test run and an answer each. docs/benchmarks.md records the results.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fixtures import make  # noqa: E402

from index.store.db import open_reader  # noqa: E402
from index.store.ingest import run_index  # noqa: E402
from total_recall.cmd_digest import write_memory  # noqa: E402

CWD = "/home/dev/projects/bench"
T0 = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)


def session(i: int) -> make.Session:
    s = make.Session(make.uid("bench-mem", i), cwd=CWD, t0=T0 + timedelta(hours=6 * i))
    s.prompt(f"Add caching to module m{i % 40} and we decided to use redis for the cache")
    s.response(text=f"I'll add a cache layer to m{i % 40}.")
    read = s.response(tools=[("Read", {"file_path": f"{CWD}/src/m{i % 40}.py"})])[-1]
    s.tool_result(read, "def f(): ...")
    edit = s.response(
        tools=[("Edit", {"file_path": f"{CWD}/src/m{i % 40}.py", "old_string": "a", "new_string": "b"})]
    )[-1]
    s.tool_result(edit, "ok")
    test = s.response(tools=[("Bash", {"command": "pytest -q"})])[-1]
    s.tool_result(test, f"{10 + i % 7} passed in 0.5s")
    commit = s.response(tools=[("Bash", {"command": f'git commit -am "Add cache to m{i % 40}"'})])[-1]
    s.tool_result(commit, f"[main {i:07x}] Add cache to m{i % 40}")
    s.response(text="Done. The cache is in; next step: we should add eviction metrics.")
    return s


def timed(label: str, conn: object, out: Path) -> None:
    t = time.perf_counter()
    res = write_memory(conn, CWD, out, 8192)  # type: ignore[arg-type]
    el = time.perf_counter() - t
    size = (out / "master.md").stat().st_size
    print(
        f"{label}: {el:.2f}s ({res['conversations']} conversations, {len(res['written'])} written, "
        f"master.md {size} bytes{' updated' if res['master_changed'] else ''})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="tr-bench-mem-"))
    root = work / "projects" / make.slug(CWD)
    root.mkdir(parents=True, exist_ok=True)
    for i in range(args.sessions):
        s = session(i)
        s.write(root / f"{s.session_id}.jsonl")
    db = work / "index.db"
    t = time.perf_counter()
    run_index(db, [work / "projects"], jobs=1)
    print(f"index of {args.sessions} sessions: {time.perf_counter() - t:.1f}s")
    out = work / "_memory"
    timed("memory write, first", open_reader(db), out)
    timed("memory write, nothing changed", open_reader(db), out)
    extra = session(args.sessions)
    extra.write(root / f"{extra.session_id}.jsonl")
    run_index(db, [work / "projects"], jobs=1)
    timed("memory write, one session appended", open_reader(db), out)


if __name__ == "__main__":
    main()
