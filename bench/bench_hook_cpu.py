"""CPU time (user + system) of whole hook processes, for comparing two trees or two settings on a busy
machine, where wall-clock latency mostly measures the other processes: `total-recall hook EVENT` runs
as Claude Code runs it (a new process, hook JSON on stdin), the variants taking turns call by call.

    git archive BASE | tar -x -C /tmp/base            # the tree to compare against
    python bench/bench_hook_cpu.py --db /tmp/idx/index.db --runs 40 \\
        --variant base=PYTHONPATH=/tmp/base --variant here= --variant here_vectors_off=TOTAL_RECALL_VECTORS=0

A variant is NAME=VAR=VALUE,VAR=VALUE (environment added to the hook's; PYTHONPATH puts another
checkout's packages ahead of the installed ones). Prints one JSON document: per event and variant the
median and mean CPU milliseconds of one hook process."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

PAYLOADS = {
    "pre-tool-use": {
        "session_id": "cpu-1",
        "hook_event_name": "PreToolUse",
        "cwd": "/tmp",
        "tool_name": "Bash",
        "tool_input": {"command": "git push --force origin main"},
    },
    "user-prompt-submit": {
        "session_id": "cpu-2",
        "hook_event_name": "UserPromptSubmit",
        "cwd": "/tmp",
        "prompt": "what did we decide last time about the webhook retry?",
    },
    "session-start": {
        "session_id": "cpu-3",
        "hook_event_name": "SessionStart",
        "cwd": "/tmp",
        "source": "startup",
    },
}


def _variant(spec: str) -> tuple[str, dict[str, str]]:
    name, _, rest = spec.partition("=")
    env = dict(kv.split("=", 1) for kv in rest.split(",") if kv)
    return name, env


def _cpu_ms(event: str, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(
        [sys.executable, "-m", "total_recall", "hook", event],
        input=json.dumps(PAYLOADS[event]),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"hook {event} failed: {p.stderr[-500:]}")
    return 1000 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--events", default=",".join(PAYLOADS))
    ap.add_argument("--variant", action="append", default=[], help="NAME=VAR=VALUE,… (repeatable)")
    args = ap.parse_args()
    variants = dict(_variant(v) for v in args.variant or ["here="])
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TOTAL_RECALL_DB": args.db}
    base["TOTAL_RECALL_HOME"] = os.path.join(os.path.dirname(os.path.abspath(args.db)), "cpu-home")
    out: dict[str, dict[str, dict[str, float]]] = {}
    for event in args.events.split(","):
        ms: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.runs):
            for name, extra in variants.items():
                ms[name].append(_cpu_ms(event, {**base, **extra}))
        out[event] = {
            name: {
                "n": len(v),
                "cpu_p50_ms": round(statistics.median(v), 1),
                "cpu_mean_ms": round(statistics.mean(v), 1),
            }
            for name, v in ms.items()
        }
    print(json.dumps({"runs": args.runs, "events": out, "load_avg": os.getloadavg()}, indent=2))


if __name__ == "__main__":
    main()
