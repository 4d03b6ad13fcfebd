"""Stop and PostCompact: keep the index fresh with a detached incremental run (a full one if there
is no index yet); Stop also starts a detached team sync for an opted-in project. Prints nothing."""

from __future__ import annotations

from hooks.context import Ctx, roots


def reindex(ctx: Ctx) -> str:
    from hooks.spawn import spawn_index

    first = not ctx.db.exists()
    ctx.rec["spawn"] = spawn_index(ctx.db, roots(ctx), full=first, jobs=2 if first else 1, trigger=ctx.event)
    if ctx.event == "stop" and not first:
        from hooks.team import spawn_sync

        ctx.rec["team_sync"] = spawn_sync(ctx, ctx.str_field("cwd"))
    return ""
