"""The parser processes that feed the single writer (I4): files parsed and prepared in `--jobs` forked
processes, handed to the writer as they finish; a parser that dies never stalls the run."""

from __future__ import annotations

import contextlib
import gc
import importlib
import multiprocessing as mp
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from functools import partial
from typing import NamedTuple

from index.store.tasks import Task
from index.store.writer import Prepared


class Unread(NamedTuple):
    """A task whose file could not be read this run, and why (one line for the run's report).
    `failed`: its parser raised or died, not the file unreadable (I/O): `parse_all` tries such a file
    once more, and hands it on as failed only when the second try fails too."""

    task: Task
    reason: str
    failed: bool = False


Outcome = Prepared | Unread  # a parsed chunk, or the file that could not be read
Note = Callable[[Task | None], None]  # the file being parsed in this process now (None: none)


def parse_all(tasks: list[Task], jobs: int, note: Note | None = None) -> Iterator[Outcome]:
    """Parse the tasks, in `jobs` processes when there are several. A parser that raises on a file,
    or a parser process that dies (a crash, the OOM killer), never stalls or stops the run: each file
    it held is tried once more, alone (in a fresh process when there are several), and one that fails
    again comes out as `Unread(failed=True)`, so the rest are read. Parsed here, in the one process,
    each file is `note`d while it is parsed: if a crash kills the run, the next one knows the file."""
    if jobs <= 1 or len(tasks) < 2:
        for t in tasks:
            out = _noted(t, note)
            yield _noted(t, note) if isinstance(out, Unread) and out.failed else out
        return
    importlib.import_module("index.store.prepare")  # the extractors load once, before the parsers fork
    queue = deque(tasks)
    again: list[Unread] = []
    while queue:
        for t in (yield from _sift(_pooled(queue, jobs - 1, partial(_noted, note=note)), again)):
            again.append(Unread(t, f"{t.path}: its parser process died", failed=True))
    for first in again:
        late: list[Unread] = []
        if (yield from _sift(_pooled(deque([first.task]), 1), late)):
            late.append(Unread(first.task, f"{first.task.path}: its parser process died", failed=True))
        yield from late


# The cyclic GC's thresholds while files are parsed and written (the defaults: 700, 10, 10).
RUN_THRESHOLDS = (10_000, 20, 20)


@contextmanager
def few_collections() -> Iterator[None]:
    """Fewer cyclic collections while an index run parses and writes, the thresholds put back after.

    The writer unpickles every parsed file into tuples (container objects that live until their batch
    is written, and hold no cycles), so with the default thresholds the collector runs thousands of
    times and walks them, plus every module's objects at each full collection: 0.26 CPU-s of the
    writer's at 736 MB. Objects alive at the start are frozen (left out of every collection; forked
    parsers inherit that and do not touch their pages), and the youngest generation is collected every
    10 000 allocations instead of 700: 0.04 CPU-s. Memory stays bounded: cycles are still found,
    later."""
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*RUN_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def _noted(t: Task, note: Note | None) -> Outcome:
    if note is None:
        return _safe_prepare(t)
    note(t)
    try:
        return _safe_prepare(t)
    finally:  # Ctrl-C too: only a crash that kills the process leaves the note behind
        note(None)


def _sift(
    run: Generator[Outcome, None, list[Task]], failed: list[Unread]
) -> Generator[Outcome, None, list[Task]]:
    """`run`'s outcomes, with the parser failures set aside in `failed`; returns what `run` returns
    (the tasks in flight when its pool broke)."""
    try:
        while True:
            try:
                out = next(run)
            except StopIteration as stop:
                died: list[Task] = stop.value
                return died
            if isinstance(out, Unread) and out.failed:
                failed.append(out)
            else:
                yield out
    finally:
        run.close()


# Bytes of transcript in flight (queued, being parsed, or parsed and waiting for the writer) beyond
# the 2 tasks per parser always allowed: the parsers keep working while the writer commits a batch
# or writes a big file, instead of idling once their few small files are done; it bounds the memory
# the waiting results hold (about a third of their transcript's size, pickled).
IN_FLIGHT_BYTES = 64 << 20
RESULT_PIPE_BYTES = 1 << 20  # the parsers' result pipe (`_widen`); Linux's default pipe-max-size


def _pooled(
    queue: deque[Task], jobs: int, local: Callable[[Task], Outcome] | None = None
) -> Generator[Outcome, None, list[Task]]:
    """Run tasks from `queue` (at least 2×jobs in flight, more while they hold under IN_FLIGHT_BYTES
    and no more than the queue still holds); returns the in-flight tasks if the pool breaks. With
    `local`, whenever no parsed file is waiting the caller's process parses the smallest queued file
    itself (no pickling), so its core never idles: near the end the parsers' backlog shrinks with the
    queue, so what is left is shared instead of waited for."""
    pool = _pool(jobs)
    running: dict[Future[Outcome], Task] = {}
    held = 0  # bytes of the running tasks
    queued = sum(map(_bytes, queue))
    try:
        while queue or running:
            while queue and _room(len(running), jobs, held, _bytes(queue[0]), queued):
                try:
                    running[pool.submit(_safe_prepare, queue[0])] = queue[0]
                except BrokenProcessPool:  # a parser died since the last wait: this one never ran
                    return (yield from _salvage(running))
                held += _bytes(queue[0])
                queued -= _bytes(queue.popleft())
            done, _ = wait(running, timeout=0 if local and queue else None, return_when=FIRST_COMPLETED)
            if not done and local and queue:
                t = queue.pop()
                queued -= _bytes(t)
                yield local(t)
                continue
            for fut in done:
                try:
                    result = fut.result()
                except BrokenProcessPool:
                    return (yield from _salvage(running))
                held -= _bytes(running.pop(fut))
                yield result
        return []
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _pool(jobs: int) -> ProcessPoolExecutor:
    """`jobs` forked parsers (where the system forks), their results' pipe widened (`_widen`)."""
    ctx = mp.get_context("fork") if hasattr(os, "fork") else mp.get_context()
    pool = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_ignore_sigint)
    _widen(pool._result_queue._reader.fileno())  # type: ignore[attr-defined]
    return pool


def _widen(fd: int) -> None:
    """Give a pipe RESULT_PIPE_BYTES instead of Linux's 64 KB. A parser writes each prepared chunk
    (megabytes) into it while the writer's pool thread reads it; that thread needs the GIL, which the
    busy writer holds up to a switch interval (5 ms) at a time, so with 64 KB a parser blocked on the
    full pipe ≈ 7 % of its time (2.2 k blocking writes per 736 MB). Only an optimisation: where the
    system refuses the size (the user's pipe quota) or has no such call, the default stays."""
    if sys.platform != "linux":
        return
    import fcntl

    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, RESULT_PIPE_BYTES)


def _room(running: int, jobs: int, held: int, size: int, queued: int) -> bool:
    """Whether the next queued task (`size` bytes, of `queued` left) goes to the parsers now: always
    while fewer than 2 per parser run, else while the bytes in flight stay within IN_FLIGHT_BYTES and
    within what the queue still holds (so the caller, parsing from the queue's small end when it would
    wait, shares the last files instead of waiting for a parser's backlog)."""
    return running < 2 * jobs or held + size <= min(IN_FLIGHT_BYTES, queued)


def _salvage(running: dict[Future[Outcome], Task]) -> Generator[Outcome, None, list[Task]]:
    """The pool broke: the files parsed already are written; the rest (the one whose parser died and
    those queued behind it, up to IN_FLIGHT_BYTES of them) are returned as suspects, to try alone."""
    suspects = []
    for fut, t in running.items():
        if fut.done() and not fut.cancelled() and fut.exception() is None:
            yield fut.result()
        else:
            suspects.append(t)
    return suspects


def _bytes(t: Task) -> int:
    return t.size - t.start


def _ignore_sigint() -> None:
    """Ctrl-C reaches the whole process group: only the main process handles it (it cancels what is
    queued and waits for the files in flight), so a parser never dies mid-file and hangs the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _safe_prepare(t: Task) -> Outcome:
    from index.store.prepare import prepare  # the extractors load only when there is something to parse

    try:
        return prepare(t)
    except OSError as exc:  # unreadable or vanished mid-run: report, never abort the run
        return Unread(t, f"{t.path}: {exc.strerror or exc}")
    except Exception as exc:  # one file's failure never stops the others
        return Unread(t, f"{t.path}: {type(exc).__name__}: {str(exc)[:200]}", failed=True)
