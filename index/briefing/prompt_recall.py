"""Prompt-relevant recall for the UserPromptSubmit hook (H3): durable knowledge (extractions) and past
messages about what the prompt mentions, from the one search and recall implementations, fitted
into a small character budget and framed as untrusted history: fenced with the total-recall marker,
each item «quoted» with its kind, date and session (issue 10 #15)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from extractors.model import STANDING_KINDS
from index.briefing.bundle import HEADER, operator_wide, quote, safe_text
from index.briefing.gate import Gate
from index.retrieval.budget import Section, fit_fenced
from index.retrieval.recall import recall
from index.retrieval.search import search_messages
from index.store.db import limit_to
from index.store.filters import Filters
from index.store.labels import project_labeller
from index.store.scope import stored_cwd
from lib import sqlite
from lib.project import project_key
from lib.text import STOPWORDS

# Kinds about one project's work: from another project they are injected only when stated operator-wide.
_PROJECT_KINDS = (
    "ban",
    *STANDING_KINDS,
    "decision",
    "correction",
    "model_correction",
    "failed_attempt",
    "goal",
)
PROJECT_KINDS = frozenset(_PROJECT_KINDS)
RECALL_KINDS = ",".join((*_PROJECT_KINDS, "domain_fact", "implicit_preference"))
SKIP_MESSAGE_KINDS = frozenset(
    (
        "meta",
        "system_reminder",
        "compact_prompt",
        "interrupt",
        "compact_boundary",
        "compact_summary",
        "agent_prompt",
        "api_error",
    )
)
KIND_LABEL = {
    "standing_decision": "standing decision",
    "standing_order": "standing order",
    "model_correction": "correction",
    "failed_attempt": "failed attempt",
    "domain_fact": "fact",
    "implicit_preference": "preference",
}
ROLE_LABEL = {"user": "you", "assistant": "assistant", "system": "system"}
# A tool's output is stored under the user role (the API sends it in a user turn); it is no one's words.
OUTPUT_KINDS = frozenset(("tool_result", "command_output"))


def speaker(role: str, kind: str) -> str:
    """Who a recalled message is from, as the injected line names it."""
    return "tool output" if kind in OUTPUT_KINDS else ROLE_LABEL.get(role, role)


_WORD = re.compile(r"[A-Za-z][\w'-]{2,}")
MAX_TERMS = 5  # each OR term widens the candidate set; 5 keeps the message search near 20 ms (p50)
MAX_IDENTS = 3
WIDEN_IF_UNDER_S = 0.08  # search the whole index too only when the project search was quick
_MARK = re.compile(r"\[(?!REDACTED)([^\[\]\s]{1,60})\]")


@dataclass(slots=True)
class Recalled:
    key: str  # the source message uuid: what the policy remembers as injected
    line: str
    section: str
    date: str | None
    session_id: str | None
    project: str | None
    id: str = ""  # lib.memid id, printed with the line: `total-recall why ID`
    kind: str = ""
    confidence: float | None = None
    reason: str = ""

    def to_ledger(self) -> dict[str, object]:
        """What the injection ledger keeps about this item (hooks/ledger.py)."""
        return {
            "id": self.id,
            "section": self.section,
            "kind": self.kind,
            "content": self.line,
            "date": self.date,
            "session_id": self.session_id,
            "source_uuid": self.key,
            "project_key": self.project,
            "confidence": self.confidence,
            "reason": self.reason,
        }


@dataclass(slots=True)
class PromptRecall:
    text: str
    items: list[Recalled] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)


def focus_query(prompt: str, idents: list[str]) -> str:
    """A short query: the prompt's identifiers and its longest content words (rarer, more telling)."""
    words = []
    seen: set[str] = set()
    for w in _WORD.findall(prompt[:3000]):
        low = w.lower().strip("'-")
        if low in STOPWORDS or low in seen or len(low) < 3:
            continue
        seen.add(low)
        words.append(low)
    words.sort(key=len, reverse=True)
    quoted = ['"' + i.replace('"', "") + '"' for i in idents[:MAX_IDENTS]]
    return " ".join(quoted + words[: max(MAX_TERMS - len(quoted), 3)])


def ident_hits(conn: sqlite.Connection, idents: list[str]) -> int:
    """How many identifiers of the prompt the index has seen (each checked with one phrase query)."""
    n = 0
    for ident in idents[:5]:
        parts = re.findall(r"[^\W_]+", ident)
        if not parts:
            continue
        phrase = '"' + " ".join(parts) + '"'
        try:
            row = conn.execute(
                "SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT 1", (phrase,)
            ).fetchone()
        except sqlite.OperationalError:
            continue
        n += row is not None
    return n


def unmark(snippet: str) -> str:
    """Drop the [term] highlighting of search snippets (keeps scrubber markers like [REDACTED:x])."""
    for _ in range(3):
        new = _MARK.sub(r"\1", snippet)
        if new == snippet:
            break
        snippet = new
    return snippet


def _day(ts: str | None) -> str | None:
    return ts[:10] if ts else None


def gather(
    conn: sqlite.Connection,
    prompt: str,
    *,
    cwd: str | None,
    session_id: str | None,
    idents: list[str],
    now: datetime | None = None,
    search_budget_s: float | None = None,
    deadline: float | None = None,
    notes: list[str] | None = None,
    gate: Gate | None = None,
) -> list[Recalled]:
    """Memory (extractions) then past messages about `prompt`, excluding the live session.
    The message search stops after `search_budget_s` (memory items are kept; "search_timeout" is
    added to `notes`); `deadline` is the caller's overall monotonic deadline, restored afterwards."""
    now = now or datetime.now(timezone.utc)
    gate = gate or Gate()
    query = focus_query(prompt, idents)
    if not query.strip():
        return []
    out: list[Recalled] = []
    same: set[str] = set()
    try:
        mem = recall(
            conn,
            query,
            kind=RECALL_KINDS,
            scope="this_project" if cwd else "global",
            cwd=cwd,
            limit=6,
            hybrid=False,
            now=now,
        ).hits
    except sqlite.OperationalError as exc:
        if "interrupt" in str(exc):
            raise  # the hook's deadline: stop here
        mem = []  # one bad query must not cost the message hits
    here = project_key(cwd) if cwd else None
    where = project_labeller(conn) if mem else None  # the index's unique labels: `work/api`, `home/api`
    for h in mem:
        norm = " ".join(h.content.lower().split())[:160]
        if (h.session_id and h.session_id == session_id) or norm in same or h.source_uuid in same:
            continue
        if h.confidence < gate.cut(h.kind):
            continue  # the index keeps it; only confident memories are injected
        if here and h.project != here and h.kind in PROJECT_KINDS and not operator_wide(h.content):
            continue  # another project's decisions, bans and goals stay there
        item_id = gate.admit(h.kind, h.project, h.content, h.project, h.source_uuid)
        if item_id is None:
            continue  # marked wrong, or names code that is gone
        same.update((norm, h.source_uuid))
        label = KIND_LABEL.get(h.kind, h.kind) + (", superseded" if h.stale else "")
        project = safe_text(where(h.project), 40) if where and h.project else ""
        line = f"[{_tags(label, h.ts, project, h.session_id)}] {quote(h.content, 220)} #{item_id}"
        why = f"{KIND_LABEL.get(h.kind, h.kind)} matching the prompt's words ({query}), score {h.score:.2f}"
        out.append(
            Recalled(
                h.source_uuid,
                line,
                "memory",
                _day(h.ts),
                h.session_id,
                h.project,
                item_id,
                h.kind,
                h.confidence,
                why,
            )
        )
    key = project_key(stored_cwd(cwd)) if cwd else None
    t0 = time.perf_counter()
    if search_budget_s is not None:
        until = time.monotonic() + search_budget_s
        limit_to(conn, min(until, deadline) if deadline is not None else until)
    hits = []
    try:
        hits = search_messages(
            conn, query, Filters(project=key) if key else None, limit=10, now=now, hybrid=False
        )  # no embedding model on the hot path
        if (
            key
            and len([m for m in hits if m.session_id != session_id]) < 2
            and time.perf_counter() - t0 < WIDEN_IF_UNDER_S
        ):
            hits += search_messages(conn, query, None, limit=10, now=now, hybrid=False)
    except sqlite.OperationalError as exc:
        if "interrupt" not in str(exc) or (deadline is not None and time.monotonic() > deadline):
            raise
        if notes is not None:
            notes.append("search_timeout")
    finally:
        if search_budget_s is not None:
            limit_to(conn, deadline)
    titles = _titles(conn, {m.session_id for m in hits})
    seen: set[str] = {r.key for r in out}  # a message already recalled as memory
    for m in hits:
        if m.session_id == session_id or m.kind in SKIP_MESSAGE_KINDS or m.uuid in seen:
            continue
        msg_id = gate.admit("message", m.session_id, m.uuid, source=m.uuid)
        if msg_id is None:
            continue
        seen.add(m.uuid)
        title = titles.get(m.session_id)
        tags = _tags(speaker(m.role, m.kind), m.ts, quote(title, 50) if title else "", m.session_id)
        out.append(
            Recalled(
                m.uuid,
                f"[{tags}] «{unmark(safe_text(m.snippet, 260))}» #{msg_id}",
                "messages",
                _day(m.ts),
                m.session_id,
                m.project,
                msg_id,
                "message",
                None,
                f"a past message matching the prompt's words ({query})",
            )
        )
    return out


def _tags(label: str, ts: str | None, where: str, session_id: str | None) -> str:
    """What an item is and where it comes from: label, date, project or title, session."""
    parts = [label, _day(ts) or "?", where, f"session {session_id[:8]}" if session_id else ""]
    return ", ".join(p for p in parts if p)


def _titles(conn: sqlite.Connection, ids: set[str]) -> dict[str, str]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {
        r[0]: r[1]
        for r in conn.execute(
            f"SELECT session_id, title FROM sessions WHERE session_id IN ({marks}) AND title IS NOT NULL",
            list(ids),
        )
    }


def render(items: list[Recalled], budget: int, footer: str = "") -> PromptRecall:
    """Fit the items (and a `footer` note) into `budget` characters, fenced; memory lines outrank
    message lines."""
    mem = [i for i in items if i.section == "memory"][:4]
    msgs = [i for i in items if i.section == "messages"][:4]
    sections = []
    if mem:
        sections.append(Section("Related memory", [i.line for i in mem], 1))
    if msgs:
        sections.append(Section("Related past messages", [i.line for i in msgs], 2))
    if not sections:
        return PromptRecall("")
    fitted = fit_fenced(sections, budget, header=HEADER, footer=footer)
    kept_lines = set(fitted.text.splitlines())
    kept = [i for i in mem + msgs if f"- {i.line}" in kept_lines]
    if not kept:
        return PromptRecall("", [], fitted.dropped)
    return PromptRecall(fitted.text, kept, fitted.dropped)
