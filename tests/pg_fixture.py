"""A real PostgreSQL for the team server tests: initdb + pg_ctl into a temp dir (unix socket only,
no TCP port), once per test session. The binaries are those the `pgserver` wheel bundles (PostgreSQL 16
with pgvector; the dev extra installs it) when it is installed, else the machine's (scripts/test.sh
installs the Debian packages when missing; Debian bookworm has no pgvector package). As root, the cluster runs as the `postgres` user (initdb refuses root). Each test
module gets its own database; `serve` starts the FastAPI app on a loopback port in a thread."""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from total_recall.ui.server import free_port, in_thread, loopback


def _pgserver_bindir() -> Path | None:
    """pgserver's bundled binaries, found without importing the package (its import has side effects)."""
    spec = importlib.util.find_spec("pgserver")
    for root in (spec.submodule_search_locations or []) if spec else []:
        bindir = Path(root) / "pginstall" / "bin"
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    return None


def _bindir() -> Path | None:
    bundled = _pgserver_bindir()
    if bundled is not None:
        return bundled
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]))
    return Path(dirs[-1]) if dirs and (Path(dirs[-1]) / "initdb").exists() else None


@dataclass
class Postgres:
    socket_dir: str
    port: int

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host={self.socket_dir} port={self.port} user=postgres dbname={dbname}"

    def new_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.dsn(name)

    def has_pgvector(self) -> bool:
        import psycopg

        from total_recall.server.migrations import vector_available

        with psycopg.connect(self.dsn()) as conn:
            return vector_available(conn)

    def new_role_database(self, role: str) -> str:
        """A database owned by a role that is not a superuser (it cannot CREATE EXTENSION vector, as on
        a managed PostgreSQL without pgvector); the DSN connects as that role."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {role} LOGIN")
            conn.execute(f"CREATE DATABASE {name} OWNER {role}")
        return f"host={self.socket_dir} port={self.port} user={role} dbname={name}"


def _has_user(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _as_postgres(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@contextlib.contextmanager
def temp_postgres() -> Iterator[Postgres]:
    """A throw-away cluster (also used by bench/bench_team.py). Raises LookupError without binaries."""
    bindir = _bindir()
    if bindir is None:
        raise LookupError("PostgreSQL binaries not found (scripts/test.sh installs the `postgresql` package)")
    if os.geteuid() == 0 and shutil.which("runuser") and not _has_user("postgres"):
        raise LookupError("running as root without a `postgres` user for initdb (scripts/test.sh creates it)")
    base = tempfile.mkdtemp(prefix="tr-pg-")
    data, sock = os.path.join(base, "data"), os.path.join(base, "sock")
    os.makedirs(sock)
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
        shutil.chown(sock, "postgres")
    port = 5432
    initdb = [str(bindir / "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"]
    subprocess.run(_as_postgres(initdb), check=True, capture_output=True, timeout=120)
    opts = f"-k {sock} -p {port} -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    start = [str(bindir / "pg_ctl"), "-D", data, "-o", opts, "-l", os.path.join(base, "log"), "-w", "start"]
    try:
        subprocess.run(_as_postgres(start), check=True, capture_output=True, timeout=120)
        yield Postgres(sock, port)
    finally:
        stop = [str(bindir / "pg_ctl"), "-D", data, "-m", "immediate", "stop"]
        subprocess.run(_as_postgres(stop), capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    try:
        with temp_postgres() as pg:
            yield pg
    except LookupError as exc:
        pytest.skip(str(exc))


@contextlib.contextmanager
def serve(app: object) -> Iterator[str]:
    """Run an ASGI app with uvicorn on a loopback port in a thread; yields its base URL."""
    with in_thread(loopback(app)) as url:
        yield url


@contextlib.contextmanager
def server_process(
    dsn: str | None, secret: str, *args: str, env: Mapping[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`total-recall server run` as its own process on a loopback port (tests and bench/bench_team.py);
    yields (base URL, process) once /api/health answers, and stops it after. No `dsn`: the
    environment's TOTAL_RECALL_SERVER_DSN."""
    import httpx

    port = free_port()
    full_env = {**os.environ, **(env or {}), "TOTAL_RECALL_SERVER_SECRET": secret}
    cmd = [sys.executable, "-m", "total_recall", "server", "run", "--port", str(port), *args]
    cmd += ["--dsn", dsn] if dsn else []
    proc = subprocess.Popen(cmd, env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(url + "/api/health").status_code == 200:
                    break
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"the server did not start: {err}")
            time.sleep(0.1)
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(15)
