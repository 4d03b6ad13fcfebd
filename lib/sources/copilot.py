"""GitHub Copilot CLI sessions (`~/.copilot/session-state/<id>.jsonl`, or `<id>/events.jsonl` in newer
versions): append-only JSONL of events `{type, data, id, timestamp, parentId}`, read from a byte cursor.

`session.start` names the session, cwd, branch and version; `session.model_change` and
`session.context_changed` move the model and cwd; `user.message` is a prompt when it has no `source`
(a `source` marks text Copilot put there: system, instruction discovery, skills; `agent-…` is a
subagent's task); `assistant.message` holds text and `toolRequests` (its `reasoningText` is never
stored) and `outputTokens`, the only usage Copilot writes; `tool.execution_complete` a result; `abort`
an interrupt. A record with a top-level `agentId` belongs to a subagent (a sidechain).
"""

from __future__ import annotations

from typing import Any

from lib.model import Carry, FileChunk, FileInfo
from lib.sources.emit import Emitter, as_dict, as_text, num
from lib.walker import read_lines


def parse(path: str, start: int, carry: Carry, info: FileInfo) -> FileChunk:
    chunk = FileChunk(path=path, start=start, end=start, carry=carry)
    em = Emitter(chunk, info)
    if info.stem == "events":  # <session id>/events.jsonl: the folder names the session
        em.ctx.setdefault("sid", path.replace("\\", "/").rsplit("/", 2)[-2])
    reader = _Reader(em)
    read_lines(path, start, chunk, reader.record)
    return em.finish()


class _Reader:
    def __init__(self, em: Emitter) -> None:
        self.em = em

    def record(self, rec: dict[str, Any], offset: int) -> None:
        t = rec.get("type")
        d = as_dict(rec.get("data"))
        ts = rec.get("timestamp")
        rid = rec.get("id")
        uuid = rid if isinstance(rid, str) else f"{self.em.sid}:{offset}"
        side = rec.get("agentId") if isinstance(rec.get("agentId"), str) else None
        em = self.em
        if t == "session.start":
            ctx = as_dict(d.get("context"))
            em.set(
                sid=d.get("sessionId"),
                cwd=ctx.get("cwd"),
                branch=ctx.get("branch"),
                version=d.get("copilotVersion"),
            )
        elif t == "session.context_changed":
            em.set(cwd=d.get("cwd"), branch=d.get("branch"))
        elif t == "session.model_change":
            em.set(model=d.get("newModel"))
        elif t == "user.message":
            source = d.get("source")
            text = as_text(d.get("content"))
            if isinstance(source, str) and source.startswith("agent-"):
                em.user(uuid, ts, text, offset, side=side or source)
            else:
                em.user(uuid, ts, text, offset, meta=bool(source), side=side)
        elif t == "assistant.message":
            model = d.get("model") if isinstance(d.get("model"), str) else None
            em.text(uuid, ts, as_text(d.get("content")), offset, model=model, side=side)
            for i, req in enumerate(d.get("toolRequests") or []):
                if isinstance(req, dict):
                    call = str(req.get("toolCallId") or f"{uuid}:{i}")
                    em.tool_call(
                        f"{uuid}:t{i}",
                        ts,
                        str(req.get("name") or "?"),
                        req.get("arguments"),
                        call,
                        offset,
                        model=model,
                        side=side,
                    )
            em.usage(
                uuid, ts, model=model, input_tokens=0, output_tokens=num(d.get("outputTokens")), side=side
            )
        elif t == "tool.execution_complete":
            ok = d.get("success") is not False
            body = as_dict(d.get("result")).get("content") if ok else as_dict(d.get("error")).get("message")
            em.tool_result(
                uuid, ts, str(d.get("toolCallId") or ""), as_text(body), offset, error=not ok, side=side
            )
        elif t == "abort":
            em.interrupt(uuid, ts, offset)
        else:
            em.chunk.skipped += 1
            em.chunk.record_types["copilot:" + str(t)] += 1
