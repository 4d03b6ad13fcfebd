"""Latency of the PreToolUse hook (issue 19 targets: p95 ≤ 80 ms as a whole process, ≤ 30 ms in process)
on a real index, exactly as Claude Code runs it: a new `total-recall hook pre-tool-use` process per
tool call, the call's JSON on stdin.

    python bench/make_corpus.py --copies 3 --out /tmp/pbench
    total-recall --db /tmp/pbench/index.db index --projects-root /tmp/pbench/projects
    python bench/bench_pretool.py --db /tmp/pbench/index.db --calls 200

The calls are the index's own tool calls (Bash commands and edited files from past sessions, in the
project with the most bans) plus, one in ten, a command built from one of that project's bans, so the
warn path (a match, a quoted ban) is measured too. Whole-process times are measured here; in-process
times are the `latency_ms` the hook logs in the events.jsonl beside the index (only this run's lines
are read). Prints one JSON document."""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from index.store.textstore import unpack  # noqa: E402
from lib import sqlite  # noqa: E402


def _exe() -> list[str]:
    script = Path(sys.executable).parent / "total-recall"
    return [str(script)] if script.exists() else [sys.executable, "-m", "total_recall"]


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return round(s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))], 1)


def calls(db: Path, n: int, seed: int) -> tuple[str, list[dict[str, Any]]]:
    """(cwd, n tool calls) drawn from the index."""
    conn = sqlite.connect(f"file:{db}?mode=ro", uri=True)
    row = conn.execute(
        "SELECT project_key, count(*) FROM bans WHERE active = 1 GROUP BY 1 ORDER BY 2 DESC LIMIT 1"
    ).fetchone()
    cwd = row[0] if row and row[0] else "/"
    bans = [
        r[0] for r in conn.execute("SELECT content FROM bans WHERE active = 1 AND project_key = ?", (cwd,))
    ]
    past = conn.execute(
        """SELECT m.tool_name, m.tool_target, m.body FROM messages m WHERE m.kind = 'tool_use'
           AND m.tool_name IN ('Bash', 'Edit', 'Write') ORDER BY random() LIMIT ?""",
        (n * 2,),
    ).fetchall()
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for tool, target, body in past:
        if not target:
            continue
        if tool == "Bash":
            out.append({"tool_name": "Bash", "tool_input": {"command": target}})
        else:
            text = unpack(body)
            out.append(
                {
                    "tool_name": tool,
                    "tool_input": {"file_path": target, "old_string": "x", "new_string": text[-2000:]},
                }
            )
    for i in range(0, n, 10):
        if bans and out:
            out[i % len(out)] = {"tool_name": "Bash", "tool_input": {"command": rng.choice(bans)}}
    while out and len(out) < n:
        out += out[: n - len(out)]
    return cwd, out[:n]


def with_bans(db: Path, cwd: str, batch: list[dict[str, Any]], n: int, seed: int) -> Path:
    """A copy of the index (in a temporary directory) with `n` more active bans in project `cwd`, each
    made of 3-5 words of the benchmark's own commands ("never <w1> <w2> ..."), so the substring
    pre-check and the word matching see realistic overlaps."""
    rng = random.Random(seed)
    words = sorted(
        {
            w
            for c in batch
            for w in str(c["tool_input"].get("command") or "").split()
            if w.isalpha() and len(w) > 3
        }
    ) or ["deploy", "force", "install", "commit"]
    out = Path(tempfile.mkdtemp(prefix="pretool-")) / "index.db"
    src = sqlite.connect(f"file:{db}?mode=ro", uri=True)
    dst = sqlite.connect(out)
    src.backup(dst)
    rows = []
    for i in range(n):
        content = "never " + " ".join(rng.sample(words, min(len(words), rng.randint(3, 5))))
        rows.append((cwd, f"synthetic-{i}", content, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"))
    dst.executemany(
        "INSERT INTO bans(project_key, norm, content, first_ts, last_ts, active) VALUES(?,?,?,?,?,1)", rows
    )
    dst.commit()
    dst.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument(
        "--synthetic-bans",
        type=int,
        default=0,
        help="Run on a copy of the index with N more bans in the measured project (words of its own commands).",
    )
    args = ap.parse_args()
    db = Path(args.db).resolve()
    cwd, batch = calls(db, args.calls, args.seed)
    if args.synthetic_bans:
        db = with_bans(db, cwd, batch, args.synthetic_bans, args.seed)
    if not batch:
        sys.exit("no tool calls in this index: index some transcripts first")
    env = {**os.environ, "TOTAL_RECALL_DB": str(db)}
    events = db.parent / "events.jsonl"  # beside the DB (lib/paths.state_dir)
    start = events.stat().st_size if events.exists() else 0
    wall: list[float] = []
    for i, call in enumerate(batch):
        payload = {
            "hook_event_name": "PreToolUse",
            "session_id": "bench",
            "cwd": cwd,
            "tool_use_id": f"t{i}",
            **call,
        }
        t0 = time.perf_counter()
        subprocess.run(
            _exe() + ["hook", "pre-tool-use"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        wall.append((time.perf_counter() - t0) * 1000)
    # The floor: the same interpreter started and stopped (site, the venv's path hooks), per call.
    floor: list[float] = []
    for _ in range(min(50, len(batch))):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
        floor.append((time.perf_counter() - t0) * 1000)
    with open(events, "rb") as f:
        f.seek(start)
        mine = [json.loads(x) for x in f.read().splitlines() if b'"pre-tool-use"' in x]
    inproc = [float(e["latency_ms"]) for e in mine if "latency_ms" in e]
    decisions: dict[str, int] = {}
    for e in mine:
        decisions[str(e.get("decision"))] = decisions.get(str(e.get("decision")), 0) + 1
    conn = sqlite.connect(f"file:{db}?mode=ro", uri=True)
    size = db.stat().st_size + sum(p.stat().st_size for p in db.parent.glob(db.name + "-wal"))
    print(
        json.dumps(
            {
                "index_mb": round(size / 2**20, 1),
                "messages": conn.execute("SELECT count(*) FROM messages").fetchone()[0],
                "bans": conn.execute("SELECT count(*) FROM bans WHERE active = 1").fetchone()[0],
                "calls": len(wall),
                "decisions": decisions,
                "whole_process": {
                    "p50_ms": _pct(wall, 0.5),
                    "p95_ms": _pct(wall, 0.95),
                    "max_ms": round(max(wall), 1),
                },
                "in_process": {"p50_ms": _pct(inproc, 0.5), "p95_ms": _pct(inproc, 0.95)} if inproc else None,
                "python_start_floor": {"p50_ms": _pct(floor, 0.5), "p95_ms": _pct(floor, 0.95)},
                "targets_ms": {"whole_process_p95": 80, "in_process_p95": 30},
                "load_avg": os.getloadavg(),
                "cpus": os.cpu_count(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
