"""Which module answers which hook event (design.md §3, §5). The runner owns stdin/stdout, the
deadline, failure handling and the event record; a handler returns the text to print ("" for
nothing) and adds its own fields to `ctx.rec`. Each event module is imported only when its event
runs, so one hook process loads only what it needs."""

from __future__ import annotations

from collections.abc import Callable

from hooks.context import Ctx

Handler = Callable[[Ctx], str]


def session_start(ctx: Ctx) -> str:
    from hooks.session_start import session_start as run

    return run(ctx)


def user_prompt_submit(ctx: Ctx) -> str:
    from hooks.user_prompt_submit import user_prompt_submit as run

    return run(ctx)


def pre_compact(ctx: Ctx) -> str:
    from hooks.pre_compact import pre_compact as run

    return run(ctx)


def pre_tool_use(ctx: Ctx) -> str:
    from hooks.pre_tool_use import pre_tool_use as run

    return run(ctx)


def reindex(ctx: Ctx) -> str:
    from hooks.reindex import reindex as run

    return run(ctx)


HANDLERS: dict[str, tuple[Handler, str]] = {
    "session-start": (session_start, "SessionStart"),
    "user-prompt-submit": (user_prompt_submit, "UserPromptSubmit"),
    "stop": (reindex, "Stop"),
    "post-compact": (reindex, "PostCompact"),
    "pre-compact": (pre_compact, "PreCompact"),
    "pre-tool-use": (pre_tool_use, "PreToolUse"),
}
