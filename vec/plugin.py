"""vec/'s implementation of index/'s `VectorPlugin` (index/store/plugins.py), installed by `vec.register(settings)`.

Each method hands over to the module that does the job; they are imported on first use so that
registering costs nothing on paths that never rank by meaning (the hooks' hot path)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from index.store import Filters, Query, Ranked
from lib import sqlite
from lib.settings import Settings


class Vectors:
    """The vector plugin: hybrid ranking (vec/hybrid.py), store status (vec/store.py) and keeping
    the store in step with the index (vec/backfill.py), all configured by the process's settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def prefetch(self, conn: sqlite.Connection, text: str, explicit: bool) -> None:
        from vec.hybrid import prefetch

        prefetch(conn, text, self.settings, explicit)

    def fuse_messages(
        self, conn: sqlite.Connection, text: str, q: Query, f: Filters, ranked: Ranked, explicit: bool
    ) -> Ranked:
        from vec.hybrid import fuse

        return fuse(conn, text, q, f, ranked, self.settings, explicit)

    def fuse_sessions(
        self,
        conn: sqlite.Connection,
        text: str,
        totals: dict[str, float],
        candidates: set[str],
        explicit: bool,
    ) -> dict[str, float]:
        from vec.hybrid import fuse_sessions

        return fuse_sessions(conn, text, totals, candidates, self.settings, explicit)

    def fuse_ids(
        self, conn: sqlite.Connection, text: str, ids: Sequence[Any], kind: str, explicit: bool
    ) -> list[Any] | None:
        from vec.hybrid import fuse_ids

        return fuse_ids(conn, text, ids, self.settings, kind, explicit)

    def describe(self, conn: sqlite.Connection) -> dict[str, Any]:
        from vec.store import describe

        return describe(conn)

    def after_index(self, db: Path) -> None:
        from vec.backfill import after_index

        after_index(db, self.settings)

    def after_delete(self, db: Path) -> int:
        from vec.backfill import prune_deleted

        return prune_deleted(db)
