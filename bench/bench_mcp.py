"""Per-tool latency of the MCP server (target: p95 ≤ 50 ms per call in process).

In process: `MCPServer.call_tool` on the real server object (argument validation, the worker-thread hop,
the index query, bounding and JSON) — everything but the stdio pipe. With --stdio, the same calls also
go through the SDK's stdio client to a `python -m mcp_server` subprocess, for the round trip.

Usage:
  python bench/make_corpus.py --copies 11 --out /tmp/mcpbench          # ~540 MB of transcripts
  total-recall --db /tmp/mcpbench/index.db index --projects-root /tmp/mcpbench/projects --jobs 2
  python bench/bench_mcp.py --db /tmp/mcpbench/index.db [--runs 40] [--stdio] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOPICS = [
    "pre-commit hook",
    "dialyzer errors",
    "tests pass",
    "commit signing",
    "worktree",
    "sqlite schema",
    "transcript renderer",
    "package manager",
    "deploy",
    "typescript types",
    "session live",
    "music model",
]


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def plans(sessions: list[str], uuids: list[str], cwd: str) -> dict[str, list[dict[str, Any]]]:
    """Argument variants per tool; runs cycle through them."""
    t = TOPICS
    return {
        "recall": [{"topic": x} for x in t] + [{"kind": "ban", "scope": "global"}],
        "recall_targeted": [
            {"intent": i, "topic": x}
            for i, x in zip(
                [
                    "how_did_we_fix",
                    "why_did_we_choose",
                    "what_failed",
                    "what_does_user_prefer",
                    "what_is_the_rule",
                    "where_is",
                    "what_was_decided",
                ]
                * 2,
                t,
            )
        ],
        "search_messages": [{"query": x} for x in t]
        + [{"query": x, "mode": "snippets", "scope": "global"} for x in t[:4]],
        "search_messages:timeline": [{"mode": "timeline", "uuid": u} for u in uuids[:12]],
        "search_messages:full": [{"mode": "full", "uuids": uuids[i : i + 3]} for i in range(0, 12, 3)],
        "prior_sessions_for_cwd": [{}, {"scope": "global"}, {"topic": "dialyzer", "scope": "global"}],
        "get_session_digest": [{"session_id": s} for s in sessions[:20]],
        "find_failed_attempts": [{"topic": x} for x in t],
        "find_user_preferences": [{"topic": x} for x in t[:6]] + [{}],
        "recall_corrections_about": [{"topic": x, "scope": "global"} for x in t],
        "get_recent_corrections": [{}, {"scope": "global", "since": "365d"}],
        "list_standing_decisions": [{}, {"scope": "global", "status": "all"}],
        "get_decision_for_topic": [{"topic": x} for x in t],
        "check_banned": [{"action": f"git commit --no-verify {x}"} for x in t],
        "list_failed_attempts": [{}, {"scope": "global"}],
        "get_active_goal": [{}, {"scope": "global"}],
        "list_goals": [{}, {"scope": "global", "status": "abandoned"}],
        "get_past_truth_assertions": [{"topic": x} for x in t[:6]]
        + [{"category": "completion_claim", "scope": "global"}],
        "get_project_graph": [{}, {"project": cwd}],
        "get_machine_inventory": [{}],
        "define_term": [{"term": x} for x in ("KnockKnock", "PIV", "slate", "RuleID", "AppData")],
        "get_operator_profile": [{}],
        "get_voice_profile": [{}],
        "get_workflow_profile": [{}],
        "get_satisfaction_profile": [{}],
        "list_implicit_preferences": [{}, {"source": "stated"}],
        "get_operator_context": [{}, {"cwd": cwd, "budget": 3000}],
        "assess_escalation_risk": [
            {"prompt": "no, that still doesn't work!!", "draft": "You're absolutely right", "session_id": s}
            for s in sessions[:6]
        ],
    }


async def _seed(call: Any) -> tuple[list[str], list[str], str]:
    """Session ids, message uuids and a busy cwd, found through the tools themselves (no SQL here)."""
    prior = json.loads(
        (await call("prior_sessions_for_cwd", {"scope": "global", "limit": 50})).content[0].text
    )
    sessions = [s["session_id"] for s in prior["items"]]
    cwd = prior["items"][0]["cwd"] if prior["items"] else "/"
    uuids: list[str] = []
    for x in TOPICS:
        hits = json.loads(
            (await call("search_messages", {"query": x, "scope": "global", "limit": 3})).content[0].text
        )
        uuids += [h["uuid"] for h in hits.get("hits", [])]
    return sessions, uuids, cwd


async def measure(call: Any, runs: int, warmup: int) -> dict[str, dict[str, float]]:
    sessions, uuids, cwd = await _seed(call)
    out: dict[str, dict[str, float]] = {}
    for key, variants in plans(sessions, uuids, cwd).items():
        name = key.split(":")[0]
        times: list[float] = []
        errors = 0
        for i in range(warmup + runs):
            args = variants[i % len(variants)]
            t0 = time.perf_counter()
            res = await call(name, args)
            dt = (time.perf_counter() - t0) * 1000
            if i >= warmup:
                times.append(dt)
                errors += bool(res.is_error)
        out[key] = {
            "p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(_pct(times, 0.95), 2),
            "max_ms": round(max(times), 2),
            "runs": len(times),
            "errors": errors,
        }
    return out


async def in_process(db: str, cwd: str, runs: int, warmup: int) -> dict[str, dict[str, float]]:
    from mcp_server.server import build_server

    server, rt = build_server(db, cwd)
    try:
        return await measure(server.call_tool, runs, warmup)
    finally:
        rt.close()


async def over_stdio(db: str, cwd: str, runs: int, warmup: int) -> dict[str, dict[str, float]]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {
        "TOTAL_RECALL_DB": db,
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
    }
    # the subprocess needs a directory that exists; tools that take `cwd` still get the benchmark's one
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_server"],
        env=env,
        cwd=cwd if os.path.isdir(cwd) else str(ROOT),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        return await measure(s.call_tool, runs, warmup)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="index to benchmark (≥ 500 MB of transcripts for the target)")
    ap.add_argument("--cwd", default="/", help="the server's working directory (default scope anchor)")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--stdio", action="store_true", help="also measure round trips over the stdio client")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    db_bytes = os.path.getsize(args.db)
    report: dict[str, Any] = {
        "db": args.db,
        "db_mb": round(db_bytes / 1e6, 1),
        "in_process": asyncio.run(in_process(args.db, args.cwd, args.runs, args.warmup)),
    }
    if args.stdio:
        report["stdio"] = asyncio.run(over_stdio(args.db, args.cwd, args.runs, args.warmup))
    worst = max(v["p95_ms"] for v in report["in_process"].values())
    report["worst_p95_ms"] = worst
    report["target_met"] = worst <= 50.0
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"index {args.db} ({report['db_mb']} MB)  runs/tool {args.runs}")
    head = f"{'tool':<28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"
    print(head + (f" {'stdio p50':>10} {'stdio p95':>10}" if args.stdio else ""))
    for key, v in report["in_process"].items():
        line = f"{key:<28} {v['p50_ms']:>8.2f} {v['p95_ms']:>8.2f} {v['max_ms']:>8.2f}"
        if args.stdio:
            sv = report["stdio"][key]
            line += f" {sv['p50_ms']:>10.2f} {sv['p95_ms']:>10.2f}"
        print(line + (f"  ({v['errors']} errors)" if v["errors"] else ""))
    print(f"worst p95 {worst:.2f} ms — target ≤ 50 ms {'met' if report['target_met'] else 'MISSED'}")


if __name__ == "__main__":
    main()
