"""Stop and PostCompact: keep the index fresh with a detached incremental run (a full one if there
is no index yet). Prints nothing."""

from __future__ import annotations

from hooks.context import Ctx, roots


def reindex(ctx: Ctx) -> str:
    from hooks.spawn import spawn_index

    first = not ctx.db.exists()
    ctx.rec["spawn"] = spawn_index(ctx.db, roots(ctx), full=first, jobs=2 if first else 1, trigger=ctx.event)
    return ""
