"""The seam where vectors plug into index/ without index/ importing them (issue 12).

Retrieval hands a plugin typed `Candidate` rows (never positional tuples); index/ says what a vector
plugin does (`VectorPlugin`); `vec.register(settings)` installs vec/'s
implementation, and the delivery layer (CLI, MCP server, the hooks' index worker) calls it at startup.
index/ reaches vectors only through `vectors()`. With nothing registered, search and recall rank by
full text alone, `status` reports no vector store, indexing and forgetting leave vectors alone, and
an explicit hybrid request (`hybrid=True`) fails with `HybridUnavailable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from index.store.db import IndexError_
from index.store.filters import Filters
from index.store.fts_query import Query
from lib import sqlite


class Candidate(NamedTuple):
    """One message a query matched, as the ranking (and a vector plugin) sees it."""

    id: int
    session_id: str
    uuid: str
    ts: str | None
    role: str
    kind: str
    cwd: str | None
    project: str | None
    source_file: str | None
    is_sidechain: int
    on_main: int
    agent: str  # the coding agent of its session (lib.sources)
    rank: float  # bm25 (lower is better); 0.0 for rows found by vectors
    body: Any  # packed text (index/store/textstore.py)


Ranked = list[tuple[float, Candidate]]  # best first


class HybridUnavailable(IndexError_):
    """Hybrid ranking was asked for, but no vector plugin is registered in this process."""

    fix = "install total-recall[vec] and use the `total-recall` command (it registers vectors)"


class VectorPlugin(Protocol):
    """What index/ asks of vectors. `explicit=False` (auto mode): no store, another model or any
    failure leaves the full-text ranking unchanged; `explicit=True`: problems raise with a fix."""

    def prefetch(self, conn: sqlite.Connection, text: str, explicit: bool) -> None:
        """Start the query's vector search while the caller runs its FTS query."""

    def fuse_messages(
        self, conn: sqlite.Connection, text: str, q: Query, f: Filters, ranked: Ranked, explicit: bool
    ) -> Ranked:
        """The message ranking fused with vector neighbours (`ranked` itself when vectors took no part)."""
        ...

    def fuse_sessions(
        self,
        conn: sqlite.Connection,
        text: str,
        totals: dict[str, float],
        candidates: set[str],
        explicit: bool,
    ) -> dict[str, float]:
        """Session scores fused with each session's nearest vector, over `candidates` only."""
        ...

    def fuse_ids(
        self, conn: sqlite.Connection, text: str, ids: Sequence[Any], kind: str, explicit: bool
    ) -> list[Any] | None:
        """An FTS-ranked id list of one kind fused with its vector neighbours; None: keep the FTS order."""
        ...

    def describe(self, conn: sqlite.Connection) -> dict[str, Any]:
        """The vector store for `status`: {"exists": False} when there is none."""
        ...

    def after_index(self, db: Path) -> None:
        """An index run added rows: embed them when a store exists (never raises)."""

    def after_delete(self, db: Path) -> int:
        """Rows were deleted: drop their vectors. Returns how many; -1 when a store exists but cannot
        be opened here."""
        ...


_registered: VectorPlugin | None = None


def register_vectors(plugin: VectorPlugin | None) -> None:
    """Install (or, with None, remove) the process's vector plugin."""
    global _registered
    _registered = plugin


def vectors() -> VectorPlugin | None:
    """The registered vector plugin, or None (full-text only)."""
    return _registered


def require_vectors(explicit: bool) -> VectorPlugin | None:
    """The plugin for a ranking call: None in auto mode without one; explicit mode without one raises."""
    if _registered is None and explicit:
        raise HybridUnavailable("hybrid ranking needs vectors, and none are registered in this process")
    return _registered
