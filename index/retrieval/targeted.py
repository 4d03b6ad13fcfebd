"""Targeted recall: a question of a known shape ("how did we fix X", "what is the rule about Y") answered
with a finding, a confidence, verbatim quotes (session + date) and use / avoid / verify lists.

Every intent reads extractions through `index.retrieval.recall.recall` (the one extraction ranking) and, where
the answer lives in plain messages (fixes, locations), messages through `index.retrieval.search` — nothing else.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, NamedTuple

from extractors.model import STANDING_KINDS
from index.retrieval.operator_queries import recall_kinds
from index.retrieval.rule_match import tokens
from index.retrieval.scoped import Scoped, search_scoped
from index.store.filters import Filters
from index.store.labels import project_labeller
from index.store.textstore import unpack
from lib import sqlite
from lib.text import clip

# intent -> (extraction kinds in priority order, message kind to search or None, extra search words)
INTENTS: dict[str, tuple[tuple[str, ...], str | None, str]] = {
    "how_did_we_fix": (
        (
            "fix",
            "progress",
            "self_correction",
            "correction",
            "model_correction",
            "failed_attempt",
            "decision",
        ),
        "text",
        "",
    ),
    "why_did_we_choose": (
        (*STANDING_KINDS, "decision", "correction", "model_correction", "implicit_preference"),
        None,
        "",
    ),
    "what_failed": (("failed_attempt", "model_correction", "correction", "self_correction"), None, ""),
    "what_does_user_prefer": (("implicit_preference", *STANDING_KINDS, "ban", "correction"), None, ""),
    "what_is_the_rule": (("ban", *STANDING_KINDS, "correction"), None, ""),
    "where_is": (("domain_fact", "decision", "progress"), "tool_use", ""),
    "what_was_decided": ((*STANDING_KINDS, "decision"), None, ""),
}
KIND_TRUST = {
    "fix": 0.6,
    "ban": 0.85,
    **dict.fromkeys(STANDING_KINDS, 0.85),
    "correction": 0.7,
    "model_correction": 0.7,
    "decision": 0.65,
    "implicit_preference": 0.65,
    "domain_fact": 0.6,
    "progress": 0.55,
    "failed_attempt": 0.6,
    "self_correction": 0.5,
    "text": 0.45,
    "tool_use": 0.5,
}
_AVOID = ("ban", "failed_attempt", "model_correction", "correction")
_PATH = re.compile(r"(?<![\w.@-])(?:[A-Za-z]:\\|/|~/)?(?:[\w.@-]+[/\\])+[\w.@-]+")  # from a word's start only
_FIXED = re.compile(
    r"\b(fixed|fixes|the (?:real |root )?cause|root cause|resolved|solved|solution|works now|"
    r"now passes|passes now|no longer)\b",
    re.I,
)
_INSTRUCTION = re.compile(
    r"\b(don'?t|do not|never|always|use|instead|should|must|keep|prefer|please|make sure)\b", re.I
)
_MARK = re.compile(r"\[([^\[\]]{1,80})\]")
STALE_DAYS = 180


def _age_days(date: str | None, now: datetime) -> float | None:
    if not date:
        return None
    try:
        dt = datetime.fromisoformat(date).replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return (now - dt).total_seconds() / 86400


def _quote(it: dict[str, Any]) -> dict[str, Any]:
    q = {
        "text": it["content"],
        "kind": it["kind"],
        "date": it.get("date"),
        "session_id": it.get("session_id"),
        "project": it.get("project"),
        "uuid": it.get("uuid"),
    }
    if it.get("stale"):
        q["stale"] = True
    return q


def _relevant(it: dict[str, Any], words: set[str]) -> bool:
    return not words or bool(tokens(it["content"] + " " + str(it.get("rejected_approach") or "")) & words)


def _unmark(snip: str, words: set[str]) -> str:
    """A search snippet back to verbatim text: drop the [brackets] put around the query terms."""

    def plain(m: re.Match[str]) -> str:
        inner = m.group(1).lower()
        return m.group(1) if any(inner.startswith(w[:4]) for w in words) else m.group(0)

    return _MARK.sub(plain, snip)


def _message_items(
    conn: sqlite.Connection,
    intent: str,
    topic: str,
    kind: str | None,
    extra: str,
    scope: str,
    cwd: str | None,
    since: str | None,
    limit: int,
) -> Scoped:
    base = Filters(kind=kind, since=since)
    res = search_scoped(conn, f"{topic} {extra}".strip(), scope, cwd, base, limit)
    items, label = [], project_labeller(conn)
    words = tokens(topic)
    for h in res.items:
        text = _unmark(h.snippet, words)
        it = {
            "kind": h.kind,
            "content": text,
            "date": (h.ts or "")[:10] or None,
            "session_id": h.session_id,
            "project": label(h.project) if h.project else None,
            "uuid": h.uuid,
            "score": h.score,
        }
        if intent == "where_is":
            paths = [p for p in _PATH.findall(text) if len(p) > 4]
            if not paths:
                continue
            it["paths"] = paths[:3]
        items.append(it)
    return Scoped(items, res.scope, res.note)


def _fix_items(conn: sqlite.Connection, hits: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The last assistant answer saying what fixed it, in the sessions the search pointed at: the final
    fix of a session beats the first guess that a later correction rejected."""
    out: list[dict[str, Any]] = []
    label = project_labeller(conn)
    for sid in dict.fromkeys(h["session_id"] for h in hits):
        rows = conn.execute(
            """SELECT m.uuid, m.ts, m.body, s.project_key FROM messages m JOIN sessions s ON s.session_id = m.session_id
               WHERE m.session_id = ? AND m.kind = 'text' AND m.on_main = 1 AND m.is_sidechain = 0
               ORDER BY m.id DESC LIMIT 60""",
            (sid,),
        ).fetchall()
        for uuid, ts, body, project in rows:
            text = unpack(body)
            m = _FIXED.search(text)
            if m:
                sents = [x for x in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if _FIXED.search(x)]
                out.append(
                    {
                        "kind": "fix",
                        "content": clip(" ".join(sents[-2:]) or text, 400),
                        "date": (ts or "")[:10] or None,
                        "session_id": sid,
                        "project": label(project) if project else None,
                        "uuid": uuid,
                        "score": 1.0,
                    }
                )
                break
        if len(out) >= limit:
            break
    return out


class Targeted(NamedTuple):
    """A targeted answer, plus the scope the items were finally found in (widened from the one asked
    for when it held nothing) and a note saying so — metadata for the caller, not part of the answer."""

    answer: dict[str, Any]
    scope: str
    note: str | None


def recall_targeted(
    conn: sqlite.Connection,
    intent: str,
    topic: str,
    *,
    scope: str,
    cwd: str | None,
    since: str | None,
    limit: int,
    now: datetime | None = None,
) -> Targeted:
    """Answer one question shape about `topic` from past sessions."""
    if intent not in INTENTS:
        raise ValueError(f"intent {intent!r}: use one of {', '.join(INTENTS)}")
    now = now or datetime.now(timezone.utc)
    kinds, msg_kind, extra = INTENTS[intent]
    words = tokens(topic)
    found = recall_kinds(conn, topic, kinds, scope=scope, cwd=cwd, since=since, limit=limit * 2)
    items = [it for it in found.items if _relevant(it, words)]
    scope_used, note = found.scope, found.note
    if intent == "how_did_we_fix":
        msgs = _message_items(conn, intent, topic, None, extra, scope, cwd, since, limit)
        items = _fix_items(conn, msgs.items, 2) + items
        if not found.items:
            scope_used, note = msgs.scope, msgs.note
    elif msg_kind and len(items) < limit:
        msgs = _message_items(conn, intent, topic, msg_kind, extra, scope, cwd, since, limit)
        items += msgs.items[: limit - len(items)]
        if not found.items:
            scope_used, note = msgs.scope, msgs.note
    rank = {k: i for i, k in enumerate(kinds)}
    items.sort(
        key=lambda it: (bool(it.get("stale")), rank.get(it["kind"], len(kinds)), -float(it.get("score") or 0))
    )
    items = items[:limit]

    use: list[str] = []
    avoid: list[str] = []
    verify: list[str] = []
    for it in items:
        text = it["content"]
        if it["kind"] in ("ban", "failed_attempt"):
            avoid.append(text)
        elif it.get("stale") and it["kind"] in STANDING_KINDS:
            avoid.append(f"superseded: {text}")
        elif it.get("paths"):
            use.extend(it["paths"])
        elif it["kind"] not in ("correction", "model_correction") or _INSTRUCTION.search(text):
            use.append(text)
        rejected = it.get("rejected_approach") or it.get("rejected")
        if rejected and it["kind"] in _AVOID:
            avoid.append(str(rejected))

    rules_first = intent in ("what_failed", "what_is_the_rule", "what_does_user_prefer")
    top = next(
        (it for it in items if rules_first or it["kind"] not in ("ban", "failed_attempt")),
        items[0] if items else None,
    )
    confidence = 0.0
    finding = None
    if top is not None:
        confidence = KIND_TRUST.get(top["kind"], 0.5)
        sessions = {it.get("session_id") for it in items if it["kind"] == top["kind"]}
        confidence += min(0.05 * (len(sessions) - 1), 0.15)
        age = _age_days(top.get("date"), now) or 0
        if top.get("stale"):
            confidence -= 0.25
            verify.append(f"the finding was superseded later: check the current decision ({top.get('date')})")
        elif age > STALE_DAYS:
            confidence -= 0.1
            verify.append(f"the finding is {int(age)} days old ({top.get('date')}): check it still holds")
        if len(sessions) == 1 and len(items) > 1:
            verify.append("only one session supports the finding")
        if scope_used != scope:
            confidence -= 0.1
            verify.append(f"found only in scope {scope_used}, not {scope}: check it applies here")
        confidence = round(max(0.05, min(confidence, 0.95)), 2)
        finding = f"{top['kind'].replace('_', ' ')} ({top.get('date') or '?'}): {top['content']}"
    if intent == "where_is" and use:
        verify.append("check that the paths still exist before relying on them")
    label = (
        "high" if confidence >= 0.75 else ("medium" if confidence >= 0.5 else ("low" if items else "none"))
    )
    answer = {
        "intent": intent,
        "topic": topic,
        "finding": finding,
        "confidence": confidence,
        "confidence_label": label,
        "quotes": [_quote(it) for it in items],
        "use": _dedupe(use)[:limit],
        "avoid": _dedupe(avoid)[:limit],
        "verify": _dedupe(verify)[:limit],
    }
    return Targeted(answer, scope_used, note)


def _dedupe(xs: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for x in xs:
        k = " ".join(x.lower().split())
        if k and k not in seen:
            seen.add(k)
            out.append(x)
    return out
