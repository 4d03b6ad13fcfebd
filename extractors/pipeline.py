"""Entry point: run every pipeline extractor over one utterance (X1-X11, X19).

``extract(u)`` is pure and cheap: one :class:`~extractors.patterns.View` is built per utterance (capped
prose, lower-cased, plus the other side's previous message) and every extractor reads it. Several rows
per message are allowed; identity is ``(kind, source_uuid, ordinal)`` with ordinals 0, 1, 2... per kind
in a stable order, so re-running on the same input yields the same rows.

Kinds, by role:

* user prompts: ``correction``, ``model_correction``, ``ban``, ``standing_decision``, ``decision``,
  ``goal``, ``goal_progress``, ``failed_attempt``, ``progress``, ``implicit_preference``,
  ``domain_fact``
* assistant text: ``self_correction``, ``decision``, ``failed_attempt``, ``progress``,
  ``truth_rhetoric``
"""

from __future__ import annotations

from extractors.assistant_voice import failed_attempt, progress, self_correction
from extractors.corrections import THRESHOLD as CORRECTION_THRESHOLD
from extractors.corrections import correction_score, extract_corrections, pasted_failure
from extractors.decisions import assistant_decision, user_decision
from extractors.facts import extract_facts
from extractors.goals import extract_goal, extract_user_failed, extract_user_progress
from extractors.model import Extraction, Utterance
from extractors.patterns import Hit, View, make_view
from extractors.rules import extract_rules
from extractors.truth import extract_truth


def _user_hits(u: Utterance, v: View) -> list[Hit]:
    tool_error = any(t.is_error for t in u.recent_tools)
    scored = correction_score(v, tool_error)
    corr = scored[0]
    hits = extract_corrections(v, tool_error, scored) if corr >= CORRECTION_THRESHOLD else []
    hits += extract_rules(v)
    hits += user_decision(v)
    hits += extract_goal(v, corr)
    hits += extract_user_failed(v, corr, bool(v.prev) and pasted_failure(v))
    hits += extract_user_progress(v)
    hits += extract_facts(v)
    return hits


def _assistant_hits(u: Utterance, v: View) -> list[Hit]:
    errors = [t for t in u.recent_tools if t.is_error]
    prev_user = u.prev_user_text

    def prev_was_correction() -> bool:
        if not prev_user:
            return False
        return correction_score(make_view(prev_user, None), False)[0] >= CORRECTION_THRESHOLD - 0.3

    hits = self_correction(v, prev_was_correction)
    hits += assistant_decision(v, prev_user)
    last_error = (errors[-1].result_head or errors[-1].summary) if errors else ""
    hits += failed_attempt(v, len(errors), last_error)
    hits += progress(v)
    hits += extract_truth(v)
    return hits


def extract(u: Utterance) -> list[Extraction]:
    """All extractions for one human prompt or assistant text block."""
    text = u.text
    if not text or not text.strip():
        return []
    if u.role == "user":
        hits = _user_hits(u, make_view(text, u.prev_assistant_text))
    elif u.role == "assistant":
        hits = _assistant_hits(u, make_view(text, None, human=False))
    else:
        return []
    out: list[Extraction] = []
    ordinals: dict[str, int] = {}
    for h in hits:
        if not h.content:
            continue
        n = ordinals.get(h.kind, 0)
        ordinals[h.kind] = n + 1
        out.append(
            Extraction(
                kind=h.kind,
                content=h.content,
                source_uuid=u.uuid,
                session_id=u.session_id,
                ordinal=n,
                score=h.score,
                context=dict(h.context),
                ts=u.ts,
                cwd=u.cwd,
            )
        )
    return out
