"""Running the viewer: in the foreground for `total-recall ui`, or in a background thread on a free
loopback port for the browser tests and `bench/bench_ui.py` (one way to start it everywhere; the team
server's tests start theirs with the same `in_thread`)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from total_recall.ui.app import Config, create_app


def _server(cfg: Config) -> uvicorn.Server:
    return uvicorn.Server(
        uvicorn.Config(create_app(cfg), host=cfg.host, port=cfg.port, log_level="warning", lifespan="off")
    )


def run(cfg: Config) -> None:
    """Serve until interrupted (Ctrl-C)."""
    _server(cfg).run()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def background(db: Path, start_s: float = 10.0) -> Iterator[str]:
    """The viewer on 127.0.0.1:<free port> in a thread for the duration of the block; yields its URL."""
    with in_thread(_server(Config(db=db, port=free_port())), start_s) as url:
        yield url


@contextmanager
def in_thread(server: uvicorn.Server, start_s: float = 15.0) -> Iterator[str]:
    """Run a uvicorn server (on a loopback port) in a daemon thread for the duration of the block;
    yields its base URL and stops it after."""
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_s
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            server.should_exit = True
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(10)


def loopback(app: Any) -> uvicorn.Server:
    """A uvicorn server for any ASGI app on 127.0.0.1:<free port> (start it with `in_thread`)."""
    return uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
