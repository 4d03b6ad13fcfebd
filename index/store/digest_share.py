"""Session digests built by a helper process while the writer finalises the rest (issue 18).

After a full index most sessions' digests are stale (1,815 at 736 MB, ≈ 1.5 CPU-s of the writer's
≈ 3 in finalize), and finalize runs after the last file, with the parsers gone: one core idles while
the writer works alone. So when the run had parsers to spare (`--jobs` > 1) and there are enough
digests to pay for a fork, a forked helper builds them from the front of the list, reading the
committed index through its own read-only connection, while the writer refreshes the session
documents and merges the message index, then builds from the back until it reaches a digest the
helper delivered. The writer stores them all, in list order, in one transaction, so the rows are
the ones it would have built alone; whatever the helper did not deliver (it died, failed to open
the index, was slow) the writer builds itself. A digest reads only sessions, messages, turns and
extractions, none of which finalize writes after the helper starts.

POSIX only (a fork: the helper inherits the loaded code and never touches the writer's connection).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
from multiprocessing.connection import Connection as Pipe
from pathlib import Path

from index.store.db import db_file, open_reader
from index.store.digest_rows import DigestRows, made
from lib import sqlite

SHARE_MIN = 100  # fewer stale digests than this cost less than the fork and the transfer
BATCH = 16  # digests per message from the helper: ≈ 10 ms of building, fine-grained hand-over

Built = dict[str, DigestRows | None]  # session id -> its digest's rows (None: the session is not indexed)
Stale = list[tuple[str, str]]  # (session id, signature) of each digest to build, `digests.stale`


class Helper:
    """A forked process building digests from the front of `stale`; a thread of the writer receives
    their rows as they come, so the helper never blocks on a full pipe while the writer is busy."""

    def __init__(self, db: Path, stale: Stale) -> None:
        self.stale = stale
        self.got: Built = {}
        ctx = mp.get_context("fork")
        receive, send = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_serve, args=(db, stale, send), daemon=True)
        self.proc.start()
        send.close()  # the writer's copy: EOF reaches the receiver when the helper exits
        self.pipe = receive
        self.thread = threading.Thread(target=self._receive, daemon=True)
        self.thread.start()

    def _receive(self) -> None:
        try:
            while True:
                for sid, digest in self.pipe.recv():
                    self.got[sid] = digest  # in list order: one present means all before it are
        except (EOFError, OSError):
            return

    def finish(self, conn: sqlite.Connection) -> Built:
        """The rows of every digest of `stale`: the writer builds from the back those the helper has
        not delivered, down to the first it has. The caller stops the helper (`stop`) whatever happens."""
        mine: Built = {}
        for sid, sig in reversed(self.stale):
            if sid in self.got:
                break
            mine[sid] = made(conn, sid, sig)
        return {sid: mine[sid] if sid in mine else self.got[sid] for sid, _ in self.stale}

    def stop(self) -> None:
        """End the helper (it may still be building what the writer built) and its receiver."""
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.pipe.close()
        self.thread.join()


def start(conn: sqlite.Connection, stale: Stale, jobs: int) -> Helper | None:
    """A helper for these stale digests, or None when the writer should build them alone: one job,
    too few digests, no fork (not POSIX), an in-memory index, or a helper that cannot start."""
    path = db_file(conn)
    if jobs <= 1 or len(stale) < SHARE_MIN or not hasattr(os, "fork") or not path:
        return None
    try:
        return Helper(Path(path), stale)
    except OSError:  # no process to spare (limits, memory): the writer builds them all
        return None


def _serve(db: Path, stale: Stale, send: Pipe) -> None:
    """In the helper: build the digests in order and send their rows in batches. Any failure ends
    the helper quietly; the writer builds whatever was not sent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the writer's to handle
    try:
        conn = open_reader(db)
        batch: list[tuple[str, DigestRows | None]] = []
        for sid, sig in stale:
            batch.append((sid, made(conn, sid, sig)))
            if len(batch) == BATCH:
                send.send(batch)
                batch = []
        if batch:
            send.send(batch)
    except Exception:  # noqa: BLE001  # the writer's fallback covers every failure here
        return
    finally:
        send.close()
