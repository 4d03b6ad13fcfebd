"""Operator-wide tools: profiles, implicit preferences, project graph, machines, vocabulary, the
operator-context bundle and escalation risk.

No `from __future__ import annotations` here: the SDK builds each tool's JSON schema from these
runtime annotations."""

from typing import Annotated, Any, Literal

from mcp.types import CallToolResult
from pydantic import Field

from index import retrieval as onto
from mcp_server.envelope import CwdArg, LimitArg, Runtime, ToolFailure, invalid

PROFILE_NOTE = "aggregated over all indexed sessions; recomputed after every index run"


def _profile(rt: Runtime, name: str) -> CallToolResult:
    data, updated = onto.profile(rt.conn(), name)
    if not data:
        raise ToolFailure(
            "not_found", f"no {name} in the index yet", "run `total-recall index` over transcripts"
        )
    return rt.answer({"profile": data}, {"updated_at": updated, "note": PROFILE_NOTE}, historical=False)


def get_operator_profile(rt: Runtime) -> CallToolResult:
    """Who the operator is, from all their sessions: usernames, projects, active hours, languages,
    tools, package managers, test runners and models they use. Call it when you need to fit your
    approach to the person (which package manager, which test runner) and nothing project-specific
    says otherwise."""
    return _profile(rt, "operator_profile")


def get_voice_profile(rt: Runtime) -> CallToolResult:
    """How the operator writes: prompt length, style, openers and their usual typos (with what they
    meant). Call it to read their terse prompts correctly, or to draft text in their voice."""
    return _profile(rt, "voice_profile")


def get_workflow_profile(rt: Runtime) -> CallToolResult:
    """How the operator works: prompts and messages per session, tool mix and error rate, edits,
    subagents, plans, todo use, compactions, git commands, test runners and slash commands. Call it
    to match their usual process (e.g. whether they plan first, commit often, use subagents)."""
    return _profile(rt, "workflow_profile")


def get_satisfaction_profile(rt: Runtime) -> CallToolResult:
    """How satisfied the operator has been: positive and negative reactions, corrections, interrupts,
    correction rate, a score and a mood. Call it to judge how carefully to confirm before acting."""
    return _profile(rt, "satisfaction_profile")


def list_implicit_preferences(
    rt: Runtime,
    source: Annotated[
        Literal["all", "stated", "observed"],
        Field(
            description=(
                "stated: said in prompts ('I'd rather…'); observed: inferred from what they use; all: both."
            )
        ),
    ] = "all",
    limit: LimitArg = 20,
) -> CallToolResult:
    """Preferences the operator never wrote down as rules: stated in passing ("I'd rather use brew") or
    observed from use (package manager, test runner, languages), with the evidence. Call it before
    picking a tool or style the user did not specify."""
    meta: dict[str, Any] = {}
    n = rt.limit(limit, meta, 20)
    data, updated = onto.profile(rt.conn(), "implicit_preferences")
    items = [p for p in data.get("items", []) if source == "all" or p.get("source") == source]
    for p in items:
        if p.get("ts"):
            p["date"] = str(p["ts"])[:10]
    return rt.answer({"items": items[:n]}, {"updated_at": updated, **meta})


def get_project_graph(
    rt: Runtime,
    project: Annotated[
        str | None,
        Field(
            description=("Focus project: name, key or a path inside it (default: the server's cwd project).")
        ),
    ] = None,
    limit: LimitArg = 20,
) -> CallToolResult:
    """The operator's projects as a graph: each with its cwds, sessions, prompts, dates, branches and
    models; edges for nesting, a shared machine, and files the focus project's sessions touched in
    other projects. Call it to see how this project relates to the others it depends on."""
    meta: dict[str, Any] = {}
    n = rt.limit(limit, meta, 20)
    graph = onto.project_graph(rt.conn(), focus=project or rt.where(None), limit=n)
    return rt.answer(graph, meta)


def get_machine_inventory(rt: Runtime) -> CallToolResult:
    """The machines the operator works on (OS, user, home directories, sessions, dates) and host
    names they mention. Call it before giving machine-specific commands or paths."""
    return rt.answer(onto.machine_inventory(rt.conn()), {})


def define_term(
    rt: Runtime,
    term: Annotated[str, Field(description="A word the operator uses: a name, acronym, alias.")],
    limit: LimitArg = 5,
) -> CallToolResult:
    """What the operator means by a term (project nicknames, machine names, acronyms): its entry in
    their vocabulary, facts that mention it, and where they used it. Call it when a prompt uses a
    name you do not recognise."""
    if not term.strip():
        raise invalid("term is empty", "pass the word to define, e.g. 'slate'")
    meta: dict[str, Any] = {}
    n = rt.limit(limit, meta, 5)
    out = onto.define_term(rt.conn(), term, limit=n)
    if not out["entry"] and not out["facts"] and not out["uses"]:
        meta["note"] = "the term does not occur in the index"
    return rt.answer(out, meta)


def get_operator_context(
    rt: Runtime,
    cwd: CwdArg = None,
    budget: Annotated[int, Field(description="Characters for the text (clamped to 300..8000).")] = 1800,
    detail: Annotated[
        Literal["text", "sections"],
        Field(description=("text: the rendered bundle; sections: the same items as structured data too.")),
    ] = "text",
) -> CallToolResult:
    """The operator-context bundle a new session starts with: the operator, the active goal, standing
    decisions, bans, recent corrections, voice, machines and the last sessions here, fitted to a
    character budget. Call it when you lack the session-start context (e.g. after a long gap or in a
    subagent)."""
    from index.briefing import operator_context
    from index.store import wrong_items

    meta: dict[str, Any] = {}
    b = max(300, min(int(budget), 8000))
    if b != budget:
        meta["budget_clamped"] = {"asked": budget, "used": b}
    ctx = operator_context(rt.conn(), rt.where(cwd), budget=b, wrong=wrong_items(rt.db))
    data = ctx.to_json()
    out: dict[str, Any] = {
        "text": data["text"],
        "project": data.get("project"),
        "chars": data.get("chars"),
        "tokens": data.get("tokens"),
        "dropped": data.get("dropped"),
        "left_out": data.get("left_out"),  # marked wrong, or stale (with the commit that made it so)
    }
    if detail == "sections":
        out["sections"] = data.get("sections")
    if ctx.empty:
        meta["note"] = "nothing known yet for this operator or project"
    return rt.answer(out, meta, field_cap=max(b, 600), total_cap=max(12_000, 3 * b))


def assess_escalation_risk(
    rt: Runtime,
    prompt: Annotated[str, Field(description="The user's latest prompt.")],
    draft: Annotated[
        str | None,
        Field(description="Your draft answer, to check for phrases that escalate a frustrated user."),
    ] = None,
    session_id: Annotated[str | None, Field(description="The current session id, for its history.")] = None,
    cwd: CwdArg = None,
) -> CallToolResult:
    """How likely the user is getting frustrated (repeated corrections, interrupts, terse angry
    prompts), with a state, a recommended action and the phrases in your draft to avoid. Call it when
    the user repeats a correction or sounds annoyed, before answering."""
    from index.briefing import assess

    if not prompt.strip():
        raise invalid("prompt is empty", "pass the user's latest prompt")
    out = assess(rt.conn(), prompt=prompt, draft=draft, session_id=session_id, cwd=rt.where(cwd))
    return rt.answer(dict(out), {}, historical=False)


TOOLS = (
    get_operator_profile,
    get_voice_profile,
    get_workflow_profile,
    get_satisfaction_profile,
    list_implicit_preferences,
    get_project_graph,
    get_machine_inventory,
    define_term,
    get_operator_context,
    assess_escalation_risk,
)
