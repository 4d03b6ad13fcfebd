"""Viewer speed (issue 17): time to first byte of the sessions list and of session pages (p50/p95), and
a 2,000-message session rendered in full (server: whole body; browser: Chromium's load event).

The 2,000-message session is written here (synthetic: prompts, Markdown answers with code, tool calls
with output) into `bench-ui-projects/` beside the index and indexed into it, so run this on a bench
index, not your own. Usage:

    python bench/make_corpus.py --copies 11 --out /tmp/big      # ≥ 500 MB of transcripts
    total-recall --db /tmp/big/index.db index --projects-root /tmp/big/projects --jobs 2
    python bench/bench_ui.py --db /tmp/big/index.db [--requests 60]
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import shutil
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from index.store import open_reader, run_index  # noqa: E402
from total_recall.ui.render import markdown  # noqa: E402
from total_recall.ui.server import background  # noqa: E402

BIG_MESSAGES = 2000
ANSWER = "Done. The change:\n\n```python\ndef step_{i}(x: int) -> int:\n    return x + {i}\n```\n\n- tests pass\n- lint clean\n"


def _rec(sid: str, parent: str | None, kind: str, i: int, content: Any, cwd: str) -> dict[str, Any]:
    u = str(uuid.uuid5(uuid.NAMESPACE_OID, f"{sid}-{i}"))
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_767_000_000 + i)) + ".000Z"
    rec: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": sid,
        "version": "2.1.39",
        "gitBranch": "main",
        "type": kind,
        "uuid": u,
        "timestamp": ts,
    }
    if kind == "user":
        rec["message"] = {"role": "user", "content": content}
    else:
        rec["message"] = {
            "model": "claude-opus-4-5-20251101",
            "id": f"msg_{sid[:8]}_{i}",
            "type": "message",
            "role": "assistant",
            "content": content,
            "usage": {"input_tokens": 3, "output_tokens": 50, "cache_read_input_tokens": 9000},
        }
        rec["requestId"] = f"req_{sid[:8]}_{i}"
    return rec


def write_big_session(root: Path, n: int = BIG_MESSAGES) -> str:
    """One transcript of `n` messages: prompt, tool call, tool result, answer — repeated."""
    sid = str(uuid.uuid5(uuid.NAMESPACE_OID, "bench-ui-big"))
    cwd = "/home/dev/projects/bench-ui"
    recs: list[dict[str, Any]] = []
    parent: str | None = None
    for i in range(n):
        step = i % 4
        if step == 0:
            content: Any = f"step {i}: refactor the parser module, part {i // 4}"
            kind = "user"
        elif step == 1:
            tid = f"toolu_{i}"
            content = [
                {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": f"pytest -k part{i}"}}
            ]
            kind = "assistant"
        elif step == 2:
            out = "\n".join(f"tests/test_parser.py::test_{i}_{k} PASSED" for k in range(20))
            content = [{"type": "tool_result", "tool_use_id": f"toolu_{i - 1}", "content": out}]
            kind = "user"
        else:
            content = [{"type": "text", "text": ANSWER.format(i=i)}]
            kind = "assistant"
        rec = _rec(sid, parent, kind, i, content, cwd)
        recs.append(rec)
        parent = rec["uuid"]
    path = root / "-home-dev-projects-bench-ui" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))
    return sid


def first_byte(base: str, path: str) -> tuple[float, float]:
    """Seconds to the first byte of the response, and to its last."""
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port, timeout=30)
    t0 = time.perf_counter()
    conn.request("GET", path)
    resp = conn.getresponse()  # returns once the status line has arrived
    t1 = time.perf_counter()
    resp.read()
    t2 = time.perf_counter()
    conn.close()
    assert resp.status == 200, (path, resp.status)
    return t1 - t0, t2 - t0


def pct(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 else xs[0]


def summary(name: str, xs: list[float]) -> dict[str, Any]:
    ms = [x * 1000 for x in xs]
    return {"what": name, "n": len(ms), "p50_ms": round(pct(ms, 50), 1), "p95_ms": round(pct(ms, 95), 1)}


def browser_load(url: str, cold: bool) -> float | None:
    """Chromium's load event for a page, best of 3 (None when no Chromium is installed); `cold` empties
    the Markdown cache first, so the server renders every message again."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        return None
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        page = b.new_page()
        page.goto(url, wait_until="load")  # warm
        times = []
        for _ in range(3):
            if cold:
                markdown.cache_clear()
            t0 = time.perf_counter()
            page.goto(url, wait_until="load")
            page.wait_for_selector("#thread article")
            times.append(time.perf_counter() - t0)
        b.close()
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--db", required=True, type=Path, help="an index to measure (a copy: one session is added)"
    )
    ap.add_argument("--requests", type=int, default=60)
    args = ap.parse_args()
    big_root = args.db.parent / "bench-ui-projects"  # beside the index: a re-run adds nothing new
    sid = write_big_session(big_root)
    run_index(args.db, [big_root], jobs=1)
    conn = open_reader(args.db)
    raw = conn.execute("SELECT sum(size) FROM ingest_state").fetchone()[0] or 0
    sessions = [
        r[0]
        for r in conn.execute("SELECT session_id FROM sessions ORDER BY random() LIMIT ?", (args.requests,))
    ]
    n_big = conn.execute("SELECT count(*) FROM messages WHERE session_id=?", (sid,)).fetchone()[0]
    conn.close()
    rng = random.Random(17)
    results: list[dict[str, Any]] = []
    with background(args.db) as base:
        first_byte(base, "/")  # warm the page cache and the templates
        lists = [first_byte(base, f"/?page={rng.randint(1, 5)}")[0] for _ in range(args.requests)]
        results.append(summary("sessions list (first byte)", lists))
        filt = [first_byte(base, "/?text=parser&errors=1")[0] for _ in range(max(10, args.requests // 3))]
        results.append(summary("sessions list, text + has-errors filter (first byte)", filt))
        pages = [first_byte(base, f"/session/{s}")[0] for s in sessions]
        results.append(summary("session page, random sessions (first byte)", pages))
        big = []
        for _ in range(5):
            markdown.cache_clear()
            big.append(first_byte(base, f"/session/{sid}"))
        results.append(summary(f"{n_big}-message session, cold (whole body)", [b[1] for b in big]))
        warm = [first_byte(base, f"/session/{sid}")[1] for _ in range(5)]
        results.append(summary(f"{n_big}-message session, Markdown cached (whole body)", warm))
        loads = {k: browser_load(f"{base}/session/{sid}", k == "cold") for k in ("cold", "warm")}
    out = {"raw_transcripts_mb": round(raw / 1e6, 1), "results": results}
    for k, v in loads.items():
        if v is not None:
            out[f"big_session_browser_load_ms_{k}"] = round(v * 1000, 1)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
