"""Operator-rule tools: corrections, standing decisions, bans, failed attempts, goals, truth assertions.

No `from __future__ import annotations` here: the SDK builds each tool's JSON schema from these
runtime annotations."""

from typing import Annotated, Any, Literal, get_args

from mcp.types import CallToolResult
from pydantic import Field

from index import retrieval as oq
from index.stats import CORRECTION_KINDS
from mcp_server.envelope import (
    CwdArg,
    LimitArg,
    Runtime,
    ScopeArg,
    SinceArg,
    invalid,
)
from mcp_server.envelope import scope_meta as _meta

Topic = Annotated[str, Field(description="What to look for: words, identifiers, file names, error codes.")]
GoalStatus = Literal["active", "paused", "blocked", "done", "abandoned"]
Category = Literal[
    "certainty_claim",
    "verification_claim",
    "completion_claim",
    "apology",
    "agreement",
    "hedge",
    "blame_shift",
]
assert set(get_args(Category)) == set(oq.TRUTH_CATEGORIES)


def _topic(topic: str, tool: str) -> str:
    if not topic.strip():
        raise invalid(
            "topic is empty", f"pass the subject to look up, or use the listing tool instead of {tool}"
        )
    return topic


def recall_corrections_about(
    rt: Runtime,
    topic: Topic,
    scope: ScopeArg = "this_project",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 10,
) -> CallToolResult:
    """Find times the user corrected the assistant about a topic ("no, don't…", "that's wrong…"),
    with the rejected approach when known. Call it before doing something similar to what was
    corrected, or when the user says "I told you before"."""
    return rt.scoped_items(
        oq.recall_kinds,
        _topic(topic, "recall_corrections_about"),
        CORRECTION_KINDS,
        scope=scope,
        cwd=cwd,
        since=since,
        limit=limit,
    )


def get_recent_corrections(
    rt: Runtime,
    scope: ScopeArg = "this_project",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 10,
) -> CallToolResult:
    """The user's most recent corrections of the assistant, newest first. Call it at the start of a
    session or after a correction, to avoid repeating recent mistakes."""
    return rt.scoped_items(
        oq.latest_extractions, CORRECTION_KINDS, scope=scope, cwd=cwd, since=since, limit=limit
    )


def list_standing_decisions(
    rt: Runtime,
    status: Annotated[
        Literal["active", "superseded", "all"],
        Field(description="active (in force), superseded (replaced by a later one) or all."),
    ] = "active",
    scope: ScopeArg = "this_project",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 20,
) -> CallToolResult:
    """Standing decisions and orders: lasting choices such as "always use RQ for new jobs" and lasting
    instructions such as "always run the tests before committing" (each item's `kind` says which), with
    when they were made and, for superseded ones, what replaced them. Call it before making an architectural or
    tooling choice in this project."""
    return rt.scoped_items(
        oq.list_standing_decisions, status=status, scope=scope, cwd=cwd, since=since, limit=limit, default=20
    )


def get_decision_for_topic(
    rt: Runtime,
    topic: Topic,
    scope: ScopeArg = "this_project",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 5,
) -> CallToolResult:
    """What was decided about a topic: matching standing decisions (active first; superseded ones name
    their successor) and one-off decisions from past sessions. Call it when about to choose how to
    do something that may already have been settled."""
    res, meta = rt.scoped(
        oq.decision_for_topic,
        _topic(topic, "get_decision_for_topic"),
        scope=scope,
        cwd=cwd,
        since=since,
        limit=limit,
        default=5,
    )
    active = [d for d in res.items if d.get("status") == "active"]
    answer = (
        active[0]["content"]
        if active
        else (res.extra["decisions"][0]["content"] if res.extra["decisions"] else None)
    )
    return rt.answer({"answer": answer, "standing": res.items, "decisions": res.extra["decisions"]}, meta)


def check_banned(
    rt: Runtime,
    action: Annotated[
        str,
        Field(
            description=(
                "The action you are about to take, in words or as the command/code, e.g. 'pip install tenacity' "
                "or 'time.sleep(1) in tests'."
            )
        ),
    ],
    scope: ScopeArg = "global",
    cwd: CwdArg = None,
    limit: LimitArg = 5,
) -> CallToolResult:
    """Check an action against the user's bans ("never…", "don't ever…") before doing it. Returns a
    verdict (banned / possibly_banned / no_known_ban) and the matching bans with where and when they
    were stated. Call it before installing a dependency, running a risky command or changing a
    convention."""
    if not action.strip():
        raise invalid("action is empty", "describe the action, e.g. 'git commit --no-verify'")
    meta: dict[str, Any] = {}
    n = rt.limit(limit, meta, 5)
    res = oq.check_banned(rt.conn(), action, scope=scope, cwd=rt.where(cwd), limit=n)
    return rt.answer(
        {"verdict": res.extra["verdict"], "matches": res.items},
        _meta(scope, res.scope, res.note, bans_checked=res.extra["bans_checked"], **meta),
    )


def list_failed_attempts(
    rt: Runtime,
    scope: ScopeArg = "this_project",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 10,
) -> CallToolResult:
    """Recent failed attempts (commands or approaches that did not work), newest first. Call it when a
    task feels familiar or after a failure, to see what was already tried; use find_failed_attempts to
    search by topic."""
    return rt.scoped_items(oq.list_failed_attempts, scope=scope, cwd=cwd, since=since, limit=limit)


def get_active_goal(rt: Runtime, scope: ScopeArg = "this_project", cwd: CwdArg = None) -> CallToolResult:
    """The goal the user is working towards here (goals untouched for 14 days count as paused, 60 days
    abandoned), with the other open goals under it; when none is open, the latest goal and its fate. Call it at the start of a session or when unsure what to do next."""
    res = oq.active_goal(rt.conn(), scope=scope, cwd=rt.where(cwd))
    goal = res.items[0] if res.items else None
    out: dict[str, Any] = {"goal": goal, "open": res.extra["open"]}
    if goal is None and res.extra.get("latest"):
        out["latest"] = res.extra["latest"]
    return rt.answer(out, _meta(scope, res.scope, res.note))


def list_goals(
    rt: Runtime,
    status: Annotated[GoalStatus | None, Field(description="Only goals in this state.")] = None,
    scope: ScopeArg = "this_project",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 10,
) -> CallToolResult:
    """The goal stack: goals stated in past sessions with their status (active, paused, blocked, done,
    abandoned), newest first. Call it to review progress or pick up an unfinished goal."""
    return rt.scoped_items(oq.list_goals, status=status, scope=scope, cwd=cwd, since=since, limit=limit)


def get_past_truth_assertions(
    rt: Runtime,
    topic: Annotated[str, Field(description="Topic words; empty = the most recent assertions.")] = "",
    category: Annotated[Category | None, Field(description="Only this kind of assertion.")] = None,
    scope: ScopeArg = "this_project",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 10,
) -> CallToolResult:
    """How the assistant vouched for its work before: certainty, verification and completion claims
    ("all tests pass", "production-ready"), apologies, agreement, hedges, blame shifts. Call it before
    claiming something works, to check whether similar claims were wrong before."""
    query, args = (oq.recall_kinds, (topic,)) if topic.strip() else (oq.latest_extractions, ())
    res, meta = rt.scoped(
        query, *args, ("truth_rhetoric",), scope=scope, cwd=cwd, since=since, limit=limit, category=category
    )
    counts: dict[str, int] = {}
    for it in res.items:
        counts[it.get("category", "?")] = counts.get(it.get("category", "?"), 0) + 1
    return rt.answer({"items": res.items, "by_category": counts}, meta)


TOOLS = (
    recall_corrections_about,
    get_recent_corrections,
    list_standing_decisions,
    get_decision_for_topic,
    check_banned,
    list_failed_attempts,
    get_active_goal,
    list_goals,
    get_past_truth_assertions,
)
