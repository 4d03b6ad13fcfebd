"""Detached indexing from hooks (H4, H6).

`spawn_index` starts `python -m hooks.spawn` in its own session and process group (setsid), with
stdin/stdout/stderr on /dev/null, and returns at once. The worker takes an exclusive, non-blocking
lock on `index.lock` beside the DB; a tick that finds the lock held only leaves a `index.pending`
mark, and the running worker does one more pass when it sees it, so overlapping ticks collapse into
one trailing run. SIGTERM/SIGHUP/SIGINT never cut a run short: the worker finishes the pass it is in
(rows and cursor commit together anyway) and then exits.

The worker runs at low CPU priority (nice 10, and, as the leader of its own session, its Linux
autogroup too — without that, nice means nothing against processes of other sessions such as the
hooks Claude Code starts), so a hook that starts while it parses and writes is not left waiting
for a CPU.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hooks.events import log_event
from index.store import LOCK_NAME
from lib.paths import state_dir
from lib.settings import Settings

LOCK = LOCK_NAME  # the index layer's writer lock (index/store/lock.py)
PENDING = "index.pending"
LAST = "index.last"
MAX_PASSES = 5
PRUNE_DAYS = 30
NICE = 10


def lock_held(state: Path) -> bool:
    """Is a worker running? (Probes the lock without keeping it.)"""
    import fcntl

    try:
        fd = os.open(state / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases a lock we may have taken
    return False


def _mark_pending(state: Path) -> None:
    with contextlib.suppress(OSError):
        (state / PENDING).touch()


def spawn_index(
    db: Path, roots: list[Path] | None = None, *, full: bool = False, jobs: int = 1, trigger: str = "hook"
) -> str:
    """Start a detached index run. Returns "spawned", "collapsed" (one is running) or "failed"."""
    state = state_dir(db)
    try:
        state.mkdir(parents=True, exist_ok=True)
    except OSError:
        return "failed"
    if lock_held(state):
        _mark_pending(state)
        return "collapsed"
    cmd = [sys.executable, "-m", "hooks.spawn", "--db", str(db), "--jobs", str(jobs), "--trigger", trigger]
    for r in roots or []:
        cmd += ["--root", str(r)]
    if full:
        cmd.append("--full")
    return spawn_detached(cmd, state)


def spawn_detached(cmd: list[str], cwd: Path) -> str:
    """Start `cmd` in its own session, detached from the hook (no pipes: the hook returns at once and
    the child outlives it). "spawned" or "failed"."""
    try:
        subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=str(cwd),
        )
    except OSError:
        return "failed"
    return "spawned"


_stop = False
_main_pid = 0


def _defer(signum: int, frame: object) -> None:
    """In the worker: finish the current pass, then stop. In its parser processes (forked by the
    pool, which stops them with SIGTERM): die as usual."""
    global _stop
    if os.getpid() != _main_pid:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _stop = True


def lower_priority(nice: int = NICE) -> dict[str, int]:
    """Yield the CPU to interactive work (the hooks); returns the niceness now in effect (and the
    autogroup's, when this process leads its own session and the kernel has autogroups)."""
    out: dict[str, int] = {}
    with contextlib.suppress(OSError):
        current = os.nice(0)
        if current < nice:
            os.nice(nice - current)
        out["nice"] = os.nice(0)
    if os.getsid(0) == os.getpid():  # our own session, hence our own autogroup: lower it too
        with contextlib.suppress(OSError, ValueError):
            with open("/proc/self/autogroup", "w") as f:
                f.write(str(nice))
            with open("/proc/self/autogroup") as f:  # "/autogroup-42 nice 10"
                out["autogroup_nice"] = int(f.read().split()[-1])
    return out


def _prune(state: Path, days: int = PRUNE_DAYS) -> None:
    """Old per-session policy state and continuation packets go after `days`."""
    cutoff = time.time() - days * 86400
    for sub in ("sessions", "continuations"):
        try:
            entries = list(os.scandir(state / sub))
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_file() and e.stat().st_mtime < cutoff:
                    os.unlink(e.path)
            except OSError:
                pass


def worker(db: Path, roots: list[Path], full: bool, jobs: int, trigger: str, settings: Settings) -> int:
    global _main_pid
    _main_pid = os.getpid()
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _defer)
    priority = lower_priority()
    from index.store import IndexBusy, writer_lock

    state = state_dir(db)
    state.mkdir(parents=True, exist_ok=True)
    try:
        with writer_lock(db, wait=0):
            return _passes(db, roots, full, jobs, trigger, state, priority, settings)
    except IndexBusy:
        _mark_pending(state)  # the running worker will do one more pass
        return 0


def _passes(
    db: Path,
    roots: list[Path],
    full: bool,
    jobs: int,
    trigger: str,
    state: Path,
    priority: dict[str, int],
    settings: Settings,
) -> int:
    """Index passes while ticks keep arriving (each tick leaves `index.pending`)."""
    from index.store import run_index
    from lib.sources import enabled_roots
    from vec import register as register_vectors

    register_vectors(settings)  # each pass embeds what it added when a vector store exists
    paths = roots or settings.projects_roots()
    agents = (
        None if roots else enabled_roots(state, settings.env)
    )  # other coding agents' sessions, when not told the roots
    for n in range(MAX_PASSES):
        with contextlib.suppress(OSError):
            os.unlink(state / PENDING)
        t0 = time.perf_counter()
        rec: dict[str, object] = {
            "event": "index",
            "trigger": trigger,
            "pass": n + 1,
            "full": full and n == 0,
            **priority,
        }
        try:
            existing = [p for p in paths if p.is_dir()]
            report = run_index(db, existing, full=full and n == 0, jobs=jobs, agents=agents)
            rec.update(
                ok=True,
                files=report.files,
                files_unchanged=report.files_unchanged,
                messages_added=report.messages_added,
                extractions_added=report.extractions_added,
                bytes_read=report.bytes_read,
                errors=len(report.errors),
            )
            (state / LAST).write_text(str(time.time()))
        except Exception as exc:  # logged, never raised: nobody is watching this process
            rec.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:500])
        rec["latency_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        log_event(state, rec)
        if _stop or not (state / PENDING).exists():
            break
    _prune(state)
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse  # (here: hooks and `total-recall index` import this module for the rest: ≈ 1.7 ms less for them)

    ap = argparse.ArgumentParser(prog="python -m hooks.spawn", description="detached total-recall index run")
    ap.add_argument("--db", required=True)
    ap.add_argument("--root", action="append", default=[])
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--trigger", default="hook")
    a = ap.parse_args(argv)
    try:
        settings = Settings.from_env()  # this detached process's one read of the environment
        return worker(Path(a.db), [Path(r) for r in a.root], a.full, max(1, a.jobs), a.trigger, settings)
    except Exception:
        return 0


if __name__ == "__main__":
    sys.exit(main())
