"""Typed NDJSON events (H7): one line per hook run or background index run, in `events.jsonl` beside
the DB, rotated to `events.jsonl.1` at ~5 MB. Fields: ts, event ("hook" | "index"), hook, latency_ms,
ok, error (when not ok), plus event-specific fields (injected_chars, policy, outcome, …).
Writing never raises: a hook must not fail because its log cannot be written. Read with
`lib.events.read_events`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from lib.events import EVENTS

ROTATE_BYTES = 5 << 20


def now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def log_event(
    state: Path, record: dict[str, Any], rotate_bytes: int = ROTATE_BYTES, name: str = EVENTS
) -> bool:
    """Append one event to `name` (events.jsonl, or the injection ledger); rotate first when the file is
    over `rotate_bytes`. False if it failed."""
    try:
        state.mkdir(parents=True, exist_ok=True)
        path = state / name
        try:
            if path.stat().st_size >= rotate_bytes:
                os.replace(path, state / (name + ".1"))
        except FileNotFoundError:
            pass
        rec = {"ts": now_iso(), **record}
        line = json.dumps(rec, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
        # One write() on an O_APPEND descriptor: concurrent hooks never interleave within a line.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
        return True
    except Exception:
        return False
