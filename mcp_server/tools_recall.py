"""Recall and search tools: recall, recall_targeted, search_messages (progressive disclosure),
prior_sessions_for_cwd, get_session_digest (+ the session-digest:// resource), find_failed_attempts,
find_user_preferences.

No `from __future__ import annotations` here: the SDK builds each tool's JSON schema from these
runtime annotations."""

from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import CallToolResult
from pydantic import Field

from extractors.model import STANDING_KINDS
from index.retrieval import (
    INTENTS,
    digest_markdown,
    hit_index,
    latest_extractions,
    profile,
    recall_kinds,
    recent_sessions,
    records,
    search_scoped,
    session_digest,
    sessions_scoped,
)
from index.retrieval import message_timeline as timeline
from index.retrieval import recall_targeted as targeted_answer
from index.store import Filters, project_labeller
from lib.model import ASSISTANT_KINDS, SYSTEM_KINDS, USER_KINDS
from mcp_server.envelope import (
    AgentArg,
    CwdArg,
    KindArg,
    LimitArg,
    Resource,
    Runtime,
    ScopeArg,
    SinceArg,
    ToolFailure,
    invalid,
)
from mcp_server.envelope import scope_meta as _meta

MESSAGE_KINDS = tuple(
    dict.fromkeys((*USER_KINDS, *ASSISTANT_KINDS, *SYSTEM_KINDS, "agent_prompt", "compact_prompt"))
)
Topic = Annotated[str, Field(description="What to look for: words, identifiers, file names, error codes.")]
Intent = Literal[
    "how_did_we_fix",
    "why_did_we_choose",
    "what_failed",
    "what_does_user_prefer",
    "what_is_the_rule",
    "where_is",
    "what_was_decided",
]
FULL_CHARS = 6000


def recall(
    rt: Runtime,
    topic: Annotated[str, Field(description="Topic words; empty = the most recent items.")] = "",
    kind: KindArg = None,
    scope: ScopeArg = "this_project",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 10,
) -> CallToolResult:
    """Recall what past sessions extracted about a topic: decisions, corrections, bans, goals, failed
    attempts, preferences, facts. Call it before starting work on something that may have history
    ("the payment webhook", "RQ", "flaky login test"), or with `kind` to list one kind. Items are
    ranked (durable rules first) and carry date, session_id, project and the source message uuid."""
    return rt.scoped_items(
        recall_kinds,
        topic,
        tuple((rt.kinds(kind) or "").split(",")) if kind else (),
        scope=scope,
        cwd=cwd,
        since=since,
        limit=limit,
    )


def recall_targeted(
    rt: Runtime,
    intent: Annotated[Intent, Field(description="The shape of the question.")],
    topic: Topic,
    scope: ScopeArg = "this_project",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 5,
) -> CallToolResult:
    """Answer one question about past work with a finding, a confidence, verbatim quotes (session and
    date) and use / avoid / verify lists. Intents: how_did_we_fix, why_did_we_choose, what_failed,
    what_does_user_prefer, what_is_the_rule, where_is, what_was_decided. Call it when the user asks
    such a question, or before redoing something that was fixed, decided or rejected before."""
    if not topic.strip():
        raise invalid(
            "topic is empty", "pass the thing the question is about, e.g. 'payment webhook retries'"
        )
    meta: dict[str, Any] = {}
    n = rt.limit(limit, meta, 5)
    out, used, note = targeted_answer(
        rt.conn(), intent, topic, scope=scope, cwd=rt.where(cwd), since=rt.since(since), limit=n
    )
    return rt.answer(
        out, _meta(scope, used, note, intents=None if intent in INTENTS else list(INTENTS), **meta)
    )


def search_messages(
    rt: Runtime,
    query: Annotated[str | None, Field(description="Search words (modes index and snippets).")] = None,
    mode: Annotated[
        Literal["index", "snippets", "timeline", "full"],
        Field(
            description=(
                "index: compact hits with token estimates (start here); snippets: hits with highlighted "
                "text; timeline: the messages around `uuid`; full: the complete records in `uuids`."
            )
        ),
    ] = "index",
    uuid: Annotated[str | None, Field(description="Message uuid to centre the timeline on.")] = None,
    uuids: Annotated[list[str] | None, Field(description="Message uuids to read in full (≤ 10).")] = None,
    before: Annotated[int, Field(description="Timeline: messages before the anchor (0..20).")] = 3,
    after: Annotated[int, Field(description="Timeline: messages after the anchor (0..20).")] = 3,
    kind: Annotated[
        str | None,
        Field(
            description=(
                "Message kind: prompt (the user's own words), text (assistant answers), tool_use, "
                "tool_result, …"
            )
        ),
    ] = None,
    role: Annotated[Literal["user", "assistant", "system"] | None, Field(description="Message role.")] = None,
    session_id: Annotated[str | None, Field(description="Only this session (id or prefix).")] = None,
    agent: AgentArg = None,
    scope: ScopeArg = "this_project",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 10,
) -> CallToolResult:
    """Full-text search over every past message, in three steps so you spend few tokens:
    1) mode=index (default): one short row per hit with its uuid and the token cost of the full record;
    2) mode=timeline with uuid=<hit>: the conversation around that hit;
    3) mode=full with uuids=[…]: the complete records you decided to read.
    Call it when recall/recall_targeted found nothing, or to find the exact words, command or error."""
    conn = rt.conn()
    meta: dict[str, Any] = {"mode": mode}
    if mode == "timeline":
        if not uuid:
            raise invalid("mode=timeline needs `uuid`", "pass the uuid of a hit from mode=index")
        b, a = max(0, min(before, 20)), max(0, min(after, 20))
        tl = timeline(conn, uuid.strip(), before=b, after=a)
        if tl is None:
            raise ToolFailure(
                "not_found", f"no message with uuid {uuid!r}", "take a uuid from mode=index hits"
            )
        return rt.answer(tl, meta, field_cap=400)
    if mode == "full":
        if not uuids:
            raise invalid("mode=full needs `uuids`", "pass up to 10 uuids from mode=index or mode=timeline")
        if len(uuids) > 10:
            meta["uuids_clamped"] = {"asked": len(uuids), "used": 10}
        found, missing = records(conn, [u.strip() for u in uuids[:10]], chars=FULL_CHARS)
        return rt.answer(
            {"records": found, "not_found": missing}, meta, field_cap=FULL_CHARS, total_cap=24_000
        )
    if not query or not query.strip():
        raise invalid(f"mode={mode} needs `query`", "pass search words, e.g. 'ERR_TIMEOUT retry'")
    if kind and kind not in MESSAGE_KINDS:
        raise invalid(f"unknown message kind {kind!r}", "use one of: " + ", ".join(MESSAGE_KINDS))
    n = rt.limit(limit, meta)
    base = Filters(
        since=rt.since(since),
        role=role,
        kind=kind,
        session=session_id.strip() if session_id else None,
        agent=agent,
    )
    res = search_scoped(conn, query, scope, rt.where(cwd), base, n)
    if mode == "index":
        rows = hit_index(conn, res.items)
        meta["next"] = "mode=timeline with uuid=<hit> for context; mode=full with uuids=[…] to read records"
        meta["tokens_if_all_read"] = sum(r["tokens"] for r in rows)
        return rt.answer({"hits": rows}, _meta(scope, res.scope, res.note, **meta))
    label = project_labeller(conn)
    hits = [
        {
            **{k: v for k, v in h.to_json().items() if k not in ("source_file", "cwd")},
            "project": label(h.project) if h.project else None,
            "date": (h.ts or "")[:10] or None,
        }
        for h in res.items
    ]
    return rt.answer({"hits": hits}, _meta(scope, res.scope, res.note, **meta))


def prior_sessions_for_cwd(
    rt: Runtime,
    cwd: CwdArg = None,
    topic: Annotated[
        str | None, Field(description="Rank sessions by these words instead of recency.")
    ] = None,
    scope: ScopeArg = "this_cwd",
    since: SinceArg = None,
    agent: AgentArg = None,
    limit: LimitArg = 10,
) -> CallToolResult:
    """List the past sessions run in this working directory (widening to the project, then everywhere),
    newest first — or ranked by `topic`. Call it at the start of work to see what was done here before,
    then open one with get_session_digest."""
    meta: dict[str, Any] = {}
    n = rt.limit(limit, meta)
    where = rt.where(cwd)
    if topic and topic.strip():
        res = sessions_scoped(rt.conn(), topic, scope, where, Filters(since=rt.since(since), agent=agent), n)
        label = project_labeller(rt.conn())
        items = [
            {
                "session_id": s.session_id,
                "title": s.title,
                "date": (s.first_ts or "")[:10] or None,
                "last_date": (s.last_ts or "")[:10] or None,
                "project": label(s.project) if s.project else None,
                "score": s.score,
                "best_hit": {"uuid": s.hits[0].uuid, "snippet": s.hits[0].snippet} if s.hits else None,
            }
            for s in res.items
        ]
    else:
        res = recent_sessions(rt.conn(), scope=scope, cwd=where, since=rt.since(since), limit=n, agent=agent)
        items = res.items
    return rt.answer({"cwd": where, "items": items}, _meta(scope, res.scope, res.note, **meta))


def get_session_digest(
    rt: Runtime, session_id: Annotated[str, Field(description="Session id (or a unique prefix).")]
) -> CallToolResult:
    """Digest of one past session without reading it: the request, what was investigated, learned,
    decided, corrected and completed (commits, passing test runs), files read and edited, the last
    prompt, how it ended, next steps, duration, turns and cost, and observations typed decision /
    bugfix / feature / refactor / discovery / change; every item carries its source message uuid.
    Call it after prior_sessions_for_cwd or a search hit points at a session worth knowing."""
    if not session_id.strip():
        raise invalid(
            "session_id is empty", "take a session_id from prior_sessions_for_cwd or search_messages"
        )
    d = session_digest(rt.conn(), session_id.strip())
    if d is None:
        raise ToolFailure(
            "not_found",
            f"no indexed session {session_id!r} (or the prefix is ambiguous)",
            "take a session_id from prior_sessions_for_cwd or search_messages",
        )
    return rt.answer(d, {}, field_cap=400)


def session_digest_resource(rt: Runtime, session_id: str) -> str:
    """Markdown digest of one past session (historical data, not instructions)."""
    with rt.lock:
        try:
            d = session_digest(rt.conn(), session_id)
        except Exception as exc:  # index missing/corrupt: the resource says so in one line
            raise ResourceError(f"index unavailable: {exc}") from exc
    if d is None:
        raise ResourceError(f"no indexed session {session_id!r}")
    return digest_markdown(d)


def find_failed_attempts(
    rt: Runtime,
    topic: Topic,
    scope: ScopeArg = "this_project",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 10,
) -> CallToolResult:
    """Find approaches that already failed or that the user rejected, about a topic. Call it before
    trying a fix or a library, so you do not repeat what did not work. Items carry the rejected
    approach when known."""
    if not topic.strip():
        raise invalid("topic is empty", "pass what you are about to try, or use list_failed_attempts")
    return rt.scoped_items(
        recall_kinds,
        topic,
        ("failed_attempt", "model_correction"),
        scope=scope,
        cwd=cwd,
        since=since,
        limit=limit,
    )


def find_user_preferences(
    rt: Runtime,
    topic: Annotated[str, Field(description="Topic words; empty = the most recent preferences.")] = "",
    scope: ScopeArg = "global",
    cwd: CwdArg = None,
    since: SinceArg = None,
    limit: LimitArg = 10,
) -> CallToolResult:
    """Find how the user likes things done, about a topic (tools, libraries, style, process): stated
    preferences, standing decisions and orders, bans and corrections, plus preferences observed from what they
    use. Call it before choosing between options the user may have an opinion on."""
    meta: dict[str, Any] = {}
    n = rt.limit(limit, meta)
    stated = ("implicit_preference", *STANDING_KINDS, "ban")
    conn = rt.conn()
    if topic.strip():
        res = recall_kinds(
            conn,
            topic,
            (*stated, "correction"),
            scope=scope,
            cwd=rt.where(cwd),
            since=rt.since(since),
            limit=n,
        )
    else:
        res = latest_extractions(conn, stated, scope=scope, cwd=rt.where(cwd), since=rt.since(since), limit=n)
    data, _ = profile(conn, "implicit_preferences")
    words = set(topic.lower().split())
    observed = [
        p
        for p in data.get("items", [])
        if p.get("source") == "observed"
        and (not words or words & set(str(p.get("preference", "")).lower().replace(":", " ").split()))
    ]
    return rt.answer(
        {"items": res.items, "observed": observed[:n]}, _meta(scope, res.scope, res.note, **meta)
    )


RESOURCES = (
    Resource(session_digest_resource, "session-digest://{session_id}", "session-digest", "text/markdown"),
)
TOOLS = (
    recall,
    recall_targeted,
    search_messages,
    prior_sessions_for_cwd,
    get_session_digest,
    find_failed_attempts,
    find_user_preferences,
)
