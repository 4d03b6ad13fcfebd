"""`total-recall hook EVENT` (design.md §3, §5): read the hook JSON on stdin, answer on stdout or print
nothing, ALWAYS exit 0. Failures (bad stdin, no or corrupt index, a slow query, a bug) print nothing
and land in `events.jsonl` with the hook's latency. No click, rich or numpy here: entry.py
dispatches to `run_hook` before importing the CLI."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

EVENTS = ("session-start", "user-prompt-submit", "stop", "pre-compact", "post-compact", "pre-tool-use")
# Seconds before the hook gives up and prints nothing (Claude Code's own timeouts are longer).
DEADLINE = {
    "session-start": 3.0,
    "user-prompt-submit": 3.0,
    "pre-compact": 12.0,
    "stop": 3.0,
    "post-compact": 3.0,
    "pre-tool-use": 1.0,  # before every tool call: fail open fast
}
MAX_STDIN = 16 << 20


class _Deadline(Exception):
    pass


def _on_alarm(signum: int, frame: object) -> None:
    raise _Deadline("hook deadline passed")


def _read_stdin() -> dict[str, Any]:
    stream = sys.stdin
    if stream is None or stream.isatty():
        raise ValueError("stdin: no hook JSON (a terminal)")
    raw = stream.buffer.read(MAX_STDIN) if hasattr(stream, "buffer") else stream.read(MAX_STDIN).encode()
    if not raw.strip():
        raise ValueError("stdin: empty")
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError(f"stdin: a JSON {type(data).__name__}, not an object")
    return data


def _alarm(seconds: float) -> bool:
    try:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        return True
    except (AttributeError, ValueError, OSError):
        return False  # no SIGALRM (Windows) or not the main thread


def _disarm() -> None:
    with contextlib.suppress(AttributeError, ValueError, OSError):
        signal.setitimer(signal.ITIMER_REAL, 0)


def run_hook(event: str) -> int:
    """Run one hook; always 0, never raises, prints nothing but the hook's answer."""
    try:
        _run(event)
    except BaseException:  # noqa: BLE001 - e.g. the deadline alarm landing in the error path
        _disarm()
    return 0


def _run(event: str) -> None:
    import warnings

    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    rec: dict[str, Any] = {"event": "hook", "hook": event}
    state: Path | None = None
    out = ""
    armed = False
    try:
        budget = DEADLINE.get(event, 3.0)
        armed = _alarm(budget + 0.5)
        from hooks.context import Ctx
        from hooks.handlers import HANDLERS
        from lib.paths import state_dir
        from lib.settings import Settings

        settings = Settings.from_env()  # the hook's one read of the environment
        db = settings.db_path()
        state = state_dir(db)
        if event not in HANDLERS:
            raise ValueError(f"unknown hook event {event!r} (use one of {', '.join(EVENTS)})")
        handler, name = HANDLERS[event]
        data = _read_stdin()
        given = data.get("hook_event_name")
        if isinstance(given, str) and given and given != name:
            raise ValueError(f"stdin is for {given}, this hook is {name}")
        ctx = Ctx(event, data, db, state, time.monotonic() + budget, settings, rec, t0)
        out = handler(ctx)
        rec["ok"] = True
    except BaseException as exc:  # noqa: BLE001 - fail open: whatever happens, print nothing, exit 0
        out = ""
        rec["ok"] = False
        rec["error"] = f"{type(exc).__name__}: {exc}"[:500]
    finally:
        if armed:
            _disarm()
    rec["latency_ms"] = round((time.perf_counter() - t0) * 1000, 2)
    if out:
        try:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        except Exception:  # noqa: BLE001 - a closed pipe is not our problem to report
            pass
    if state is None:
        try:
            from lib.paths import state_dir
            from lib.settings import Settings

            state = state_dir(Settings.from_env().db_path())
        except Exception:  # noqa: BLE001
            state = None
    if state is not None:
        from hooks.events import log_event

        log_event(state, rec)


def main() -> None:  # `python -m hooks.runner EVENT`
    code = run_hook(sys.argv[1] if len(sys.argv) > 1 else "")
    sys.stdout.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
