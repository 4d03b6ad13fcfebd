"""Session documents' texts and digests built by a helper process while the writer finalises the
rest (issue 18).

After a full index every session's document and digest is stale (1,815 at 736 MB: ≈ 0.25 CPU-s of
reading and inflating bodies for the documents, ≈ 1.3 for the digests), and finalize runs after the
last file, with the parsers gone: one core idles while the writer works alone. So when the run had
parsers to spare (`--jobs` > 1) and there is enough to pay for a fork, a helper forked as finalize
begins builds, through its own read-only connection: first the documents' texts (prompts and
answers, which read only messages and agents' compaction flags, none of which finalize writes), while
the writer sets titles, links agents and folds the operator tables; then, told to go once those are
committed, the digests (which read the titles), from the front of the list. The writer meanwhile merges
the message index, inserts the documents (building from the back any text not delivered yet) and
builds digests from the back until it reaches one the helper delivered. It stores them all in list
order, so the rows are the ones it would have built alone; whatever the helper did not deliver (it
died, failed to open the index, was slow) the writer builds itself. A digest reads only sessions,
messages, turns and extractions, none of which finalize writes after the go.

POSIX only (a fork: the helper inherits the loaded code and never touches the writer's connection).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import Connection as Pipe
from pathlib import Path
from typing import TypeVar

from index.store.db import db_file, open_reader
from index.store.digest_rows import DigestRows, made
from index.store.digests import stale as stale_digests
from index.store.session_docs import Texts, texts
from lib import sqlite

SHARE_MIN = 100  # fewer stale documents or digests than this cost less than the fork and the transfer
BATCH = 16  # digests or documents per message from the helper: ≈ 10 ms of building, fine-grained hand-over

Stale = list[tuple[str, str]]  # (session id, signature) of each digest to build, `digests.stale`
T = TypeVar("T")


class Helper:
    """A forked process building the texts of `docs`, then, once told to go, the digests `digests.stale`
    lists, from the front; a thread of the writer receives them as they come, so the helper never blocks
    on a full pipe while the writer is busy."""

    def __init__(self, db: Path, docs: list[str]) -> None:
        self.docs: dict[str, Texts] = {}
        self.got: dict[str, tuple[str, DigestRows | None]] = {}  # session id -> (signature, digest rows)
        ctx = mp.get_context("fork")
        receive, send = ctx.Pipe(duplex=False)
        self.wait, self.go = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_serve, args=(db, docs, self.wait, self.go, send), daemon=True)
        self.proc.start()
        send.close()  # the writer's copy: EOF reaches the receiver when the helper exits
        self.wait.close()  # and the helper's end of the go
        self.pipe = receive
        self.thread = threading.Thread(target=self._receive, daemon=True)
        self.thread.start()

    def _receive(self) -> None:
        try:
            while True:
                what, batch = self.pipe.recv()
                if what == "doc":
                    self.docs.update(batch)  # in list order: one present means all before it are
                else:
                    self.got.update((sid, (sig, rows)) for sid, sig, rows in batch)
        except (EOFError, OSError):
            return

    def start_digests(self) -> None:
        """Let the helper list and build the digests: what they read (titles) is committed now."""
        with contextlib.suppress(OSError):  # the helper is gone: the writer builds them all
            self.go.send_bytes(b"go")

    def texts(self, conn: sqlite.Connection, sids: list[str]) -> Iterator[Texts]:
        """The texts of the documents of `sids`, in order (`_in_order`)."""
        return _in_order(sids, self.docs, lambda sid: texts(conn, sid))

    def digests(self, conn: sqlite.Connection, stale: Stale) -> Iterator[DigestRows | None]:
        """The rows of each digest of `stale`, in order (`_in_order`); the helper's only where it built
        one with the same signature. The caller stops the helper (`stop`) whatever happens."""
        sigs = dict(stale)
        mine = _in_order(
            [sid for sid, _ in stale], self.got, lambda sid: (sigs[sid], made(conn, sid, sigs[sid]))
        )
        for (sid, sig), (built_sig, rows) in zip(stale, mine, strict=True):
            yield rows if built_sig == sig else made(conn, sid, sig)

    def stop(self) -> None:
        """End the helper (it may still be building what the writer built) and its receiver."""
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.pipe.close()
        self.go.close()
        self.thread.join()


def _in_order(keys: list[str], got: dict[str, T], build: Callable[[str], T]) -> Iterator[T]:
    """Each key's value in order, as the writer stores them: the helper's (it builds from the front)
    while it has delivered the next one; while it has not, the writer builds from the back instead of
    waiting, and takes its own values once the two meet. So the writer stores what the helper delivered
    while the helper still builds, and only its own share is left when the helper stops."""
    mine: dict[int, T] = {}
    back = len(keys)  # keys[back:] are built here
    for i, key in enumerate(keys):
        while back > i and key not in got:
            back -= 1
            mine[back] = build(keys[back])
        yield mine.pop(i) if i >= back else got.pop(key)  # popped: held only until stored


def start(conn: sqlite.Connection, docs: list[str], jobs: int) -> Helper | None:
    """A helper for the documents of `docs` and the digests to come, or None when the writer should
    build them alone: one job, too few sessions, no fork (not POSIX), an in-memory index, or a helper
    that cannot start."""
    path = db_file(conn)
    if jobs <= 1 or not hasattr(os, "fork") or not path:
        return None
    marked = conn.execute("SELECT count(*) FROM pending WHERE what = 'digest'").fetchone()[0]
    if max(len(docs), marked) < SHARE_MIN:  # sessions a chunk touched: about the digests to come
        return None
    try:
        return Helper(Path(path), docs)
    except OSError:  # no process to spare (limits, memory): the writer builds them all
        return None


def _serve(db: Path, docs: list[str], wait: Pipe, go: Pipe, send: Pipe) -> None:
    """In the helper: build the documents' texts in order, wait for the go, then list the stale digests
    and build them in order, sending each in batches. Any failure ends the helper quietly; the writer
    builds whatever was not sent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the writer's to handle
    go.close()  # the writer's end: a writer gone for good reads as EOF here
    try:
        conn = open_reader(db)
        _batches(send, "doc", ((sid, texts(conn, sid)) for sid in docs))
        wait.recv_bytes()
        _batches(send, "digest", ((sid, sig, made(conn, sid, sig)) for sid, sig in stale_digests(conn)))
    except Exception:  # noqa: BLE001  # the writer's fallback covers every failure here
        return
    finally:
        send.close()


def _batches(send: Pipe, what: str, items: Iterable[object]) -> None:
    batch: list[object] = []
    for item in items:
        batch.append(item)
        if len(batch) == BATCH:
            send.send((what, batch))
            batch = []
    if batch:
        send.send((what, batch))
