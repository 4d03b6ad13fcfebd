"""total-recall: vec layer — optional semantic vectors (sqlite-vec + fastembed) beside the index.

index/ never imports vec/; vec/ plugs in through index/store/plugins.py. The delivery layer calls
`register(settings)` once at startup (the CLI, the MCP server, the hooks' index worker); from then on search
and recall fuse vector neighbours when a store exists, `status` describes the store, indexing embeds
what it added and forgetting drops the vectors of deleted rows. Importing `vec` stays cheap: the
modules that do the work are imported when first used.
"""

from __future__ import annotations

from index.store import register_vectors
from lib.settings import Settings


def register(settings: Settings) -> None:
    """Make this process's index/ use vectors, configured by `settings` (idempotent)."""
    from vec.plugin import Vectors

    register_vectors(Vectors(settings))
