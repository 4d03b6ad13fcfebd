"""Load test of the team memory server (issue 16), loopback only and bounded.

Starts a throw-away PostgreSQL (tests/pg_fixture.py; or uses --dsn), migrates, seeds --contexts rows
over --projects projects with COPY, starts `total-recall server run` as its own process, then runs
--clients concurrent clients (threads, one API token each, keep-alive) for --seconds: each alternates
a push (a unique client key) and a recall (a websearch query of one or two words). Then it checks the
counts: every push acknowledged is stored exactly once, nothing else was stored.

    .venv/bin/python bench/bench_team.py --seconds 20 --contexts 100000
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import httpx  # noqa: E402
import psycopg  # noqa: E402
from pg_fixture import free_port, temp_postgres  # noqa: E402

from total_recall.server import store  # noqa: E402
from total_recall.server.auth import hash_password, new_api_token  # noqa: E402
from total_recall.server.migrations import migrate  # noqa: E402

# A synthetic vocabulary of 4,000 words drawn with Zipf weights, like prose: a few words are in most
# texts, most words in few (a 64-word vocabulary would put every query word in half the rows).
_SYL = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "xi", "ze", "po", "sa", "di", "fu", "gre", "blo", "tri"]
WORDS = [a + b + c for a in _SYL for b in _SYL for c in _SYL][:4000]
_CUM = list(itertools.accumulate(1 / (r + 1) for r in range(len(WORDS))))
KINDS = ("standing_decision", "ban", "failed_attempt", "goal", "correction", "session")
SECRET = "bench-secret-" + "0123456789abcdef" * 2


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, cum_weights=_CUM, k=n))


def seed(dsn: str, projects: int, contexts: int, clients: int) -> tuple[list[str], list[str]]:
    """Users, projects, one token per client (member of every project) and `contexts` rows."""
    rng = random.Random(7)
    pids = [f"bench-{i}" for i in range(projects)]
    tokens = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        store.add_user(conn, "owner", hash_password("owner-password"))
        for p in pids:
            store.add_project(conn, p, "owner")
        for c in range(clients):
            name = f"client{c}"
            store.add_user(conn, name, hash_password(name + "-password"))
            for p in pids:
                store.set_member(conn, p, name, "member")
            tok, digest = new_api_token()
            store.add_token(conn, name, digest, name, None)
            tokens.append(tok)
        t0 = time.perf_counter()
        with (
            conn.cursor() as cur,
            cur.copy(
                "COPY conversation_contexts(project_id, title, dense_summary, context_type, relevance_score, "
                "client_key, created_at) FROM STDIN"
            ) as copy,
        ):
            for i in range(contexts):
                copy.write_row(
                    (
                        pids[i % projects],
                        sentence(rng, 6),
                        sentence(rng, 40),
                        rng.choice(KINDS),
                        round(rng.uniform(0, 10), 1),
                        f"seed-{i}",
                        f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}T12:00:00Z",
                    )
                )
        conn.execute("ANALYZE conversation_contexts")
        print(f"seeded {contexts} contexts over {projects} projects in {time.perf_counter() - t0:.1f} s")
    return pids, tokens


@contextlib.contextmanager
def server(dsn: str) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "TOTAL_RECALL_SERVER_SECRET": SECRET}
    cmd = [
        sys.executable,
        "-m",
        "total_recall",
        "server",
        "run",
        "--dsn",
        dsn,
        "--port",
        str(port),
        "--rate",
        "100000",
        "--pool",
        "24",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(url + "/api/health").status_code == 200:
                    break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("the server did not start")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def client(
    url: str,
    token: str,
    pids: list[str],
    until: float,
    out: dict[str, list[float]],
    acked: list[str],
    errors: list[str],
    seed_: int,
) -> None:
    rng = random.Random(seed_)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=10) as http:
        n = 0
        while time.monotonic() < until:
            pid = rng.choice(pids)
            n += 1
            t0 = time.perf_counter()
            try:
                if n % 2:
                    key = uuid.uuid4().hex
                    body = {
                        "project_id": pid,
                        "title": sentence(rng, 6),
                        "dense_summary": sentence(rng, 40),
                        "context_type": rng.choice(KINDS),
                        "relevance_score": round(rng.uniform(0, 10), 1),
                        "metadata": {"bench": True},
                        "client_key": key,
                    }
                    r = http.post("/api/conversation-contexts", json=body)
                    if r.status_code == 201:
                        acked.append(key)
                        out["push"].append(time.perf_counter() - t0)
                    else:
                        errors.append(f"push {r.status_code}")
                else:
                    q = " ".join(rng.sample(WORDS[20:1000], rng.choice((1, 2))))  # content words
                    r = http.get(
                        "/api/conversation-contexts/recall", params={"project_id": pid, "q": q, "limit": 10}
                    )
                    if r.status_code == 200:
                        out["recall"].append(time.perf_counter() - t0)
                    else:
                        errors.append(f"recall {r.status_code}")
            except httpx.HTTPError as exc:
                errors.append(type(exc).__name__)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] * 1000 if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", help="An existing empty database (default: a throw-away cluster).")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--contexts", type=int, default=100_000)
    ap.add_argument("--projects", type=int, default=20)
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up the cluster and server when stopped
    with contextlib.ExitStack() as stack:
        dsn = args.dsn or stack.enter_context(temp_postgres()).new_database()
        migrate(dsn)
        pids, tokens = seed(dsn, args.projects, args.contexts, args.clients)
        url = stack.enter_context(server(dsn))
        lat: dict[str, list[float]] = {"push": [], "recall": []}
        acked: list[str] = []
        errors: list[str] = []
        until = time.monotonic() + args.seconds
        threads = [
            threading.Thread(target=client, args=(url, tokens[i], pids, until, lat, acked, errors, i))
            for i in range(args.clients)
        ]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.perf_counter() - t0
        with psycopg.connect(dsn) as conn:
            row = conn.execute(
                "SELECT count(*), count(DISTINCT client_key) FROM conversation_contexts WHERE client_key NOT LIKE 'seed-%'"
            ).fetchone()
        stored, distinct = row if row else (0, 0)
        lost = len(set(acked)) - distinct
        print(
            f"{args.clients} clients, {took:.1f} s, {args.contexts} seeded contexts, {args.projects} projects"
        )
        for op in ("push", "recall"):
            xs = lat[op]
            print(
                f"{op:6s}: {len(xs)} ok, {len(xs) / took:.0f}/s, p50 {pct(xs, 0.5):.1f} ms, p95 {pct(xs, 0.95):.1f} ms, "
                f"p99 {pct(xs, 0.99):.1f} ms, mean {statistics.fmean(xs) * 1000 if xs else 0:.1f} ms"
            )
        print(f"errors: {len(errors)} {sorted(set(errors))[:5]}")
        print(
            f"rows: {len(acked)} acknowledged, {stored} stored, {stored - distinct} duplicated, {lost} lost"
        )
        return 0 if not errors and lost == 0 and stored == distinct == len(acked) else 1


if __name__ == "__main__":
    sys.exit(main())
