"""Record handling for the walker: one decoded JSONL record -> messages, tree aliases, usage,
compactions, subagent links and session metadata (W4–W9). Used by `lib.walker.parse_file`.
The usage of API responses (turns) is read in lib/turns.py, session metadata in lib/session_meta.py."""

from __future__ import annotations

import hashlib
from typing import Any

from lib import content as C
from lib.injected import COMMAND_PREFIX, PLACEHOLDER, is_mcp_answer, only_ours
from lib.model import (
    AgentInfo,
    Alias,
    Compaction,
    Duration,
    FileChunk,
    FileInfo,
    Message,
    SessionDelta,
    TaskSpawn,
)
from lib.session_meta import note_session, through_aliases
from lib.turns import as_dict as _dict
from lib.turns import as_int as _int
from lib.turns import mirrored_turn, turn_of

NON_TREE = {
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "permission-mode",
    "last-prompt",
    "pr-link",
    "custom-title",
    "ai-title",
    "agent-name",
    "mode",
}


def prompt_key(text: str) -> str:
    """Stable key for matching a subagent's first prompt to the Task call that sent it."""
    return hashlib.blake2b(
        " ".join(text.split())[:2000].encode("utf-8", "replace"), digest_size=8
    ).hexdigest()


class RecordState:
    """Mutable parse state for one chunk."""

    def __init__(self, chunk: FileChunk, info: FileInfo) -> None:
        self.chunk = chunk
        self.info = info
        self.alias_parent: dict[str, str | None] = {}
        self.msg_index: dict[str, int] = {}
        self.spawn_by_tool: dict[str, TaskSpawn] = {}
        self.inline_agent: dict[str, str] = dict(chunk.carry.inline)  # uuid -> inline agent id (1.0.x)
        self.prev_uuid = chunk.carry.last_uuid
        self.after_our_command = False  # the last user record ran one of our slash commands

    # ---- tree bookkeeping -------------------------------------------------
    def alias(self, uuid: str, parent: str | None, session: str) -> None:
        if not uuid:
            return
        self.alias_parent[uuid] = parent
        self.chunk.aliases.append(Alias(uuid, parent, session))
        self.prev_uuid = uuid

    def session(self, sid: str) -> SessionDelta:
        d = self.chunk.sessions.get(sid)
        if d is None:
            d = self.chunk.sessions[sid] = SessionDelta(sid, agent=self.info.agent)
        return d

    # ---- records ----------------------------------------------------------
    def record(self, rec: dict[str, Any], offset: int) -> None:
        chunk = self.chunk
        chunk.records += 1
        t = rec.get("type")
        tname = t if isinstance(t, str) else "?"
        chunk.record_types[tname] += 1
        if t == "summary":
            leaf, title = rec.get("leafUuid"), rec.get("summary")
            if isinstance(leaf, str) and isinstance(title, str) and title.strip():
                chunk.summaries.append((leaf, C.strip_private(title.strip())))
            return
        if t in ("custom-title", "ai-title"):
            sid = rec.get("sessionId")
            title = rec.get("customTitle") or rec.get("aiTitle") or rec.get("title")
            if isinstance(sid, str) and isinstance(title, str) and title.strip():
                self.session(sid).titles["custom" if t == "custom-title" else "ai"] = C.strip_private(
                    title.strip()
                )
            return
        if t in NON_TREE or t not in ("user", "assistant", "system", "attachment", "progress"):
            if t not in NON_TREE:
                chunk.record_types["unknown:" + tname] += 1
            chunk.skipped += 1
            return
        uuid = rec.get("uuid")
        sid = rec.get("sessionId")
        if not isinstance(uuid, str) or not isinstance(sid, str):
            chunk.bad_lines["missing_ids"] += 1
            chunk.records -= 1
            return
        parent = rec.get("parentUuid") if isinstance(rec.get("parentUuid"), str) else None
        if self.info.layout == "main" and rec.get("isSidechain"):
            self._agent_for(rec, uuid, parent)  # stored or not, it carries the inline agent down the chain
        if t == "progress" or t == "attachment":
            self.alias(uuid, parent, sid)
            data = rec.get("data") if t == "progress" else None
            if isinstance(data, dict) and data.get("type") == "agent_progress":  # mirrored_turn's own test
                mirrored = mirrored_turn(rec, uuid, sid, self.info)
                if mirrored is not None:
                    chunk.turns.append(mirrored)
            return
        # The session's metadata (inlined: a Python call costs ~1,000 instructions, per record).
        note_session(chunk.sessions.get(sid) or self.session(sid), rec)
        if self.info.layout == "main" and sid != self.info.stem and self.info.agent == "claude":
            self.session(self.info.stem).resumed_from = self.session(self.info.stem).resumed_from or sid
        if t == "system":
            self._system(rec, uuid, sid, parent, offset)
        elif t == "user":
            self._user(rec, uuid, sid, parent, offset)
        else:
            self._assistant(rec, uuid, sid, parent, offset)

    def _agent_for(self, rec: dict[str, Any], uuid: str, parent: str | None) -> tuple[str | None, bool]:
        side = bool(rec.get("isSidechain"))
        aid = rec.get("agentId") if isinstance(rec.get("agentId"), str) else None
        if self.info.layout != "main":
            return aid or self.info.agent_id, True
        if side and aid is None:
            aid = self.inline_agent.get(parent or "") or ("inline-" + uuid[:8] if parent is None else None)
            if aid:
                self.inline_agent[uuid] = aid
        return aid, side

    def _base(
        self,
        rec: dict[str, Any],
        uuid: str,
        sid: str,
        parent: str | None,
        role: str,
        kind: str,
        text: str,
        offset: int,
    ) -> Message:
        aid, side = self._agent_for(rec, uuid, parent)
        text = C.message_text(text)
        m = Message(
            uuid=uuid,
            session_id=sid,
            parent_uuid=parent,
            role=role,
            kind=kind,
            ts=rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None,
            text=text if len(text) <= C.TEXT_CAP else C.cut(text, C.TEXT_CAP),  # no call for most
            cwd=rec.get("cwd") if isinstance(rec.get("cwd"), str) else None,
            git_branch=rec.get("gitBranch") or None,
            agent_id=aid,
            is_sidechain=side,
            version=rec.get("version") if isinstance(rec.get("version"), str) else None,
            byte_offset=offset,
            agent=self.info.agent,
        )
        return m

    def _add(self, m: Message) -> None:
        self.msg_index[m.uuid] = len(self.chunk.messages)
        self.chunk.messages.append(m)
        self.prev_uuid = m.uuid

    def _system(self, rec: dict[str, Any], uuid: str, sid: str, parent: str | None, offset: int) -> None:
        sub = rec.get("subtype")
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        if sub == "compact_boundary":
            meta = _dict(rec.get("compactMetadata"))
            logical = rec.get("logicalParentUuid") if isinstance(rec.get("logicalParentUuid"), str) else None
            self.chunk.compactions.append(
                Compaction(
                    uuid, sid, ts, "compact", meta.get("trigger"), _int(meta.get("preTokens")), None, logical
                )
            )
            m = self._base(
                rec,
                uuid,
                sid,
                parent or logical,
                "system",
                "compact_boundary",
                str(rec.get("content") or "Conversation compacted"),
                offset,
            )
            m.fallback_parent = self.prev_uuid
            self._add(m)
            return
        if sub == "microcompact_boundary":
            meta = _dict(rec.get("microcompactMetadata"))
            self.chunk.compactions.append(
                Compaction(
                    uuid,
                    sid,
                    ts,
                    "microcompact",
                    meta.get("trigger"),
                    _int(meta.get("preTokens")),
                    _int(meta.get("tokensSaved")),
                    None,
                )
            )
        elif sub == "turn_duration":
            ms = _int(rec.get("durationMs"))
            if ms is not None:
                self.chunk.durations.append(Duration(uuid, sid, parent, ms, ts))
        elif sub == "away_summary" and isinstance(rec.get("content"), str):
            self._add(self._base(rec, uuid, sid, parent, "system", "away_summary", rec["content"], offset))
            return
        self.alias(uuid, parent, sid)

    def _user(self, rec: dict[str, Any], uuid: str, sid: str, parent: str | None, offset: int) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            msg = {}
        content = msg.get("content")
        is_meta = bool(rec.get("isMeta"))
        is_compact = bool(rec.get("isCompactSummary"))
        side = bool(rec.get("isSidechain")) or self.info.layout != "main"
        if isinstance(content, str):
            kind, text = C.classify_user_text(content, is_meta=is_meta, is_compact=is_compact)
            m = self._base(rec, uuid, sid, parent, "user", kind, text, offset)
        elif isinstance(content, list):
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if results:
                m = self._tool_result(rec, uuid, sid, parent, results, offset)
            else:
                kind, text = C.classify_user_text(
                    C.block_text(content), is_meta=is_meta, is_compact=is_compact
                )
                m = self._base(rec, uuid, sid, parent, "user", kind, text, offset)
        else:
            self.alias(uuid, parent, sid)
            return
        if m.kind == "prompt" and PLACEHOLDER in m.text and only_ours(m.text):
            m.kind = "meta"  # what total-recall injected, not the human's words (issue 10 #21)
        if m.kind == "meta" and self.after_our_command:
            m.text = PLACEHOLDER  # the expanded body of one of our slash commands: our own output
        else:
            self.after_our_command = m.kind == "command" and m.text.startswith(COMMAND_PREFIX)
        if m.kind == "prompt" and side:
            m.kind = "compact_prompt" if self.info.layout == "compaction" else "agent_prompt"
        if (
            self.info.layout != "main"
            and not any(a.agent_id == m.agent_id for a in self.chunk.agents)
            and m.kind in ("agent_prompt", "compact_prompt")
            and m.agent_id
        ):
            self.chunk.agents.append(
                AgentInfo(
                    m.agent_id,
                    sid,
                    self.info.layout,
                    m.ts,
                    prompt_key(m.text),
                    is_compaction_helper=self.info.layout == "compaction",
                )
            )
        if (
            m.kind == "agent_prompt"
            and self.info.layout == "main"
            and m.agent_id
            and m.agent_id.startswith("inline-")
            and parent is None
        ):
            self.chunk.agents.append(AgentInfo(m.agent_id, sid, "inline", m.ts, prompt_key(m.text)))
        if m.kind == "prompt":
            d = self.session(sid)
            if d.first_prompt is None:
                d.first_prompt = m.text[:300]
        self._add(m)

    def _tool_result(
        self,
        rec: dict[str, Any],
        uuid: str,
        sid: str,
        parent: str | None,
        results: list[dict[str, Any]],
        offset: int,
    ) -> Message:
        texts = []
        is_error = False
        tool_use_id = None
        for b in results:
            tool_use_id = tool_use_id or b.get("tool_use_id")
            is_error = is_error or bool(b.get("is_error"))
            texts.append(C.block_text(b.get("content")))
        joined = "\n".join(texts)
        # An answer of our MCP server is our own words: recognised before the cap cuts its _meta off.
        text = PLACEHOLDER if is_mcp_answer(joined) else C.cut_ends(joined, C.TOOL_RESULT_CAP)
        m = self._base(rec, uuid, sid, parent, "user", "tool_result", text, offset)
        m.tool_use_id = tool_use_id if isinstance(tool_use_id, str) else None
        m.is_error = is_error
        spawn = self.spawn_by_tool.get(m.tool_use_id or "")
        if spawn is not None:
            m.tool_name = "Task"
        tur = rec.get("toolUseResult")
        if isinstance(tur, dict) and isinstance(tur.get("agentId"), str) and m.tool_use_id:
            if spawn is None:
                spawn = TaskSpawn(
                    m.tool_use_id, sid, uuid, tur.get("agentType"), tur.get("description"), None
                )
                self.chunk.spawns.append(spawn)
            spawn.agent_id = tur["agentId"]
        return m

    def _assistant(self, rec: dict[str, Any], uuid: str, sid: str, parent: str | None, offset: int) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            msg = {}
        blocks = msg.get("content")
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        if not isinstance(blocks, list):
            blocks = []
        texts: list[str] = []
        tool: dict[str, Any] | None = None
        for b in blocks:
            if not isinstance(b, dict):
                continue
            bt = b.get("type")
            if bt == "text" and b.get("text"):
                texts.append(str(b["text"]))
            elif bt == "tool_use" and tool is None:
                tool = b
            # thinking / redacted_thinking: dropped, never stored
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        turn = turn_of(rec, msg, uuid, sid, model, self.info)
        if turn is not None:
            self.chunk.turns.append(turn)
        if model:
            self.chunk.sessions[sid].models.add(model)  # made by `record` before it got here
        if tool is not None:
            name = str(tool.get("name") or "?")
            target, ttext = C.tool_summary(name, tool.get("input"))
            text = ("\n".join(texts) + "\n" + ttext) if texts else ttext
            m = self._base(rec, uuid, sid, parent, "assistant", "tool_use", text, offset)
            m.tool_name, m.tool_target = name, C.strip_private(target) if target else target
            m.tool_use_id = tool.get("id") if isinstance(tool.get("id"), str) else None
            if name in ("Task", "Agent") and m.tool_use_id:
                inp = _dict(tool.get("input"))
                sp = TaskSpawn(
                    m.tool_use_id,
                    sid,
                    uuid,
                    inp.get("subagent_type"),
                    inp.get("description"),
                    prompt_key(str(inp.get("prompt") or "")) if inp.get("prompt") else None,
                )
                self.spawn_by_tool[m.tool_use_id] = sp
                self.chunk.spawns.append(sp)
        elif texts:
            kind = "api_error" if rec.get("isApiErrorMessage") or model == "<synthetic>" else "text"
            m = self._base(rec, uuid, sid, parent, "assistant", kind, "\n".join(texts), offset)
        else:
            self.alias(uuid, parent, sid)  # thinking-only or empty record
            return
        m.message_id = msg.get("id") if isinstance(msg.get("id"), str) else None
        m.model = model
        self._add(m)

    # ---- end of chunk -----------------------------------------------------
    def finish(self) -> None:
        """Resolve parents through skipped nodes; mark what must be resolved by the writer."""
        known = self.msg_index
        for m in self.chunk.messages:
            p = through_aliases(m.parent_uuid, self.alias_parent)
            if m.kind == "compact_boundary" and p is not None and p not in known and m.fallback_parent:
                # logical parent not in this chunk: the writer checks the DB, else falls back
                m.parent_external = True
            elif p is not None and p not in known:
                m.parent_external = True
            m.parent_uuid = p
            if m.fallback_parent is not None:
                m.fallback_parent = through_aliases(m.fallback_parent, self.alias_parent)
        self.chunk.carry.last_uuid = self.prev_uuid
        self.chunk.carry.inline = dict(list(self.inline_agent.items())[-64:])
