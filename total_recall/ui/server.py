"""Running the viewer: in the foreground for `total-recall ui`, or in a background thread on a free
loopback port for the browser tests and `bench/bench_ui.py` (one way to start it everywhere)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
    server = _server(Config(db=db, port=free_port()))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_s
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            server.should_exit = True
            raise RuntimeError("the viewer did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(10)
