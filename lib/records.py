"""Record handling for the walker: one decoded JSONL record -> messages, tree aliases, usage,
compactions, subagent links and session metadata (W4–W9). Used by `lib.walker.parse_file`.
The usage of API responses (turns) is read in lib/turns.py, records outside the tree (summaries, titles)
in lib/session_meta.py."""

from __future__ import annotations

from typing import Any

from lib import content as C
from lib.content import prompt_key
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
from lib.session_meta import TREE, other_record, through_aliases
from lib.turns import as_dict as _dict
from lib.turns import as_int as _int
from lib.turns import mirrored_turn, turn_of

ROLES = {"system": "system", "user": "user", "assistant": "assistant"}


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
        self.main = info.layout == "main"
        # A main Claude Code file holding another session's records was resumed from it.
        self.resumes = self.main and info.agent == "claude"

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
        """One record. Written for the ~350 k records of a large index: each field is read from the
        record once (`dict.get` was called ~30 times per message) and the session metadata, the
        message's common fields and its storing are done here rather than in a call each (a Python
        call costs ~1,000 instructions)."""
        chunk = self.chunk
        chunk.records += 1
        t = rec.get("type")
        tname = t if isinstance(t, str) else "?"
        chunk.record_types[tname] += 1
        if tname not in TREE:
            other_record(chunk, self.session, rec, t, tname)
            return
        uuid = rec.get("uuid")
        sid = rec.get("sessionId")
        if not isinstance(uuid, str) or not isinstance(sid, str):
            chunk.bad_lines["missing_ids"] += 1
            chunk.records -= 1
            return
        parent = rec.get("parentUuid")
        if not isinstance(parent, str):
            parent = None
        side = rec.get("isSidechain")
        if t == "progress" or t == "attachment":  # a tree node only: no agent, no metadata, no message
            if side and self.main and not isinstance(rec.get("agentId"), str):
                self._inline_agent(uuid, parent)  # it carries the inline agent down the chain
            if uuid:  # `alias`, inlined for the ~1 in 3 records that are progress
                self.alias_parent[uuid] = parent
                chunk.aliases.append(Alias(uuid, parent, sid))
                self.prev_uuid = uuid
            data = rec.get("data") if t == "progress" else None
            if isinstance(data, dict) and data.get("type") == "agent_progress":  # mirrored_turn's own test
                mirrored = mirrored_turn(rec, uuid, sid, self.info)
                if mirrored is not None:
                    chunk.turns.append(mirrored)
            return
        aid = rec.get("agentId")
        if not isinstance(aid, str):
            aid = None
        if not self.main:
            aid, is_side = aid or self.info.agent_id, True
        else:
            is_side = bool(side)
            if is_side and aid is None:
                aid = self._inline_agent(uuid, parent)
        ts = rec.get("timestamp")
        cwd = rec.get("cwd")
        branch = rec.get("gitBranch")
        version = rec.get("version")
        if not isinstance(ts, str):
            ts = None
        if not isinstance(version, str):
            version = None
        # The session's time span, cwd, branch and version, as this record shows them.
        d = chunk.sessions.get(sid) or self.session(sid)
        if ts is not None:
            if d.first_ts is None or ts < d.first_ts:
                d.first_ts = ts
            if d.last_ts is None or ts > d.last_ts:
                d.last_ts = ts
        if not side:
            if isinstance(cwd, str) and cwd:
                d.cwd = cwd
            if isinstance(branch, str) and branch:
                d.git_branch = branch
        else:
            d.is_agent_only = d.cwd is None
            if d.cwd is None and isinstance(cwd, str):
                d.cwd = cwd
        if version is not None:
            d.version = version
        if self.resumes and sid != self.info.stem:
            self.session(self.info.stem).resumed_from = self.session(self.info.stem).resumed_from or sid
        # Kind and text are the handler's. Every field positional, in `Message`'s order: keywords make
        # calling a class build a dict of them, per message.
        m = Message(
            uuid,
            sid,
            parent,
            ROLES[tname],  # the constant, not the record's string: pickled once per chunk, not per message
            "",  # kind
            ts,
            "",  # text
            cwd if isinstance(cwd, str) else None,
            branch or None,
            aid,
            is_side,
            None,  # tool_name
            None,  # tool_use_id
            None,  # tool_target
            False,  # is_error
            None,  # message_id
            None,  # model
            version,
            offset,
            False,  # parent_external
            None,  # fallback_parent
            self.info.agent,
        )
        if t == "system":
            kept = self._system(rec, m)
        elif t == "user":
            kept = self._user(rec, m)
        else:
            kept = self._assistant(rec, m)
        if kept:
            self.msg_index[uuid] = len(chunk.messages)
            chunk.messages.append(m)
            self.prev_uuid = uuid
        else:
            self.alias(uuid, parent, sid)

    def _inline_agent(self, uuid: str, parent: str | None) -> str | None:
        """A 1.0.x inline sidechain record's agent: its parent's, or a new one at the chain's root."""
        aid = self.inline_agent.get(parent or "") or ("inline-" + uuid[:8] if parent is None else None)
        if aid:
            self.inline_agent[uuid] = aid
        return aid

    def _system(self, rec: dict[str, Any], m: Message) -> bool:
        sub = rec.get("subtype")
        uuid, sid, ts = m.uuid, m.session_id, m.ts
        if sub == "compact_boundary":
            meta = _dict(rec.get("compactMetadata"))
            logical = rec.get("logicalParentUuid") if isinstance(rec.get("logicalParentUuid"), str) else None
            self.chunk.compactions.append(
                Compaction(
                    uuid, sid, ts, "compact", meta.get("trigger"), _int(meta.get("preTokens")), None, logical
                )
            )
            parent = m.parent_uuid
            if not parent:
                m.parent_uuid = logical  # `parent or logical`, which also decides an inline agent
                if (
                    logical != parent
                    and self.main
                    and m.is_sidechain
                    and not isinstance(rec.get("agentId"), str)
                ):
                    m.agent_id = self._inline_agent(uuid, logical)
            m.kind, m.text = (
                "compact_boundary",
                C.message_text(str(rec.get("content") or "Conversation compacted")),
            )
            m.fallback_parent = self.prev_uuid
            return True
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
                self.chunk.durations.append(Duration(uuid, sid, m.parent_uuid, ms, ts))
        elif sub == "away_summary" and isinstance(rec.get("content"), str):
            m.kind, m.text = "away_summary", C.message_text(rec["content"])
            return True
        return False

    def _user(self, rec: dict[str, Any], m: Message) -> bool:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            msg = {}
        content = msg.get("content")
        is_meta = bool(rec.get("isMeta"))
        is_compact = bool(rec.get("isCompactSummary"))
        if isinstance(content, str):
            m.kind, text = C.classify_user_text(content, is_meta=is_meta, is_compact=is_compact)
            m.text = C.message_text(text)
        elif isinstance(content, list):
            results = []  # (a loop, not a comprehension: that is one more call per record in 3.11)
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    results.append(b)
            if results:
                self._tool_result(rec, m, results)
            else:
                m.kind, text = C.classify_user_text(
                    C.block_text(content), is_meta=is_meta, is_compact=is_compact
                )
                m.text = C.message_text(text)
        else:
            return False
        if m.kind == "prompt" and PLACEHOLDER in m.text and only_ours(m.text):
            m.kind = "meta"  # what total-recall injected, not the human's words (issue 10 #21)
        if m.kind == "meta" and self.after_our_command:
            m.text = PLACEHOLDER  # the expanded body of one of our slash commands: our own output
        else:
            self.after_our_command = m.kind == "command" and m.text.startswith(COMMAND_PREFIX)
        if m.kind == "prompt" and m.is_sidechain:
            m.kind = "compact_prompt" if self.info.layout == "compaction" else "agent_prompt"
        if (
            not self.main
            and m.kind in ("agent_prompt", "compact_prompt")
            and m.agent_id
            and not any(a.agent_id == m.agent_id for a in self.chunk.agents)
        ):
            self.chunk.agents.append(
                AgentInfo(
                    m.agent_id,
                    m.session_id,
                    self.info.layout,
                    m.ts,
                    prompt_key(m.text),
                    is_compaction_helper=self.info.layout == "compaction",
                )
            )
        if (
            m.kind == "agent_prompt"
            and self.main
            and m.agent_id
            and m.agent_id.startswith("inline-")
            and m.parent_uuid is None
        ):
            self.chunk.agents.append(AgentInfo(m.agent_id, m.session_id, "inline", m.ts, prompt_key(m.text)))
        if m.kind == "prompt":
            d = self.session(m.session_id)
            if d.first_prompt is None:
                d.first_prompt = m.text[:300]
        return True

    def _tool_result(self, rec: dict[str, Any], m: Message, results: list[dict[str, Any]]) -> None:
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
        m.kind, m.text = "tool_result", C.message_text(text)
        m.tool_use_id = tool_use_id if isinstance(tool_use_id, str) else None
        m.is_error = is_error
        spawn = self.spawn_by_tool.get(m.tool_use_id or "")
        if spawn is not None:
            m.tool_name = "Task"
        tur = rec.get("toolUseResult")
        if isinstance(tur, dict) and isinstance(tur.get("agentId"), str) and m.tool_use_id:
            if spawn is None:
                spawn = TaskSpawn(
                    m.tool_use_id, m.session_id, m.uuid, tur.get("agentType"), tur.get("description"), None
                )
                self.chunk.spawns.append(spawn)
            spawn.agent_id = tur["agentId"]

    def _assistant(self, rec: dict[str, Any], m: Message) -> bool:
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
            if bt == "text":
                bt = b.get("text")
                if bt:
                    texts.append(str(bt))
            elif bt == "tool_use" and tool is None:
                tool = b
            # thinking / redacted_thinking: dropped, never stored
        model = msg.get("model")
        if not isinstance(model, str):
            model = None
        sid = m.session_id
        turn = turn_of(rec, msg, m.uuid, sid, model, self.info)
        if turn is not None:
            self.chunk.turns.append(turn)
        if model:
            self.chunk.sessions[sid].models.add(model)  # made by `record` before it got here
        if tool is not None:
            name = str(tool.get("name") or "?")
            target, ttext = C.tool_summary(name, tool.get("input"))
            m.kind = "tool_use"
            m.text = C.message_text(("\n".join(texts) + "\n" + ttext) if texts else ttext)
            m.tool_name, m.tool_target = name, C.strip_private(target) if target else target
            tid = tool.get("id")
            m.tool_use_id = tid if isinstance(tid, str) else None
            if name in ("Task", "Agent") and m.tool_use_id:
                inp = _dict(tool.get("input"))
                sp = TaskSpawn(
                    m.tool_use_id,
                    sid,
                    m.uuid,
                    inp.get("subagent_type"),
                    inp.get("description"),
                    prompt_key(str(inp.get("prompt") or "")) if inp.get("prompt") else None,
                )
                self.spawn_by_tool[m.tool_use_id] = sp
                self.chunk.spawns.append(sp)
        elif texts:
            m.kind = "api_error" if rec.get("isApiErrorMessage") or model == "<synthetic>" else "text"
            m.text = C.message_text("\n".join(texts))
        else:
            return False  # thinking-only or empty record
        mid = msg.get("id")
        m.message_id = mid if isinstance(mid, str) else None
        m.model = model
        return True

    # ---- end of chunk -----------------------------------------------------
    def finish(self) -> None:
        """Resolve parents through skipped nodes; mark what must be resolved by the writer."""
        known = self.msg_index
        aliases = self.alias_parent
        for m in self.chunk.messages:
            p = m.parent_uuid
            if p is not None and p in aliases:  # `through_aliases`'s own first test, without the call
                p = m.parent_uuid = through_aliases(p, aliases)
            if p is not None and p not in known:
                # not in this chunk: the writer resolves it (a compaction's logical parent: or falls back)
                m.parent_external = True
            if m.fallback_parent is not None:
                m.fallback_parent = through_aliases(m.fallback_parent, aliases)
        self.chunk.carry.last_uuid = self.prev_uuid
        self.chunk.carry.inline = dict(list(self.inline_agent.items())[-64:])
