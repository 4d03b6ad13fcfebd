"""Plain data passed into and out of the extractors.

Extractors are pure functions: they get `Utterance`s (one human prompt or one assistant text block,
with the DAG context the walker resolved) and return `Extraction`s. They never touch SQLite; the index
layer stores what they return, after the central scrubber has run over every string.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant"]

# The kinds each extractor family writes; the index and the MCP server validate against ALL_KINDS.
KINDS_USER: tuple[str, ...] = (
    "correction",
    "model_correction",
    "ban",
    "standing_decision",
    "standing_order",
    "decision",
    "goal",
    "goal_progress",
    "failed_attempt",
    "progress",
    "implicit_preference",
    "domain_fact",
)
KINDS_ASSISTANT: tuple[str, ...] = (
    "self_correction",
    "decision",
    "failed_attempt",
    "progress",
    "truth_rhetoric",
)
# A standing *choice* ("we use pnpm", "go with Postgres from now on") and a standing *order* that settles
# no choice ("always run the tests before committing"): both hold beyond the current step, are stored in
# the same operator table and are shown together; only the evaluation counts them apart (a choice is a
# decision, an order is not).
STANDING_KINDS: tuple[str, ...] = ("standing_decision", "standing_order")
KINDS: tuple[str, ...] = tuple(dict.fromkeys(KINDS_USER + KINDS_ASSISTANT))
SUMMARY_KIND = "away_summary"  # extractors/summaries.py, from recaps and compact summaries
ALL_KINDS: tuple[str, ...] = (*KINDS, SUMMARY_KIND)


@dataclass(slots=True)
class ToolEvent:
    """A tool call near an utterance: what ran and whether it failed."""

    name: str
    summary: str  # compact input, e.g. the Bash command or the edited file path
    is_error: bool = False
    result_head: str = ""  # first few hundred chars of the result text


@dataclass(slots=True)
class Utterance:
    """One human-typed prompt or one assistant text block, with its conversational context."""

    uuid: str
    session_id: str
    role: Role
    text: str
    ts: str | None = None
    cwd: str | None = None
    is_sidechain: bool = False
    # For a user prompt: the last assistant text before it on its parent chain (what it may reject).
    prev_assistant_text: str | None = None
    # For an assistant text: the last human prompt before it on its parent chain.
    prev_user_text: str | None = None
    # Tool calls between the previous human prompt and this utterance, oldest first (capped).
    recent_tools: list[ToolEvent] = field(default_factory=list)


@dataclass(slots=True)
class Extraction:
    """A typed fact mined from one message. Identity is (kind, source_uuid, ordinal)."""

    kind: str
    content: str
    source_uuid: str
    session_id: str
    ordinal: int = 0
    score: float = 0.5
    context: dict[str, Any] = field(default_factory=dict)
    ts: str | None = None
    cwd: str | None = None
