"""Serving: uvicorn in one process, or `workers` processes sharing one listening socket (fork after
binding, each with its own app and connection pool: a Python process uses one core, so two workers
use two). With workers, the first process only supervises: stopping it stops them all."""

from __future__ import annotations

import contextlib
import os
import signal
import socket

from total_recall.server.config import ServerConfig
from total_recall.server.vectors import ServerVectors


def _serve(config: ServerConfig, sock: socket.socket) -> None:
    import uvicorn

    from total_recall.server.app import create_app

    if config.embed is not None:
        ServerVectors(config.embed).check()  # load the model in this process (not before the fork)
    server = uvicorn.Server(uvicorn.Config(create_app(config), log_level="warning", access_log=False))
    server.run(sockets=[sock])


def serve(config: ServerConfig, host: str, port: int, workers: int = 1) -> int:
    """Serve until stopped; the exit status (non-zero when a worker failed)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    if workers == 1:
        _serve(config, sock)
        return 0
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # a worker: serve until told to stop, never return into the CLI
            code = 0
            try:
                _serve(config, sock)
            except BaseException:
                code = 1
            os._exit(code)
        children.append(pid)
    sock.close()
    return _supervise(children)


def _supervise(children: list[int]) -> int:
    """Wait for the workers; SIGTERM or SIGINT, or one worker ending, stops them all."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    status = 0
    try:
        pid, raw = os.wait()
        children.remove(pid)
        status = 1 if raw else 0
    except KeyboardInterrupt:
        pass
    finally:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        for pid in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    return status
