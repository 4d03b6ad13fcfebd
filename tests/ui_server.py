"""Helpers for the viewer's browser tests and bench: serve the app with uvicorn in a thread on a free
loopback port, and launch the machine's Chromium through Playwright (no browser download)."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from total_recall.ui.app import Config, create_app

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "build" / "screenshots"
DOCS_IMG = ROOT / "docs" / "img"


def chromium_path() -> str | None:
    """The Debian/Ubuntu Chromium scripts/test.sh installs (CHROMIUM_PATH overrides, for other systems)."""
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(db: Path) -> Iterator[str]:
    """The viewer on 127.0.0.1:<free port> for the duration of the block; yields its base URL."""
    cfg = Config(db=db, port=free_port())
    server = uvicorn.Server(
        uvicorn.Config(create_app(cfg), host="127.0.0.1", port=cfg.port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the viewer did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{cfg.port}"
    finally:
        server.should_exit = True
        thread.join(10)


def screenshot_paths(name: str, docs: bool) -> list[Path]:
    """Where a screenshot goes: build/screenshots always; docs/img too for the README's pictures when
    UPDATE_DOCS_IMG=1 (so an ordinary test run leaves the committed files alone)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    out = [SHOTS / f"{name}.png"]
    if docs and os.environ.get("UPDATE_DOCS_IMG") == "1":
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        out.append(DOCS_IMG / f"ui-{name}.png")
    return out
