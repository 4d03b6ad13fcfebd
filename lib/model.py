"""Typed rows produced by the walker. Plain, picklable dataclasses (they cross process boundaries)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Message kinds. Only `prompt` is the human's own voice.
USER_KINDS = (
    "prompt",
    "agent_prompt",
    "command",
    "command_output",
    "bash_input",
    "meta",
    "tool_result",
    "compact_summary",
    "interrupt",
    "system_reminder",
)
ASSISTANT_KINDS = ("text", "tool_use", "api_error")
SYSTEM_KINDS = ("compact_boundary", "away_summary")
# Tools that change a file (files edited in a digest, a continuation packet).
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")


@dataclass(slots=True)
class FileInfo:
    """Where a file sits in the projects tree (from discovery)."""

    layout: str  # main | flat | nested | compaction
    stem: str  # file name without .jsonl
    agent_id: str | None = None
    agent: str = "claude"  # the coding agent that wrote the file (lib.sources)
    whole: bool = False  # one JSON document: any change re-reads it whole (no byte cursor)


@dataclass(slots=True)
class Message:
    uuid: str
    session_id: str
    parent_uuid: str | None
    role: str
    kind: str
    ts: str | None
    text: str
    cwd: str | None = None
    git_branch: str | None = None
    agent_id: str | None = None
    is_sidechain: bool = False
    tool_name: str | None = None
    tool_use_id: str | None = None
    tool_target: str | None = None
    is_error: bool = False
    message_id: str | None = None
    model: str | None = None
    version: str | None = None
    byte_offset: int = 0
    # Parent could not be resolved inside this chunk; the writer resolves it against the DB.
    parent_external: bool = False
    # compact_boundary only: used when the logical parent is written nowhere.
    fallback_parent: str | None = None
    agent: str = "claude"  # the coding agent of the session (lib.sources)


@dataclass(slots=True)
class Alias:
    """A tree node that is not stored as a message (progress, thinking-only, hook records)."""

    uuid: str
    parent_uuid: str | None
    session_id: str


@dataclass(slots=True)
class Turn:
    """One API response's usage (split records share message_id + request_id; keep the largest)."""

    message_id: str
    request_id: str
    session_id: str
    uuid: str
    ts: str | None
    model: str | None
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_5m_tokens: int
    cache_1h_tokens: int
    cache_read_tokens: int
    is_sidechain: bool
    agent_id: str | None
    web_search_requests: int = 0


@dataclass(slots=True)
class Duration:
    uuid: str
    session_id: str
    parent_uuid: str | None
    duration_ms: int
    ts: str | None


@dataclass(slots=True)
class Compaction:
    uuid: str
    session_id: str
    ts: str | None
    kind: str  # compact | microcompact
    trigger: str | None
    pre_tokens: int | None
    tokens_saved: int | None
    logical_parent_uuid: str | None


@dataclass(slots=True)
class TaskSpawn:
    """A Task/Agent tool call in a parent session: links a subagent to the call that spawned it."""

    tool_use_id: str
    session_id: str
    uuid: str
    subagent_type: str | None
    description: str | None
    prompt_key: str | None  # hash of the prompt, to match 2.0.x agent files by their first prompt
    agent_id: str | None = None  # from toolUseResult.agentId when the result is seen


@dataclass(slots=True)
class AgentInfo:
    agent_id: str
    session_id: str
    layout: str  # inline | flat | nested | compaction
    first_ts: str | None
    prompt_key: str | None
    subagent_type: str | None = None
    is_compaction_helper: bool = False


@dataclass(slots=True)
class SessionDelta:
    """What one chunk says about one session; the writer folds it into `sessions`."""

    session_id: str
    first_ts: str | None = None
    last_ts: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    version: str | None = None
    models: set[str] = field(default_factory=set)
    first_prompt: str | None = None
    titles: dict[str, str] = field(default_factory=dict)  # source -> title (custom, ai)
    resumed_from: str | None = None
    is_agent_only: bool = False  # seen only through subagent records
    agent: str = "claude"


@dataclass(slots=True)
class Carry:
    """Per-file state carried between incremental runs (stored as JSON in ingest_state)."""

    last_uuid: str | None = None
    # Per-thread (session_id|agent_id) context for extractors, in file order.
    threads: dict[str, dict[str, Any]] = field(default_factory=dict)
    # 1.0.x inline sidechains: the latest record uuids -> their inline agent id (a subagent's
    # records chain, so the tail is enough to attribute records appended later).
    inline: dict[str, str] = field(default_factory=dict)
    # Another agent's reader state (session id, cwd, model… said once at the top of a file).
    source: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "last_uuid": self.last_uuid,
            "threads": self.threads,
            "inline": self.inline,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Carry:
        if not data:
            return cls()
        return cls(
            last_uuid=data.get("last_uuid"),
            threads=dict(data.get("threads") or {}),
            inline=dict(data.get("inline") or {}),
            source=dict(data.get("source") or {}),
        )


@dataclass(slots=True)
class FileChunk:
    """Everything parsed from one file between two byte offsets."""

    path: str
    start: int
    end: int  # offset after the last consumed line
    lines: int = 0
    records: int = 0
    skipped: int = 0  # records counted but not built (progress, snapshots, queue ops…)
    bad_lines: Counter[str] = field(default_factory=Counter)
    repaired: Counter[str] = field(default_factory=Counter)
    record_types: Counter[str] = field(default_factory=Counter)
    messages: list[Message] = field(default_factory=list)
    aliases: list[Alias] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    durations: list[Duration] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    summaries: list[tuple[str, str]] = field(default_factory=list)  # (leaf_uuid, title)
    spawns: list[TaskSpawn] = field(default_factory=list)
    agents: list[AgentInfo] = field(default_factory=list)
    sessions: dict[str, SessionDelta] = field(default_factory=dict)
    carry: Carry = field(default_factory=Carry)
