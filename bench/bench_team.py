"""Load test of the team memory server (issue 16), loopback only and bounded.

Starts a throw-away PostgreSQL (tests/pg_fixture.py; or uses --dsn), migrates, seeds --contexts rows
over --projects projects with COPY, starts `total-recall server run --workers N` as its own process,
then runs --clients concurrent clients for --seconds: each alternates a push (a unique client key) and
a recall (a websearch query of one or two words). The clients are asyncio coroutines in this one
process, each with its own keep-alive HTTP/1.1 connection and API token, speaking HTTP over asyncio
streams (a few lines, no client library: 20 threads of a client library would take the CPU the server
needs on a small machine). Then it checks the counts: every push acknowledged is stored exactly once,
nothing else was stored. It prints the load average before and after, and the CPU time of this
process (the clients) and of the server's processes.

    .venv/bin/python bench/bench_team.py --seconds 60 --contexts 100000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import signal
import statistics
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import orjson  # noqa: E402
import psycopg  # noqa: E402
from pg_fixture import server_process, temp_postgres  # noqa: E402

from extractors.model import STANDING_KINDS  # noqa: E402
from total_recall.server import store  # noqa: E402
from total_recall.server.auth import hash_password, new_api_token  # noqa: E402
from total_recall.server.migrations import migrate  # noqa: E402

# A synthetic vocabulary of 4,000 words drawn with Zipf weights, like prose: a few words are in most
# texts, most words in few (a 64-word vocabulary would put every query word in half the rows).
_SYL = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "xi", "ze", "po", "sa", "di", "fu", "gre", "blo", "tri"]
WORDS = [a + b + c for a in _SYL for b in _SYL for c in _SYL][:4000]
_CUM = list(itertools.accumulate(1 / (r + 1) for r in range(len(WORDS))))
KINDS = (*STANDING_KINDS, "ban", "failed_attempt", "goal", "correction", "session")
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


class Http:
    """One keep-alive HTTP/1.1 connection (the server always answers with a Content-Length)."""

    def __init__(self, url: str, token: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.head = f"Host: {self.host}:{self.port}\r\nAuthorization: Bearer {token}\r\n"

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def request(self, method: str, path: str, body: object = None) -> tuple[int, bytes]:
        data = orjson.dumps(body) if body is not None else b""
        extra = f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n" if data else ""
        self.writer.write(f"{method} {path} HTTP/1.1\r\n{self.head}{extra}\r\n".encode() + data)
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("the server closed the connection")
        status, length = int(status_line.split()[1]), 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)


async def client(
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
    http = Http(url, token)
    await http.open()
    n = 0
    while time.monotonic() < until:
        pid = rng.choice(pids)
        n += 1
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
                t0 = time.perf_counter()
                status, _ = await http.request("POST", "/api/conversation-contexts", body)
                if status == 201:
                    acked.append(key)
                    out["push"].append(time.perf_counter() - t0)
                else:
                    errors.append(f"push {status}")
            else:
                q = " ".join(rng.sample(WORDS[20:1000], rng.choice((1, 2))))  # content words
                path = "/api/conversation-contexts/recall?" + urlencode(
                    {"project_id": pid, "q": q, "limit": 10}
                )
                t0 = time.perf_counter()
                status, _ = await http.request("GET", path)
                if status == 200:
                    out["recall"].append(time.perf_counter() - t0)
                else:
                    errors.append(f"recall {status}")
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            errors.append(type(exc).__name__)
            http.writer.close()
            await http.open()


async def load(
    url: str, tokens: list[str], pids: list[str], seconds: float
) -> tuple[dict[str, list[float]], list[str], list[str], float]:
    lat: dict[str, list[float]] = {"push": [], "recall": []}
    acked: list[str] = []
    errors: list[str] = []
    until = time.monotonic() + seconds
    t0 = time.perf_counter()
    await asyncio.gather(
        *(client(url, tok, pids, until, lat, acked, errors, i) for i, tok in enumerate(tokens))
    )
    return lat, acked, errors, time.perf_counter() - t0


def cpu_seconds(pid: int) -> float:
    """user + sys CPU seconds of a process and its reaped children (/proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its live children (the server's workers, PostgreSQL's backends)."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(stat.parent.name))
    return cpu_seconds(pid) + sum(cpu_seconds(k) for k in kids)


def postmaster(socket_dir: str) -> int | None:
    """The pid of the PostgreSQL serving `socket_dir` (the one whose command line names it)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            args = cmdline.read_bytes().split(b"\0")
            if args and args[0].endswith(b"postgres") and any(socket_dir.encode() in a for a in args):
                return int(cmdline.parent.name)
    return None


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
    ap.add_argument("--workers", type=int, default=2, help="server processes (one per core)")
    ap.add_argument("--pool", type=int, default=12, help="PostgreSQL connections per worker")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up the cluster and server when stopped
    with contextlib.ExitStack() as stack:
        pg = None if args.dsn else stack.enter_context(temp_postgres())
        dsn = args.dsn or pg.new_database()  # type: ignore[union-attr]
        pm = postmaster(pg.socket_dir) if pg else None
        migrate(dsn)
        pids, tokens = seed(dsn, args.projects, args.contexts, args.clients)
        url, proc = stack.enter_context(
            server_process(
                dsn, SECRET, "--rate", "100000", "--pool", str(args.pool), "--workers", str(args.workers)
            )
        )
        load_before = os.getloadavg()
        cpu0, srv0, pg0 = time.process_time(), tree_cpu(proc.pid), tree_cpu(pm) if pm else 0.0
        lat, acked, errors, took = asyncio.run(load(url, tokens, pids, args.seconds))
        client_cpu, srv_cpu = time.process_time() - cpu0, tree_cpu(proc.pid) - srv0
        pg_cpu = tree_cpu(pm) - pg0 if pm else float("nan")
        load_after = os.getloadavg()
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
        requests = sum(len(v) for v in lat.values()) or 1
        print(
            f"CPU: clients {client_cpu:.1f} s ({client_cpu / requests * 1000:.2f} ms/request), server "
            f"{srv_cpu:.1f} s ({srv_cpu / requests * 1000:.2f} ms/request, {args.workers} workers), "
            f"PostgreSQL {pg_cpu:.1f} s ({pg_cpu / requests * 1000:.2f} ms/request)"
        )
        before, after = (" ".join(f"{x:.2f}" for x in la) for la in (load_before, load_after))
        print(f"load average before: {before}, after: {after}")
        print(
            f"rows: {len(acked)} acknowledged, {stored} stored, {stored - distinct} duplicated, {lost} lost"
        )
        return 0 if not errors and lost == 0 and stored == distinct == len(acked) else 1


if __name__ == "__main__":
    sys.exit(main())
